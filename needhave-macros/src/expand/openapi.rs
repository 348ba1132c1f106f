//! `openapi_operations`: the typed half of the OpenAPI document.
//!
//! Schemas come from the Rust types through schemars; everything else an
//! operation needs (path, doc, error codes) is already in `ROUTES`, so the
//! builder in `pages/openapi.rs` reads it from there. Native only: the Worker
//! serves the checked-in document and never links schemars.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::{ResponseKind, Table};

pub fn expand(table: &Table) -> TokenStream {
    let ops = table.routes.iter().enumerate().map(|(i, r)| {
        let body = match &r.body {
            Some(ty) => quote!(::core::option::Option::Some(b.schema::<#ty>())),
            None => quote!(::core::option::Option::None),
        };
        let typed = r.responses.iter().filter_map(|resp| match &resp.kind {
            ResponseKind::Json(ty) => {
                let status = &resp.status;
                Some(quote!((#status, b.schema::<#ty>())))
            }
            _ => None,
        });
        quote! {{
            let body = #body;
            let typed = ::std::vec![#(#typed),*];
            b.operation(&ROUTES[#i], body, typed);
        }}
    });
    quote! {
        /// Adds every route to an OpenAPI document under construction.
        #[cfg(not(target_arch = "wasm32"))]
        pub fn openapi_operations(b: &mut crate::pages::openapi::Builder) {
            #(#ops)*
        }
    }
}
