//! The MCP core's answers, byte for byte: a transcript of requests (both
//! eras, HTTP headers and stdio, batches, every refusal the core makes)
//! and the exact bytes answered, checked in as
//! `tests/data/mcp-transcript.txt`.
//!
//! The other MCP suites check what answers mean; this one holds what they
//! say, so that the code building them can be rewritten (for the Worker's
//! size) with proof that no client sees a change. The list behind the tools
//! is a fake `Exec` with fixed answers, so every byte is deterministic; the
//! calls each tool makes are in the transcript too. When an answer is meant
//! to change, rewrite the file with:
//!
//!     EXPECTORATE=overwrite cargo test -p needhave --test mcp_bytes

mod common;

use std::sync::Mutex;

use common::{rpc_request, tool_call};
use needhave::mcp::era::{Headers, Transport};
use needhave::mcp::server::{handle_payload, Outcome};
use needhave::mcp::tools::Exec;
use needhave::platform::BoxFuture;
use serde_json::{json, Value};

/// Answers as the list would, from the path alone; records every call.
#[derive(Default)]
struct Fake {
    calls: Mutex<Vec<String>>,
}

impl Exec for Fake {
    fn call<'a>(
        &'a self,
        method: &'a str,
        path: &'a str,
        body: Option<Value>,
    ) -> BoxFuture<'a, Result<(u16, Value), String>> {
        let body_text = body.as_ref().map_or("-".into(), |b| b.to_string());
        self.calls
            .lock()
            .unwrap()
            .push(format!("= {method} {path} {body_text}"));
        let note = body.as_ref().and_then(|b| b["note"].as_str()).unwrap_or("");
        let answer = match (method, path) {
            (_, p) if p.contains("unreachable") => {
                Err("the list at http://127.0.0.1:9 could not be reached".to_string())
            }
            ("GET", "/posts") if self.calls.lock().unwrap().len() > 1 => {
                // Big answers, for the batch's answer limit.
                Ok((200, json!({"posts": [{"note": "x".repeat(400_000)}]})))
            }
            ("GET", "/posts") => Ok((
                200,
                json!({"posts": [{"id": "p1", "kind": "need", "note": "a \"quoted\" é\n"}]}),
            )),
            ("POST", "/posts") if note == "rate" => Ok((429, json!({"error": "rate_limited"}))),
            ("POST", "/posts") => Ok((
                201,
                json!({"id": "p1", "secret": "s1", "kind": body.as_ref().unwrap()["kind"]}),
            )),
            ("POST", p) if p.starts_with("/messages/pending") => {
                Ok((200, json!({"accepted": false})))
            }
            ("POST", p) if p.starts_with("/messages/") => {
                Ok((200, json!({"accepted": true, "thread_key": "k1"})))
            }
            ("POST", "/threads") => Ok((
                200,
                json!({"thread_key": "k1", "messages": [{"id": "m1", "text": "hi"}]}),
            )),
            ("GET", p) if p.ends_with("missing") => Ok((404, json!({"error": "not_found"}))),
            _ => Ok((200, json!({"path": path, "ok": true}))),
        };
        Box::pin(async move { answer })
    }
}

/// One request: its transport (`stdio`, or HTTP with the mirrored headers
/// version, method, name) and its body, as raw bytes.
struct Case {
    http: Option<[Option<&'static str>; 3]>,
    body: String,
    /// A mirrored header sent twice, as the endpoint reports it.
    repeated: Option<&'static str>,
}

/// A request over HTTP whose `header` came twice.
fn twice(header: &'static str, headers: [Option<&'static str>; 3], body: &str) -> Case {
    Case {
        http: Some(headers),
        body: body.to_string(),
        repeated: Some(header),
    }
}

fn http(version: Option<&'static str>, body: Value) -> Case {
    Case {
        http: Some([version, None, None]),
        body: body.to_string(),
        repeated: None,
    }
}

