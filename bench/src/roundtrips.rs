//! Store round trips per call, counted the way the tests count them: with
//! their store wrapper (`needhave::store::testing::Counting`), which counts
//! `batch` calls, and one request of every route through `needhave::handle`.

use std::sync::Arc;

use serde_json::{json, Value};

use needhave::http::Request;
use needhave::store::sqlite::SqliteStore;
use needhave::store::testing::Counting;
use needhave::{Config, Ctx};

/// (call, status, round trips), in table order.
pub async fn count() -> Vec<(String, u16, usize)> {
    let store = Arc::new(Counting::new(
        SqliteStore::open(":memory:").expect("memory store"),
    ));
    // A salt: without one every write is refused (`Ctx::ip_hash`).
    let config = Config {
        ip_salt: "roundtrips".into(),
        ..Config::default()
    };
    let ctx = Ctx::new(
        &needhave::routes::API,
        store.clone(),
        Arc::new(config),
        "127.0.0.1",
    );
    let mut out = Vec::new();
    let call = |method: &str, path: &str, body: Option<Value>, label: &str| {
        let mut req = Request::new(method, path);
        req.headers.push(("host".into(), "127.0.0.1".into()));
        if let Some(b) = body {
            req.body = b.to_string().into_bytes();
        }
        let before = store.trips();
        let ctx = ctx.clone();
        let store = store.clone();
        let label = label.to_string();
        async move {
            let resp = needhave::handle(&req, &ctx).await;
            let n = store.trips() - before;
            let v: Value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
            (label, resp.status, n, v)
        }
    };
    let mut push = |r: (String, u16, usize, Value)| {
        out.push((r.0, r.1, r.2));
        r.3
    };
    push(call("GET", "/", None, "GET /").await);
    push(call("GET", "/openapi.json", None, "GET /openapi.json").await);
    // The other documents (robots.txt, llms.txt, the card, …), from the table.
    for r in needhave::routes::ROUTES.iter().filter(|r| {
        r.method == "GET"
            && !r.path.contains(':')
            && !matches!(r.path, "/" | "/openapi.json" | "/posts")
    }) {
        push(call("GET", r.path, None, &format!("GET {}", r.path)).await);
    }
    push(call("GET", "/posts", None, "GET /posts (list)").await);
    let post = push(
        call(
            "POST",
            "/posts",
            Some(json!({"kind": "need", "note": "round trips"})),
            "POST /posts",
        )
        .await,
    );
    let (pid, psecret) = (
        post["id"].as_str().unwrap_or("").to_string(),
        post["secret"].as_str().unwrap_or("").to_string(),
    );
    push(call("GET", &format!("/posts/{pid}"), None, "GET /posts/:id").await);
    let first = push(
        call(
            "POST",
            &format!("/posts/{pid}/messages"),
            Some(json!({"text": "hi"})),
            "POST /posts/:id/messages",
        )
        .await,
    );
    let (mid, msecret) = (
        first["id"].as_str().unwrap_or("").to_string(),
        first["secret"].as_str().unwrap_or("").to_string(),
    );
    push(
        call(
            "GET",
            &format!("/posts/{pid}/messages"),
            None,
            "GET /posts/:id/messages (list)",
        )
        .await,
    );
    push(
        call(
            "POST",
            &format!("/posts/{pid}/waiting"),
            Some(json!({"secret": psecret})),
            "POST /posts/:id/waiting (list)",
        )
        .await,
    );
    push(
        call(
            "POST",
            &format!("/messages/{mid}/thread"),
            Some(json!({"secret": msecret})),
            "POST /messages/:id/thread",
        )
        .await,
    );
    let key = push(
        call(
            "POST",
            &format!("/posts/{pid}/accept"),
            Some(json!({"secret": psecret, "message_id": mid})),
            "POST /posts/:id/accept",
        )
        .await,
    );
    let key = key["thread_key"].as_str().unwrap_or("").to_string();
    push(
        call(
            "POST",
            "/threads/messages",
            Some(json!({"thread_key": key, "text": "later"})),
            "POST /threads/messages",
        )
        .await,
    );
    push(
        call(
            "POST",
            "/threads",
            Some(json!({"thread_key": key})),
            "POST /threads (list)",
        )
        .await,
    );
    push(
        call(
            "POST",
            &format!("/posts/{pid}/report"),
            Some(json!({"reason": "spam"})),
            "POST /posts/:id/report",
        )
        .await,
    );
    // Last of the post's calls: it ends here.
    push(
        call(
            "POST",
            &format!("/posts/{pid}/close"),
            Some(json!({"secret": psecret})),
            "POST /posts/:id/close",
        )
        .await,
    );
    push(
        call(
            "POST",
            "/mcp",
            Some(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_posts", "arguments": {}}})),
            "POST /mcp list_posts (list)",
        )
        .await,
    );
    // Nothing written since the list above read it: the SQLite store vouches
    // for its kept copy (D1's never does, so there this is 1).
    push(
        call(
            "GET",
            "/posts",
            None,
            "GET /posts again, nothing written since (kept copy)",
        )
        .await,
    );
    out
}

#[cfg(test)]
mod tests {
    /// The table's figures, as the tests of the list count them.
    #[tokio::test]
    async fn every_call_makes_at_most_one_round_trip_and_a_vouched_list_none() {
        let rows = super::count().await;
        for (call, status, n) in &rows {
            assert!(*status < 400, "{call}: {status}");
            let want = match call.as_str() {
                // The home page, OpenAPI and the other documents.
                c if c.starts_with("GET /")
                    && !c.contains(':')
                    && !c.starts_with("GET /posts")
                    && c != "GET /healthz" =>
                {
                    0
                }
                c if c.ends_with("(kept copy)") => 0,
                _ => 1,
            };
            assert_eq!(*n, want, "{call}");
        }
        // Every route once, and the kept list.
        assert_eq!(rows.len(), needhave::routes::ROUTES.len() + 1);
        assert!(rows.iter().any(|(c, _, _)| c.ends_with("(kept copy)")));
    }
}
