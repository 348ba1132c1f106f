//! `resolve` (method + path → which route) and `answer` (that route's
//! handler, with the input rules every call has).
//!
//! `resolve` is the one matcher: routes are grouped by shape (the path with
//! parameter names erased) into one slice pattern each, so a known path with
//! another method is told apart from an unknown path (405 with `Allow`
//! versus 404). It names a route (its index in `ROUTES`, and its path
//! parameters as strings) before anything runs, and whatever else needs
//! "which route" (the preflight's `Allow`, logs, metrics) asks it too.
//! `HEAD` is the `GET` route of its path, and `Allow` names it after `GET`;
//! the pipeline (`pipeline::handle`) sends such an answer without its body.
//!
//! In `answer`, what every route does alike (ids, body, the store session of
//! its consistency) comes once, and only then the arm of that route: its
//! query, its body's type, its handler, its answer. Every handler's
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
    // The longest path, in segments: a longer request path is unknown
    // before it is split any further.
    let depth = shapes.iter().map(Vec::len).max().unwrap_or(1);
    let width = crate::check::MAX_PATH_PARAMS;

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
        // `HEAD` is every `GET` without its body (RFC 9110 9.3.2): the
        // same route, named beside it wherever methods are listed.
        let get = members.iter().find(|(_, r)| r.method == "GET");
        let allow = members
            .iter()
            .flat_map(|(_, r)| {
                let head = (r.method == "GET").then(|| "HEAD".to_string());
                std::iter::once(r.method.to_string()).chain(head)
            })
            .collect::<Vec<_>>()
            .join(", ");
        let padding: Vec<TokenStream> = (bound.len()..width)
            .map(|_| quote!(::core::option::Option::None))
            .collect();
        let arm = |method: String, i: usize| {
            quote! {
                #method => crate::api::Resolved::Route {
                    index: #i,
                    params: [#(::core::option::Option::Some(*#bound),)* #(#padding,)*],
                },
            }
        };
        let methods = members.iter().map(|(i, r)| arm(r.method.to_string(), *i));
        let head = get.map(|(i, _)| arm("HEAD".to_string(), *i));
        quote! {
            [#(#pattern),*] => match method {
                #(#methods)*
                #head
                _ => crate::api::Resolved::Method { allow: #allow },
            },
        }
    });

    let calls = table.routes.iter().enumerate().map(|(i, r)| {
        let call = call_route(i, r);
        quote!(#i => #call,)
    });

    quote! {
        /// Which route a method and a concrete path are: the one matcher.
        ///
        /// A trailing slash is forgiven (`/mcp/` is `/mcp`): clients paste
        /// URLs with one. Only one, and never down to the bare root, so `//`
        /// stays unknown.
        pub fn resolve<'a>(method: &str, path: &'a str) -> crate::api::Resolved<'a> {
            let path = match path.strip_suffix('/') {
                ::core::option::Option::Some(p) if p.len() > 1 && !p.ends_with('/') => p,
                _ => path,
            };
            // Split into a fixed array, not a `Vec`: no allocation, and a
            // path longer than any route's is unknown at once.
            let mut segments = [""; #depth];
            let mut n = 0;
            for s in path.strip_prefix('/').unwrap_or(path).split('/') {
                if n == #depth {
                    return crate::api::Resolved::NotFound;
                }
                segments[n] = s;
                n += 1;
            }
            match &segments[..n] {
                #(#arms)*
                _ => crate::api::Resolved::NotFound,
            }
        }

        /// Answers one request, once [`resolve`] has said which route it is.
        /// Never panics on input: every malformed request gets the
        /// contract's `{"error": CODE}`.
        pub async fn answer<'a>(
            req: &'a crate::http::Request,
            ctx: &'a crate::api::Ctx,
            resolved: crate::api::Resolved<'a>,
        ) -> crate::http::Response {
            let (__index, __params) = match resolved {
                crate::api::Resolved::Route { index, params } => (index, params),
                crate::api::Resolved::Method { allow } => {
                    return crate::http::Response::method_not_allowed(allow)
                }
                crate::api::Resolved::NotFound => {
                    return crate::http::Response::error(crate::error::Code::NotFound)
                }
            };
            let __route = &ROUTES[__index];
            // Path ids, then the body: a bad id is `not_found` before a bad
            // body is `bad_request`.
            for __p in __params.iter().flatten() {
                if !crate::http::Id::valid(__p) {
                    return crate::http::Response::error(crate::error::Code::NotFound);
                }
            }
            // A raw handler reads its own body (MCP) or has none.
            let __fields = if __route.body.is_some() && !__route.raw {
                match crate::json::body_object(&req.body) {
                    ::core::result::Result::Ok(fields) => fields,
                    ::core::result::Result::Err(e) => return crate::http::Response::from_error(&e),
                }
            } else {
                crate::json::Fields::new()
            };
            // The handler's `ctx.store` is a session of the route's
            // consistency (replica or primary) where the store has sessions
            // (D1); elsewhere the request's own context, untouched.
            let __session = ctx.session(__route.consistency);
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
    let parse_query = r.query.iter().map(|q| {
        let name = format_ident!("{}", q.name, span = generated_at(q.name.span()));
        let key = q.name.to_string();
        let ty = &q.ty;
        let code = super::code::of_query(q);
        let refuse = quote!(return crate::http::Response::error(crate::error::Code::#code));
        let bounds = q.bounds.as_ref().map(|(min, max)| {
            quote! {
                if #name.is_some_and(|v| !(#min..=#max).contains(&v)) {
                    #refuse
                }
            }
        });
        let default = q
            .default
            .as_ref()
            .map(|d| quote!(let #name = #name.unwrap_or(#d);));
        quote! {
            let #name: ::core::option::Option<#ty> =
                match crate::query::param::<#ty>(&req.query, #key) {
                    ::core::result::Result::Ok(v) => v,
                    ::core::result::Result::Err(()) => #refuse,
                };
            #bounds
            #default
        }
    });
    let mut names: Vec<syn::Ident> = params.iter().map(|(n, _)| n.clone()).collect();
    names.extend(
        r.query
            .iter()
            .map(|q| format_ident!("{}", q.name, span = generated_at(q.name.span()))),
    );
    if r.raw {
        // A raw handler builds its own response from the request (its
        // headers: a conditional read), after its declared parameters:
        // its path's, then its query's.
        let call = quote_spanned!(handler.span()=> #handler(req, ctx, #(#names,)*).await);
        return quote! {{
            #(#parse_params)*
            #(#parse_query)*
            #call
        }};
    }
    let (parse_body, body_arg) = match &r.body {
        Some(ty) => (
            quote! {
                let body: #ty = match crate::json::FromBody::from_body(&__fields) {
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
        ResponseKind::Json(ty) => (quote!(#ty), quote!(answer_json)),
        ResponseKind::Html => (quote!(crate::http::Html), quote!(answer_html)),
        ResponseKind::Media(_) => (quote!(::std::string::String), quote!(answer_text)),
        ResponseKind::Empty => (quote!(()), quote!(answer_empty)),
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
        // In the order the table declares them: the first that does not fit
        // names the error.
        #(#parse_query)*
        #parse_body
        let result = #call;
        let result: #result_ty = #result;
        ROUTES[#index].#respond(#status, result)
    }}
}

/// A generated token located at `span`: rustc's errors point there, but it
/// does not suggest edits to the table that would make no sense in it
/// (such as deleting the path to drop an argument).
fn generated_at(span: proc_macro2::Span) -> proc_macro2::Span {
    proc_macro2::Span::call_site().located_at(span)
}
