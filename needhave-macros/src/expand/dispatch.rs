//! `dispatch`: method + path → handler, with the contract's input rules.
//!
//! Routes are grouped by shape (the path with parameter names erased) into
//! one slice pattern each, so a known path with another method is told apart
//! from an unknown path: 405 with `Allow` versus 404.
//!
//! The match names a route (its index in `ROUTES`, and its path parameters
//! as strings) before anything runs; what every route does alike (the
//! store session of its consistency) follows once, and only then the arm of
//! that route: its ids, its body, its handler, its answer. Every handler's
//! future is inlined into this one function in the Worker, so a step written
//! in each arm is paid once per route there.
//!
//! Spans matter here: a handler that does not fit its line is rustc's error,
//! not the macro's, so the generated call carries the table's spans. The call
//! is spanned at the handler (wrong arity: at the handler), each argument at
//! what it comes from (a parameter at the path, the body at its type), and the
//! success type is checked in a statement of its own spanned at the table's
//! type, so a handler returning another type is reported there.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{ResponseKind, Route, Segment, Table};

pub fn expand(table: &Table) -> TokenStream {
    // Shapes in an order where a literal segment is tried before a
    // parameter in the same place (`/threads/messages` before `/threads/:id`).
    let mut shapes: Vec<Vec<Option<String>>> = Vec::new();
    for r in &table.routes {
        if !shapes.contains(&r.shape()) {
            shapes.push(r.shape());
        }
    }
    shapes.sort_by_key(|s| {
        s.iter()
            .map(|seg| match seg {
                Some(l) => (0, l.clone()),
                None => (1, String::new()),
            })
            .collect::<Vec<_>>()
    });

    // Every route's path parameters travel in one array of the largest
    // count, unused places `None` (and all of a raw route's, which reads its
    // own request).
    let width = table
        .routes
        .iter()
        .map(|r| r.params().len())
        .max()
        .unwrap_or(0);

    let arms = shapes.iter().map(|shape| {
        let pattern = shape.iter().enumerate().map(|(i, seg)| match seg {
            Some(lit) => quote!(#lit),
            None => {
                let b = format_ident!("__p{}", i);
                quote!(#b)
            }
        });
        let bound: Vec<syn::Ident> = shape
            .iter()
            .enumerate()
            .filter(|(_, seg)| seg.is_none())
            .map(|(i, _)| format_ident!("__p{}", i))
            .collect();
        let members: Vec<(usize, &Route)> = table
            .routes
            .iter()
            .enumerate()
            .filter(|(_, r)| &r.shape() == shape)
            .collect();
        let allow = members
            .iter()
            .map(|(_, r)| r.method.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let methods = members.iter().map(|(i, r)| {
            let method = r.method.to_string();
            let given = if r.raw { &[][..] } else { &bound[..] };
            let padding = (given.len()..width).map(|_| quote!(::core::option::Option::None));
            let params = quote!([#(::core::option::Option::Some(*#given),)* #(#padding,)*]);
            let has_body = r.body.is_some() && !r.raw;
            quote!(#method => (#i, #params, #has_body),)
        });
        quote! {
            [#(#pattern),*] => match req.method.as_str() {
                #(#methods)*
                _ => return crate::http::Response::method_not_allowed(#allow),
            },
        }
    });

    let calls = table.routes.iter().enumerate().map(|(i, r)| {
        let call = call_route(i, r);
        quote!(#i => #call,)
    });

    quote! {
        /// Answers one request. Never panics on input: every malformed request
        /// gets the contract's `{"error": CODE}`.
        pub async fn dispatch(req: &crate::http::Request, ctx: &crate::api::Ctx) -> crate::http::Response {
            // A trailing slash is forgiven (`/mcp/` is `/mcp`): clients paste
            // URLs with one. Only one, and never down to the bare root, so
            // `//` stays unknown.
            let path = match req.path.strip_suffix('/') {
                ::core::option::Option::Some(p) if p.len() > 1 && !p.ends_with('/') => p,
                _ => req.path.as_str(),
            };
            let segments: ::std::vec::Vec<&str> =
                path.strip_prefix('/').unwrap_or(path).split('/').collect();
            // First which route (and its path's parameters), then what is the
            // same for every route, once, then the route's own call: the steps
            // every route shares are not repeated in each route's arm.
            let (__index, __params, __has_body): (usize, [::core::option::Option<&str>; #width], bool) =
                match segments.as_slice() {
                    #(#arms)*
                    _ => return crate::http::Response::error(crate::error::Code::NotFound),
                };
            // Path ids, then the body: a bad id is `not_found` before a bad
            // body is `bad_request`.
            for __p in __params.iter().flatten() {
                if !crate::http::Id::valid(__p) {
                    return crate::http::Response::error(crate::error::Code::NotFound);
                }
            }
            let __fields = if __has_body {
                match crate::http::body_object(req) {
                    ::core::result::Result::Ok(fields) => fields,
                    ::core::result::Result::Err(e) => return crate::http::Response::from_error(&e),
                }
            } else {
                crate::http::Fields::new()
            };
            // The handler's `ctx.store` is a session of the route's
            // consistency (replica or primary) where the store has sessions
            // (D1); elsewhere the request's own context, untouched.
            let __session = ctx.session(ROUTES[__index].consistency);
            let ctx: &crate::api::Ctx = __session.as_ref().unwrap_or(ctx);
            match __index {
                #(#calls)*
                _ => crate::http::Response::error(crate::error::Code::NotFound),
            }
        }
    }
}

fn call_route(index: usize, r: &Route) -> TokenStream {
    let handler = &r.handler;
    if r.raw {
        return quote_spanned!(handler.span()=> #handler(req, ctx).await);
    }
    let params: Vec<(syn::Ident, usize)> = r
        .segments()
        .into_iter()
        .filter_map(|s| match s {
            Segment::Param(p) => Some(p),
            Segment::Lit(_) => None,
        })
        .enumerate()
        .map(|(k, p)| {
            (
                format_ident!("{}", p, span = generated_at(r.path.span())),
                k,
            )
        })
        .collect();
    let parse_params = params.iter().map(|(name, k)| {
        quote! {
            // Checked above (so that every bad id is `not_found` before any
            // body is read); taken here as its type.
            let #name = crate::http::Id::checked(__params[#k].unwrap_or_default());
        }
    });
    let names: Vec<&syn::Ident> = params.iter().map(|(n, _)| n).collect();
    let (parse_body, body_arg) = match &r.body {
        Some(ty) => (
            quote! {
                let body: #ty = match crate::http::FromBody::from_body(&__fields) {
                    ::core::option::Option::Some(v) => v,
                    ::core::option::Option::None => {
                        return crate::http::Response::error(crate::error::Code::BadRequest)
                    }
                };
            },
            quote_spanned!(ty.span()=> body),
        ),
        None => (quote!(), quote!()),
    };
    let success = r.success().expect("checked: one success response");
    let status = &success.status;
    let (ty, respond) = match &success.kind {
        ResponseKind::Json(ty) => (quote!(#ty), quote!(from_json)),
        ResponseKind::Html => (quote!(crate::http::Html), quote!(from_html)),
        ResponseKind::Media(_) => (quote!(::std::string::String), quote!(from_text)),
        ResponseKind::Empty => (quote!(()), quote!(from_empty)),
        ResponseKind::Errors(_) => unreachable!("success is not an error list"),
    };
    let ty_span = match &success.kind {
        ResponseKind::Json(t) => t.span(),
        _ => status.span(),
    };
    let call = quote_spanned!(handler.span()=> #handler(ctx, #(#names,)* #body_arg).await);
    let result_ty = quote_spanned!(ty_span=> ::core::result::Result<#ty, crate::error::ApiError>);
    let result = quote_spanned!(ty_span=> result);
    quote! {{
        #(#parse_params)*
        #parse_body
        let result = #call;
        let result: #result_ty = #result;
        crate::http::Response::#respond(&ROUTES[#index], #status, result)
    }}
}

/// A generated token located at `span`: rustc's errors point there, but it
/// does not suggest edits to the table that would make no sense in it
/// (such as deleting the path to drop an argument).
fn generated_at(span: proc_macro2::Span) -> proc_macro2::Span {
    proc_macro2::Span::call_site().located_at(span)
}
