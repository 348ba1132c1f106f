//! The Worker entry (wasm32 only): every request, `POST /mcp` included, goes
//! to the same [`crate::handle`] as on the native server, on a D1 store
//! (binding `DB`). MCP runs in process: the Worker never fetches its own host.
//!
//! The client IP is `CF-Connecting-IP`, which Cloudflare sets and a client
//! cannot forge in production. Its salt is the Worker secret `IP_SALT`;
//! optional `ALLOWED_ORIGINS` (comma-separated) widens the MCP Origin check.
//!
//! The export is written with `wasm_bindgen` on the runtime's own types
//! (`web_sys::Request` in, `web_sys::Response` out) rather than through
//! workers-rs's `#[event(fetch)]`: the macro's glue answers a
//! `worker::Result`, and its error type, boxed as a `dyn Error`, links its
//! Display, its Debug (with `str`'s escaping), its conversion from any JS
//! value and the crate's text 500, for failures that here have one answer:
//! 500 `internal` and a line in the log. The macro on this same function
//! (the same runtime types in and out, an `Env` and a `Context` for the two
//! `JsValue`s) costs 7,343 B gzip of the .wasm (bench/worker-size.sh),
//! past the 5 KB a hand-written entry must save. worker-build wraps any
//! export named `fetch` (see its shim), so the crate's start-up and
//! reinitialisation on a trap are the same as with the macro.

use std::sync::Arc;

use worker::js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use worker::wasm_bindgen::prelude::wasm_bindgen;
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::worker_sys::web_sys;

use crate::api::Ctx;
use crate::config::Config;
use crate::error::Code;
use crate::http::{Request, Response};
use crate::store::d1::{D1Store, Usage};
use crate::store::index::sweep;
use crate::store::session::Sessions;
use crate::store::{Failing, Store};
use crate::{platform, routes, rules};

mod assets;
mod url;

#[wasm_bindgen(
    wasm_bindgen = worker::wasm_bindgen,
    wasm_bindgen_futures = worker::wasm_bindgen_futures,
    js_sys = worker::js_sys
)]
pub fn fetch(req: web_sys::Request, env: JsValue, _ctx: JsValue) -> Promise {
    promise(Box::pin(serve(req, env)))
}

/// An entry's future, boxed: `fetch` and `scheduled` hand theirs to one
/// copy of `future_to_promise`'s machinery (an `async` export would
/// monomorphise it once per entry).
type Entry = std::pin::Pin<Box<dyn std::future::Future<Output = Result<JsValue, JsValue>>>>;

fn promise(entry: Entry) -> Promise {
    worker::wasm_bindgen_futures::future_to_promise(entry)
}

/// A request's answer (the body of [`fetch`]).
async fn serve(req: web_sys::Request, env: JsValue) -> Result<JsValue, JsValue> {
    let url = req.url();
    let (authority, path) = url::authority_and_path(&url);
    let mut request = Request::new(&req.method(), path);
    request.query = query_of(&url).to_string();
    request.headers = Array::from(&req.headers())
        .iter()
        .map(|pair| {
            let pair: Array = pair.unchecked_into();
            let text = |i| pair.get(i).as_string().unwrap_or_default();
            (text(0).to_ascii_lowercase(), text(1))
        })
        .collect();
    // The MCP Origin check compares against the serving host; keep it even
    // where the runtime leaves `Host` out of the headers.
    if request.header("host").is_none() && !authority.is_empty() {
        request.headers.push(("host".into(), authority.to_string()));
    }

    test_clock(&env);
    let started = platform::now_ms();
    let usage = std::rc::Rc::new(Usage::default());
    // Before the body: its early refusals speak CORS like every answer.
    let config = config(&env);
    let declared = request
        .header("content-length")
        .and_then(|v| v.trim().parse::<usize>().ok());
    let response = if declared.is_some_and(|n| n > rules::MAX_BODY) {
        // Not worth reading: answer before the body arrives.
        crate::refusal(&request, &config, Code::TooLarge)
    } else {
        match read_body(&req, rules::MAX_BODY).await {
            Ok(Some(body)) => {
                request.body = body;
                answer(&request, &env, config, usage.clone()).await
            }
            Ok(None) => crate::refusal(&request, &config, Code::TooLarge),
            Err(_) => crate::refusal(&request, &config, Code::BadRequest),
        }
    };
    let ms = platform::now_ms() - started;
    let (read, written) = (usage.rows_read.get(), usage.rows_written.get());
    if platform::worth_a_line(
        &text(&env, "LOG_REQUESTS"),
        response.status,
        ms,
        read,
        written,
    ) {
        log_request(&request, response.status, ms, &usage);
    }
    // Headers the runtime will not take (none the list makes should be
    // one): still an answer in the contract's shape.
    to_js(&response)
        .or_else(|_| {
            platform::log_error("answer refused by the runtime");
            to_js(&Response::error(Code::Internal))
        })
        .map(JsValue::from)
}

