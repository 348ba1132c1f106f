//! Every mistake a contributor can make in the table, as a spanned error.
//!
//! Errors are gathered in a [`Ctxt`] rather than returned at the first one,
//! as serde_derive does: the compiler then shows every mistake at once, each
//! pointing at the token that is wrong.
//!
//! What only rustc can know is left to it, with the expansion spanned so that
//! its error lands on the table too: an error code that is not a
//! `crate::error::Code` variant (at the code), a handler that does not take
//! the route's parameters or body (at the handler), a handler whose success
//! type is not the table's (at the type). `needhave/tests/ui/` holds one
//! fixture per mistake, checks and rustc's alike.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{Ident, LitInt};

use crate::ast::{Response, ResponseKind, Route, Segment, Source, Table, Tool};

pub const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];
/// The words that may stand between a route's handler and `->`.
const MARKS: &[&str] = &["raw", "replica"];
/// The width of the parameters the matcher returns, as the runtime's
/// `api::MAX_PATH_PARAMS` declares it: the generated matcher fills an array
/// of this size, so a difference is a compile error in the generated code.
pub const MAX_PATH_PARAMS: usize = 2;
const HINTS: &[&str] = &["read_only", "idempotent"];

#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(tokens, message));
    }

    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.into_inner().into_iter();
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        for e in errors {
            first.combine(e);
        }
        Err(first)
    }
}

pub fn check(table: &Table) -> syn::Result<()> {
    let cx = Ctxt::default();
    let mut seen: HashMap<(String, Vec<Option<String>>), &Route> = HashMap::new();
    for route in &table.routes {
        check_route(&cx, route);
        let key = (route.method.to_string(), route.shape());
        if let Some(first) = seen.get(&key) {
            let why = if first.path.value() == route.path.value() {
                String::new()
            } else {
                format!(
                    " as {} {} (parameter names do not tell paths apart)",
                    first.method,
                    first.path.value()
                )
            };
            cx.error_spanned_by(
                &route.path,
                format!(
                    "duplicate route: {} {} is already in the table{why}",
                    route.method,
                    route.path.value(),
                ),
            );
        } else {
            seen.insert(key, route);
        }
    }
    let mut names = HashSet::new();
    for tool in &table.tools {
        if !names.insert(tool.name.to_string()) {
            cx.error_spanned_by(
                &tool.name,
                format!(
                    "duplicate tool name `{}`: MCP clients call tools by name",
                    tool.name
                ),
            );
        }
        check_tool(&cx, table, tool);
    }
    cx.check()
}

/// Only doc comments: they are the description a reader, the OpenAPI
/// document or a model sees. Anything else would be silently dropped.
fn check_attrs(cx: &Ctxt, attrs: &[syn::Attribute]) {
    for attr in attrs.iter().filter(|a| !a.path().is_ident("doc")) {
        cx.error_spanned_by(
            attr,
            "only doc comments (`/// …`) may stand before a routes! entry",
        );
    }
}

