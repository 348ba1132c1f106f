//! `ROUTES`: a static description of every call, for tests, pages and docs.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::ast::{ResponseKind, Table};

pub fn expand(table: &Table) -> TokenStream {
    // A code fixes its status (`Code::status`); a code listed under another
    // status would make the OpenAPI document lie. Checked at compile time,
    // pointing at the code.
    let status_checks = table.routes.iter().flat_map(|r| &r.responses).flat_map(|resp| {
        let status = &resp.status;
        let codes = match &resp.kind {
            ResponseKind::Errors(codes) => codes.as_slice(),
            _ => &[],
        };
        codes.iter().map(move |c| {
            let v = super::code::variant(c);
            let message = format!("`{c}` is not a {} error: list it under its own status (Code::status)", status.base10_digits());
            quote_spanned! {c.span()=>
                const _: () = ::core::assert!(crate::error::Code::#v.status() == #status, #message);
            }
        })
    });
    let routes = table.routes.iter().map(|r| {
        let method = r.method.to_string();
        let path = r.path.value();
        let doc = &r.doc;
        let raw = r.raw;
        let consistency = if r.replica {
            quote!(crate::api::Consistency::Replica)
        } else {
            quote!(crate::api::Consistency::Primary)
        };
        let handler = &r.handler;
        let handler = quote!(#handler).to_string().replace(' ', "");
        let body = match &r.body {
            Some(ty) => {
                let name = quote!(#ty).to_string().replace(' ', "");
                quote!(::core::option::Option::Some(#name))
            }
            None => quote!(::core::option::Option::None),
        };
        let responses = r.responses.iter().map(|resp| {
            let status = &resp.status;
            let kind = match &resp.kind {
                ResponseKind::Json(ty) => {
                    let name = quote!(#ty).to_string().replace(' ', "");
                    quote!(crate::api::Body::Json(#name))
                }
                ResponseKind::Html => quote!(crate::api::Body::Html),
                ResponseKind::Media(m) => quote!(crate::api::Body::Media(#m)),
                ResponseKind::Empty => quote!(crate::api::Body::Empty),
                ResponseKind::Errors(codes) => {
                    let codes = codes.iter().map(|c| {
                        let v = super::code::variant(c);
                        quote_spanned!(v.span()=> crate::error::Code::#v)
                    });
                    quote!(crate::api::Body::Errors(&[#(#codes),*]))
                }
            };
            quote!(crate::api::RouteResponse { status: #status, body: #kind })
        });
        let tools: Vec<String> = table
            .tools
            .iter()
            .filter(|t| {
                t.branches.iter().flat_map(|b| &b.steps).any(|s| {
                    s.method == r.method && crate::ast::shape(&s.path.value()) == r.shape()
                })
            })
            .map(|t| t.name.to_string())
            .collect();
        let query = r.query.iter().map(|q| {
            let name = q.name.to_string();
            let doc = &q.doc;
            let code = super::code::of_query(q);
            let opt = |v: Option<&syn::LitInt>| match v {
                Some(v) => quote!(::core::option::Option::Some(#v)),
                None => quote!(::core::option::Option::None),
            };
            let min = opt(q.bounds.as_ref().map(|b| &b.0));
            let max = opt(q.bounds.as_ref().map(|b| &b.1));
            let default = opt(q.default.as_ref());
            quote! {
                crate::api::QueryParam {
                    name: #name,
                    doc: crate::api::doc(#doc),
                    error: crate::error::Code::#code,
                    min: #min,
                    max: #max,
                    default: #default,
                }
            }
        });
        quote! {
            crate::api::Route {
                method: #method,
                path: #path,
                query: &[#(#query),*],
                doc: crate::api::doc(#doc),
                handler: crate::api::doc(#handler),
                body: #body,
                raw: #raw,
                consistency: #consistency,
                responses: &[#(#responses),*],
                tools: &[#(#tools),*],
            }
        }
    });
    quote! {
        /// Every call of the list, in table order.
        pub static ROUTES: &[crate::api::Route] = &[#(#routes),*];
        #(#status_checks)*
    }
}
