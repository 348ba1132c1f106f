//! What the fuzz targets share: one in-memory list with a known post, a
//! waiting first message, and an accepted one with its thread; a way to run
//! a request through `needhave::handle`; and the invariants every answer
//! must keep.
#![allow(dead_code)]

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker};

use needhave::http::{Request, Response};
use needhave::secrets::sha256_hex;
use needhave::store::sqlite::SqliteStore;
use needhave::{Config, Ctx};
use serde_json::{json, Value};

/// The SQLite store answers synchronously, so its futures are ready at once.
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

pub struct World {
    pub store: Arc<SqliteStore>,
    pub config: Arc<Config>,
    pub post_id: String,
    pub post_secret: String,
    pub first_id: String,
    pub reply_secret: String,
    pub waiting_id: String,
    pub waiting_secret: String,
    pub thread_key: String,
}

pub const SALT: &str = "fuzz-salt";

pub fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let store = Arc::new(SqliteStore::open(":memory:").expect("store"));
        let config = Arc::new(Config {
            ip_salt: SALT.into(),
            ..Config::default()
        });
        let ctx = Ctx::new(
            &needhave::routes::API,
            store.clone(),
            config.clone(),
            "10.0.0.1",
        );
        let call = |method: &str, path: &str, body: Value| -> Value {
            let mut req = Request::new(method, path);
            req.body = body.to_string().into_bytes();
            let resp = block_on(needhave::handle(&req, &ctx));
            serde_json::from_slice(&resp.body).expect("setup answer")
        };
        let post = call(
            "POST",
            "/posts",
            json!({"kind": "need", "note": "a fuzzed need"}),
        );
        let post_id = post["id"].as_str().expect("id").to_string();
        let post_secret = post["secret"].as_str().expect("secret").to_string();
        let first = call(
            "POST",
            &format!("/posts/{post_id}/messages"),
            json!({"text": "first"}),
        );
        let waiting = call(
            "POST",
            &format!("/posts/{post_id}/messages"),
            json!({"text": "still waiting"}),
        );
        let first_id = first["id"].as_str().expect("id").to_string();
        let accept = call(
            "POST",
            &format!("/posts/{post_id}/accept"),
            json!({"secret": post_secret, "message_id": first_id}),
        );
        let thread_key = accept["thread_key"].as_str().expect("key").to_string();
        call(
            "POST",
            "/threads/messages",
            json!({"thread_key": thread_key, "text": "later"}),
        );
        // A client may publish anything in a note, a secret too: every view
        // of the list (JSON, MCP, the feed) then carries it as the client's
        // own words, and the leak check must tell those apart.
        let published = call(
            "POST",
            "/posts",
            json!({"kind": "have", "note": format!("published {post_secret}")}),
        );
        assert!(published["id"].is_string(), "setup: {published}");
        let w = World {
            store,
            config,
            post_id,
            post_secret,
            first_id,
            reply_secret: first["secret"].as_str().expect("secret").to_string(),
            waiting_id: waiting["id"].as_str().expect("id").to_string(),
            waiting_secret: waiting["secret"].as_str().expect("secret").to_string(),
            thread_key,
        };
        // Seeds for the corpus: print once with FUZZ_PRINT_WORLD=1.
        if std::env::var_os("FUZZ_PRINT_WORLD").is_some() {
            eprintln!("post {} secret {}", w.post_id, w.post_secret);
            eprintln!("first {} secret {}", w.first_id, w.reply_secret);
            eprintln!("waiting {} secret {}", w.waiting_id, w.waiting_secret);
            eprintln!("thread_key {}", w.thread_key);
        }
        w
    })
}

impl World {
    /// `{P}`, `{M}`, `{W}`, `{S}`, `{R}`, `{K}` in fuzz input stand for the
    /// world's post id, message ids, post secret, reply secret and thread
    /// key, so the fuzzer reaches the paths behind them.
    pub fn expand(&self, s: &str) -> String {
        s.replace("{P}", &self.post_id)
            .replace("{M}", &self.first_id)
            .replace("{W}", &self.waiting_id)
            .replace("{S}", &self.post_secret)
            .replace("{R}", &self.reply_secret)
            .replace("{K}", &self.thread_key)
    }

