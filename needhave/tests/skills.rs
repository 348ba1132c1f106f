//! MCP's Skills extension (SEP-2640), black-box: over `POST /mcp` in both
//! eras (so also against `wrangler dev`), and through `needhave mcp`, the
//! stdio server, pointed at the same list. The skill served over MCP is the
//! very text of `GET /.well-known/agent-skills/needhave/SKILL.md` from the
//! same host: its entry's digest and size are those of these bytes.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use common::schema::{self, Rev};
use common::*;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const EXTENSION: &str = "io.modelcontextprotocol/skills";
const URI: &str = "skill://needhave/SKILL.md";
const MODERN: &str = "2026-07-28";

fn legacy(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn modern(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    legacy(id, method, params)
}

/// One request over `POST /mcp`, with the headers its era asks for.
async fn rpc(payload: &Value) -> Value {
    let body = payload.to_string().into_bytes();
    let is_modern = payload["params"]["_meta"].is_object();
    let method = payload["method"].as_str().unwrap();
    let mut headers = vec![("accept", "application/json, text/event-stream")];
    if is_modern {
        headers.extend([("mcp-protocol-version", MODERN), ("mcp-method", method)]);
    }
    let r = Client::new()
        .send("POST", "/mcp", Some(body), &headers)
        .await;
    let v = r.json();
    let rev = if is_modern { Rev::Modern } else { Rev::Legacy };
    if schema::knows(method) {
        schema::assert_response(rev, method, payload, &v);
    }
    v
}

/// The skill as the well-known path serves it: its bytes.
async fn served_skill() -> Vec<u8> {
    let r = Client::new()
        .get("/.well-known/agent-skills/needhave/SKILL.md")
        .await;
    assert_eq!(r.status, 200);
    r.body
}

/// The frontmatter of a SKILL.md as JSON: `key: value` lines, a value
/// double-quoted (a JSON string) or plain.
fn frontmatter(text: &str) -> Value {
    let front = text
        .strip_prefix("---\n")
        .and_then(|t| t.split_once("\n---\n"))
        .expect("frontmatter")
        .0;
    let mut m = serde_json::Map::new();
    for line in front.lines() {
        let (k, v) = line.split_once(": ").expect("key: value");
        let v = if v.starts_with('"') {
            serde_json::from_str(v).expect("a quoted scalar")
        } else {
            assert!(!v.contains(": "), "a plain scalar cannot hold `: `: {v}");
            Value::String(v.to_string())
        };
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

/// The skill's entry is the manifest of exactly `bytes`.
fn assert_entry(entry: &Value, bytes: &[u8]) {
    assert_eq!(entry["uri"], URI, "{entry}");
    let text = std::str::from_utf8(bytes).unwrap();
    assert_eq!(entry["frontmatter"], frontmatter(text), "{entry}");
    assert_eq!(entry["frontmatter"]["name"], "needhave");
    let digest = format!("sha256:{}", hex::encode(Sha256::digest(bytes)));
    assert_eq!(
        entry["resources"],
        json!([{"uri": URI, "digest": digest, "size": bytes.len()}]),
        "the one file, with the digest and size of the served bytes"
    );
}

#[tokio::test]
async fn declared_in_both_handshakes() {
    let init = rpc(&legacy(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "skills-test", "version": "0"}}),
    ))
    .await;
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["extensions"][EXTENSION], json!({}), "{init}");
    assert!(caps["resources"].is_object(), "{init}");
    let discover = rpc(&modern(2, "server/discover", json!({}))).await;
    let caps = &discover["result"]["capabilities"];
    assert_eq!(caps["extensions"][EXTENSION], json!({}), "{discover}");
    assert!(caps["resources"].is_object(), "{discover}");
}

#[tokio::test]
async fn skills_list_and_get_describe_the_served_bytes() {
    let bytes = served_skill().await;
    for (era, make) in [
        ("legacy", legacy as fn(u64, &str, Value) -> Value),
        ("modern", modern),
    ] {
        let list = rpc(&make(1, "skills/list", json!({}))).await;
        let skills = list["result"]["skills"].as_array().expect("skills");
        assert_eq!(skills.len(), 1, "{era}: {list}");
        assert_entry(&skills[0], &bytes);
        assert!(list["result"].get("nextCursor").is_none());

        let get = rpc(&make(2, "skills/get", json!({"uri": URI}))).await;
        assert_eq!(get["result"]["skill"], skills[0], "{era}: {get}");
        assert!(get["result"].get("nextCursor").is_none());
        if era == "modern" {
            for r in [&list["result"], &get["result"]] {
                assert_eq!(r["resultType"], "complete");
                assert_eq!(r["cacheScope"], "public");
                assert!(r["ttlMs"].as_u64().is_some_and(|t| t > 0), "{r}");
            }
        } else {
            assert!(list["result"].get("resultType").is_none());
        }
    }
}

