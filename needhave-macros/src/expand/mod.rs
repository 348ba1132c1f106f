//! From a checked table to code. Each file writes one generated item.

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
            dispatch: dispatch_boxed,
            #[cfg(not(target_arch = "wasm32"))]
            openapi_schemas,
            #[cfg(not(target_arch = "wasm32"))]
            tool_input_schemas,
            #[cfg(not(target_arch = "wasm32"))]
            tool_output_schemas,
        };

        fn dispatch_boxed<'a>(
            req: &'a crate::http::Request,
            ctx: &'a crate::api::Ctx,
        ) -> crate::platform::BoxFuture<'a, crate::http::Response> {
            ::std::boxed::Box::pin(dispatch(req, ctx))
        }
    }
}

/// `empty_note` → `EmptyNote`: the variant of `crate::error::Code`.
///
/// Spanned at the code in the table, so that rustc's "no variant" error
/// points at it (its "similar name" hint then shows the CamelCase variant,
/// and `check.rs` says how that is spelled in the table).
pub fn variant(code: &syn::Ident) -> syn::Ident {
    let camel: String = code
        .to_string()
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect();
    syn::Ident::new(&camel, code.span())
}
