//! `POST /mcp`, black-box: every line of the contract's MCP section and of
//! its three silent traps (405 on GET, 202 for notifications, the echoed
//! protocol version), every tool along one full flow, every list rule as an
//! `isError` result, and the per-IP limits through batches and across MCP
//! and HTTP. Runs against `needhave serve` by default and against any host
//! of the same calls with `NEEDHAVE_TEST_URL` (the Worker in CI).

mod common;
#[path = "mcp_http/modern.rs"]
mod modern;

use std::collections::BTreeSet;

use common::schema;
use common::*;
use serde_json::{json, Value};

const ZERO_ID: &str = "00000000000000000000000000000000";
const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// Every version spoken, newest first: what the server lists to a client
/// that must choose.
const ALL_VERSIONS: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

fn init(id: u64, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params})
}

fn init_params(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "mcp_http", "version": "0"}})
}

#[track_caller]
fn assert_json(r: &Resp) {
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("application/json")),
        "content-type {:?}",
        r.header("content-type")
    );
}

/// Whether `note` is on the list: a fresh IP tries to post it over HTTP.
/// Exact whatever else is posted meanwhile (the public list shows only the
/// 100 newest); a note that was free is taken by the try, so use it once.
async fn on_the_list(note: &str) -> bool {
    let r = Client::new()
        .post("/posts", json!({"kind": "need", "note": note}))
        .await;
    match r.status {
        201 => false,
        409 => true,
        _ => panic!("{}", r.text()),
    }
}

#[track_caller]
fn rpc_error(v: &Value, code: i64) {
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert_eq!(v["error"]["code"], code, "{v}");
    assert!(v["error"]["message"].is_string(), "{v}");
    assert!(v.get("result").is_none(), "{v}");
}