/// Two tokens spanning one response, for an error that covers all of
/// `404 Post` (an error spans from its first token to its last).
fn response_tokens(resp: &Response) -> TokenStream {
    let first = &resp.status;
    let last = Ident::new("end", resp.end);
    quote!(#first #last)
}

fn check_route(cx: &Ctxt, route: &Route) {
    check_attrs(cx, &route.attrs);
    if route.doc.is_empty() {
        cx.error_spanned_by(
            &route.method,
            "a route needs a doc comment: it is the operation's description in the OpenAPI document",
        );
    }
    let method = route.method.to_string();
    if !METHODS.contains(&method.as_str()) {
        cx.error_spanned_by(
            &route.method,
            format!(
                "unknown method `{method}`; expected one of {}",
                METHODS.join(", ")
            ),
        );
    }
    check_path(cx, &route.path);
    check_marks(cx, route, &method);
    check_query(cx, route, &method);
    if let (Some(body), "GET") = (&route.body, method.as_str()) {
        cx.error_spanned_by(
            body,
            "a GET route takes no body: drop the `(…)`, or use POST",
        );
    }
    let mut statuses = HashSet::new();
    let mut codes_seen = HashSet::new();
    let mut success: Option<&Response> = None;
    let mut bad_status = false;
    for resp in &route.responses {
        let Response { status, kind, .. } = resp;
        if !status.suffix().is_empty() {
            cx.error_spanned_by(status, "write a status without a type suffix");
            bad_status = true;
            continue;
        }
        let Ok(code) = status.base10_parse::<u16>() else {
            cx.error_spanned_by(
                status,
                format!("{status} is not an HTTP status (100 to 599)"),
            );
            bad_status = true;
            continue;
        };
        if !(100..=599).contains(&code) {
            cx.error_spanned_by(status, format!("{code} is not an HTTP status (100 to 599)"));
            bad_status = true;
            continue;
        }
        if !statuses.insert(code) {
            cx.error_spanned_by(status, format!("status {code} is listed twice"));
        }
        match kind {
            ResponseKind::Errors(codes) => {
                if code < 400 {
                    cx.error_spanned_by(
                        response_tokens(resp),
                        format!("error codes go with a 4xx or 5xx status, not {code}"),
                    );
                }
                if codes.is_empty() {
                    cx.error_spanned_by(
                        response_tokens(resp),
                        format!("list at least one error code under {code}"),
                    );
                }
                for c in codes {
                    let name = c.to_string();
                    let snake = !name.is_empty()
                        && name
                            .chars()
                            .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_');
                    if !snake {
                        cx.error_spanned_by(
                            c,
                            format!(
                                "write error codes as the JSON says them: `{}`, not `{name}`",
                                snake_case(&name)
                            ),
                        );
                    } else if !codes_seen.insert(name.clone()) {
                        cx.error_spanned_by(
                            c,
                            format!("error code `{name}` is listed twice in this route"),
                        );
                    }
                }
            }
            _ => {
                // A raw handler answers as it likes (MCP's JSON-RPC errors);
                // a typed handler's one body is its success, and its errors
                // are `{"error": CODE}`.
                if !route.raw && !(200..300).contains(&code) {
                    cx.error_spanned_by(
                        response_tokens(resp),
                        format!(
                            "a typed route answers {code} as {{\"error\": CODE}}: list the codes \
                             (`{code} [code, …]`), or mark the handler `raw` if it builds \
                             its own responses"
                        ),
                    );
                } else if let (false, Some(_)) = (route.raw, success) {
                    cx.error_spanned_by(
                        response_tokens(resp),
                        "a second success response: a typed route has exactly one \
                         (a 2xx with a type, `html` or `empty`)",
                    );
                }
                success = success.or(Some(resp));
            }
        }
    }
    // A response with a bad status was already reported; it may have been
    // meant as the success.
    if !route.raw && success.is_none() && !bad_status {
        let all: TokenStream = route.responses.iter().map(response_tokens).collect();
        cx.error_spanned_by(
            all,
            "no success response: add one 2xx with a type, `html` or `empty` \
             (or mark the handler `raw` if it builds its own responses)",
        );
    }
}

/// The marks after the handler: each known, each once, and `replica` only
/// where a stale answer is harmless.
fn check_marks(cx: &Ctxt, route: &Route, method: &str) {
    let mut seen = HashSet::new();
    for mark in &route.marks {
        let name = mark.to_string();
        if !MARKS.contains(&name.as_str()) {
            cx.error_spanned_by(
                mark,
                format!(
                    "unknown mark `{name}` after the handler; expected `raw` (the handler \
                     builds its own responses) or `replica` (the route may read from a read \
                     replica)"
                ),
            );
        } else if !seen.insert(name.clone()) {
            cx.error_spanned_by(mark, format!("`{name}` is written twice"));
        } else if name == "replica" && method != "GET" {
            cx.error_spanned_by(
                mark,
                format!(
                    "`replica` on a {method} route: a {method} writes, or reads behind a secret \
                     or a key, and must read the primary (an author who has just accepted must \
                     never read a stale 404); only a public GET may read from a replica"
                ),
            );
        }
    }
}

/// The integer types a bounded query parameter may have (those
/// `crate::query::FromQuery` reads).
const INTEGERS: &[&str] = &["u32"];

/// The query parameters of a route: on a GET only (typed or raw: the
/// dispatcher reads and checks them for either), each named once
/// and unlike a path parameter, documented, its error code one the route
/// lists under a 4xx, its bounds and default on an integer and in order.
fn check_query(cx: &Ctxt, route: &Route, method: &str) {
    if let (Some(mark), false) = (&route.query_mark, route.query.is_empty()) {
        if method != "GET" {
            cx.error_spanned_by(
                mark,
                format!(
                    "query parameters on a {method} route: a {method} takes its input in its \
                     body; only a GET declares query parameters"
                ),
            );
        }
    }
    let params = route.params();
    let mut seen = HashSet::new();
    for q in &route.query {
        check_attrs(cx, &q.attrs);
        let name = q.name.to_string();
        if !name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            cx.error_spanned_by(
                &q.name,
                format!("`{name}` is not a query parameter name (lowercase letters and `_`)"),
            );
        } else if !seen.insert(name.clone()) {
            cx.error_spanned_by(
                &q.name,
                format!("query parameter `{name}` is declared twice"),
            );
        } else if params.contains(&name) {
            cx.error_spanned_by(
                &q.name,
                format!("`{name}` is already a path parameter of this route"),
            );
        }
        if q.doc.is_empty() {
            cx.error_spanned_by(
                &q.name,
                format!(
                    "query parameter `{name}` needs a doc comment: it is the parameter's \
                     description in the OpenAPI document and for a model"
                ),
            );
        }
        match &q.error {
            None => cx.error_spanned_by(
                &q.name,
                format!(
                    "say what a bad `{name}` gets: `{name}: … else bad_request` (a code the \
                     route lists under 400)"
                ),
            ),
            Some(code) => {
                let listed = route.responses.iter().any(|r| {
                    matches!(&r.kind, ResponseKind::Errors(codes) if codes.iter().any(|c| c == code))
                        && r.status.base10_parse::<u16>().is_ok_and(|s| (400..500).contains(&s))
                });
                if !listed {
                    cx.error_spanned_by(
                        code,
                        format!(
                            "a bad `{name}` gets `{code}`, which this route does not list: add it \
                             to its 400 codes (`400 [{code}]`)"
                        ),
                    );
                }
            }
        }
        let ty = q.ty.to_token_stream().to_string().replace(' ', "");
        let integer = INTEGERS.contains(&ty.as_str());
        if !integer {
            if let Some((min, _)) = &q.bounds {
                cx.error_spanned_by(
                    min,
                    format!(
                        "bounds need an integer type ({}), not `{ty}`: a type of its own \
                         checks its own bounds in `FromQuery`",
                        INTEGERS.join(", ")
                    ),
                );
            }
            if let Some(d) = &q.default {
                cx.error_spanned_by(
                    d,
                    format!(
                        "a default needs an integer type ({}), not `{ty}`",
                        INTEGERS.join(", ")
                    ),
                );
            }
            continue;
        }
        let value = |lit: &LitInt| -> Option<u32> {
            let v = lit.base10_parse::<u32>().ok();
            if v.is_none() {
                cx.error_spanned_by(lit, format!("`{lit}` is not a `{ty}`"));
            }
            v
        };
        let bounds = q.bounds.as_ref().map(|(a, b)| (value(a), value(b)));
        if let Some((Some(min), Some(max))) = bounds {
            if min > max {
                let (a, b) = q.bounds.as_ref().expect("bounds");
                cx.error_spanned_by(quote!(#a #b), format!("empty bounds: {min} is above {max}"));
            }
        }
        if let Some(d) = &q.default {
            if let (Some(v), Some((Some(min), Some(max)))) = (value(d), bounds) {
                if !(min..=max).contains(&v) {
                    cx.error_spanned_by(
                        d,
                        format!("the default {v} is outside the bounds {min}..={max}"),
                    );
                }
            }
        }
    }
}

/// `NotFound` → `not_found`, for the hint.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 && !out.ends_with('_') {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn check_path(cx: &Ctxt, path: &syn::LitStr) {
    let value = path.value();
    if !value.starts_with('/') {
        cx.error_spanned_by(path, format!("a path starts with `/`: \"/{value}\""));
        return;
    }
    let mut params = HashSet::new();
    for seg in crate::ast::segments(&value) {
        match seg {
            Segment::Param(p) => {
                let valid = !p.is_empty()
                    && p.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                    && syn::parse_str::<Ident>(&p).is_ok();
                if !valid {
                    cx.error_spanned_by(
                        path,
                        format!("`:{p}` is not a parameter name (lowercase letters and `_`)"),
                    );
                } else if !params.insert(p.clone()) {
                    cx.error_spanned_by(
                        path,
                        format!("parameter `:{p}` appears twice in this path"),
                    );
                }
            }
            Segment::Lit(l) => {
                if l.is_empty() {
                    if value != "/" {
                        cx.error_spanned_by(
                            path,
                            "a path has no empty segment (`//` or a trailing `/`)",
                        );
                    }
                } else if l.starts_with('{') || l.starts_with('<') {
                    let name = l.trim_matches(|c| matches!(c, '{' | '}' | '<' | '>'));
                    cx.error_spanned_by(
                        path,
                        format!("write a path parameter as `:{name}`, not `{l}`"),
                    );
                } else if !l
                    .chars()
                    // Upper case too: some names are fixed by their
                    // formats (agent skills' `SKILL.md`).
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
                {
                    cx.error_spanned_by(
                        path,
                        format!(
                            "`{l}` is not a path segment (letters, digits, `-`, `_`, `.`; \
                             no query string)"
                        ),
                    );
                }
            }
        }
    }
    if params.len() > MAX_PATH_PARAMS {
        cx.error_spanned_by(
            path,
            format!(
                "a path has at most {MAX_PATH_PARAMS} parameters (`needhave::api::MAX_PATH_PARAMS`); \
                 this one has {}",
                params.len()
            ),
        );
    }
}

fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

fn check_tool(cx: &Ctxt, table: &Table, tool: &Tool) {
    check_attrs(cx, &tool.attrs);
    for hint in &tool.hints {
        if !HINTS.contains(&hint.to_string().as_str()) {
            cx.error_spanned_by(
                hint,
                format!(
                    "unknown tool hint `{hint}`; expected {}",
                    HINTS.join(" or ")
                ),
            );
        }
    }
    if tool.title.value().trim().is_empty() {
        cx.error_spanned_by(&tool.title, "a tool has a title");
    }
    if tool.doc.is_empty() {
        cx.error_spanned_by(
            &tool.name,
            "a tool needs a doc comment: it is the description a model reads",
        );
    }
    // An argument without a type takes its query parameter's, as an
    // `Option`: `None` here.
    let mut fields: HashMap<String, Option<&syn::Type>> = HashMap::new();
    for f in &tool.fields {
        if fields.insert(f.name.to_string(), f.ty.as_ref()).is_some() {
            cx.error_spanned_by(&f.name, format!("argument `{}` is declared twice", f.name));
        }
        if f.ty.is_none() && table.fed_query(tool, &f.name).is_none() {
            cx.error_spanned_by(
                &f.name,
                format!(
                    "argument `{}` has no type, and no step passes it to a query parameter it \
                     could take one from: write `{}: Type`",
                    f.name, f.name
                ),
            );
        }
    }
    let mut used: HashSet<String> = HashSet::new();
    let has_fallback = tool.branches.iter().any(|b| b.when.is_none());
    let last = tool.branches.len() - 1;
    for (i, branch) in tool.branches.iter().enumerate() {
        match &branch.when {
            Some(when) => {
                used.insert(when.to_string());
                match fields.get(&when.to_string()) {
                    None => cx.error_spanned_by(
                        when,
                        format!("`{when}` is not an argument of tool `{}`", tool.name),
                    ),
                    Some(Some(ty)) if !is_option(ty) => cx.error_spanned_by(
                        when,
                        format!(
                            "`if {when}` picks a branch when an optional argument is given, \
                             but `{when}` is `{}`, always given: make it `Option<…>`",
                            ty.to_token_stream().to_string().replace(' ', "")
                        ),
                    ),
                    _ => {}
                }
            }
            None if i != last => cx.error_spanned_by(
                &branch.steps[0].method,
                "a branch without `if` is the fallback and must come last: \
                 the branches after it could never run",
            ),
            None => {}
        }
        if i == last && !has_fallback {
            cx.error_spanned_by(
                branch.when.as_ref().unwrap_or(&branch.steps[0].method),
                "the last branch is the fallback, for a call that gives none of the \
                 `if` arguments: drop its `if`",
            );
        }
        for (j, step) in branch.steps.iter().enumerate() {
            let mut given = HashSet::new();
            for arg in &step.args {
                if !given.insert(arg.name.to_string()) {
                    cx.error_spanned_by(&arg.name, format!("`{}` is given twice", arg.name));
                }
                match &arg.source {
                    Source::Arg(a) => {
                        used.insert(a.to_string());
                        if !fields.contains_key(&a.to_string()) {
                            cx.error_spanned_by(
                                a,
                                format!("`{a}` is not an argument of tool `{}`", tool.name),
                            );
                        }
                    }
                    Source::Prev(p) if j == 0 => cx.error_spanned_by(
                        p,
                        "`prev.` reads the previous step's result; the first step has none",
                    ),
                    _ => {}
                }
            }
            check_step_route(cx, table, step, &given);
        }
    }
    for f in &tool.fields {
        if !used.contains(&f.name.to_string()) {
            cx.error_spanned_by(
                &f.name,
                format!(
                    "argument `{}` is not used: pass it to a step, test it with `if`, or drop it",
                    f.name
                ),
            );
        }
    }
}

/// A step calls a route of the table, written as the table writes it, with
/// every path parameter given and, for a route without a body, nothing else.
fn check_step_route(cx: &Ctxt, table: &Table, step: &crate::ast::Step, given: &HashSet<String>) {
    let shape = crate::ast::shape(&step.path.value());
    let Some(route) = table
        .routes
        .iter()
        .find(|r| r.method == step.method && r.shape() == shape)
    else {
        let others: Vec<String> = table
            .routes
            .iter()
            .filter(|r| r.shape() == shape)
            .map(|r| format!("{} {}", r.method, r.path.value()))
            .collect();
        let hint = if others.is_empty() {
            String::new()
        } else {
            format!(" (it has {})", others.join(", "))
        };
        cx.error_spanned_by(
            &step.path,
            format!(
                "no route {} {} in this table{hint}",
                step.method,
                step.path.value()
            ),
        );
        return;
    };
    // Compared as segments: a route path without its leading `/` is
    // reported once, at the route.
    if route.segments() != crate::ast::segments(&step.path.value()) {
        cx.error_spanned_by(
            &step.path,
            format!(
                "write the path as the table does: \"{}\"",
                route.path.value()
            ),
        );
        return;
    }
    let params = route.params();
    let missing: Vec<&String> = params.iter().filter(|p| !given.contains(*p)).collect();
    let stray: Vec<&crate::ast::Arg> = match route.body {
        Some(_) => Vec::new(),
        None => step
            .args
            .iter()
            .filter(|a| {
                let name = a.name.to_string();
                !params.contains(&name) && !route.query.iter().any(|q| q.name == name)
            })
            .collect(),
    };
    // The usual slip, `{ post_id }` for `{ id: post_id }`: one error, with
    // the fix.
    if let ([p], [arg]) = (missing.as_slice(), stray.as_slice()) {
        cx.error_spanned_by(
            &arg.name,
            format!(
                "`{}` is not a path parameter of {} {}, and the route takes no body: \
                 write `{p}: {}`",
                arg.name,
                step.method,
                route.path.value(),
                source_text(&arg.source)
            ),
        );
        return;
    }
    for p in missing {
        cx.error_spanned_by(
            &step.path,
            format!("path parameter `:{p}` is not given: add `{p}: <argument>` to this step"),
        );
    }
    for arg in stray {
        cx.error_spanned_by(
            &arg.name,
            format!(
                "`{}` is neither a path parameter, a query parameter nor a body field: {} {} takes no body",
                arg.name,
                step.method,
                route.path.value()
            ),
        );
    }
}

/// A step argument's source as written in the table.
fn source_text(source: &Source) -> String {
    match source {
        Source::Arg(a) => a.to_string(),
        Source::Lit(l) => format!("{:?}", l.value()),
        Source::Prev(p) => format!("prev.{p}"),
    }
}
