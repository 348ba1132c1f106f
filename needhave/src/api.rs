//! The shape of the table and the context every call gets.
//!
//! What `routes!` generates is made of these types: the static description
//! of every route (`ROUTES`) and every MCP tool (`TOOLS`), and [`Api`], the
//! whole table as one value. [`Ctx`], one request's context, carries the
//! `Api` it was made with, so the pages, the documents and MCP read the
//! table from it and nothing below `routes.rs` names the table.

use std::sync::{Arc, OnceLock};

use crate::client;
use crate::config::Config;
use crate::error::{ApiError, Code};
use crate::http::{Html, Request, Response, JSON};
use crate::json::ToJson;
use crate::platform::{self, BoxFuture};
pub use crate::store::Consistency;
use crate::store::Store;

/// A client's salted hash and its site's, if it has one (see `client`).
type ClientHashes = (String, Option<String>);

/// One request's context: the store, the clock, and who is asking.
#[derive(Clone)]
pub struct Ctx {
    pub store: Arc<dyn Store>,
    /// Unix ms at the start of the request.
    pub now_ms: i64,
    pub config: Arc<Config>,
    /// The table, handed down: pages and MCP read routes and tools here
    /// rather than importing them back from `routes.rs`.
    pub api: &'static Api,
    /// Held for this request only; nothing but its salted hash goes further.
    client_ip: String,
    /// The client's hash and its site's (see `client`); `None` once a
    /// write was refused for want of a salt or an IP. Shared by the
    /// contexts the dispatcher derives from this one (an MCP plan's steps):
    /// worked out, or refused and logged, once a request.
    ip_hash: Arc<OnceLock<Option<ClientHashes>>>,
}

impl Ctx {
    /// `api` is the table (`routes::API`, or one a test builds): what is
    /// below the table reads it here rather than naming `routes.rs`.
    pub fn new(
        api: &'static Api,
        store: Arc<dyn Store>,
        config: Arc<Config>,
        client_ip: &str,
    ) -> Self {
        Ctx {
            now_ms: platform::now_ms(),
            store,
            config,
            api,
            client_ip: client_ip.to_string(),
            ip_hash: Arc::new(OnceLock::new()),
        }
    }

    /// This context with its store as a route of `consistency` reads it
    /// (the dispatcher's, before each handler); `None` when the store has
    /// no sessions and this context serves unchanged.
    pub fn session(&self, consistency: Consistency) -> Option<Ctx> {
        let store = self.store.session(consistency)?;
        Some(Ctx {
            store,
            ..self.clone()
        })
    }

    /// Salted SHA-256 of the client IP, which every write keeps for the
    /// per-IP limits. Worked out on first use: only the calls that write
    /// count per IP, and reads are most of the traffic (the hash was an
    /// eighth of a `GET /posts`, counted with callgrind).
    ///
    /// Fails safe: without a salt (the Worker's `IP_SALT` secret unset) the
    /// hashes of a short IP list could be matched, and without a client IP
    /// (a request that did not come through Cloudflare's edge) every such
    /// request would share one bucket; either way the write is refused with
    /// 500 `internal` (the operator's to fix, and not worth a client's
    /// retry, which a 503 would invite) and one log line that names what is
    /// missing. Reads never ask, so they still work.
    pub fn ip_hash(&self) -> Result<&str, ApiError> {
        self.client_hashes().map(|(ip, _)| ip)
    }

    /// [`Ctx::ip_hash`] and the salted hash of the client's site (its IPv6
    /// /48; `None` for an IPv4 client), which writes keep for the per-site
    /// limits.
    pub fn client_hashes(&self) -> Result<(&str, Option<&str>), ApiError> {
        let hash = self.ip_hash.get_or_init(|| {
            // Whole lines rather than `format!`: one less formatting site.
            let refused = if self.config.ip_salt.is_empty() {
                "write refused: no IP salt is set (the Worker secret IP_SALT: `wrangler secret put IP_SALT`)"
            } else if self.client_ip.is_empty() {
                "write refused: the request has no client IP (the Worker's CF-Connecting-IP header)"
            } else {
                let (salt, ip) = (&self.config.ip_salt, &self.client_ip);
                return Some((client::ip_hash(salt, ip), client::site_hash(salt, ip)));
            };
            platform::log_error(refused);
            None
        });
        match hash {
            Some((ip, site)) => Ok((ip, site.as_deref())),
            None => Err(Code::Internal.into()),
        }
    }
}

