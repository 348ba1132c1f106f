//! What `routes!` generates is made of these types: the static description
//! of every route (`ROUTES`) and every MCP tool (`TOOLS`), and [`Api`], the
//! whole table as one value.

use crate::error::Code;
use crate::http::{Request, Response};
use crate::platform::BoxFuture;
pub use crate::store::Consistency;
use crate::Ctx;

/// The whole table, handed down to whatever describes or re-enters the list
/// (the pages, the documents, MCP) through [`Ctx::api`], as dropshot hands
/// its API description to the OpenAPI endpoint. Nothing below `routes.rs`
/// imports the table back, so there is no import circle, and a document is a
/// pure function of an `Api` that a test may build by hand.
pub struct Api {
    pub routes: &'static [Route],
    pub tools: &'static [Tool],
    /// The generated dispatcher, boxed: MCP runs a tool's plan through it.
    pub dispatch: for<'a> fn(&'a Request, &'a Ctx) -> BoxFuture<'a, Response>,
    /// The typed half of the OpenAPI document (schemas need the Rust types,
    /// so only generated code can add them). Native only.
    #[cfg(not(target_arch = "wasm32"))]
    pub openapi_operations: fn(&mut crate::pages::openapi::Builder),
    /// Each tool's input schema from its argument type. Native only.
    #[cfg(not(target_arch = "wasm32"))]
    pub tool_input_schemas: fn() -> Vec<(&'static str, schemars::Schema)>,
    /// Each tool's answer schemas, per branch ending. Native only.
    #[cfg(not(target_arch = "wasm32"))]
    #[allow(clippy::type_complexity)]
    pub tool_output_schemas: fn() -> Vec<(&'static str, Vec<Vec<(bool, serde_json::Value)>>)>,
}

impl Api {
    pub fn tool(&self, name: &str) -> Option<&'static Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The route a concrete request path is an instance of.
    pub fn route(&self, method: &str, path: &str) -> Option<&'static Route> {
        self.routes.iter().find(|r| r.matches(method, path))
    }

    /// The `Allow` header of a concrete path: the methods the table serves
    /// there (one trailing slash forgiven, as the dispatcher does), then
    /// `OPTIONS`, which every path answers.
    pub fn allow(&self, path: &str) -> String {
        // By `push_str`, without a `Vec` and `join`: less Worker code.
        let at = |p: &str| {
            let mut allow = String::new();
            let mut last = "";
            for r in self.routes.iter().filter(|r| r.matches(r.method, p)) {
                // Routes of one path are adjacent in the table: skip repeats.
                if r.method != last {
                    allow.push_str(r.method);
                    allow.push_str(", ");
                    last = r.method;
                }
            }
            allow
        };
        let mut allow = at(path);
        if allow.is_empty() && path.len() > 1 {
            allow = at(path.strip_suffix('/').unwrap_or(path));
        }
        allow.push_str("OPTIONS");
        allow
    }
}

/// Copy: every field is a `'static` reference or a small value, so a test
/// (or a tool) can build an `Api` from the table plus its own rows.
#[derive(Clone, Copy, Debug)]
pub struct Route {
    pub method: &'static str,
    /// With `:name` parameters, as written in the table.
    pub path: &'static str,
    pub doc: &'static str,
    pub handler: &'static str,
    /// The request body type's name, when there is one.
    pub body: Option<&'static str>,
    /// The handler builds its own responses (pages, MCP).
    pub raw: bool,
    /// Where its reads may come from: a replica (`replica` in the table,
    /// public reads only) or the primary (everything else).
    pub consistency: Consistency,
    pub responses: &'static [RouteResponse],
    /// The MCP tools whose plans call this route.
    pub tools: &'static [&'static str],
}

#[derive(Debug)]
pub struct RouteResponse {
    pub status: u16,
    pub body: Body,
}

#[derive(Debug)]
pub enum Body {
    /// JSON of the named type.
    Json(&'static str),
    Html,
    /// A document of this media type: robots.txt, llms.txt, a linkset …
    Media(&'static str),
    Empty,
    /// `{"error": CODE}` with one of these codes.
    Errors(&'static [Code]),
}

impl Route {
    pub fn success(&self) -> Option<&RouteResponse> {
        self.responses
            .iter()
            .find(|r| !matches!(r.body, Body::Errors(_)))
    }

    /// Whether the table declares `code` for this route.
    pub fn declares(&self, code: Code) -> bool {
        self.responses
            .iter()
            .any(|r| matches!(r.body, Body::Errors(codes) if codes.contains(&code)))
    }

    pub fn statuses(&self) -> impl Iterator<Item = u16> + '_ {
        self.responses.iter().map(|r| r.status)
    }

    /// Whether a concrete path (`/posts/0123…`) is an instance of this route.
    pub fn matches(&self, method: &str, path: &str) -> bool {
        if method != self.method {
            return false;
        }
        let mut want = self.path.split('/');
        let mut have = path.split('?').next().unwrap_or("").split('/');
        loop {
            match (want.next(), have.next()) {
                (None, None) => return true,
                (Some(w), Some(h)) if w.starts_with(':') || w == h => {}
                _ => return false,
            }
        }
    }
}

#[derive(Clone, Copy)]
pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub read_only: bool,
    pub idempotent: bool,
    pub branches: &'static [Branch],
}

/// The first branch whose `when` argument is present (not null) runs; the
/// last branch has no `when`.
pub struct Branch {
    pub when: Option<&'static str>,
    pub steps: &'static [Step],
}

/// One call of a route. Arguments named like a path parameter fill it; the
/// others make the JSON body.
pub struct Step {
    /// Run only when this field of the previous step's result is `true`.
    pub when_prev: Option<&'static str>,
    pub method: &'static str,
    pub path: &'static str,
    pub args: &'static [(&'static str, Source)],
}

pub enum Source {
    /// The tool argument of that name.
    Arg(&'static str),
    /// A fixed string.
    Lit(&'static str),
    /// A field of the previous step's result.
    Prev(&'static str),
}
