//! `TOOLS`: the MCP tool table, and each tool's argument type.
//!
//! A tool is a small plan over routes, not a second implementation: the MCP
//! endpoint runs the plan through the dispatcher in process, and the stdio
//! server runs the same plan as HTTP calls against the live list.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::{Source, Table};

pub fn expand(table: &Table) -> TokenStream {
    let mut structs = Vec::new();
    let mut entries = Vec::new();
    let mut schemas = Vec::new();
    for tool in &table.tools {
        let name = tool.name.to_string();
        let args = format_ident!("{}", tool.name);
        let fields = tool.fields.iter().map(|f| {
            let attrs = &f.attrs;
            let n = &f.name;
            let ty = &f.ty;
            quote!(#(#attrs)* pub #n: #ty)
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
                let args = s.args.iter().map(|a| {
                    let n = a.name.to_string();
                    let src = match &a.source {
                        Source::Arg(i) => {
                            let i = i.to_string();
                            quote!(crate::table::Source::Arg(#i))
                        }
                        Source::Lit(l) => quote!(crate::table::Source::Lit(#l)),
                        Source::Prev(i) => {
                            let i = i.to_string();
                            quote!(crate::table::Source::Prev(#i))
                        }
                    };
                    quote!((#n, #src))
                });
                quote! {
                    crate::table::Step {
                        when_prev: #when_prev,
                        method: #method,
                        path: #path,
                        args: &[#(#args),*],
                    }
                }
            });
            quote!(crate::table::Branch { when: #when, steps: &[#(#steps),*] })
        });
        entries.push(quote! {
            crate::table::Tool {
                name: #name,
                title: #title,
                description: #doc,
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
        pub static TOOLS: &[crate::table::Tool] = &[#(#entries),*];

        /// Each tool's input schema as schemars writes it (tidied for MCP
        /// clients in `mcp::tools`). Native only, like the OpenAPI builder.
        #[cfg(not(target_arch = "wasm32"))]
        pub fn tool_input_schemas() -> ::std::vec::Vec<(&'static str, ::schemars::Schema)> {
            ::std::vec![#(#schemas),*]
        }
    }
}

fn opt_str(s: Option<String>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}
