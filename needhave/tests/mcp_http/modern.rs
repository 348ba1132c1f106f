//! `POST /mcp` in the 2026-07-28 revision: no handshake, the version and
//! the client's capabilities in every request's `_meta`, mirrored in
//! headers; `server/discover`; `resultType`, the server's identity and
//! caching hints on results; its errors with their HTTP statuses. Every
//! result and error here is validated against the 2026-07-28 schema, and
//! every tool answer against the tool's output schema.

use serde_json::{json, Value};

use super::{is_hex, rpc_error, tool_err, Client, ZERO_ID};
use crate::common::schema::{self, Rev};
use crate::common::{rpc_request, tool_call};

pub const MODERN: &str = "2026-07-28";

pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "mcp_http", "version": "0"},
    })
}

/// A 2026-07-28 request: `params` with `_meta`.
pub fn request(id: Value, method: &str, params: Value) -> Value {
    let mut params = if params.is_object() {
        params
    } else {
        json!({})
    };
    params["_meta"] = meta();
    rpc_request(id, method, params)
}

/// A 2026-07-28 `tools/call`.
pub fn call(id: u64, name: &str, arguments: Value) -> Value {
    let mut call = tool_call(id, name, arguments);
    call["params"]["_meta"] = meta();
    call
}

/// The headers a 2026-07-28 client mirrors from the body.
pub fn mirrored(payload: &Value) -> Vec<(String, String)> {
    let mut h = vec![("mcp-protocol-version".to_string(), MODERN.to_string())];
    if let Some(m) = payload["method"].as_str() {
        h.push(("mcp-method".into(), m.into()));
    }
    if let Some(n) = payload["params"]["name"].as_str() {
        h.push(("mcp-name".into(), n.into()));
    }
    h
}

/// Sends with exactly these headers.
async fn send(c: &Client, payload: &Value, headers: &[(String, String)]) -> super::Resp {
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    c.mcp_with(payload, &h).await
}

/// A 2026-07-28 request with its mirrored headers; asserts HTTP 200, the
/// id, a valid result of the method and the era's wrapping.
pub async fn rpc(c: &Client, payload: Value) -> Value {
    let r = send(c, &payload, &mirrored(&payload)).await;
    assert_eq!(r.status, 200, "{payload} → {}", r.text());
    let v = r.json();
    let method = payload["method"].as_str().unwrap();
    schema::assert_response(Rev::Modern, method, &payload, &v);
    if v.get("result").is_some() {
        assert_eq!(v["result"]["resultType"], "complete", "{v}");
        let info = &v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
        assert_eq!(info["name"], "needhave", "{v}");
    }
    v
}

async fn tool(c: &Client, name: &str, arguments: Value) -> Value {
    let v = rpc(c, call(7, name, arguments)).await;
    assert!(v.get("error").is_none(), "{v}");
    v["result"].clone()
}

#[track_caller]
fn ok(result: &Value) -> Value {
    super::tool_ok(result)
}