/// The whole table, handed down to whatever describes or re-enters the list
/// (the pages, the documents, MCP) through [`Ctx::api`], as dropshot hands
/// its API description to the OpenAPI endpoint. Nothing below `routes.rs`
/// imports the table back, so there is no import circle, and a document is a
/// pure function of an `Api` that a test may build by hand.
pub struct Api {
    pub routes: &'static [Route],
    pub tools: &'static [Tool],
    /// The generated matcher: the one place that says which route a method
    /// and a path are. The dispatcher, `Allow`, the preflight, logs and
    /// metrics all ask it, so they cannot disagree (on a trailing slash, say).
    pub resolve: for<'a> fn(&str, &'a str) -> Resolved<'a>,
    /// The generated dispatcher, from what [`Api::resolve`] found, boxed:
    /// [`crate::handle`] and MCP's plans run calls through it.
    pub answer: for<'a> fn(&'a Request, &'a Ctx, Resolved<'a>) -> BoxFuture<'a, Response>,
    /// The typed half of the OpenAPI document (schemas need the Rust types,
    /// so only generated code can write them), one entry per route in
    /// table order. Native only.
    #[cfg(not(target_arch = "wasm32"))]
    pub openapi_schemas: fn(&mut schemars::generate::SchemaGenerator) -> Vec<OperationSchemas>,
    /// Each tool's input schema from its argument type. Native only.
    #[cfg(not(target_arch = "wasm32"))]
    pub tool_input_schemas: fn() -> Vec<(&'static str, schemars::Schema)>,
    /// Each tool's answer schemas, per branch ending. Native only.
    #[cfg(not(target_arch = "wasm32"))]
    #[allow(clippy::type_complexity)]
    pub tool_output_schemas: fn() -> Vec<(&'static str, Vec<Vec<(bool, serde_json::Value)>>)>,
}

/// One route's schemas in the OpenAPI document: its request body's and its
/// JSON responses', by status.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Default)]
pub struct OperationSchemas {
    pub body: Option<serde_json::Value>,
    pub typed: Vec<(u16, serde_json::Value)>,
    /// The query parameters' types, in the table's order.
    pub query: Vec<serde_json::Value>,
}

/// The most `:name` parameters a route's path may have: what
/// [`Resolved::Route`] carries (the table's check refuses more).
pub const MAX_PATH_PARAMS: usize = 2;

/// What the table makes of a method and a concrete path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved<'a> {
    /// The route (its index in the table) and its path's parameters, in
    /// the order the path names them, unused places `None`.
    Route {
        index: usize,
        params: [Option<&'a str>; MAX_PATH_PARAMS],
    },
    /// A path the table serves, under these other methods: 405 with
    /// `Allow`, not 404.
    Method {
        allow: &'static str,
    },
    NotFound,
}

impl Api {
    pub fn tool(&self, name: &str) -> Option<&'static Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Answers one call of the table (no pipeline around it): what MCP's
    /// plans run.
    pub fn dispatch<'a>(&self, req: &'a Request, ctx: &'a Ctx) -> BoxFuture<'a, Response> {
        (self.answer)(req, ctx, (self.resolve)(&req.method, &req.path))
    }

    /// The route a concrete request path is an instance of.
    pub fn route(&self, method: &str, path: &str) -> Option<&'static Route> {
        self.route_of((self.resolve)(method, path))
    }

    pub fn route_of(&self, resolved: Resolved<'_>) -> Option<&'static Route> {
        match resolved {
            Resolved::Route { index, .. } => self.routes.get(index),
            _ => None,
        }
    }

    /// The `Allow` header of a concrete path: the methods the table serves
    /// there, then `OPTIONS`, which every path answers.
    pub fn allow(&self, path: &str) -> String {
        // No route is an OPTIONS route: the matcher names the path's methods.
        match (self.resolve)("OPTIONS", path) {
            Resolved::Method { allow } => format!("{allow}, OPTIONS"),
            _ => "OPTIONS".to_string(),
        }
    }
}

/// What the table says for people (a route's or a parameter's doc, a
/// tool's title and description, a handler's name), as the table holds it:
/// natively the text, which the generated documents are made from; in the
/// Worker nothing, since it serves those documents from its static assets
/// (`crate::assets`) and answers nothing else with it, so the words would
/// be bytes every cold start loads for nothing.
pub const fn doc(text: &'static str) -> &'static str {
    if cfg!(target_arch = "wasm32") {
        ""
    } else {
        text
    }
}

/// Copy: every field is a `'static` reference or a small value, so a test
/// (or a tool) can build an `Api` from the table plus its own rows.
#[derive(Clone, Copy, Debug)]
pub struct Route {
    pub method: &'static str,
    /// With `:name` parameters, as written in the table.
    pub path: &'static str,
    /// The query parameters, in the order the dispatcher checks them.
    pub query: &'static [QueryParam],
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

/// One query parameter of a route, as the table declares it: the
/// dispatcher reads it as its type and answers `error` when it does not fit.
#[derive(Clone, Copy, Debug)]
pub struct QueryParam {
    pub name: &'static str,
    pub doc: &'static str,
    pub error: Code,
    /// Inclusive bounds of an integer parameter.
    pub min: Option<u32>,
    pub max: Option<u32>,
    /// What an absent integer parameter is.
    pub default: Option<u32>,
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

/// A typed handler's result as its response: what the generated dispatcher
/// makes of each route's answer, by the kind of answer its table line
/// declares.
impl Route {
    pub fn answer_json<T: ToJson>(&self, status: u16, result: Result<T, ApiError>) -> Response {
        self.answer(status, result.as_ref().map(|v| v as &dyn ToJson))
    }

    /// `answer_json` without its type: one copy for every route.
    fn answer(&self, status: u16, result: Result<&dyn ToJson, &ApiError>) -> Response {
        match result {
            Ok(v) => Response::new(status, JSON, v.to_json()),
            Err(e) => self.declared_error(*e),
        }
    }

    pub fn answer_html(&self, status: u16, result: Result<Html, ApiError>) -> Response {
        match result {
            Ok(Html(page)) => Response::new(status, "text/html; charset=utf-8", page.into_bytes()),
            Err(e) => self.declared_error(e),
        }
    }

    /// A text document, of the media type the table gives its route.
    pub fn answer_text(&self, status: u16, result: Result<String, ApiError>) -> Response {
        let media = match self.success().map(|r| &r.body) {
            Some(Body::Media(m)) => m,
            _ => "text/plain; charset=utf-8",
        };
        match result {
            Ok(text) => Response::new(status, media, text.into_bytes()),
            Err(e) => self.declared_error(e),
        }
    }

    pub fn answer_empty(&self, status: u16, result: Result<(), ApiError>) -> Response {
        match result {
            Ok(()) => Response::empty(status),
            Err(e) => self.declared_error(e),
        }
    }

    /// An error the table does not declare for this route is a bug: the
    /// OpenAPI document and the MCP descriptions would be lying. Debug builds
    /// (the tests) fail loudly; release builds still answer the code. A
    /// store failure (500, or 503 for a vanished database file or a read
    /// declined `busy`) can meet any route.
    fn declared_error(&self, e: ApiError) -> Response {
        debug_assert!(
            matches!(e.0, Code::Internal | Code::Unavailable | Code::Busy) || self.declares(e.0),
            "{} {} returned undeclared error {:?}",
            self.method,
            self.path,
            e.0
        );
        Response::from_error(&e)
    }
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

/// The first branch whose `when` argument is given (present, and neither
/// null nor `false`: an optional boolean picks its branch when true) runs;
/// the last branch has no `when`.
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
    /// The route's query parameters: arguments named like one go in the
    /// query string.
    pub query: &'static [&'static str],
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
