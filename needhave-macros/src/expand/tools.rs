//! `TOOLS`: the MCP tool table, and each tool's argument type.
//!
//! A tool is a small plan over routes, not a second implementation: the MCP
//! endpoint runs the plan through the dispatcher in process, and the stdio
//! server runs the same plan as HTTP calls against the live list. A tool's
//! answer is made of its routes' answers, so its output schema is too: for
//! each branch, the success type of each step's route, which `mcp::tools`
//! merges into the answers that branch can give.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::{ResponseKind, Source, Table};

pub fn expand(table: &Table) -> TokenStream {
    let mut structs = Vec::new();
    let mut entries = Vec::new();
    let mut schemas = Vec::new();
    let mut outputs = Vec::new();
    for tool in &table.tools {
        let name = tool.name.to_string();
        let args = format_ident!("{}", tool.name);
        let fields = tool.fields.iter().map(|f| {
            let n = &f.name;
            if let Some(ty) = &f.ty {
                let attrs = &f.attrs;
                return quote!(#(#attrs)* pub #n: #ty);
            }
            // Taken from the query parameter the argument feeds: its type,
            // optional, and its description unless the tool gives one.
            let q = table
                .fed_query(tool, n)
                .expect("checked: an untyped argument feeds a parameter");
            let ty = &q.ty;
            let attrs = if f.attrs.is_empty() {
                &q.attrs
            } else {
                &f.attrs
            };
            let range = q
                .bounds
                .as_ref()
                .map(|(min, max)| quote!(#[schemars(range(min = #min, max = #max))]));
            quote!(#(#attrs)* #range pub #n: ::core::option::Option<#ty>)
        });
        // Native only, for schemars: the calls' arguments are checked against
        // the schema checked in from these (`mcp::tools::check_args`), which
        // keeps a serde deserializer per tool out of the Worker.
        structs.push(quote! {
            #[allow(non_camel_case_types, dead_code)]
            #[derive(::schemars::JsonSchema)]
            #[schemars(deny_unknown_fields)]
            pub struct #args { #(#fields,)* }
        });
        schemas.push(quote!((#name, ::schemars::schema_for!(tool_args::#args))));
        let branch_outputs = tool.branches.iter().map(|b| {
            let steps = b.steps.iter().map(|s| {
                let shape = crate::ast::shape(&s.path.value());
                // `check.rs` has made sure the route exists; a route that
                // answers no JSON type adds nothing a schema could say.
                let ty = table
                    .routes
                    .iter()
                    .find(|r| r.method == s.method && r.shape() == shape)
                    .and_then(|r| r.success())
                    .and_then(|r| match &r.kind {
                        ResponseKind::Json(ty) => Some(quote!(#ty)),
                        _ => None,
                    })
                    .unwrap_or_else(|| quote!(::serde_json::Value));
                let conditional = s.when_prev.is_some();
                quote!((#conditional, crate::gen::tools::answer_schema::<#ty>()))
            });
            quote!(::std::vec![#(#steps),*])
        });
        outputs.push(quote!((#name, ::std::vec![#(#branch_outputs),*])));

        let title = &tool.title;
        let doc = &tool.doc;
        let read_only = tool.hints.iter().any(|h| h == "read_only");
        let idempotent = read_only || tool.hints.iter().any(|h| h == "idempotent");
        let branches = tool.branches.iter().map(|b| {
            let when = opt_str(b.when.as_ref().map(|w| w.to_string()));
            let steps = b.steps.iter().map(|s| {
                let when_prev = opt_str(s.when_prev.as_ref().map(|w| w.to_string()));
                let method = s.method.to_string();
                let path = &s.path;
                let query: Vec<String> = table
                    .route_of(s)
                    .map(|r| r.query.iter().map(|q| q.name.to_string()).collect())
                    .unwrap_or_default();
                let args = s.args.iter().map(|a| {
                    let n = a.name.to_string();
                    let src = match &a.source {
                        Source::Arg(i) => {
                            let i = i.to_string();
                            quote!(crate::api::Source::Arg(#i))
                        }
                        Source::Lit(l) => quote!(crate::api::Source::Lit(#l)),
                        Source::Prev(i) => {
                            let i = i.to_string();
                            quote!(crate::api::Source::Prev(#i))
                        }
                    };
                    quote!((#n, #src))
                });
                quote! {
                    crate::api::Step {
                        when_prev: #when_prev,
                        method: #method,
                        path: #path,
                        query: &[#(#query),*],
                        args: &[#(#args),*],
                    }
                }
            });
            quote!(crate::api::Branch { when: #when, steps: &[#(#steps),*] })
        });
        entries.push(quote! {
            crate::api::Tool {
                name: #name,
                title: crate::api::doc(#title),
                description: crate::api::doc(#doc),
                read_only: #read_only,
                idempotent: #idempotent,
                branches: &[#(#branches),*],
            }
        });
    }
    quote! {
        /// Each tool's arguments as a type, which schemars turns into the
        /// tool's input schema. Native only, like the OpenAPI builder.
        #[cfg(not(target_arch = "wasm32"))]
        pub mod tool_args {
            #[allow(unused_imports)]
            use super::*;
            #(#structs)*
        }

        /// The MCP tools, in table order.
        pub static TOOLS: &[crate::api::Tool] = &[#(#entries),*];

        /// Each tool's input schema as schemars writes it (tidied for MCP
        /// clients in `mcp::tools`). Native only, like the OpenAPI builder.
        #[cfg(not(target_arch = "wasm32"))]
        pub fn tool_input_schemas() -> ::std::vec::Vec<(&'static str, ::schemars::Schema)> {
            ::std::vec![#(#schemas),*]
        }

        /// Per tool, per branch, per step: whether the step runs only on the
        /// previous answer's say-so, and its route's answer schema. Native
        /// only; `mcp::tools` turns these into the checked-in output schemas.
        #[cfg(not(target_arch = "wasm32"))]
        #[allow(clippy::type_complexity)]
        pub fn tool_output_schemas(
        ) -> ::std::vec::Vec<(&'static str, ::std::vec::Vec<::std::vec::Vec<(bool, ::serde_json::Value)>>)> {
            ::std::vec![#(#outputs),*]
        }
    }
}

fn opt_str(s: Option<String>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}