    pub fn ctx(&self, ip_byte: u8) -> Ctx {
        Ctx::new(
            &needhave::routes::API,
            self.store.clone(),
            self.config.clone(),
            &format!("127.0.3.{ip_byte}"),
        )
    }

    /// No secret or key ever appears in an answer to a request that did not
    /// carry it (the thread key: or the reply secret of its first message);
    /// no stored hash or IP hash ever appears.
    pub fn check_secrets(&self, req: &Request, resp: &Response) {
        let asked = format!("{} {}", req.path, String::from_utf8_lossy(&req.body));
        // Notes and texts are what clients wrote, and a client may publish
        // anything in them, secrets too: that is no leak. Everything else
        // in the answer is the list's own. (A tool result's JSON text is
        // parsed and searched like the rest.)
        let body = match serde_json::from_slice::<Value>(&resp.body) {
            Ok(v) => without_user_text(v).to_string(),
            Err(_) => without_feed_text(&String::from_utf8_lossy(&resp.body)),
        };
        let carried = |s: &str| asked.contains(s);
        for (name, secret, allowed) in [
            ("post secret", &self.post_secret, carried(&self.post_secret)),
            (
                "reply secret",
                &self.reply_secret,
                carried(&self.reply_secret),
            ),
            (
                "reply secret",
                &self.waiting_secret,
                carried(&self.waiting_secret),
            ),
            (
                "thread key",
                &self.thread_key,
                carried(&self.thread_key) || carried(&self.reply_secret),
            ),
        ] {
            assert!(
                allowed || !body.contains(secret.as_str()),
                "{name} leaked to {} {}: {body}",
                req.method,
                req.path
            );
        }
        for hidden in [
            sha256_hex(&self.post_secret),
            sha256_hex(&self.reply_secret),
            sha256_hex(&self.waiting_secret),
            sha256_hex(&self.thread_key),
            needhave::client::ip_hash(SALT, "10.0.0.1"),
        ] {
            assert!(!body.contains(&hidden), "a stored hash leaked: {body}");
        }
    }
}

/// The Atom feed with its entries' notes left out: an entry's text title
/// and text content are a note (the title its first line).
fn without_feed_text(body: &str) -> String {
    let mut out = body.to_string();
    for (open, close) in [
        ("<title type=\"text\">", "</title>"),
        ("<content type=\"text\">", "</content>"),
    ] {
        let mut kept = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(i) = rest.find(open) {
            kept.push_str(&rest[..i + open.len()]);
            rest = &rest[i + open.len()..];
            match rest.find(close) {
                Some(j) => rest = &rest[j..],
                None => rest = "",
            }
        }
        kept.push_str(rest);
        out = kept;
    }
    out
}

/// The answer with the clients' own words (`note`, `text`) left out.
fn without_user_text(v: Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter_map(|(k, v)| match (k.as_str(), v) {
                    ("note" | "text", Value::String(s)) => {
                        match serde_json::from_str::<Value>(&s) {
                            Ok(inner @ (Value::Object(_) | Value::Array(_))) => {
                                Some((k, without_user_text(inner)))
                            }
                            _ => None,
                        }
                    }
                    (_, v) => Some((k, without_user_text(v))),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(without_user_text).collect()),
        other => other,
    }
}

