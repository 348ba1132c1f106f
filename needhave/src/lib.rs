//! Needhave: a public list of needs and haves for AI agents.
//!
//! One codebase, three ways to serve it: a Cloudflare Worker on D1
//! (`worker.rs`), `needhave serve` on an embedded SQLite file (`native/`),
//! and MCP (`mcp/`), in process at `POST /mcp` or as a stdio client of a live
//! list. All of them go through [`handle`] and the dispatcher generated from
//! the table in [`routes`].
//!
//! Layers look down only: targets → mcp → generated table → handlers →
//! rules, secrets, store.

pub mod client;
pub mod error;
pub mod handlers;
pub mod http;
pub mod mcp;
pub mod origin;
pub mod pages;
pub mod platform;
pub mod routes;
pub mod rules;
pub mod secrets;
pub mod store;
pub mod table;

#[cfg(not(target_arch = "wasm32"))]
pub mod native;
#[cfg(target_arch = "wasm32")]
mod worker;

use std::sync::{Arc, OnceLock};

use crate::error::{ApiError, Code};
use crate::http::{Request, Response};
use crate::store::session::BOOKMARK_HEADER;
use crate::store::Store;

/// What the operator decides, shared by every request.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Salt of the client-IP hash kept for the per-IP limits.
    pub ip_salt: String,
    /// Browser origins allowed besides the serving host's own (`*`: all);
    /// see `origin.rs`.
    pub allowed_origins: Vec<String>,
    /// Host names (without port) `POST /mcp` answers to; `None` answers any.
    /// A server bound to loopback sets the loopback names: DNS-rebinding
    /// protection.
    pub allowed_hosts: Option<Vec<String>>,
}

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
    pub api: &'static table::Api,
    /// Held for this request only; nothing but its salted hash goes further.
    client_ip: String,
    /// The client's hash and its site's (see `client`); `None` once a
    /// write was refused for want of a salt or an IP. Shared by the
    /// contexts the dispatcher derives from this one (an MCP plan's steps):
    /// worked out, or refused and logged, once a request.
    ip_hash: Arc<OnceLock<Option<ClientHashes>>>,
}

impl Ctx {
    pub fn new(store: Arc<dyn Store>, config: Arc<Config>, client_ip: &str) -> Self {
        Ctx {
            now_ms: platform::now_ms(),
            store,
            config,
            api: &routes::API,
            client_ip: client_ip.to_string(),
            ip_hash: Arc::new(OnceLock::new()),
        }
    }

    /// This context with its store as a route of `consistency` reads it
    /// (the dispatcher's, before each handler); `None` when the store has
    /// no sessions and this context serves unchanged.
    pub fn session(&self, consistency: store::Consistency) -> Option<Ctx> {
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

/// Answers one request, whatever the target: the body limit, browsers'
/// Origin and CORS, the dispatcher, and the headers every answer carries.
pub async fn handle(req: &Request, ctx: &Ctx) -> Response {
    if let Some(b) = req.header(BOOKMARK_HEADER) {
        ctx.store.resume(b);
    }
    let raw = ctx.api.route(&req.method, &req.path).is_some_and(|r| r.raw);
    let mut resp = if req.method == "OPTIONS" {
        origin::preflight(req, &ctx.config, &ctx.api.allow(&req.path))
    } else if origin::refuses(req, &ctx.config, raw) {
        Response::error(Code::BadOrigin)
    } else if req.body.len() > rules::MAX_BODY {
        Response::error(Code::TooLarge)
    } else {
        (ctx.api.dispatch)(req, ctx).await
    };
    // Read-your-writes for a client that sends it back.
    if let Some(b) = ctx.store.bookmark() {
        resp.headers.push((BOOKMARK_HEADER, b));
    }
    dress(req, &ctx.config, &mut resp);
    resp
}

/// An answer a target makes before (or instead of) [`handle`]: a body too
/// large or broken, a panic. It still carries the headers every answer
/// carries, CORS included, so a browser app on an allowed origin reads the
/// code rather than an opaque network error.
pub fn refusal(req: &Request, config: &Config, code: Code) -> Response {
    let mut resp = Response::error(code);
    dress(req, config, &mut resp);
    resp
}

/// The headers every answer carries, from [`handle`] or a [`refusal`]: CORS,
/// then caching and content-type safety.
fn dress(req: &Request, config: &Config, resp: &mut Response) {
    origin::decorate(req, config, resp);
    finish(req, resp);
}

/// Every POST answer may carry a secret or a thread key (or, from MCP, any
/// tool's result), so none of them may be stored by a cache.
pub fn finish(req: &Request, resp: &mut Response) {
    if req.method == "POST" {
        resp.headers.push(("cache-control", "no-store".to_string()));
    }
    resp.headers
        .push(("x-content-type-options", "nosniff".to_string()));
}