#[tokio::test]
async fn resources_list_and_read_the_skill() {
    let bytes = served_skill().await;
    let text = String::from_utf8(bytes.clone()).unwrap();
    let front = frontmatter(&text);
    for (era, make) in [
        ("legacy", legacy as fn(u64, &str, Value) -> Value),
        ("modern", modern),
    ] {
        let list = rpc(&make(1, "resources/list", json!({}))).await;
        let resources = list["result"]["resources"].as_array().expect("resources");
        assert_eq!(resources.len(), 1, "{era}: {list}");
        let r = &resources[0];
        assert_eq!(r["uri"], URI);
        assert_eq!(r["mimeType"], "text/markdown");
        assert_eq!(r["name"], front["name"]);
        assert_eq!(r["description"], front["description"]);

        let read = rpc(&make(2, "resources/read", json!({"uri": URI}))).await;
        let schema_rev = if era == "modern" {
            Rev::Modern
        } else {
            Rev::Legacy
        };
        schema::assert_valid(schema_rev, "ReadResourceResult", &read["result"]);
        let contents = read["result"]["contents"].as_array().expect("contents");
        assert_eq!(
            contents,
            &vec![json!({"uri": URI, "mimeType": "text/markdown", "text": text})],
            "{era}"
        );
        if era == "modern" {
            assert_eq!(read["result"]["cacheScope"], "public");
            assert!(read["result"]["ttlMs"].is_u64());
        }
    }
}

#[tokio::test]
async fn unknown_skills_and_resources_are_invalid_params() {
    for (era, make) in [
        ("legacy", legacy as fn(u64, &str, Value) -> Value),
        ("modern", modern),
    ] {
        for (method, uri) in [
            ("skills/get", "skill://needhave/other/SKILL.md"),
            ("skills/get", "skill://nobody/SKILL.md"),
            ("resources/read", "skill://needhave/README.md"),
            ("resources/read", "https://needhave.io/"),
        ] {
            let r = rpc(&make(7, method, json!({"uri": uri}))).await;
            assert_eq!(r["id"], 7);
            assert_eq!(r["error"]["code"], -32602, "{era} {method} {uri}: {r}");
            assert_eq!(r["error"]["data"]["uri"], uri, "{r}");
        }
        for method in ["skills/get", "resources/read"] {
            for params in [json!({}), json!({"uri": 5})] {
                let r = rpc(&make(8, method, params)).await;
                assert_eq!(r["error"]["code"], -32602, "{era} {method}: {r}");
            }
        }
    }
    // Not offered: the skill has no directory to read.
    let r = rpc(&modern(
        9,
        "resources/directory/read",
        json!({"uri": "skill://needhave"}),
    ))
    .await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
}

/// `needhave mcp`, a client of this list, serves the skill that list
/// serves: the same bytes, digest and size.
#[tokio::test]
async fn the_stdio_server_serves_its_lists_skill() {
    let bytes = served_skill().await;
    let mut child = Command::new(env!("CARGO_BIN_EXE_needhave"))
        .arg("mcp")
        .env("NEEDHAVE_LIST_URL", &server().base)
        .env("NEEDHAVE_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("needhave mcp");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |stdin: &mut std::process::ChildStdin, payload: Value| -> Value {
        writeln!(stdin, "{payload}").unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).expect("a JSON line")
    };
    let list = ask(&mut stdin, modern(1, "skills/list", json!({})));
    assert_entry(&list["result"]["skills"][0], &bytes);
    let read = ask(&mut stdin, legacy(2, "resources/read", json!({"uri": URI})));
    assert_eq!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .as_bytes(),
        &bytes[..]
    );
    let init = ask(
        &mut stdin,
        legacy(
            3,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "skills-test", "version": "0"}}),
        ),
    );
    assert_eq!(
        init["result"]["capabilities"]["extensions"][EXTENSION],
        json!({})
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