/// Every answer: a contract status; JSON (or the home page's HTML, or an
/// empty 202 from `/mcp`, or HEAD's empty body); an error is exactly `{"error": CODE}` with the code's status;
/// 405 names what is allowed. Never a 500: the store here does not fail.
pub fn check_answer(req: &Request, resp: &Response) {
    let status = resp.status;
    assert!(
        [200, 201, 202, 204, 400, 403, 404, 405, 409, 410, 413, 429].contains(&status),
        "status {status} for {} {}: {}",
        req.method,
        req.path,
        String::from_utf8_lossy(&resp.body)
    );
    let ctype = resp.header("content-type").unwrap_or("");
    // The dispatcher forgives one trailing slash (`/mcp/` is `/mcp`).
    let trimmed = match req.path.strip_suffix('/') {
        Some(p) if !p.is_empty() => p,
        _ => req.path.as_str(),
    };
    // HEAD answers with GET's headers and no body.
    if req.method == "HEAD" {
        assert!(resp.body.is_empty(), "HEAD {} has a body", req.path);
        return;
    }
    if status == 202 && trimmed == "/mcp" {
        assert!(resp.body.is_empty());
        return;
    }
    // OPTIONS: a preflight, or (without Origin) the path's methods.
    if status == 204 {
        assert_eq!(req.method, "OPTIONS", "204 for {} {}", req.method, req.path);
        assert!(resp.body.is_empty());
        assert!(
            resp.header("allow").is_some() || resp.header("access-control-allow-methods").is_some()
        );
        return;
    }
    // A document the table declares as HTML or by its own media type (the
    // home page, robots.txt, llms.txt, the sitemap, the API catalog …).
    if req.method == "GET" && status == 200 && ctype != "application/json" {
        let api = &needhave::routes::API;
        let route = api
            .route("GET", &req.path)
            .or_else(|| api.route("GET", trimmed));
        let declared = route.is_some_and(|r| {
            r.responses.iter().any(|x| match x.body {
                needhave::api::Body::Html => ctype.starts_with("text/html"),
                needhave::api::Body::Media(m) => ctype.split(';').next() == m.split(';').next(),
                _ => false,
            })
        });
        assert!(
            declared,
            "GET {} answered {ctype}, which its route does not declare",
            req.path
        );
        return;
    }
    assert_eq!(ctype, "application/json", "{} {}", req.method, req.path);
    let v: Value = serde_json::from_slice(&resp.body).expect("JSON body");
    let mcp = trimmed == "/mcp" && req.method == "POST";
    if status >= 400 && !mcp {
        let code = v["error"].as_str().expect("error code");
        assert_eq!(v.as_object().map(|o| o.len()), Some(1), "{v}");
        let known = needhave::error::Code::ALL
            .iter()
            .find(|c| c.as_str() == code)
            .unwrap_or_else(|| panic!("unknown code {code}"));
        assert_eq!(known.status(), status, "{code}");
    }
    if status == 405 {
        assert!(resp.header("allow").is_some_and(|a| !a.is_empty()));
    }
    if mcp {
        check_jsonrpc(status, &v);
    }
}

/// A JSON-RPC answer: one response object or an array of them, each with
/// `jsonrpc: "2.0"`, an id, and a result or a known error code.
pub fn check_jsonrpc(status: u16, v: &Value) {
    let items: Vec<&Value> = match v {
        Value::Array(a) => {
            assert!(!a.is_empty() && a.len() <= 20, "batch of {}", a.len());
            a.iter().collect()
        }
        other => vec![other],
    };
    for item in items {
        assert_eq!(item["jsonrpc"], "2.0", "{item}");
        assert!(item.get("id").is_some(), "{item}");
        let has_result = item.get("result").is_some();
        let has_error = item.get("error").is_some();
        assert!(has_result != has_error, "{item}");
        if has_error {
            let code = item["error"]["code"].as_i64().expect("code");
            assert!([-32700, -32600, -32601, -32602].contains(&code), "{item}");
            if status == 400 && code == -32700 {
                assert!(item["id"].is_null());
            }
        } else {
            assert_eq!(status, 200);
            let r = &item["result"];
            if let Some(content) = r.get("content") {
                // A tool result: its text is the same JSON as structuredContent.
                let text = content[0]["text"].as_str().expect("text");
                if let Some(sc) = r.get("structuredContent") {
                    let parsed: Value = serde_json::from_str(text).expect("JSON text");
                    assert_eq!(&parsed, sc);
                }
            }
        }
    }
}