// ---------------------------------------------------------------- initialize

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_echoes_a_supported_version() {
    let c = Client::new();
    for (i, v) in VERSIONS.iter().enumerate() {
        let r = c.rpc(init(i as u64 + 1, init_params(v))).await;
        assert_eq!(r["result"]["protocolVersion"], *v, "{r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_answers_its_latest_to_an_unknown_version_and_to_none() {
    let c = Client::new();
    // An offered version the server does not speak: its latest.
    for offered in [
        json!("1999-01-01"),
        json!("2099-12-31"),
        json!(""),
        json!(7),
    ] {
        let mut p = init_params("x");
        p["protocolVersion"] = offered.clone();
        let r = c.rpc(init(1, p)).await;
        assert_eq!(r["result"]["protocolVersion"], VERSIONS[0], "{offered}");
    }
    // None offered: the default, which is the latest.
    let r = c
        .rpc(init(
            2,
            json!({"capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}),
        ))
        .await;
    assert_eq!(r["result"]["protocolVersion"], VERSIONS[0]);
    let r = c
        .rpc(json!({"jsonrpc": "2.0", "id": 3, "method": "initialize"}))
        .await;
    assert_eq!(r["result"]["protocolVersion"], VERSIONS[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_result_shape() {
    let c = Client::new();
    let r = c.mcp(init(1, init_params("2025-11-25"))).await;
    assert_eq!(r.status, 200);
    assert_json(&r);
    // Stateless: no session is handed out, none is required.
    assert!(r.header("mcp-session-id").is_none());
    let v = r.json();
    assert_eq!(v["id"], 1);
    let res = &v["result"];
    assert_eq!(res["serverInfo"]["name"], "needhave");
    assert!(res["serverInfo"]["version"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    assert!(res["capabilities"]["tools"].is_object(), "{res}");
    // Tools, and resources for the Skills extension's one skill: no
    // prompts or logging promised.
    assert!(res["capabilities"]["resources"].is_object(), "{res}");
    assert_eq!(
        res["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({})
    );
    for cap in ["prompts", "logging", "completions"] {
        assert!(res["capabilities"].get(cap).is_none(), "{cap} in {res}");
    }
    // Two sentences a model reads: what the list is.
    let instructions = res["instructions"].as_str().expect("instructions");
    let sentences = instructions
        .split_terminator(['.', '!', '?'])
        .filter(|s| !s.trim().is_empty())
        .filter(|s| s.starts_with(' ') || instructions.starts_with(s.trim_start()))
        .count();
    assert!(
        instructions.ends_with('.') && sentences == 2,
        "{instructions:?} is {sentences} sentences"
    );
    for word in ["need", "have", "public list"] {
        assert!(
            instructions.contains(word),
            "{word} not in {instructions:?}"
        );
    }
    // A session id sent by a client that thinks it has one changes nothing.
    let r = c
        .mcp_with(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            &[("mcp-session-id", "abc123")],
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["tools"].as_array().unwrap().len(), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_answers_an_empty_result() {
    let c = Client::new();
    let v = c
        .rpc(json!({"jsonrpc": "2.0", "id": "p-1", "method": "ping"}))
        .await;
    assert_eq!(v["result"], json!({}));
    // Without initialize first (stateless), and with params.
    let v = c
        .rpc(json!({"jsonrpc": "2.0", "id": 0, "method": "ping", "params": {}}))
        .await;
    assert_eq!(v["result"], json!({}));
}

// ---------------------------------------------- transport: the silent traps

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_and_delete_are_405_with_allow_post() {
    let c = Client::new();
    let cases: &[(&str, &[(&str, &str)])] = &[
        ("GET", &[("accept", "text/event-stream")]),
        (
            "GET",
            &[
                ("accept", "text/event-stream"),
                ("mcp-protocol-version", "2025-11-25"),
            ],
        ),
        ("GET", &[("accept", "application/json, text/event-stream")]),
        ("GET", &[]),
        ("DELETE", &[("mcp-session-id", "abc")]),
        ("DELETE", &[]),
        ("PUT", &[]),
    ];
    for (method, headers) in cases {
        let r = c.send(method, "/mcp", None, headers).await;
        assert_eq!(
            r.status, 405,
            "{method} /mcp {headers:?}: never 200, never 404"
        );
        assert_eq!(r.header("allow"), Some("POST"), "{method} {headers:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_get_202_and_an_empty_body() {
    let c = Client::new();
    for note in [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "x"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/unknown-to-anyone"}),
        // A notification-shaped tools/call is not run and not answered.
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "list_posts"}}),
        // A response the client sends back (this server asks nothing).
        json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -1, "message": "x"}}),
    ] {
        let r = c.mcp(note.clone()).await;
        assert_eq!(r.status, 202, "{note}: {}", r.text());
        assert!(r.body.is_empty(), "{note}: body {:?}", r.text());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_version_header() {
    let c = Client::new();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for bad in [
        "1999-01-01",
        "2025-11-26",
        "latest",
        "2025-11-25, 2025-06-18",
    ] {
        let r = c.mcp_with(&list, &[("mcp-protocol-version", bad)]).await;
        assert_eq!(r.status, 400, "MCP-Protocol-Version: {bad:?}");
        assert_json(&r);
        assert!(r.json()["error"]["code"].is_i64(), "{}", r.text());
    }
    for good in VERSIONS {
        let r = c.mcp_with(&list, &[("mcp-protocol-version", good)]).await;
        assert_eq!(r.status, 200, "MCP-Protocol-Version: {good}");
    }
    // No header is fine.
    assert_eq!(c.mcp(list).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_is_403_and_the_own_origin_is_fine() {
    let c = Client::new();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let host = server().host.clone();
    for origin in [
        "https://evil.example".to_string(),
        "http://evil.example".to_string(),
        "null".to_string(),
        format!("http://{host}.evil.example"),
        format!("http://evil.example/{host}"),
        format!("ftp://{host}"),
    ] {
        let r = c.mcp_with(&list, &[("origin", &origin)]).await;
        assert_eq!(r.status, 403, "Origin: {origin}");
        assert_json(&r);
        // Refused before anything runs: a notification is not accepted either.
        let r = c
            .mcp_with(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                &[("origin", &origin)],
            )
            .await;
        assert_eq!(r.status, 403, "Origin: {origin}");
    }
    let own = if server().is_remote() && server().base.starts_with("https://") {
        format!("https://{host}")
    } else {
        format!("http://{host}")
    };
    let r = c.mcp_with(&list, &[("origin", &own)]).await;
    assert_eq!(r.status, 200, "Origin: {own}");
    // A foreign Origin never makes a tool run.
    let note = fresh_note("origin");
    let r = c
        .mcp_with(
            &tool_call(1, "create_need", json!({"note": note})),
            &[("origin", "https://evil.example")],
        )
        .await;
    assert_eq!(r.status, 403);
    assert!(!on_the_list(&note).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unparseable_bodies_are_400_with_32700_and_id_null() {
    let c = Client::new();
    for body in [
        &b"{not json"[..],
        b"",
        b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"",
        b"[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"},",
        b"\xff\xfe",
    ] {
        let r = c.post_raw("/mcp", body).await;
        assert_eq!(r.status, 400, "{:?}", String::from_utf8_lossy(body));
        assert_json(&r);
        let v = r.json();
        rpc_error(&v, -32700);
        assert!(v.get("id").is_some() && v["id"].is_null(), "{v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_rpc_errors_travel_with_http_200() {
    let c = Client::new();
    // Unknown method: -32601, with the caller's id.
    for (id, method) in [
        (json!(1), "nope"),
        (json!("s"), "resources/subscribe"),
        (json!(2), "prompts/list"),
        (json!(3), "tools/lists"),
    ] {
        let v = c
            .rpc(json!({"jsonrpc": "2.0", "id": id, "method": method}))
            .await;
        rpc_error(&v, -32601);
    }
    // Invalid request: -32600.
    for bad in [
        json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
        json!({"id": 1, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 1}),
        json!({"jsonrpc": "2.0", "id": 1, "method": 5}),
        json!({"jsonrpc": 2, "id": 1, "method": "ping"}),
    ] {
        let v = c.rpc(bad.clone()).await;
        rpc_error(&v, -32600);
    }
    // An id MCP does not allow, or not an object at all: -32600 with id null.
    for bad in [
        json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": [1], "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": true, "method": "ping"}),
        json!(42),
        json!("ping"),
        json!(null),
        json!({}),
    ] {
        let r = c.mcp(bad.clone()).await;
        assert_eq!(r.status, 200, "{bad}: {}", r.text());
        assert_json(&r);
        let v = r.json();
        rpc_error(&v, -32600);
        assert!(v["id"].is_null(), "{bad}: {v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tools_and_malformed_calls_are_32602() {
    let c = Client::new();
    let call = |params: Value| json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params});
    let cases = [
        json!({"name": "no_such_tool", "arguments": {}}),
        json!({"name": "List_Posts"}),
        json!({"name": "", "arguments": {}}),
        json!({"arguments": {"note": "x"}}),
        json!({"name": 5}),
        json!({}),
        json!({"name": "create_need", "arguments": "note"}),
        json!({"name": "create_need", "arguments": ["x"]}),
    ];
    for params in cases {
        let v = c.rpc(call(params.clone())).await;
        rpc_error(&v, -32602);
        assert_eq!(v["id"], 9, "{params}");
    }
    // params that are not an object.
    for params in [json!([1, 2]), json!("x"), json!(3)] {
        let v = c
            .rpc(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}))
            .await;
        rpc_error(&v, -32602);
    }
}

/// SEP-1303: arguments a tool does not take are a tool result the model
/// can read and mend, naming what is wrong, and nothing runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argument_errors_are_is_error_results_naming_the_argument() {
    let c = Client::new();
    let extra = fresh_note("extra field");
    let cases = [
        ("create_need", json!({}), "missing argument `note`"),
        (
            "create_need",
            json!({"note": 5}),
            "argument `note` must be a string",
        ),
        (
            "create_need",
            json!({"note": null}),
            "argument `note` must be a string",
        ),
        (
            "create_need",
            json!({"note": extra, "kind": "have"}),
            "unknown argument `kind`",
        ),
        (
            "list_posts",
            json!({"limit": 5}),
            "unknown argument `limit`",
        ),
        ("read_post", json!({}), "missing argument `id`"),
        (
            "read_post",
            json!({"id": ["x"]}),
            "argument `id` must be a string",
        ),
        (
            "write_first_reply",
            json!({"post_id": ZERO_ID}),
            "missing argument `text`",
        ),
        (
            "accept_reply",
            json!({"post_id": ZERO_ID}),
            "missing argument `secret`",
        ),
        (
            "accept_reply",
            json!({"post_id": ZERO_ID, "secret": "s", "message_id": 1}),
            "argument `message_id` must be a string",
        ),
        (
            "read_thread",
            json!({"thread_key": 1}),
            "argument `thread_key` must be a string",
        ),
        (
            "read_thread",
            json!({}),
            "missing argument `message_id` (or give `thread_key`)",
        ),
        (
            "read_thread",
            json!({"message_id": ZERO_ID}),
            "argument `message_id` needs `secret` as well",
        ),
        (
            "read_thread",
            json!({"secret": "s"}),
            "argument `secret` needs `message_id` as well",
        ),
        (
            "write_thread_message",
            json!({"thread_key": "k"}),
            "missing argument `text`",
        ),
        (
            "write_thread_message",
            json!({"text": "t"}),
            "missing argument `thread_key`",
        ),
    ];
    for (tool, args, why) in cases {
        let v = c.rpc(tool_call(9, tool, args.clone())).await;
        assert!(v.get("error").is_none(), "{tool} {args}: {v}");
        let text = tool_err(&v["result"], "bad_request");
        let message = text["message"].as_str().unwrap_or("");
        assert_eq!(message, format!("{tool}: {why}"), "{tool} {args}");
    }
    // Nothing was created by any of them.
    assert!(!on_the_list(&extra).await);
}

// ----------------------------------------------------------------- tools/list

fn walk(v: &Value, f: &mut impl FnMut(&serde_json::Map<String, Value>)) {
    match v {
        Value::Object(m) => {
            f(m);
            m.values().for_each(|c| walk(c, f));
        }
        Value::Array(a) => a.iter().for_each(|c| walk(c, f)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_is_the_table() {
    let c = Client::new();
    let v = c
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}))
        .await;
    let tools = v["result"]["tools"].as_array().expect("tools").clone();
    assert!(v["result"].get("nextCursor").is_none());
    // Exactly the contract's eight, from the generated table.
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let table: Vec<&str> = needhave::routes::TOOLS.iter().map(|t| t.name).collect();
    assert_eq!(names, table);
    let want: BTreeSet<&str> = [
        "list_posts",
        "create_need",
        "create_have",
        "read_post",
        "write_first_reply",
        "accept_reply",
        "read_thread",
        "write_thread_message",
    ]
    .into();
    assert_eq!(names.iter().copied().collect::<BTreeSet<_>>(), want);
    assert_eq!(names.len(), 8);
    // The same document the library builds (and the stdio server serves).
    assert_eq!(
        v["result"],
        needhave::mcp::tools::list(&needhave::routes::API)
    );

    let read_only = ["list_posts", "read_post", "read_thread"];
    let idempotent = ["create_need", "create_have", "accept_reply"];
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        let title = t["title"].as_str().unwrap_or("");
        assert!(!title.is_empty(), "{name}: title");
        let desc = t["description"].as_str().unwrap_or("");
        assert!(desc.len() >= 60, "{name}: a description a model can use");
        assert!(
            !desc.contains("::") && !desc.contains("`"),
            "{name}: no code talk"
        );

        // Schema: an object, closed, self-contained, no nullable type arrays.
        let s = &t["inputSchema"];
        assert_eq!(s["type"], "object", "{name}");
        assert_eq!(s["additionalProperties"], false, "{name}");
        let props = s["properties"].as_object().expect("properties");
        let required: Vec<&str> = s["required"]
            .as_array()
            .map(|r| r.iter().map(|x| x.as_str().unwrap()).collect())
            .unwrap_or_default();
        for r in &required {
            assert!(
                props.contains_key(*r),
                "{name}: required {r} not a property"
            );
        }
        for (p, schema) in props {
            // Text, but a post's life in seconds and a yes to close it.
            let want = match p.as_str() {
                "expires_in" => "integer",
                "close" => "boolean",
                _ => "string",
            };
            assert_eq!(schema["type"], want, "{name}.{p}: {schema}");
            assert!(
                schema["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{name}.{p}: described"
            );
        }
        walk(s, &mut |m| {
            assert!(
                !m.contains_key("$ref") && !m.contains_key("$defs"),
                "{name}: {s}"
            );
            assert!(
                !m.contains_key("definitions") && !m.contains_key("$schema"),
                "{name}"
            );
            assert!(
                !m.contains_key("anyOf") && !m.contains_key("oneOf"),
                "{name}: {s}"
            );
            if let Some(ty) = m.get("type") {
                assert!(ty.is_string(), "{name}: type {ty} is not one type");
            }
            assert!(!m.contains_key("nullable"), "{name}");
        });

        // Annotations that are true for the tool.
        let a = &t["annotations"];
        assert_eq!(a["readOnlyHint"], read_only.contains(&name), "{name}");
        assert_eq!(
            a["destructiveHint"], false,
            "{name}: nothing is ever deleted"
        );
        assert_eq!(
            a["idempotentHint"],
            read_only.contains(&name) || idempotent.contains(&name),
            "{name}"
        );
        assert!(a["openWorldHint"].is_boolean(), "{name}");
        assert_eq!(a["title"], t["title"], "{name}");
    }

    // Arguments: exactly the contract's, and optional ones not required.
    let args = |name: &str| -> (BTreeSet<String>, BTreeSet<String>) {
        let t = tools.iter().find(|t| t["name"] == name).unwrap();
        let props = t["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let req = t["inputSchema"]["required"]
            .as_array()
            .map(|r| r.iter().map(|x| x.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        (props, req)
    };
    let set = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<BTreeSet<_>>();
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("list_posts", &["kind", "query", "cursor"], &[]),
        ("create_need", &["note", "expires_in"], &["note"]),
        ("create_have", &["note", "expires_in"], &["note"]),
        ("read_post", &["id"], &["id"]),
        (
            "write_first_reply",
            &["post_id", "text"],
            &["post_id", "text"],
        ),
        (
            "accept_reply",
            &["post_id", "secret", "message_id", "close"],
            &["post_id", "secret"],
        ),
        ("read_thread", &["thread_key", "message_id", "secret"], &[]),
        (
            "write_thread_message",
            &["thread_key", "text"],
            &["thread_key", "text"],
        ),
    ];
    for (name, props, req) in cases {
        assert_eq!(args(name), (set(props), set(req)), "{name}");
    }

    // Descriptions say what to keep.
    let desc = |name: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["description"]
            .as_str()
            .unwrap()
            .to_lowercase()
    };
    for name in ["create_need", "create_have", "write_first_reply"] {
        let d = desc(name);
        assert!(
            d.contains("secret") && (d.contains("keep") || d.contains("store")),
            "{name}: {d}"
        );
    }
    assert!(desc("accept_reply").contains("thread key"));
    assert!(
        desc("read_thread").contains("message_id") && desc("read_thread").contains("thread_key")
    );
    // read_thread's "thread_key, or message_id and secret", as clients read
    // it: the pair goes together (no top-level oneOf, which model APIs
    // refuse in a tool's input schema).
    let rt = &tools.iter().find(|t| t["name"] == "read_thread").unwrap()["inputSchema"];
    assert_eq!(
        rt["dependentRequired"],
        json!({"message_id": ["secret"], "secret": ["message_id"]})
    );

    // Every tool has an icon, and an output schema: what the checked-in
    // file holds, which the table generates (`golden.rs`).
    let file: Value = serde_json::from_str(needhave::mcp::tools::SCHEMAS).unwrap();
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        let icon = &t["icons"][0];
        assert!(
            icon["src"]
                .as_str()
                .is_some_and(|s| s.starts_with("data:image/svg+xml;base64,")),
            "{name}: {icon}"
        );
        assert_eq!(icon["mimeType"], "image/svg+xml");
        let out = &t["outputSchema"];
        assert_eq!(out, &file[name]["outputSchema"], "{name}");
        assert_eq!(out["type"], "object", "{name}: an object at the root");
        walk(out, &mut |m| {
            assert!(
                !m.contains_key("$ref") && !m.contains_key("$defs"),
                "{name}: {out}"
            );
            assert!(!m.contains_key("$schema"), "{name}");
            if let Some(ty) = m.get("type") {
                assert!(ty.is_string(), "{name}: type {ty} is not one type");
            }
        });
        // One closed shape per way the plan can end.
        let shapes: Vec<&Value> = match out.get("anyOf") {
            Some(a) => a.as_array().unwrap().iter().collect(),
            None => vec![out],
        };
        for shape in &shapes {
            assert_eq!(shape["additionalProperties"], false, "{name}: {shape}");
        }
        let keys = |v: &Value| -> BTreeSet<String> {
            v["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        let got: Vec<BTreeSet<String>> = shapes.iter().map(|s| keys(s)).collect();
        let want: Vec<Vec<&str>> = match name {
            "list_posts" => vec![vec!["next", "posts"]],
            "create_need" | "create_have" => vec![vec![
                "created_at",
                "expires_at",
                "id",
                "kind",
                "note",
                "secret",
            ]],
            "read_post" => vec![vec![
                "created_at",
                "ended_at",
                "expires_at",
                "id",
                "kind",
                "note",
                "status",
            ]],
            "write_first_reply" => vec![vec!["hidden", "id", "post_id", "secret"]],
            "accept_reply" => vec![
                vec!["ended_at", "status", "thread_key"],
                vec!["ended_at", "id", "status"],
                vec!["messages"],
            ],
            "read_thread" => vec![
                vec!["messages", "post_id"],
                vec!["accepted", "thread_key"],
                vec!["accepted", "messages", "post_id", "thread_key"],
            ],
            "write_thread_message" => vec![vec!["id", "post_id"]],
            other => panic!("{other}"),
        };
        let want: Vec<BTreeSet<String>> = want.iter().map(|w| set(w)).collect();
        assert_eq!(got, want, "{name}");
    }
}

/// The checker is live: what is right for one revision is wrong for the
/// other, so the schema checks in these tests can fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_schema_checks_can_fail() {
    let c = Client::new();
    let v = c
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let r = std::panic::catch_unwind(|| {
        schema::assert_valid(schema::Rev::Modern, "ListToolsResult", &v["result"])
    });
    assert!(
        r.is_err(),
        "a 2025 tools/list lacks resultType, ttlMs, cacheScope"
    );
    let r = std::panic::catch_unwind(|| {
        schema::assert_answer(
            "read_post",
            &json!({"content": [], "structuredContent": {"id": 1}}),
        )
    });
    assert!(r.is_err(), "an answer that does not fit the output schema");
}

// ------------------------------------------------------------------- ids

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_carry_the_request_id_and_null_only_when_there_is_none() {
    let c = Client::new();
    let list = json!({"jsonrpc": "2.0", "id": "req-7", "method": "tools/list"});
    // The unsupported version: 400, -32022, every version spoken.
    let r = c
        .mcp_with(&list, &[("mcp-protocol-version", "1999-01-01")])
        .await;
    assert_eq!(r.status, 400);
    let v = r.json();
    rpc_error(&v, -32022);
    assert_eq!(v["id"], "req-7", "{v}");
    assert_eq!(v["error"]["data"]["requested"], "1999-01-01");
    assert_eq!(v["error"]["data"]["supported"], json!(ALL_VERSIONS));
    schema::assert_valid(schema::Rev::Modern, "UnsupportedProtocolVersionError", &v);
    // A foreign Origin: 403 with the id.
    let r = c
        .mcp_with(&list, &[("origin", "https://evil.example")])
        .await;
    assert_eq!(r.status, 403);
    let v = r.json();
    assert_eq!(v["id"], "req-7", "{v}");
    schema::assert_valid(schema::Rev::Legacy, "JSONRPCErrorResponse", &v);
    // A numeric id too.
    let r = c
        .mcp_with(
            &tool_call(42, "list_posts", json!({})),
            &[("origin", "null")],
        )
        .await;
    assert_eq!((r.status, r.json()["id"].clone()), (403, json!(42)));
    // No id to carry: a batch, a notification, a body that is not JSON.
    let batch = json!([list.clone(), list.clone()]);
    let r = c
        .mcp_with(&batch, &[("origin", "https://evil.example")])
        .await;
    assert_eq!(r.status, 403);
    assert!(r.json()["id"].is_null(), "{}", r.text());
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = c
        .mcp_with(&note, &[("mcp-protocol-version", "1999-01-01")])
        .await;
    assert_eq!(r.status, 400);
    assert!(r.json()["id"].is_null(), "{}", r.text());
}

// --------------------------------------------------------- bounded batches

/// 20 list_posts of 100 notes of 500 three-byte characters would answer
/// about 6 MB to a 2 KB request; the batch stops at about 2 MiB, and what
/// it did not run says so, with its id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_answer_is_bounded() {
    let c = Client::new();
    let mut posted = 0;
    while posted < 100 {
        let poster = Client::new();
        for _ in 0..10 {
            let tag = fresh_note("big");
            let note: String = format!("{tag} {}", "需".repeat(500 - tag.chars().count() - 1));
            let r = poster
                .post("/posts", json!({"kind": "have", "note": note}))
                .await;
            assert_eq!(r.status, 201, "{}", r.text());
            posted += 1;
        }
    }
    let late = fresh_note("after the bound");
    let mut batch: Vec<Value> = (0..19)
        .map(|i| tool_call(i, "list_posts", json!({})))
        .collect();
    batch.push(tool_call(19, "create_need", json!({"note": late})));
    let payload = Value::Array(batch);
    let sent = payload.to_string().len();
    let r = c.mcp(payload).await;
    assert_eq!(r.status, 200);
    let got = r.body.len();
    let v = r.json();
    let replies = v.as_array().unwrap();
    assert_eq!(replies.len(), 20, "every request is answered");
    let ran = replies
        .iter()
        .take_while(|r| r.get("result").is_some())
        .count();
    assert!((1..19).contains(&ran), "ran {ran} of 20");
    for (i, r) in replies.iter().enumerate().skip(ran) {
        assert_eq!(r["id"], i as u64, "{r}");
        rpc_error(r, -32000);
        schema::assert_valid(schema::Rev::Legacy, "JSONRPCErrorResponse", r);
    }
    // At most the bound plus one answer (one list is under 400 KB).
    assert!(got < 2 * 1024 * 1024 + 400 * 1024, "{got} bytes for {sent}");
    // The create after the bound never ran.
    assert!(!on_the_list(&late).await);
}

// ------------------------------------------------------------ the full flow

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_along_one_full_flow() {
    let author = Client::new();
    let respondent = Client::new();
    let other = Client::new();

    // need
    let note = fresh_note("mcp flow need");
    let post = tool_ok(
        &author
            .tool("create_need", json!({"note": format!("  {note}\n")}))
            .await,
    );
    let post_id = post["id"].as_str().unwrap().to_string();
    let post_secret = post["secret"].as_str().unwrap().to_string();
    assert!(is_hex(&post_id, 32) && is_hex(&post_secret, 64), "{post}");
    assert_eq!(post["kind"], "need");
    assert_eq!(post["note"], note.as_str(), "trimmed");
    let mut keys: Vec<_> = post.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, ["created_at", "id", "kind", "note", "secret"]);

    // a have, too
    let have_note = fresh_note("mcp flow have");
    let have = tool_ok(&author.tool("create_have", json!({"note": have_note})).await);
    assert_eq!(have["kind"], "have");

    // list_posts: the same object GET /posts answers, without secrets.
    let listed = tool_ok(&other.tool("list_posts", json!({})).await);
    assert!(listed["posts"].is_array());
    let text = listed.to_string();
    assert!(text.contains(&post_id) && text.contains(have["id"].as_str().unwrap()));
    assert!(!text.contains(&post_secret) && !text.contains("secret"));
    // The same object GET /posts answers (other tests post meanwhile, so
    // compare shapes, and our post's entry).
    let http = other.get("/posts").await.json();
    // `posts`, and `next` when older posts are there.
    let keys: BTreeSet<&str> = listed
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert!(
        keys.contains("posts") && keys.is_subset(&BTreeSet::from(["posts", "next"])),
        "{listed}"
    );
    let entry = |list: &Value| {
        list["posts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == post_id.as_str())
            .cloned()
    };
    assert_eq!(entry(&listed), entry(&http), "list_posts is GET /posts");
    let created_at = post["created_at"].as_str().unwrap();
    assert_eq!(
        entry(&listed),
        Some(json!({"id": post_id, "kind": "need", "note": note,
            "created_at": created_at, "status": "open"}))
    );
    for p in listed["posts"].as_array().unwrap() {
        let mut keys: Vec<_> = p.as_object().unwrap().keys().collect();
        keys.sort();
        // `expires_at` where its author gave one.
        keys.retain(|k| *k != "expires_at");
        assert_eq!(keys, ["created_at", "id", "kind", "note", "status"]);
    }
    assert!(listed["posts"].as_array().unwrap().len() <= 100);
    // no arguments at all is the same call
    let v = other
        .rpc(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_posts"}}))
        .await;
    assert!(tool_ok(&v["result"])["posts"].is_array());

    // read_post: the same object GET /posts/:id answers.
    let read = tool_ok(&other.tool("read_post", json!({"id": post_id})).await);
    assert_eq!(
        read,
        json!({"id": post_id, "kind": "need", "note": note,
            "created_at": created_at, "status": "open"})
    );
    assert_eq!(read, other.get(&format!("/posts/{post_id}")).await.json());

    // first reply
    let reply_text = fresh_note("mcp flow reply");
    let first = tool_ok(
        &respondent
            .tool(
                "write_first_reply",
                json!({"post_id": post_id, "text": reply_text}),
            )
            .await,
    );
    let msg_id = first["id"].as_str().unwrap().to_string();
    let reply_secret = first["secret"].as_str().unwrap().to_string();
    assert!(is_hex(&msg_id, 32) && is_hex(&reply_secret, 64));
    assert_eq!(first["post_id"], post_id.as_str());
    assert_eq!(first["hidden"], true);
    // hidden from the public
    assert_eq!(
        other
            .get(&format!("/posts/{post_id}/messages"))
            .await
            .json(),
        json!({"messages": []})
    );

    // the respondent asks before acceptance: no key, not even the field
    let before = tool_ok(
        &respondent
            .tool(
                "read_thread",
                json!({"message_id": msg_id, "secret": reply_secret}),
            )
            .await,
    );
    assert_eq!(before, json!({"accepted": false}));

    // accept_reply without message_id: the waiting list
    let waiting = tool_ok(
        &author
            .tool(
                "accept_reply",
                json!({"post_id": post_id, "secret": post_secret}),
            )
            .await,
    );
    assert_eq!(
        waiting,
        json!({"messages": [{"id": msg_id, "text": reply_text}]})
    );
    assert!(!waiting.to_string().contains(&reply_secret));
    // an explicit null message_id is the same as leaving it out
    let again = tool_ok(
        &author
            .tool(
                "accept_reply",
                json!({"post_id": post_id, "secret": post_secret, "message_id": null}),
            )
            .await,
    );
    assert_eq!(again, waiting);

    // accept_reply with message_id: the thread key
    let accepted = tool_ok(
        &author
            .tool(
                "accept_reply",
                json!({"post_id": post_id, "secret": post_secret, "message_id": msg_id}),
            )
            .await,
    );
    let key = accepted["thread_key"].as_str().unwrap().to_string();
    assert!(is_hex(&key, 64));
    assert_eq!(accepted, json!({"thread_key": key}));
    // accepted replies leave the waiting list
    let waiting = tool_ok(
        &author
            .tool(
                "accept_reply",
                json!({"post_id": post_id, "secret": post_secret}),
            )
            .await,
    );
    assert_eq!(waiting, json!({"messages": []}));

    // the respondent, with message_id + secret: the same key and the thread
    let thread = tool_ok(
        &respondent
            .tool(
                "read_thread",
                json!({"message_id": msg_id, "secret": reply_secret}),
            )
            .await,
    );
    assert_eq!(thread["accepted"], true);
    assert_eq!(thread["thread_key"], key.as_str());
    assert_eq!(thread["post_id"], post_id.as_str());
    assert_eq!(
        thread["messages"],
        json!([{"id": msg_id, "text": reply_text}])
    );

    // write in the thread (the respondent, with the key it just got)
    let line = fresh_note("mcp flow later");
    let later = tool_ok(
        &respondent
            .tool(
                "write_thread_message",
                json!({"thread_key": key, "text": format!("\t{line} ")}),
            )
            .await,
    );
    let later_id = later["id"].as_str().unwrap().to_string();
    assert!(is_hex(&later_id, 32));
    assert_eq!(later, json!({"id": later_id, "post_id": post_id}));

    // the author reads by key: first, then later, oldest first
    let by_key = tool_ok(&author.tool("read_thread", json!({"thread_key": key})).await);
    assert_eq!(
        by_key,
        json!({"post_id": post_id, "messages": [
            {"id": msg_id, "text": reply_text},
            {"id": later_id, "text": line},
        ]})
    );
    // the same object POST /threads answers
    assert_eq!(
        by_key,
        author
            .post("/threads", json!({"thread_key": key}))
            .await
            .json()
    );
    // thread_key wins when both ways are given
    let both = tool_ok(
        &author
            .tool(
                "read_thread",
                json!({"thread_key": key, "message_id": msg_id, "secret": "nope"}),
            )
            .await,
    );
    assert_eq!(both, by_key);
    // and the respondent now sees the later message too
    let thread = tool_ok(
        &respondent
            .tool(
                "read_thread",
                json!({"message_id": msg_id, "secret": reply_secret}),
            )
            .await,
    );
    assert_eq!(thread["messages"], by_key["messages"]);

    // Secrets are never shown again by any tool.
    let everything = [
        other.tool("list_posts", json!({})).await,
        other.tool("read_post", json!({"id": post_id})).await,
        author.tool("read_thread", json!({"thread_key": key})).await,
    ]
    .iter()
    .map(Value::to_string)
    .collect::<String>();
    assert!(!everything.contains(&post_secret) && !everything.contains(&reply_secret));
}

// ------------------------------------------------------ rules as isError

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_list_rule_is_an_is_error_result() {
    let c = Client::new();
    // empty / huge notes and texts
    for tool in ["create_need", "create_have"] {
        tool_err(&c.tool(tool, json!({"note": ""})).await, "empty_note");
        tool_err(
            &c.tool(tool, json!({"note": " \n\t\u{3000} "})).await,
            "empty_note",
        );
        tool_err(
            &c.tool(tool, json!({"note": "a".repeat(501)})).await,
            "huge_note",
        );
    }
    // 500 characters pass
    let n500 = format!("{}{}", fresh_note("500"), "é".repeat(500))
        .chars()
        .take(500)
        .collect::<String>();
    tool_ok(&c.tool("create_have", json!({"note": n500})).await);
    // duplicates, across kinds and across MCP and HTTP
    let note = fresh_note("dup");
    tool_ok(&c.tool("create_need", json!({"note": note})).await);
    tool_err(
        &c.tool("create_have", json!({"note": note})).await,
        "duplicate_note",
    );
    tool_err(
        &Client::new()
            .tool("create_need", json!({"note": format!(" {note} ")}))
            .await,
        "duplicate_note",
    );
    let r = c
        .post("/posts", json!({"kind": "have", "note": note}))
        .await;
    r.expect_error(409, "duplicate_note");
    let http_note = fresh_note("dup-http");
    assert_eq!(
        c.post("/posts", json!({"kind": "have", "note": http_note}))
            .await
            .status,
        201
    );
    tool_err(
        &c.tool("create_need", json!({"note": http_note})).await,
        "duplicate_note",
    );

    // not_found: posts
    tool_err(
        &c.tool("read_post", json!({"id": ZERO_ID})).await,
        "not_found",
    );
    for bad in [
        "",
        "x",
        "../posts",
        "../../threads",
        "ABCDEF0123456789ABCDEF0123456789",
        "%2e%2e",
    ] {
        tool_err(&c.tool("read_post", json!({"id": bad})).await, "not_found");
    }
    tool_err(
        &c.tool(
            "write_first_reply",
            json!({"post_id": ZERO_ID, "text": "hi"}),
        )
        .await,
        "not_found",
    );
    tool_err(
        &c.tool(
            "write_first_reply",
            json!({"post_id": "../posts", "text": "hi"}),
        )
        .await,
        "not_found",
    );
    tool_err(
        &c.tool("accept_reply", json!({"post_id": ZERO_ID, "secret": "s"}))
            .await,
        "not_found",
    );
    tool_err(
        &c.tool(
            "accept_reply",
            json!({"post_id": ZERO_ID, "secret": "s", "message_id": ZERO_ID}),
        )
        .await,
        "not_found",
    );
    // not_found: threads
    let nokey = "0".repeat(64);
    tool_err(
        &c.tool("read_thread", json!({"thread_key": nokey})).await,
        "not_found",
    );
    tool_err(
        &c.tool("read_thread", json!({"thread_key": ""})).await,
        "not_found",
    );
    tool_err(
        &c.tool(
            "write_thread_message",
            json!({"thread_key": nokey, "text": "hi"}),
        )
        .await,
        "not_found",
    );
    tool_err(
        &c.tool("read_thread", json!({"message_id": ZERO_ID, "secret": "s"}))
            .await,
        "not_found",
    );
    // bad_request: read_thread needs a key, or an id and a secret
    tool_err(&c.tool("read_thread", json!({})).await, "bad_request");
    tool_err(
        &c.tool("read_thread", json!({"secret": "s"})).await,
        "bad_request",
    );

    // A post, a reply, and the author's and respondent's rules.
    let p = tool_ok(
        &c.tool("create_need", json!({"note": fresh_note("rules")}))
            .await,
    );
    let (pid, psecret) = (p["id"].as_str().unwrap(), p["secret"].as_str().unwrap());
    tool_err(
        &c.tool("write_first_reply", json!({"post_id": pid, "text": "  "}))
            .await,
        "empty_note",
    );
    tool_err(
        &c.tool(
            "write_first_reply",
            json!({"post_id": pid, "text": "b".repeat(501)}),
        )
        .await,
        "huge_note",
    );
    let a = tool_ok(
        &Client::new()
            .tool("write_first_reply", json!({"post_id": pid, "text": "one"}))
            .await,
    );
    let (aid, asecret) = (a["id"].as_str().unwrap(), a["secret"].as_str().unwrap());
    let wrong = "f".repeat(64);
    // bad_secret: the waiting list, accepting, the respondent's callback
    tool_err(
        &c.tool("accept_reply", json!({"post_id": pid, "secret": wrong}))
            .await,
        "bad_secret",
    );
    tool_err(
        &c.tool("accept_reply", json!({"post_id": pid, "secret": asecret}))
            .await,
        "bad_secret",
    );
    tool_err(
        &c.tool(
            "accept_reply",
            json!({"post_id": pid, "secret": wrong, "message_id": aid}),
        )
        .await,
        "bad_secret",
    );
    tool_err(
        &c.tool("read_thread", json!({"message_id": aid, "secret": wrong}))
            .await,
        "bad_secret",
    );
    tool_err(
        &c.tool("read_thread", json!({"message_id": aid, "secret": psecret}))
            .await,
        "bad_secret",
    );
    // read_thread with an id and no secret
    tool_err(
        &c.tool("read_thread", json!({"message_id": aid})).await,
        "bad_request",
    );
    // accepting a message of another post, or no message: not_found
    tool_err(
        &c.tool(
            "accept_reply",
            json!({"post_id": pid, "secret": psecret, "message_id": ZERO_ID}),
        )
        .await,
        "not_found",
    );
    // already_accepted
    let key = tool_ok(
        &c.tool(
            "accept_reply",
            json!({"post_id": pid, "secret": psecret, "message_id": aid}),
        )
        .await,
    )["thread_key"]
        .as_str()
        .unwrap()
        .to_string();
    tool_err(
        &c.tool(
            "accept_reply",
            json!({"post_id": pid, "secret": psecret, "message_id": aid}),
        )
        .await,
        "already_accepted",
    );
    // thread messages: empty, huge
    tool_err(
        &c.tool(
            "write_thread_message",
            json!({"thread_key": key, "text": "\n"}),
        )
        .await,
        "empty_note",
    );
    tool_err(
        &c.tool(
            "write_thread_message",
            json!({"thread_key": key, "text": "c".repeat(501)}),
        )
        .await,
        "huge_note",
    );
    // a thread key in the wrong place opens nothing
    tool_err(&c.tool("read_post", json!({"id": key})).await, "not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_waiting_is_an_is_error_result() {
    let p = create_post("have").await;
    for i in 0..20 {
        let r = Client::new()
            .tool(
                "write_first_reply",
                json!({"post_id": p.id, "text": format!("w{i}")}),
            )
            .await;
        tool_ok(&r);
    }
    let r = Client::new()
        .tool(
            "write_first_reply",
            json!({"post_id": p.id, "text": "one too many"}),
        )
        .await;
    tool_err(&r, "too_many");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reply_rate_limit_is_an_is_error_result_and_shared_with_http() {
    let c = Client::new();
    let mut posts = Vec::new();
    for _ in 0..8 {
        posts.push(create_post("need").await);
    }
    // 10 replies over HTTP, 10 over MCP, from one IP (at most 3 a post,
    // its share of a post's waiting): then the limit.
    for i in 0..10 {
        let r = c
            .post(
                &format!("/posts/{}/messages", posts[i / 3].id),
                json!({"text": format!("h{i}")}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text());
    }
    for i in 0..10 {
        tool_ok(
            &c.tool(
                "write_first_reply",
                json!({"post_id": posts[4 + i / 3].id, "text": format!("m{i}")}),
            )
            .await,
        );
    }
    tool_err(
        &c.tool(
            "write_first_reply",
            json!({"post_id": posts[7].id, "text": "21st"}),
        )
        .await,
        "rate_limited",
    );
    c.post(
        &format!("/posts/{}/messages", posts[3].id),
        json!({"text": "22nd"}),
    )
    .await
    .expect_error(429, "rate_limited");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_and_http_creates_share_one_per_ip_count() {
    // 5 over HTTP, 5 over MCP: the 11th is refused either way.
    let c = Client::new();
    for _ in 0..5 {
        let r = c
            .post(
                "/posts",
                json!({"kind": "need", "note": fresh_note("share")}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    for tool in [
        "create_need",
        "create_have",
        "create_need",
        "create_have",
        "create_need",
    ] {
        tool_ok(&c.tool(tool, json!({"note": fresh_note("share")})).await);
    }
    tool_err(
        &c.tool("create_have", json!({"note": fresh_note("share")}))
            .await,
        "rate_limited",
    );
    c.post(
        "/posts",
        json!({"kind": "have", "note": fresh_note("share")}),
    )
    .await
    .expect_error(429, "rate_limited");
    // The other way round: 10 over MCP, then HTTP is refused.
    let d = Client::new();
    for _ in 0..10 {
        tool_ok(
            &d.tool("create_need", json!({"note": fresh_note("share2")}))
                .await,
        );
    }
    d.post(
        "/posts",
        json!({"kind": "need", "note": fresh_note("share2")}),
    )
    .await
    .expect_error(429, "rate_limited");
    // Another IP is not affected.
    tool_ok(
        &Client::new()
            .tool("create_need", json!({"note": fresh_note("share3")}))
            .await,
    );
}

// ------------------------------------------------------------------ batches

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_12_creates_from_one_ip_posts_at_most_10() {
    let c = Client::new();
    let notes: Vec<String> = (0..12).map(|_| fresh_note("batch")).collect();
    let batch: Vec<Value> = notes
        .iter()
        .enumerate()
        .map(|(i, n)| tool_call(100 + i as u64, "create_need", json!({"note": n})))
        .collect();
    let r = c.mcp(Value::Array(batch)).await;
    assert_eq!(r.status, 200);
    assert_json(&r);
    let replies = r.json().as_array().expect("an array of responses").clone();
    assert_eq!(replies.len(), 12);
    // In order, element by element: the first 10 post, the last 2 are refused.
    for (i, reply) in replies.iter().enumerate() {
        assert_eq!(reply["id"], 100 + i as u64);
        if i < 10 {
            let post = tool_ok(&reply["result"]);
            assert_eq!(post["note"], notes[i].as_str());
        } else {
            tool_err(&reply["result"], "rate_limited");
        }
    }
    // The list holds exactly the 10.
    for (i, n) in notes.iter().enumerate() {
        assert_eq!(on_the_list(n).await, i < 10, "{n}");
    }
    // And the IP stays limited afterwards, over HTTP and MCP.
    c.post(
        "/posts",
        json!({"kind": "need", "note": fresh_note("after")}),
    )
    .await
    .expect_error(429, "rate_limited");
    tool_err(
        &c.tool("create_have", json!({"note": fresh_note("after")}))
            .await,
        "rate_limited",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_element_by_element() {
    let c = Client::new();
    // Mixed: requests answered in order, notifications not answered, bad
    // elements answered with their own errors.
    let note = fresh_note("mixed");
    let batch = json!([
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        tool_call(2, "create_have", json!({"note": note})),
        tool_call(3, "create_need", json!({"note": note})),
        {"jsonrpc": "2.0", "id": 4, "method": "nope"},
        1,
        tool_call(5, "no_such_tool", json!({})),
        {"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
    ]);
    let r = c.mcp(batch).await;
    assert_eq!(r.status, 200);
    let v = r.json();
    let replies = v.as_array().unwrap();
    assert_eq!(replies.len(), 7, "{v}");
    assert_eq!(replies[0]["id"], "a");
    assert_eq!(replies[0]["result"], json!({}));
    assert_eq!(replies[1]["id"], 2);
    tool_ok(&replies[1]["result"]);
    // the second create sees the first: in order
    assert_eq!(replies[2]["id"], 3);
    tool_err(&replies[2]["result"], "duplicate_note");
    rpc_error(&replies[3], -32601);
    rpc_error(&replies[4], -32600);
    assert!(replies[4]["id"].is_null());
    rpc_error(&replies[5], -32602);
    assert_eq!(replies[5]["id"], 5);
    assert_eq!(replies[6]["result"]["tools"].as_array().unwrap().len(), 8);

    // Only notifications: 202, empty body.
    let r = c
        .mcp(json!([
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        ]))
        .await;
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());

    // Empty: -32600, HTTP 200, a single response.
    let r = c.mcp(json!([])).await;
    assert_eq!(r.status, 200);
    let v = r.json();
    rpc_error(&v, -32600);
    assert!(v["id"].is_null());

    // 20 is fine.
    let twenty: Vec<Value> = (0..20)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"}))
        .collect();
    let r = c.mcp(Value::Array(twenty)).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json().as_array().unwrap().len(), 20);

    // 21 are refused as a whole: nothing in it runs.
    let d = Client::new();
    let notes: Vec<String> = (0..21).map(|_| fresh_note("too big")).collect();
    let batch: Vec<Value> = notes
        .iter()
        .enumerate()
        .map(|(i, n)| tool_call(i as u64, "create_have", json!({"note": n})))
        .collect();
    let r = d.mcp(Value::Array(batch)).await;
    assert_eq!(r.status, 200);
    let v = r.json();
    rpc_error(&v, -32600);
    for n in &notes {
        assert!(!on_the_list(n).await, "{n}");
    }
    // and none of them counted against the IP
    for _ in 0..10 {
        tool_ok(
            &d.tool("create_have", json!({"note": fresh_note("after refusal")}))
                .await,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_mcp_creates_from_one_ip_give_exactly_10() {
    // 3 batches of 5 and 5 single calls at once, one IP: 20 tries, 10 posts.
    let c = Client::new();
    let mut handles = Vec::new();
    for b in 0..3 {
        handles.push(tokio::spawn(async move {
            let batch: Vec<Value> = (0..5)
                .map(|i| {
                    tool_call(
                        b * 10 + i,
                        "create_need",
                        json!({"note": fresh_note("conc")}),
                    )
                })
                .collect();
            let v = c.mcp(Value::Array(batch)).await.json();
            v.as_array()
                .unwrap()
                .iter()
                .map(|r| r["result"].clone())
                .collect::<Vec<_>>()
        }));
    }
    for _ in 0..5 {
        handles.push(tokio::spawn(async move {
            vec![
                c.tool("create_have", json!({"note": fresh_note("conc")}))
                    .await,
            ]
        }));
    }
    let mut ok = 0;
    let mut limited = 0;
    for h in handles {
        for r in h.await.unwrap() {
            if r["isError"] == false {
                ok += 1;
            } else {
                tool_err(&r, "rate_limited");
                limited += 1;
            }
        }
    }
    assert_eq!((ok, limited), (10, 10));
}