/// An error answer: its status, its code, the request's id, valid as the
/// revision's error response (and as the named error type, if any).
#[track_caller]
fn refused(r: &super::Resp, status: u16, code: i64, id: &Value, def: Option<&str>) -> Value {
    assert_eq!(r.status, status, "{}", r.text());
    let v = r.json();
    rpc_error(&v, code);
    assert_eq!(&v["id"], id, "{v}");
    schema::assert_valid(Rev::Modern, "JSONRPCErrorResponse", &v);
    if let Some(def) = def {
        schema::assert_valid(Rev::Modern, def, &v);
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discover_names_every_version_and_the_server() {
    let c = Client::new();
    let v = rpc(&c, request(json!("d"), "server/discover", json!({}))).await;
    let r = &v["result"];
    assert_eq!(r["supportedVersions"], json!(super::ALL_VERSIONS));
    assert!(r["capabilities"]["tools"].is_object(), "{r}");
    assert!(r["instructions"].as_str().is_some_and(|i| i.len() > 60));
    assert_eq!(r["cacheScope"], "public");
    assert!(r["ttlMs"].as_u64().is_some_and(|t| t > 0), "{r}");
    let info = &r["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert!(info["version"].is_string() && info["title"] == "Needhave");
    assert!(info["description"].as_str().is_some_and(|d| !d.is_empty()));
    assert_eq!(info["websiteUrl"], "https://needhave.io");
    assert!(info["icons"][0]["src"]
        .as_str()
        .is_some_and(|s| s.starts_with("data:image/svg+xml;base64,")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_is_the_same_tools_with_caching_hints() {
    let c = Client::new();
    let v = rpc(&c, request(json!(1), "tools/list", json!({}))).await;
    let r = &v["result"];
    assert_eq!(r["cacheScope"], "public");
    assert!(r["ttlMs"].as_u64().is_some_and(|t| t > 0), "{r}");
    // The tools are the 2025 era's, in the table's order: only the envelope differs.
    let legacy = needhave::mcp::tools::list(&needhave::routes::API);
    assert_eq!(r["tools"], legacy["tools"]);
    // The other lists answer with the same hints: empty, but for the
    // skill's one resource.
    for (method, key, len) in [
        ("prompts/list", "prompts", 0),
        ("resources/list", "resources", 1),
        ("resources/templates/list", "resourceTemplates", 0),
    ] {
        let v = rpc(&c, request(json!(3), method, json!({}))).await;
        assert_eq!(v["result"][key].as_array().map(Vec::len), Some(len), "{v}");
        assert_eq!(v["result"]["cacheScope"], "public");
        assert!(v["result"]["ttlMs"].as_u64().is_some_and(|t| t > 0), "{v}");
    }
    // And the same every time.
    let again = rpc(&c, request(json!(2), "tools/list", json!({}))).await;
    assert_eq!(again["result"]["tools"], r["tools"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_along_one_full_flow() {
    let author = Client::new();
    let respondent = Client::new();
    let note = super::fresh_note("modern flow");
    let post = ok(&tool(&author, "create_need", json!({"note": note})).await);
    assert!(is_hex(post["secret"].as_str().unwrap(), 64));
    let id = post["id"].as_str().unwrap().to_string();
    let secret = post["secret"].as_str().unwrap().to_string();
    let have = ok(&tool(
        &author,
        "create_have",
        json!({"note": super::fresh_note("modern have")}),
    )
    .await);
    assert_eq!(have["kind"], "have");
    let listed = ok(&tool(&author, "list_posts", json!({})).await);
    assert!(listed["posts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["id"] == id.as_str()));
    assert_eq!(
        ok(&tool(&author, "read_post", json!({"id": id})).await)["note"],
        note.as_str()
    );
    let first = ok(&tool(
        &respondent,
        "write_first_reply",
        json!({"post_id": id, "text": "I can help"}),
    )
    .await);
    let mid = first["id"].as_str().unwrap().to_string();
    let rsecret = first["secret"].as_str().unwrap().to_string();
    // The author's waiting list (one branch of accept_reply) …
    let waiting = ok(&tool(
        &author,
        "accept_reply",
        json!({"post_id": id, "secret": secret}),
    )
    .await);
    assert_eq!(waiting["messages"][0]["id"], mid.as_str());
    // … the respondent before acceptance: no key (one branch of read_thread) …
    let before = ok(&tool(
        &respondent,
        "read_thread",
        json!({"message_id": mid, "secret": rsecret}),
    )
    .await);
    assert_eq!(before, json!({"accepted": false}));
    // … the accept (the other branch) …
    let key = ok(&tool(
        &author,
        "accept_reply",
        json!({"post_id": id, "secret": secret, "message_id": mid}),
    )
    .await);
    let key = key["thread_key"].as_str().unwrap().to_string();
    // … the thread by key, and by message id and secret (callback then thread).
    let by_key = ok(&tool(&author, "read_thread", json!({"thread_key": key})).await);
    assert_eq!(by_key["messages"][0]["text"], "I can help");
    let after = ok(&tool(
        &respondent,
        "read_thread",
        json!({"message_id": mid, "secret": rsecret}),
    )
    .await);
    assert_eq!(after["accepted"], true);
    assert_eq!(after["thread_key"], key.as_str());
    assert_eq!(after["messages"], by_key["messages"]);
    let later = ok(&tool(
        &respondent,
        "write_thread_message",
        json!({"thread_key": key, "text": "when?"}),
    )
    .await);
    assert_eq!(later["post_id"], id.as_str());
    // The post's life: closed by its author (accept_reply's third
    // branch), read as closed; a post given an expiry.
    let closed = ok(&tool(
        &author,
        "accept_reply",
        json!({"post_id": id, "secret": secret, "close": true}),
    )
    .await);
    assert_eq!(closed["status"], "closed");
    let read = ok(&tool(&author, "read_post", json!({"id": id})).await);
    assert_eq!(
        (&read["status"], &read["ended_at"]),
        (&json!("closed"), &closed["ended_at"])
    );
    let brief = ok(&tool(
        &author,
        "create_have",
        json!({"note": super::fresh_note("modern have for a week"), "expires_in": 604_800}),
    )
    .await);
    assert!(brief["expires_at"].is_string());
    tool_err(
        &tool(
            &author,
            "accept_reply",
            json!({"post_id": id, "secret": secret, "close": true}),
        )
        .await,
        "ended",
    );
    // A list rule and an argument error: isError results in this era too.
    tool_err(
        &tool(&author, "create_need", json!({"note": note})).await,
        "duplicate_note",
    );
    tool_err(
        &tool(&author, "read_post", json!({"id": ZERO_ID})).await,
        "not_found",
    );
    let bad = tool_err(&tool(&author, "read_post", json!({})).await, "bad_request");
    assert_eq!(bad["message"], "read_post: missing argument `id`");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_its_meta_is_400_32602() {
    let c = Client::new();
    let h = |method: &str| {
        vec![
            ("mcp-protocol-version".to_string(), MODERN.to_string()),
            ("mcp-method".to_string(), method.to_string()),
        ]
    };
    // No _meta at all, under a 2026-07-28 header.
    let bare = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    refused(
        &send(&c, &bare, &h("tools/list")).await,
        400,
        -32602,
        &json!(1),
        None,
    );
    // No params at all.
    let bare = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    refused(
        &send(&c, &bare, &h("tools/list")).await,
        400,
        -32602,
        &json!(2),
        None,
    );
    // The version but no capabilities.
    let mut half = request(json!(3), "tools/list", json!({}));
    half["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    refused(
        &send(&c, &half, &mirrored(&half)).await,
        400,
        -32602,
        &json!(3),
        None,
    );
    // server/discover exists only in 2026-07-28: without _meta, and without
    // any header, it is that era's request and refused as such.
    let discover = json!({"jsonrpc": "2.0", "id": "x", "method": "server/discover"});
    refused(&c.mcp(discover).await, 400, -32602, &json!("x"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_the_server_does_not_speak_are_400_32022_listing_all() {
    let c = Client::new();
    let mut p = request(json!(5), "tools/list", json!({}));
    p["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let mut h = mirrored(&p);
    h[0].1 = "2099-01-01".into();
    let v = refused(
        &send(&c, &p, &h).await,
        400,
        -32022,
        &json!(5),
        Some("UnsupportedProtocolVersionError"),
    );
    assert_eq!(v["error"]["data"]["requested"], "2099-01-01");
    let supported = v["error"]["data"]["supported"].as_array().unwrap();
    assert!(supported.contains(&json!("2026-07-28")) && supported.contains(&json!("2025-11-25")));
    // Only in _meta (over stdio there would be no header; here a header
    // that the client did not send is the -32020 below).
    let mut h = mirrored(&p);
    h.remove(0);
    let v = refused(&send(&c, &p, &h).await, 400, -32022, &json!(5), None);
    assert_eq!(v["error"]["data"]["requested"], "2099-01-01");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirrored_headers_are_checked_400_32020() {
    let c = Client::new();
    let list = request(json!(1), "tools/list", json!({}));
    let call = call(2, "list_posts", json!({}));
    // Header and body disagree, one of them a version nobody speaks: the
    // mismatch is the finding, not the version.
    let mut odd = list.clone();
    odd["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = c
        .mcp_with(
            &odd,
            &[
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/list"),
            ],
        )
        .await;
    refused(&r, 400, -32020, &json!(1), Some("HeaderMismatchError"));
    let r = c
        .mcp_with(
            &list,
            &[
                ("mcp-protocol-version", "2099-01-01"),
                ("mcp-method", "tools/list"),
            ],
        )
        .await;
    refused(&r, 400, -32020, &json!(1), Some("HeaderMismatchError"));
    type Case<'a> = (&'a Value, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        // MCP-Protocol-Version missing, or not the body's.
        (&list, vec![("mcp-method", "tools/list")], "missing version"),
        (
            &list,
            vec![
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/list"),
            ],
            "version mismatch",
        ),
        // Mcp-Method missing or not the body's.
        (
            &list,
            vec![("mcp-protocol-version", MODERN)],
            "missing method",
        ),
        (
            &list,
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
            ],
            "method mismatch",
        ),
        (
            &list,
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "Tools/List"),
            ],
            "values are case-sensitive",
        ),
        // Mcp-Name on tools/call.
        (
            &call,
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
            ],
            "missing name",
        ),
        (
            &call,
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
                ("mcp-name", "read_post"),
            ],
            "name mismatch",
        ),
        (
            &call,
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?cmVhZF9wb3N0?="),
            ],
            "encoded name mismatch",
        ),
        (
            &call,
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?***?="),
            ],
            "bad encoding",
        ),
    ];
    for (payload, headers, why) in cases {
        let r = c.mcp_with(payload, &headers).await;
        assert_eq!(r.status, 400, "{why}: {}", r.text());
        refused(&r, 400, -32020, &payload["id"], Some("HeaderMismatchError"));
    }
    // The Base64 sentinel of the right name is the right name.
    let r = c
        .mcp_with(
            &call,
            &[
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?bGlzdF9wb3N0cw==?="),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    // Header names are case-insensitive.
    let r = c
        .mcp_with(
            &list,
            &[
                ("MCP-PROTOCOL-VERSION", MODERN),
                ("MCP-METHOD", "tools/list"),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_methods_are_404_and_ping_and_initialize_are_gone() {
    let c = Client::new();
    for method in [
        "ping",
        "initialize",
        "nope",
        "prompts/get",
        "logging/setLevel",
    ] {
        let p = request(json!(method), method, json!({}));
        let r = send(&c, &p, &mirrored(&p)).await;
        refused(&r, 404, -32601, &json!(method), None);
    }
    // Unknown tool: still -32602 (HTTP 200), with the id.
    let p = call(8, "no_such_tool", json!({}));
    let r = send(&c, &p, &mirrored(&p)).await;
    refused(&r, 200, -32602, &json!(8), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_batches_streams_and_notifications() {
    let c = Client::new();
    // An Mcp-Session-Id is ignored, and none is minted.
    let p = request(json!(1), "tools/list", json!({}));
    let mut h = mirrored(&p);
    h.push(("mcp-session-id".into(), "abc".into()));
    let r = send(&c, &p, &h).await;
    assert_eq!(r.status, 200);
    assert!(r.header("mcp-session-id").is_none());
    // GET and DELETE stay 405.
    for method in ["GET", "DELETE"] {
        let r = c
            .send(
                method,
                "/mcp",
                None,
                &[
                    ("mcp-protocol-version", MODERN),
                    ("accept", "text/event-stream"),
                ],
            )
            .await;
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow"), Some("POST"));
    }
    // A 2026-07-28 request comes alone: in a batch it is refused, with its id.
    let batch = json!([request(json!("m"), "tools/list", json!({}))]);
    let r = c.mcp(batch).await;
    assert_eq!(r.status, 200);
    let v = r.json();
    rpc_error(&v[0], -32600);
    assert_eq!(v[0]["id"], "m");
    // A notification: 202, empty.
    let n = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "_meta": meta()}});
    let r = send(&c, &n, &mirrored(&n)).await;
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());
}
