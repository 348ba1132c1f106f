//! The Worker entry (wasm32 only): every request, `POST /mcp` included, goes
//! to the same [`crate::handle`] as on the native server, on a D1 store
//! (binding `DB`). MCP runs in process: the Worker never fetches its own host.
//!
//! The client IP is `CF-Connecting-IP`, which Cloudflare sets and a client
//! cannot forge in production. Its salt is the Worker secret `IP_SALT`;
//! optional `ALLOWED_ORIGINS` (comma-separated) widens the MCP Origin check.

use std::cell::Cell;
use std::sync::Arc;

use worker::{event, Context, Env, Headers};

use crate::error::Code;
use crate::http::{Request, Response};
use crate::store::d1::D1Store;
use crate::{platform, rules, Config, Ctx};

thread_local! {
    static WARNED_SALT: Cell<bool> = const { Cell::new(false) };
}

#[event(fetch)]
async fn fetch(
    mut req: worker::Request,
    env: Env,
    _ctx: Context,
) -> worker::Result<worker::Response> {
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

    let declared = request
        .header("content-length")
        .and_then(|v| v.trim().parse::<usize>().ok());
    let response = if declared.is_some_and(|n| n > rules::MAX_BODY) {
        // Not worth reading: answer before the body arrives.
        let mut r = Response::error(Code::TooLarge);
        crate::finish(&request, &mut r);
        r
    } else {
        match req.bytes().await {
            Ok(body) => {
                request.body = body;
                answer(&request, &env).await
            }
            Err(_) => {
                let mut r = Response::error(Code::BadRequest);
                crate::finish(&request, &mut r);
                r
            }
        }
    };
    to_worker(response)
}

async fn answer(request: &Request, env: &Env) -> Response {
    let db = match env.d1("DB") {
        Ok(db) => db,
        Err(e) => {
            platform::log_error(&format!("no D1 binding DB: {e}"));
            let mut r = Response::error(Code::Internal);
            crate::finish(request, &mut r);
            return r;
        }
    };
    let ip_salt = match env.secret("IP_SALT") {
        Ok(s) => s.to_string(),
        Err(_) => {
            // The hashes are still one-way; but without the operator's salt
            // a short IP list could be hashed and compared. Say so, once.
            if !WARNED_SALT.replace(true) {
                platform::log_error("secret IP_SALT is not set: run `wrangler secret put IP_SALT`");
            }
            String::new()
        }
    };
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
    let config = Config {
        ip_salt,
        allowed_origins,
        allowed_hosts: None,
    };
    let ip = request
        .header("cf-connecting-ip")
        .map(str::trim)
        .filter(|ip| !ip.is_empty())
        .unwrap_or("unknown")
        .to_string();
    let ctx = Ctx::new(Arc::new(D1Store::new(db)), Arc::new(config), &ip);
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