/// Posts one round of the Worker's sweep takes at most, of each kind: a
/// round is two D1 round trips, its write one transaction.
const SWEEP_ROUND: usize = 100;

/// How long one Cron Trigger sweeps before it leaves the rest to the next
/// (a minute later): well inside the time a scheduled event may run, and
/// short of the next one, so that two rarely sweep at once (which would
/// change nothing: a post found in neither part is left alone).
const SWEEP_MS: i64 = 20_000;

/// The Cron Trigger (`[triggers]` in wrangler.toml, every minute): ended
/// posts out of the index of words (`store::index::sweep`), round after
/// round until one finds nothing or [`SWEEP_MS`] have passed. One JSON
/// line for Workers Logs when it took something or failed: the ends taken,
/// the milliseconds, D1's round trips and the rows it read and wrote.
/// Written by hand as `fetch` is (see the module doc): worker-build's shim
/// hands an export named `scheduled` the event, the env and the context.
#[wasm_bindgen(
    wasm_bindgen = worker::wasm_bindgen,
    wasm_bindgen_futures = worker::wasm_bindgen_futures,
    js_sys = worker::js_sys
)]
pub fn scheduled(_event: JsValue, env: JsValue, _ctx: JsValue) -> Promise {
    promise(Box::pin(sweep_all(env)))
}

/// One Cron Trigger's sweep (the body of [`scheduled`]).
async fn sweep_all(env: JsValue) -> Result<JsValue, JsValue> {
    test_clock(&env);
    let started = platform::now_ms();
    let Some(db) = d1(&env) else {
        platform::log_error("sweep: no D1 binding DB");
        return Ok(JsValue::UNDEFINED);
    };
    let usage = std::rc::Rc::new(Usage::default());
    let store = Sessions::new(D1Store::new(db.unchecked_into(), usage.clone()));
    let mut ends: i64 = 0;
    let mut failed = false;
    loop {
        match sweep(&store, platform::now_ms(), SWEEP_ROUND).await {
            Ok(0) => break,
            Ok(n) => ends += n as i64,
            Err(e) => {
                platform::log_error(&["sweep: ", &e.0].concat());
                failed = true;
                break;
            }
        }
        if platform::now_ms() - started >= SWEEP_MS {
            break;
        }
    }
    if ends > 0 || failed {
        let mut line = String::from("{\"cron\":\"sweep\",\"ends\":");
        line.push_str(&ends.to_string());
        line.push_str(",\"ms\":");
        line.push_str(&(platform::now_ms() - started).max(0).to_string());
        log_usage(line, &usage);
    }
    Ok(JsValue::UNDEFINED)
}

/// A test switch, as `needhave serve`'s: the clock this many whole
/// seconds ahead (the Worker's tests see posts expire, and the sweep reads
/// the same clock as the answers).
fn test_clock(env: &JsValue) {
    if let Ok(seconds) = text(env, "NEEDHAVE_TEST_NOW_OFFSET_S").parse::<i64>() {
        platform::set_clock_offset_s(seconds);
    }
}

