//! Every mistake a contributor can make in the table, as a spanned error.
//!
//! Errors are gathered in a [`Ctxt`] rather than returned at the first one,
//! as serde_derive does: the compiler then shows every mistake at once, each
//! pointing at the token that is wrong.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Display;

use quote::ToTokens;
use syn::Ident;

use crate::ast::{Response, ResponseKind, Route, Segment, Source, Table, Tool};

pub const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];
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
    let mut seen: HashMap<(String, Vec<Option<String>>), ()> = HashMap::new();
    for route in &table.routes {
        check_route(&cx, route);
        let key = (route.method.to_string(), route.shape());
        if seen.insert(key, ()).is_some() {
            cx.error_spanned_by(
                &route.path,
                format!(
                    "duplicate route: {} {} is already in the table",
                    route.method,
                    route.path.value()
                ),
            );
        }
    }
    let mut names = HashSet::new();
    for tool in &table.tools {
        if !names.insert(tool.name.to_string()) {
            cx.error_spanned_by(&tool.name, format!("duplicate tool name `{}`", tool.name));
        }
        check_tool(&cx, table, tool);
    }
    cx.check()
}

fn check_route(cx: &Ctxt, route: &Route) {
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
    if route.body.is_some() && method == "GET" {
        cx.error_spanned_by(&route.path, "a GET route takes no body");
    }
    let mut statuses = HashSet::new();
    let mut successes = 0;
    for Response { status, kind } in &route.responses {
        let Ok(code) = status.base10_parse::<u16>() else {
            cx.error_spanned_by(status, "a status is a number from 100 to 599");
            continue;
        };
        if !(100..=599).contains(&code) {
            cx.error_spanned_by(status, format!("{code} is not an HTTP status (100 to 599)"));
            continue;
        }
        if !statuses.insert(code) {
            cx.error_spanned_by(status, format!("status {code} is listed twice"));
        }
        match kind {
            ResponseKind::Errors(codes) => {
                if code < 400 {
                    cx.error_spanned_by(
                        status,
                        format!("error codes go with a 4xx or 5xx status, not {code}"),
                    );
                }
                if codes.is_empty() {
                    cx.error_spanned_by(status, "list at least one error code");
                }
            }
            _ => {
                // A raw handler answers as it likes (MCP's JSON-RPC errors);
                // a typed handler's one body is its success.
                if !route.raw && !(200..300).contains(&code) {
                    cx.error_spanned_by(
                        status,
                        format!("a response body type goes with a 2xx status, not {code}"),
                    );
                }
                successes += 1;
            }
        }
    }
    if !route.raw && successes != 1 {
        cx.error_spanned_by(
            &route.path,
            "a route has exactly one success response (a 2xx with a type, `html` or `empty`); \
             mark a route whose handler builds its own responses `raw`",
        );
    }
}

fn check_path(cx: &Ctxt, path: &syn::LitStr) {
    let value = path.value();
    if !value.starts_with('/') {
        cx.error_spanned_by(path, "a path starts with `/`");
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
                    cx.error_spanned_by(path, format!("parameter `:{p}` appears twice"));
                }
            }
            Segment::Lit(l) => {
                if l.is_empty() && value != "/" {
                    cx.error_spanned_by(
                        path,
                        "a path has no empty segment (`//` or a trailing `/`)",
                    );
                }
            }
        }
    }
}

fn check_tool(cx: &Ctxt, table: &Table, tool: &Tool) {
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
    let fields: HashMap<String, &syn::Type> = tool
        .fields
        .iter()
        .map(|f| (f.name.to_string(), &f.ty))
        .collect();
    let is_option = |ty: &syn::Type| matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"));
    let last = tool.branches.len() - 1;
    for (i, branch) in tool.branches.iter().enumerate() {
        match &branch.when {
            Some(when) => match fields.get(&when.to_string()) {
                None => {
                    cx.error_spanned_by(when, format!("`{when}` is not an argument of this tool"))
                }
                Some(ty) if !is_option(ty) => cx.error_spanned_by(
                    when,
                    format!("`if {when}` tests an optional argument; `{when}` is always present"),
                ),
                _ => {}
            },
            None if i != last => cx.error_spanned_by(
                &branch.steps[0].method,
                "a branch without `if` is the fallback and must come last",
            ),
            None => {}
        }
        if i == last && branch.when.is_some() {
            cx.error_spanned_by(
                &branch.steps[0].method,
                "the last branch is the fallback: drop its `if`",
            );
        }
        for (j, step) in branch.steps.iter().enumerate() {
            let Some(route) = table.routes.iter().find(|r| {
                r.method == step.method && r.shape() == crate::ast::shape(&step.path.value())
            }) else {
                cx.error_spanned_by(
                    &step.path,
                    format!(
                        "no route {} {} in this table",
                        step.method,
                        step.path.value()
                    ),
                );
                continue;
            };
            let given: HashSet<String> = step.args.iter().map(|a| a.name.to_string()).collect();
            for param in crate::ast::segments(&step.path.value()) {
                if let Segment::Param(p) = param {
                    if !given.contains(&p) {
                        cx.error_spanned_by(
                            &step.path,
                            format!("path parameter `:{p}` is not given: add `{p}: <argument>`"),
                        );
                    }
                }
            }
            if route.body.is_none() {
                let params = route.params();
                for arg in &step.args {
                    if !params.contains(&arg.name.to_string()) {
                        cx.error_spanned_by(
                            &arg.name,
                            format!(
                                "`{}` is neither a path parameter nor a body field: {} {} takes no body",
                                arg.name,
                                step.method,
                                route.path.value()
                            ),
                        );
                    }
                }
            }
            for arg in &step.args {
                match &arg.source {
                    Source::Arg(a) if !fields.contains_key(&a.to_string()) => cx.error_spanned_by(
                        a,
                        format!("`{a}` is not an argument of tool `{}`", tool.name),
                    ),
                    Source::Prev(p) if j == 0 => cx.error_spanned_by(
                        p,
                        "`prev.` reads the previous step's result; the first step has none",
                    ),
                    _ => {}
                }
            }
        }
    }
}
