//! From a checked table to code. Each file writes one generated item.

mod code;
mod dispatch;
mod openapi;
mod routes;
mod tools;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Table;

pub fn expand(table: &Table) -> TokenStream {
    let routes = routes::expand(table);
    let dispatch = dispatch::expand(table);
    let openapi = openapi::expand(table);
    let tools = tools::expand(table);
    quote! {
        #routes
        #dispatch
        #openapi
        #tools

        /// The table as one value, handed down through `Ctx::api`.
        pub static API: crate::api::Api = crate::api::Api {
            routes: ROUTES,
            tools: TOOLS,
            resolve,
            answer: answer_boxed,
            #[cfg(not(target_arch = "wasm32"))]
            openapi_schemas,
            #[cfg(not(target_arch = "wasm32"))]
            tool_input_schemas,
            #[cfg(not(target_arch = "wasm32"))]
            tool_output_schemas,
        };

        fn answer_boxed<'a>(
            req: &'a crate::http::Request,
            ctx: &'a crate::api::Ctx,
            resolved: crate::api::Resolved<'a>,
        ) -> crate::platform::BoxFuture<'a, crate::http::Response> {
            ::std::boxed::Box::pin(answer(req, ctx, resolved))
        }
    }
}