/// A text binding (a secret or a var); missing or not text: empty.
fn text(env: &JsValue, name: &str) -> String {
    Reflect::get(env, &JsValue::from_str(name))
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

fn config(env: &JsValue) -> Config {
    // Missing (or empty): writes are refused, and say why (`Ctx::ip_hash`).
    let ip_salt = text(env, "IP_SALT");
    let allowed_origins = text(env, "ALLOWED_ORIGINS")
        .split(',')
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .map(String::from)
        .collect();
    Config {
        ip_salt,
        allowed_origins,
        allowed_hosts: None,
        abuse_contact: Some(text(env, "ABUSE_CONTACT")).filter(|c| !c.is_empty()),
        ..Default::default()
    }
}

/// The body, or `None` as soon as it passes `limit` bytes: a chunked body
/// declares no length, and reading it whole first (`req.bytes()`) would let
/// one request make the isolate hold all of it. The rest is never read.
/// Through `js_sys` calls rather than worker's `ByteStream`, which links
/// `wasm-streams`.
async fn read_body(req: &web_sys::Request, limit: usize) -> Result<Option<Vec<u8>>, JsValue> {
    let Some(stream) = req.body() else {
        return Ok(Some(Vec::new()));
    };
    let method = |this: &JsValue, name: &str| -> Result<Function, JsValue> {
        Reflect::get(this, &JsValue::from_str(name))?.dyn_into::<Function>()
    };
    let reader = method(&stream, "getReader")?.call0(&stream)?;
    let read = method(&reader, "read")?;
    let mut body = Vec::new();
    loop {
        let chunk = JsFuture::from(read.call0(&reader)?.dyn_into::<Promise>()?).await?;
        if Reflect::get(&chunk, &JsValue::from_str("done"))?.is_truthy() {
            return Ok(Some(body));
        }
        let bytes = Uint8Array::new(&Reflect::get(&chunk, &JsValue::from_str("value"))?);
        let start = body.len();
        let end = start + bytes.length() as usize;
        if end > limit {
            // The rest is never read; the runtime drops it with the request.
            // (Cancelling the reader here made wrangler dev's workerd restart
            // the isolate on the next request.)
            return Ok(None);
        }
        body.resize(end, 0);
        bytes.copy_to(&mut body[start..]);
    }
}

/// The `DB` binding, if it is a D1 database (by its class's name, as
/// workers-rs checks it: `instanceof` would throw where the class is not a
/// global).
fn d1(env: &JsValue) -> Option<JsValue> {
    let db = Reflect::get(env, &JsValue::from_str("DB")).ok()?;
    if !db.is_object() {
        return None;
    }
    let class = String::from(db.unchecked_ref::<Object>().constructor().name());
    // `BetaDatabase`: what older Miniflare names it.
    (class == "D1Database" || class == "BetaDatabase").then_some(db)
}

/// One JSON line for Workers Logs: the route pattern and its method (both
/// from the table, never the path, a body or an address), the status, the
/// milliseconds, the D1 round trips and the rows D1 read and wrote (what it
/// bills). Written by hand, without `format!` or serde: the Worker's size is
/// what every cold start loads.
fn log_request(request: &Request, status: u16, ms: i64, d1: &Usage) {
    let (method, route) = crate::routes::API
        .route(&request.method, &request.path)
        .map_or(("-", "-"), |r| (r.method, r.path));
    let mut line = String::from("{\"method\":\"");
    line.push_str(method);
    line.push_str("\",\"route\":\"");
    line.push_str(route);
    line.push_str("\",\"status\":");
    line.push_str(&status.to_string());
    line.push_str(",\"ms\":");
    line.push_str(&ms.max(0).to_string());
    log_usage(line, d1);
}

/// Ends a log line begun with its own fields: D1's round trips and the
/// rows it read and wrote, then the line to the log.
fn log_usage(mut line: String, d1: &Usage) {
    for (name, n) in [
        (",\"d1\":", &d1.trips),
        (",\"rows_read\":", &d1.rows_read),
        (",\"rows_written\":", &d1.rows_written),
    ] {
        line.push_str(name);
        line.push_str(&n.get().to_string());
    }
    line.push('}');
    web_sys::console::log_1(&line.into());
}

async fn answer(
    request: &Request,
    env: &JsValue,
    config: Config,
    usage: std::rc::Rc<Usage>,
) -> Response {
    // The documents come from the static assets, not the .wasm.
    if assets::load(env, crate::pages::assets::needed(request))
        .await
        .is_err()
    {
        platform::log_error("static assets: not served by the ASSETS binding");
        return crate::refusal(request, &config, Code::Internal);
    }
    // Without it, none: such requests must not share one bucket of the
    // per-IP limits, so their writes are refused (`Ctx::ip_hash`).
    let ip = request
        .header("cf-connecting-ip")
        .map(str::trim)
        .unwrap_or("")
        .to_string();
    // `Ctx` holds an `Arc` on every target; the Worker's one thread never
    // shares it, and D1's handles are not `Send`.
    #[allow(clippy::arc_with_non_send_sync)]
    let store: Arc<dyn Store> = match d1(env) {
        Some(db) => Arc::new(Sessions::new(D1Store::new(db.unchecked_into(), usage))),
        // A deployment without its database: every call that needs the
        // store fails as a store failure does (500, logged), `/healthz`
        // says 503 so that a probe sees it, and what needs no store (the
        // documents) is still served.
        None => Arc::new(Failing::new("no D1 binding DB")),
    };
    let ctx = Ctx::new(&routes::API, store, Arc::new(config), &ip);
    crate::handle(request, &ctx).await
}

/// The runtime's response: exactly these headers (the runtime adds no
/// content type to a byte body), and no body at all when it is empty, as a
/// 204 or 304 must be. The headers go in as `[name, value]` pairs, which
/// the constructor checks as `Headers.append` would, in one call.
fn to_js(resp: &Response) -> Result<web_sys::Response, JsValue> {
    let headers: Array = resp
        .headers
        .iter()
        .map(|(name, value)| Array::of2(&JsValue::from_str(name), &JsValue::from_str(value)))
        .collect();
    let init = web_sys::ResponseInit::new();
    init.set_status(resp.status);
    init.set_headers(&headers);
    if resp.body.is_empty() {
        web_sys::Response::new_with_opt_str_and_init(None, &init)
    } else {
        let body = Uint8Array::from(&resp.body[..]);
        web_sys::Response::new_with_opt_buffer_source_and_init(Some(&body), &init)
    }
}

/// talc rather than the target's default dlmalloc: about 2 KB less gzip of
/// the .wasm a cold start loads (bench/worker-size.sh).
// SAFETY: `TalckWasm` needs a single-threaded Wasm module, which a Worker
// isolate is (workers-rs builds without atomics).
#[global_allocator]
static ALLOCATOR: talc::TalckWasm = unsafe { talc::TalckWasm::new_global() };

/// The query string of a URL, without `?` and any fragment.
fn query_of(url: &str) -> &str {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    query.split('#').next().unwrap_or("")
}
