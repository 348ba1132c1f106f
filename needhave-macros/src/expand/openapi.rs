//! `openapi_schemas`: the typed half of the OpenAPI document.
//!
//! Schemas come from the Rust types through schemars; everything else an
//! operation needs (path, doc, error codes) is already in `ROUTES`, so the
//! builder in `pages/openapi.rs` reads it from there and asks this function
//! only for the schemas, one entry per route in table order. Native only:
//! the Worker serves the checked-in document and never links schemars.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::{ResponseKind, Table};

pub fn expand(table: &Table) -> TokenStream {
    let ops = table.routes.iter().map(|r| {
        let body = match &r.body {
            Some(ty) => quote!(::core::option::Option::Some(g.subschema_for::<#ty>().to_value())),
            None => quote!(::core::option::Option::None),
        };
        let typed = r.responses.iter().filter_map(|resp| match &resp.kind {
            ResponseKind::Json(ty) => {
                let status = &resp.status;
                Some(quote!((#status, g.subschema_for::<#ty>().to_value())))
            }
            _ => None,
        });
        let query = r.query.iter().map(|q| {
            let ty = &q.ty;
            quote!(g.subschema_for::<#ty>().to_value())
        });
        quote! {
            crate::api::OperationSchemas {
                body: #body,
                typed: ::std::vec![#(#typed),*],
                query: ::std::vec![#(#query),*],
            }
        }
    });
    quote! {
        /// Each route's request body and JSON response schemas, in table
        /// order, as `g` writes them (it keeps the shared definitions).
        #[cfg(not(target_arch = "wasm32"))]
        pub fn openapi_schemas(
            g: &mut ::schemars::generate::SchemaGenerator,
        ) -> ::std::vec::Vec<crate::api::OperationSchemas> {
            ::std::vec![#(#ops),*]
        }
    }
}