fn stdio(body: Value) -> Case {
    Case {
        http: None,
        body: body.to_string(),
        repeated: None,
    }
}

fn raw(body: &str) -> Case {
    Case {
        http: Some([None, None, None]),
        body: body.to_string(),
        repeated: None,
    }
}

const NEW: &str = "2026-07-28";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": NEW,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A 2026-07-28 request over HTTP, its headers mirroring the body.
fn modern(id: Value, method: &'static str, mut params: Value, name: Option<&'static str>) -> Case {
    params["_meta"] = meta();
    Case {
        http: Some([Some(NEW), Some(method), name]),
        body: rpc_request(id, method, params).to_string(),
        repeated: None,
    }
}

fn cases() -> Vec<Case> {
    let mut c = vec![
        // The handshake: echoed, defaulted, refused versions.
        http(
            None,
            rpc_request(
                json!(1),
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
            ),
        ),
        http(None, rpc_request(json!("a"), "initialize", json!({}))),
        http(
            None,
            rpc_request(
                json!(2),
                "initialize",
                json!({"protocolVersion": "1999-01-01"}),
            ),
        ),
        http(
            None,
            rpc_request(json!(3), "initialize", json!({"protocolVersion": NEW})),
        ),
        http(
            None,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ),
        http(
            Some("2025-03-26"),
            rpc_request(json!(4), "ping", json!(null)),
        ),
        http(None, json!({"jsonrpc": "2.0", "id": 5, "method": "ping"})),
        http(
            None,
            json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}),
        ),
        http(
            Some("2025-11-25"),
            rpc_request(json!(7), "prompts/list", json!({})),
        ),
        http(None, rpc_request(json!(8), "resources/list", json!({}))),
        http(None, rpc_request(json!(9), "no/such", json!({}))),
        http(
            Some("1999-01-01"),
            rpc_request(json!(10), "ping", json!({})),
        ),
        http(
            Some(" 2025-06-18 "),
            rpc_request(json!(11), "ping", json!({})),
        ),
        // Every tool, its plan's calls, its answers.
        http(None, tool_call(20, "list_posts", json!({}))),
        http(None, tool_call(21, "create_need", json!({"note": "bread"}))),
        http(None, tool_call(22, "create_have", json!({"note": "rate"}))),
        http(
            None,
            tool_call(23, "read_post", json!({"id": "../threads ü"})),
        ),
        http(None, tool_call(24, "read_post", json!({"id": ""}))),
        http(None, tool_call(25, "read_post", json!({"id": "missing"}))),
        http(
            None,
            tool_call(26, "read_post", json!({"id": "unreachable"})),
        ),
        http(
            None,
            tool_call(
                27,
                "write_first_reply",
                json!({"post_id": "p1", "text": "hello"}),
            ),
        ),
        http(
            None,
            tool_call(28, "accept_reply", json!({"post_id": "p1", "secret": "s1"})),
        ),
        http(
            None,
            tool_call(
                29,
                "accept_reply",
                json!({"post_id": "p1", "secret": "s1", "message_id": "m1"}),
            ),
        ),
        http(
            None,
            tool_call(
                30,
                "accept_reply",
                json!({"post_id": "p1", "secret": "s1", "message_id": null}),
            ),
        ),
        http(
            None,
            tool_call(31, "read_thread", json!({"thread_key": "k1"})),
        ),
        http(
            None,
            tool_call(
                32,
                "read_thread",
                json!({"message_id": "m1", "secret": "r1"}),
            ),
        ),
        http(
            None,
            tool_call(
                33,
                "read_thread",
                json!({"message_id": "pending", "secret": "r1"}),
            ),
        ),
        http(None, tool_call(34, "read_thread", json!({}))),
        http(
            None,
            tool_call(35, "read_thread", json!({"message_id": "m1"})),
        ),
        http(None, tool_call(36, "read_thread", json!({"secret": "r1"}))),
        http(
            None,
            tool_call(
                37,
                "write_thread_message",
                json!({"thread_key": "k1", "text": "x"}),
            ),
        ),
        // Arguments a tool does not take, and malformed calls.
        http(None, tool_call(40, "create_need", json!({}))),
        http(None, tool_call(41, "create_need", json!({"note": 5}))),
        http(
            None,
            tool_call(42, "create_need", json!({"note": "n", "extra": 1})),
        ),
        http(None, tool_call(43, "create_need", json!({"note": null}))),
        http(None, tool_call(44, "no_such_tool", json!({}))),
        http(
            None,
            rpc_request(json!(45), "tools/call", json!({"arguments": {}})),
        ),
        http(
            None,
            rpc_request(
                json!(46),
                "tools/call",
                json!({"name": "list_posts", "arguments": [1]}),
            ),
        ),
        http(
            None,
            rpc_request(
                json!(47),
                "tools/call",
                json!({"name": "list_posts", "arguments": null}),
            ),
        ),
        http(
            None,
            rpc_request(json!(48), "tools/call", json!({"name": "list_posts"})),
        ),
        http(None, rpc_request(json!(49), "tools/call", json!([1]))),
        http(
            None,
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": [1]}),
        ),
        // Not requests.
        raw("{not json"),
        raw(""),
        http(None, json!(17)),
        http(
            None,
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
        ),
        http(
            None,
            json!({"jsonrpc": "2.0", "id": true, "method": "ping"}),
        ),
        http(None, json!({"jsonrpc": "1.0", "id": 50, "method": "ping"})),
        http(None, json!({"id": 51, "method": "ping"})),
        http(None, json!({"jsonrpc": "2.0", "id": 52, "method": 7})),
        http(None, json!({"jsonrpc": "2.0", "id": 53, "result": {}})),
        http(
            None,
            json!({"jsonrpc": "2.0", "id": 54, "error": {"code": 1, "message": "m"}}),
        ),
        http(None, json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})),
        // Batches.
        http(None, json!([])),
        http(
            None,
            Value::Array(
                (0..21)
                    .map(|i| rpc_request(json!(i), "ping", json!({})))
                    .collect(),
            ),
        ),
        http(
            None,
            json!([
                rpc_request(json!(60), "ping", json!({})),
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                tool_call(61, "create_need", json!({"note": "b"})),
                17,
                {"jsonrpc": "2.0", "id": 62, "method": "nope"},
                rpc_request(json!(63), "server/discover", json!({})),
                rpc_request(json!(64), "tools/list", json!({"_meta": meta()})),
            ]),
        ),
        http(
            None,
            json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]),
        ),
        http(
            Some("1999-01-01"),
            json!([rpc_request(json!(65), "ping", json!({}))]),
        ),
        http(
            Some(NEW),
            json!([rpc_request(json!(66), "ping", json!({}))]),
        ),
        // 2026-07-28.
        modern(json!(70), "server/discover", json!({}), None),
        modern(json!(71), "tools/list", json!({}), None),
        modern(json!(72), "prompts/list", json!({}), None),
        modern(json!(73), "resources/list", json!({}), None),
        modern(json!(74), "resources/templates/list", json!({}), None),
        // The Skills extension: the entry, the file, the refusals.
        modern(json!(160), "skills/list", json!({}), None),
        modern(
            json!(161),
            "skills/get",
            json!({"uri": "skill://needhave/SKILL.md"}),
            None,
        ),
        modern(
            json!(162),
            "skills/get",
            json!({"uri": "skill://x/SKILL.md"}),
            None,
        ),
        modern(
            json!(163),
            "resources/read",
            json!({"uri": "skill://needhave/SKILL.md"}),
            None,
        ),
        http(None, rpc_request(json!(164), "skills/list", json!({}))),
        http(
            None,
            rpc_request(json!(165), "resources/read", json!({"uri": "x"})),
        ),
        http(None, rpc_request(json!(166), "skills/get", json!({}))),
        modern(
            json!(75),
            "tools/call",
            json!({"name": "create_need", "arguments": {"note": "n"}}),
            Some("create_need"),
        ),
        modern(
            json!(76),
            "tools/call",
            json!({"name": "read_post", "arguments": {"id": "missing"}}),
            Some("=?base64?cmVhZF9wb3N0?="),
        ),
        modern(
            json!(77),
            "tools/call",
            json!({"name": "read_post", "arguments": {"id": "x"}}),
            Some("=?base64?!!?="),
        ),
        modern(
            json!(78),
            "tools/call",
            json!({"name": "read_post", "arguments": {"id": "x"}}),
            Some("list_posts"),
        ),
        modern(
            json!(79),
            "tools/call",
            json!({"name": "read_post", "arguments": {"id": "x"}}),
            None,
        ),
        modern(json!(80), "ping", json!({}), None),
        modern(
            json!(81),
            "initialize",
            json!({"protocolVersion": "2025-06-18"}),
            None,
        ),
        modern(json!(82), "no/such", json!({}), None),
        modern(
            json!(83),
            "tools/call",
            json!({"name": "nope"}),
            Some("nope"),
        ),
        modern(
            json!(84),
            "tools/call",
            json!({"name": "create_need", "arguments": {}}),
            Some("create_need"),
        ),
        modern(
            json!(85),
            "tools/call",
            json!({"name": "read_post", "arguments": {"id": "unreachable"}}),
            Some("read_post"),
        ),
        modern(
            json!(86),
            "tools/call",
            json!({"name": "create_need", "arguments": {"note": "rate"}}),
            Some("create_need"),
        ),
        Case {
            http: Some([Some(NEW), Some("tools/list"), None]),
            body: rpc_request(json!(87), "server/discover", json!({"_meta": meta()})).to_string(),
            repeated: None,
        },
        Case {
            http: Some([Some(NEW), None, None]),
            body: rpc_request(json!(88), "tools/list", json!({"_meta": meta()})).to_string(),
            repeated: None,
        },
        Case {
            http: Some([None, Some("tools/list"), None]),
            body: rpc_request(json!(89), "tools/list", json!({"_meta": meta()})).to_string(),
            repeated: None,
        },
        Case {
            http: Some([Some("2025-06-18"), Some("tools/list"), None]),
            body: rpc_request(json!(90), "tools/list", json!({"_meta": meta()})).to_string(),
            repeated: None,
        },
        http(None, rpc_request(json!(91), "server/discover", json!({}))),
        http(Some(NEW), rpc_request(json!(92), "tools/list", json!({}))),
        http(
            None,
            rpc_request(
                json!(93),
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": 5}}),
            ),
        ),
        http(
            None,
            rpc_request(
                json!(94),
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2030-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}),
            ),
        ),
        http(
            None,
            rpc_request(
                json!(95),
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": NEW, "io.modelcontextprotocol/clientCapabilities": 1}}),
            ),
        ),
        http(
            None,
            rpc_request(
                json!(96),
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-06-18"}}),
            ),
        ),
        http(
            None,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"_meta": meta()}}),
        ),
        // Stdio: no headers.
        stdio(rpc_request(
            json!(100),
            "initialize",
            json!({"protocolVersion": "2024-11-05"}),
        )),
        stdio(rpc_request(
            json!(101),
            "server/discover",
            json!({"_meta": meta()}),
        )),
        stdio(rpc_request(
            json!(102),
            "tools/call",
            json!({"name": "read_post", "arguments": {"id": "p1"}, "_meta": meta()}),
        )),
        stdio(json!([rpc_request(json!(103), "tools/list", json!({}))])),
        stdio(rpc_request(json!(104), "server/discover", json!({}))),
    ];
    // Ids as written: exponents, past u64, fractions, escapes, in a batch.
    c.extend([
        raw(r#"{"jsonrpc":"2.0","id":1E2,"method":"ping"}"#),
        raw(r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#),
        raw(r#"{"jsonrpc":"2.0","id":-0.50,"method":"no/such"}"#),
        raw(r#"{"jsonrpc":"2.0","id":"a\u0062","method":"ping"}"#),
        raw(r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#),
        raw(r#"[{"jsonrpc":"2.0","id":1E2,"method":"ping"},{"jsonrpc":"2.0","id":12345678901234567890123,"method":"tools/list","params":[]}]"#),
        raw(r#"{"jsonrpc":"2.0","id":2E0,"method":"ping","params":[]}"#),
    ]);
    // A mirrored header twice: refused, in each era's shape.
    c.extend([
        twice(
            "MCP-Protocol-Version",
            [Some("2025-06-18"), None, None],
            r#"{"jsonrpc":"2.0","id":1E1,"method":"ping"}"#,
        ),
        twice(
            "Mcp-Method",
            [Some(NEW), Some("tools/list"), None],
            &rpc_request(json!(120), "tools/list", json!({"_meta": meta()})).to_string(),
        ),
        twice(
            "Mcp-Name",
            [Some(NEW), Some("tools/call"), Some("list_posts")],
            &rpc_request(
                json!(121),
                "tools/call",
                json!({"name": "list_posts", "_meta": meta()}),
            )
            .to_string(),
        ),
        twice(
            "Mcp-Method",
            [None, None, None],
            &json!([rpc_request(json!(122), "ping", json!({}))]).to_string(),
        ),
    ]);
    // A batch whose answers pass the limit: the rest are not run.
    c.push(http(
        None,
        Value::Array(
            (0..8)
                .map(|i| tool_call(110 + i, "list_posts", json!({})))
                .collect(),
        ),
    ));
    c
}

fn transcript() -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let api = &needhave::routes::API;
    let mut out = String::new();
    for case in cases() {
        let fake = Fake::default();
        let transport = match case.http {
            Some([protocol_version, method, name]) => {
                out.push_str(&format!("> http {protocol_version:?} {method:?} {name:?}"));
                if let Some(h) = case.repeated {
                    out.push_str(&format!(" {h} twice"));
                }
                out.push('\n');
                Transport::Http(Headers {
                    protocol_version,
                    method,
                    name,
                    repeated: case.repeated,
                })
            }
            None => {
                out.push_str("> stdio\n");
                Transport::Stdio
            }
        };
        out.push_str(&format!("> {}\n", case.body));
        let outcome = rt.block_on(handle_payload(api, transport, case.body.as_bytes(), &fake));
        for line in fake.calls.lock().unwrap().iter() {
            // The big answers would swamp the file: their calls are enough.
            out.push_str(line);
            out.push('\n');
        }
        match outcome {
            Outcome::Reply { status, body } => {
                let text = String::from_utf8(body).unwrap();
                if text.len() > 20_000 {
                    // Held by its digest: the big batch answer.
                    out.push_str(&format!(
                        "< {status} {} bytes, sha256 {}\n\n",
                        text.len(),
                        sha256(text.as_bytes())
                    ));
                } else {
                    out.push_str(&format!("< {status} {text}\n\n"));
                }
            }
            Outcome::Accepted => out.push_str("< 202\n\n"),
        }
    }
    out
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

#[test]
fn answers_are_byte_for_byte_the_transcript() {
    let text = transcript();
    // A diff on drift; `EXPECTORATE=overwrite` rewrites the file.
    expectorate::assert_contents("tests/data/mcp-transcript.txt", &text);
}

/// The static parts of the answers (`mcp.min.json`) are what the table
/// and the crate's constants generate.
#[test]
fn static_document_is_current() {
    let text =
        serde_json::to_string(&needhave::gen::mcp::generate(&needhave::routes::API)).unwrap();
    expectorate::assert_contents("documents/mcp.min.json", &text);
    assert_eq!(needhave::mcp::documents::DOCUMENT, text);
}
