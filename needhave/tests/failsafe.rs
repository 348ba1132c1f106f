//! The defaults fail safe: without an IP salt, or without a client IP, the
//! per-IP limits cannot be kept honestly, so every write is refused with a
//! plain 500 (the operator's to fix) while reads still work. Every route
//! that declares `500 [internal]` in the table is called and must answer
//! it; every other route must still answer as usual.

mod common;

use std::sync::Arc;

use common::local::{call, ctx, salted, text};
use needhave::error::Code;
use needhave::routes::ROUTES;
use needhave::store::sqlite::SqliteStore;
use needhave::Ctx;
use serde_json::{json, Value};

async fn json(ctx: &Ctx, method: &str, path: &str, body: Value) -> Value {
    let r = call(ctx, method, path, Some(&body)).await;
    let text = text(&r);
    assert!(r.status < 300, "{method} {path}: {} {text}", r.status);
    serde_json::from_str(&text).unwrap()
}

async fn writes_refused_reads_served(salt: &str, ip: &str) {
    let store = Arc::new(SqliteStore::open(":memory:").unwrap());
    let ok = ctx(store.clone(), salted("a salt"), "10.1.0.1");
    let post = json(
        &ok,
        "POST",
        "/posts",
        json!({"kind": "need", "note": "failsafe"}),
    )
    .await;
    let (id, secret) = (
        post["id"].as_str().unwrap(),
        post["secret"].as_str().unwrap(),
    );
    let reply = |t: &str| json!({"text": t});
    let first = json(&ok, "POST", &format!("/posts/{id}/messages"), reply("a")).await;
    let second = json(&ok, "POST", &format!("/posts/{id}/messages"), reply("b")).await;
    let accept = json!({"secret": secret, "message_id": first["id"]});
    let key = json(&ok, "POST", &format!("/posts/{id}/accept"), accept).await["thread_key"].clone();

    let bad = ctx(store.clone(), salted(salt), ip);
    let mut refused = Vec::new();
    for route in ROUTES {
        let path = route.path.replace(
            ":id",
            if route.path.starts_with("/messages") {
                first["id"].as_str().unwrap()
            } else {
                id
            },
        );
        let body = match (route.method, route.path) {
            ("GET", _) => None,
            ("POST", "/posts") => Some(json!({"kind": "have", "note": "failsafe 2"})),
            ("POST", "/posts/:id/messages") => Some(reply("c")),
            ("POST", "/posts/:id/waiting") => Some(json!({"secret": secret})),
            ("POST", "/posts/:id/accept") => {
                Some(json!({"secret": secret, "message_id": second["id"]}))
            }
            ("POST", "/posts/:id/close") => Some(json!({"secret": secret})),
            ("POST", "/posts/:id/report") => Some(json!({"reason": "spam"})),
            ("POST", "/messages/:id/thread") => Some(json!({"secret": first["secret"]})),
            ("POST", "/threads") => Some(json!({"thread_key": key})),
            ("POST", "/threads/messages") => Some(json!({"thread_key": key, "text": "later"})),
            ("POST", "/mcp") => Some(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})),
            _ => Some(json!({})),
        };
        let r = call(&bad, route.method, &path, body.as_ref()).await;
        let (status, text) = (r.status, text(&r));
        if route.declares(Code::Internal) {
            assert_eq!(
                (status, text.as_str()),
                (500, r#"{"error":"internal"}"#),
                "{} {}",
                route.method,
                route.path
            );
            refused.push(route.path);
        } else {
            assert!(
                status < 400,
                "{} {}: {status} {text}",
                route.method,
                route.path
            );
        }
    }
    assert_eq!(
        refused,
        [
            "/posts",
            "/posts/:id/messages",
            "/posts/:id/accept",
            "/posts/:id/close",
            "/posts/:id/report",
            "/threads/messages"
        ],
        "the writes"
    );
    // Nothing was written: the list and the waiting list are as they were.
    let list = text(&call(&bad, "GET", "/posts", None).await);
    assert!(
        list.contains("failsafe") && !list.contains("failsafe 2"),
        "{list}"
    );
    let waiting = json(
        &ok,
        "POST",
        &format!("/posts/{id}/waiting"),
        json!({"secret": secret}),
    )
    .await;
    assert_eq!(
        waiting["messages"].as_array().unwrap().len(),
        1,
        "{waiting}"
    );
    // Input errors still come first: the refusal is about who asks.
    let r = call(
        &bad,
        "POST",
        "/posts",
        Some(&json!({"kind": "x", "note": "n"})),
    )
    .await;
    assert_eq!(
        (r.status, text(&r).as_str()),
        (400, r#"{"error":"bad_kind"}"#)
    );
}

#[tokio::test]
async fn no_salt_refuses_writes() {
    writes_refused_reads_served("", "10.1.0.2").await;
}

#[tokio::test]
async fn no_client_ip_refuses_writes() {
    writes_refused_reads_served("a salt", "").await;
}
