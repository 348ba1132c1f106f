//! The Worker entry (wasm32 only): every request, `POST /mcp` included, goes
//! to the same [`crate::handle`] as on the native server, on a D1 store
//! (binding `DB`). MCP runs in process: the Worker never fetches its own host.
//!
//! The client IP is `CF-Connecting-IP`, which Cloudflare sets and a client
//! cannot forge in production. Its salt is the Worker secret `IP_SALT`;
//! optional `ALLOWED_ORIGINS` (comma-separated) widens the MCP Origin check.

use std::sync::Arc;

use worker::js_sys::{Function, Promise, Reflect, Uint8Array};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::{event, Context, Env, Headers};

use crate::error::Code;
use crate::http::{Request, Response};
use crate::store::d1::D1Store;
use crate::store::session::Sessions;
use crate::{platform, rules, Config, Ctx};

#[event(fetch)]
async fn fetch(req: worker::Request, env: Env, _ctx: Context) -> worker::Result<worker::Response> {
    let mut request = Request::new(req.method().as_ref(), &req.path());
    request.headers = req
        .headers()
        .entries()
        .map(|(n, v)| (n.to_ascii_lowercase(), v))
        .collect();
    // The MCP Origin check compares against the serving host; keep it even
    // where the runtime leaves `Host` out of the headers.
    if request.header("host").is_none() {
        // `scheme://host[:port]/path…`; parsed by hand, since the `url`
        // crate (with its IDNA tables) would double the Worker's size.
        let url = req.inner().url();
        if let Some(host) = url
            .split_once("://")
            .and_then(|(_, rest)| rest.split(['/', '?', '#']).next())
            .filter(|h| !h.is_empty())
        {
            request.headers.push(("host".into(), host.to_string()));
        }
    }

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
                answer(&request, &env, config).await
            }
            Ok(None) => crate::refusal(&request, &config, Code::TooLarge),
            Err(_) => crate::refusal(&request, &config, Code::BadRequest),
        }
    };
    to_worker(response)
}

fn config(env: &Env) -> Config {
    // Missing (or empty): writes are refused, and say why (`Ctx::ip_hash`).
    let ip_salt = env
        .secret("IP_SALT")
        .map(|s| s.to_string())
        .unwrap_or_default();
    let allowed_origins = env
        .var("ALLOWED_ORIGINS")
        .map(|v| {
            v.to_string()
                .split(',')
                .map(str::trim)
                .filter(|o| !o.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    Config {
        ip_salt,
        allowed_origins,
        allowed_hosts: None,
    }
}

/// The body, or `None` as soon as it passes `limit` bytes: a chunked body
/// declares no length, and reading it whole first (`req.bytes()`) would let
/// one request make the isolate hold all of it. The rest is never read.
/// Through `js_sys` calls rather than worker's `ByteStream`, which links
/// `wasm-streams`.
async fn read_body(req: &worker::Request, limit: usize) -> Result<Option<Vec<u8>>, JsValue> {
    let Some(stream) = req.inner().body() else {
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

async fn answer(request: &Request, env: &Env, config: Config) -> Response {
    let db = match env.d1("DB") {
        Ok(db) => db,
        Err(e) => {
            platform::log_error(&format!("no D1 binding DB: {e}"));
            return crate::refusal(request, &config, Code::Internal);
        }
    };
    // Without it, none: such requests must not share one bucket of the
    // per-IP limits, so their writes are refused (`Ctx::ip_hash`).
    let ip = request
        .header("cf-connecting-ip")
        .map(str::trim)
        .unwrap_or("")
        .to_string();
    let store = Sessions::new(D1Store::new(db));
    let ctx = Ctx::new(Arc::new(store), Arc::new(config), &ip);
    crate::handle(request, &ctx).await
}

fn to_worker(resp: Response) -> worker::Result<worker::Response> {
    let headers = Headers::new();
    for (name, value) in &resp.headers {
        headers.append(name, value)?;
    }
    let out = if resp.body.is_empty() {
        worker::Response::empty()?
    } else {
        worker::Response::from_bytes(resp.body)?
    };
    Ok(out.with_status(resp.status).with_headers(headers))
}

/// talc rather than the target's default dlmalloc: about 2 KB less gzip of
/// the .wasm a cold start loads (bench/worker-size.sh).
// SAFETY: `TalckWasm` needs a single-threaded Wasm module, which a Worker
// isolate is (workers-rs builds without atomics).
#[global_allocator]
static ALLOCATOR: talc::TalckWasm = unsafe { talc::TalckWasm::new_global() };
