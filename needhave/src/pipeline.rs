//! The way every request goes, whatever the target: the bookmark, browsers'
//! Origin and CORS, the body limit, the dispatcher the context carries, and
//! the headers every answer carries.

use crate::api::Ctx;
use crate::config::Config;
use crate::error::Code;
use crate::http::{Request, Response};
use crate::origin;
use crate::rules;
use crate::store::session::BOOKMARK_HEADER;

/// Answers one request, whatever the target: the body limit, browsers'
/// Origin and CORS, the dispatcher, and the headers every answer carries.
pub async fn handle(req: &Request, ctx: &Ctx) -> Response {
    if let Some(b) = req.header(BOOKMARK_HEADER) {
        ctx.store.resume(b);
    }
    // Which route, once: the preflight, the Origin rule, the dispatcher and
    // the conditional headers all go by this answer.
    let resolved = (ctx.api.resolve)(&req.method, &req.path);
    let route = ctx.api.route_of(resolved);
    let raw = route.is_some_and(|r| r.raw);
    let mut resp = if req.method == "OPTIONS" {
        origin::preflight(req, &ctx.config, &ctx.api.allow(&req.path))
    } else if origin::refuses(req, &ctx.config, raw) {
        Response::error(Code::BadOrigin)
    } else if req.body.len() > rules::MAX_BODY {
        Response::error(Code::TooLarge)
    } else {
        let mut resp = (ctx.api.answer)(req, ctx, resolved).await;
        crate::conditional::dress(req, route, &mut resp);
        resp
    };
    // Read-your-writes for a client that sends it back.
    if let Some(b) = ctx.store.bookmark() {
        resp.headers.push((BOOKMARK_HEADER, b));
    }
    dress(req, &ctx.config, &mut resp);
    if req.method == "HEAD" {
        headless(&mut resp);
    }
    resp
}

/// A `HEAD` answer: the `GET`'s status and headers, with the length of the
/// body it would send and no body (RFC 9110 9.3.2). Said here, the same on
/// every target, rather than left to what each server does with a body on
/// a `HEAD`; 204 and 304 carry no length at all.
fn headless(resp: &mut Response) {
    if resp.status != 204 && resp.status != 304 {
        let length = resp.body.len().to_string();
        resp.headers.push(("content-length", length));
    }
    resp.body.clear();
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
