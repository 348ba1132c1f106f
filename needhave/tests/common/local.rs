//! The list in this process: `needhave::handle` under a [`Ctx`] made
//! here, on a store the test chooses (counting, failing, a fake D1, a
//! file), at a client IP and a time it chooses. No server and no socket:
//! what the tests that count round trips, fake a store or move the clock
//! call.

use std::sync::Arc;

use needhave::http::{Request, Response};
use needhave::store::Store;
use needhave::{Config, Ctx};
use serde_json::Value;

/// The `Host` a local client names: where `needhave serve` listens by
/// default, a loopback host the list serves as its own.
pub const HOST: &str = "127.0.0.1:8787";

/// The defaults, with `salt` as the IP salt.
pub fn salted(salt: &str) -> Arc<Config> {
    Arc::new(Config {
        ip_salt: salt.into(),
        ..Config::default()
    })
}

/// One request's context: the real table, `store`, `config`, the client
/// at `ip`, and now.
pub fn ctx(store: Arc<dyn Store>, config: Arc<Config>, ip: &str) -> Ctx {
    Ctx::new(&needhave::routes::API, store, config, ip)
}

/// [`ctx`] with its clock at `now_ms`.
pub fn ctx_at(store: Arc<dyn Store>, config: Arc<Config>, ip: &str, now_ms: i64) -> Ctx {
    let mut ctx = ctx(store, config, ip);
    ctx.now_ms = now_ms;
    ctx
}

/// `method path` as a local client sends it: `Host` [`HOST`], and `body`
/// as JSON text when there is one.
pub fn request(method: &str, path: &str, body: Option<&Value>) -> Request {
    let mut req = Request::new(method, path);
    req.headers.push(("host".into(), HOST.into()));
    if let Some(b) = body {
        req.body = b.to_string().into_bytes();
    }
    req
}

/// [`request`], answered by the list under `ctx`.
pub async fn call(ctx: &Ctx, method: &str, path: &str, body: Option<&Value>) -> Response {
    needhave::handle(&request(method, path, body), ctx).await
}

/// An answer's body as text, which every answer of the list is.
#[track_caller]
pub fn text(r: &Response) -> String {
    String::from_utf8(r.body.to_vec()).expect("a UTF-8 body")
}

/// An answer's body as JSON, or `null` when it is none (a 304, a page).
pub fn json(r: &Response) -> Value {
    serde_json::from_slice(&r.body).unwrap_or(Value::Null)
}
