//! `needhave serve` against a crowd's tricks, black-box: MCP ids and
//! headers on the wire, the log line a client's token makes, whom the
//! documents believe about the origin, and the answer budget's refusal.

mod common;

use std::io::Read;
use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use common::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const MCP: &[(&str, &str)] = &[("accept", "application/json, text/event-stream")];

#[tokio::test]
async fn mcp_ids_come_back_as_they_were_sent() {
    let server = Server::spawn(&[]);
    for id in [
        "1E2",
        "18446744073709551616",
        "-0.50",
        "\"a\\u0062\"",
        "12345678901234567890123",
    ] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let r = send_to(
            &server,
            fresh_ip(),
            "POST",
            "/mcp",
            Some(body.into_bytes()),
            MCP,
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(
            r.text(),
            format!(r#"{{"id":{id},"jsonrpc":"2.0","result":{{}}}}"#)
        );
    }
    // In a batch too, each element its own.
    let body = r#"[{"jsonrpc":"2.0","id":1E2,"method":"ping"},{"jsonrpc":"2.0","id":2.50,"method":"nope"}]"#;
    let r = send_to(&server, fresh_ip(), "POST", "/mcp", Some(body.into()), MCP).await;
    let text = r.text();
    assert!(text.starts_with(r#"[{"id":1E2,"#), "{text}");
    assert!(text.contains(r#""id":2.50,"#), "{text}");
}

/// A body, the headers sent with it, and the JSON-RPC code of the refusal.
type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], i64);

#[tokio::test]
async fn a_repeated_mcp_header_is_refused() {
    let server = Server::spawn(&[]);
    let legacy = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}).to_string();
    let modern = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let cases: [Case; 4] = [
        (
            &legacy,
            &[
                ("mcp-protocol-version", "2025-06-18"),
                ("MCP-Protocol-Version", "2025-03-26"),
            ],
            -32600,
        ),
        (
            &legacy,
            &[("mcp-method", "ping"), ("mcp-method", "ping")],
            -32600,
        ),
        (
            &modern,
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/list"),
                ("mcp-method", "tools/list"),
            ],
            -32020,
        ),
        (
            &modern,
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/list"),
                ("mcp-name", "a"),
                ("mcp-name", "b"),
            ],
            -32020,
        ),
    ];
    for (body, headers, code) in cases {
        let mut h = MCP.to_vec();
        h.extend_from_slice(headers);
        let r = send_to(&server, fresh_ip(), "POST", "/mcp", Some(body.into()), &h).await;
        assert_eq!(r.status, 400, "{headers:?}: {}", r.text());
        let v = r.json();
        assert_eq!(v["error"]["code"], code, "{headers:?}: {v}");
        assert!(v["id"].is_number(), "{v}");
    }
    // Once each is fine.
    let h = [
        MCP[0],
        ("mcp-protocol-version", "2025-06-18"),
        ("mcp-method", "ping"),
    ];
    let r = send_to(&server, fresh_ip(), "POST", "/mcp", Some(legacy.into()), &h).await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[test]
fn a_long_method_is_cut_in_the_log() {
    let dir = scratch("crowd");
    let (mut child, url) = start(
        serve_command("127.0.0.1:0", dir.join("list.db"))
            .env("NEEDHAVE_LOG", "info")
            .stderr(Stdio::piped()),
    );
    let addr: SocketAddr = url.strip_prefix("http://").unwrap().parse().unwrap();
    let method = "X".repeat(60_000);
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    std::io::Write::write_all(
        &mut s,
        format!("{method} /posts HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let mut answer = Vec::new();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.read_to_end(&mut answer);
    assert!(
        answer.starts_with(b"HTTP/1.1 "),
        "{:?}",
        String::from_utf8_lossy(&answer)
    );
    signal(&child, "TERM");
    child.wait().unwrap();
    let log = stderr_of(&mut child);
    let line = log
        .lines()
        .find(|l| l.contains("XXXXXXXX"))
        .unwrap_or_else(|| panic!("no request line in {log}"));
    assert!(line.len() < 300, "{} bytes: {line}", line.len());
    assert!(line.contains(&format!("{}…", "X".repeat(32))), "{line}");
    assert!(log.lines().all(|l| l.len() < 1000));
    let _ = std::fs::remove_dir_all(dir);
}

/// `GET /llms.txt` (a document that names the origin) with forwarded
/// headers a client chose.
async fn llms(server: &Server) -> String {
    let h = [
        ("x-forwarded-proto", "https"),
        ("x-forwarded-host", "evil.example"),
    ];
    let r = send_to(server, fresh_ip(), "GET", "/llms.txt", None, &h).await;
    assert_eq!(r.status, 200);
    r.text()
}

#[tokio::test]
async fn forwarded_headers_only_behind_the_proxy_and_the_public_url_above_all() {
    let plain = Server::spawn(&[]);
    let text = llms(&plain).await;
    assert!(!text.contains("evil.example"), "{text}");
    assert!(text.contains(&plain.base), "{text}");

    let proxied = Server::spawn(&["--client-ip-header", "x-forwarded-for"]);
    assert!(llms(&proxied).await.contains("https://evil.example/"));

    let fixed = Server::spawn(&[
        "--client-ip-header",
        "x-forwarded-for",
        "--public-url",
        "https://list.example/",
    ]);
    let text = llms(&fixed).await;
    assert!(text.contains("https://list.example/"), "{text}");
    assert!(
        !text.contains("evil.example") && !text.contains("127.0.0.1"),
        "{text}"
    );
    let r = send_to(&fixed, fresh_ip(), "GET", "/robots.txt", None, &[]).await;
    assert!(
        r.text().contains("https://list.example/sitemap.xml"),
        "{}",
        r.text()
    );
}

#[test]
fn a_public_url_with_a_path_is_refused_at_start() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_needhave"))
        .args([
            "serve",
            "--db",
            ":memory:",
            "--public-url",
            "https://list.example/x",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("an origin"));
}

#[tokio::test]
async fn past_the_answer_budget_a_request_is_told_busy() {
    let server = Server::spawn(&["--answer-budget", "1K"]);
    // Notes of 4-byte letters, so that a batch's answer is far more than
    // the kernel's socket buffers take from a client that does not read.
    for i in 0..10 {
        let note = format!("{i} {} {}", fresh_note("budget"), "😀".repeat(400));
        let r = send_to(
            &server,
            fresh_ip(),
            "POST",
            "/posts",
            Some(
                json!({"kind": "have", "note": note})
                    .to_string()
                    .into_bytes(),
            ),
            &[],
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.text());
    }
    let batch: Vec<_> = (0..20)
        .map(|i| tool_call(i, "list_posts", json!({})))
        .collect();
    let batch = serde_json::to_vec(&batch).unwrap();
    // A client that sends the batch and never reads holds its answer.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut hog = socket.connect(server.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        server.host,
        batch.len()
    );
    // Sent eight times: more answers than the kernel's socket buffers (4 MiB
    // at most) take, so the server holds the rest.
    for _ in 0..8 {
        hog.write_all(head.as_bytes()).await.unwrap();
        hog.write_all(&batch).await.unwrap();
    }
    let mut first = [0u8; 12];
    hog.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let mut r = send_to(&server, fresh_ip(), "GET", "/posts", None, &[]).await;
    for _ in 0..40 {
        if r.status == 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        r = send_to(&server, fresh_ip(), "GET", "/posts", None, &[]).await;
    }
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.error(), "busy");
    assert_eq!(r.header("retry-after"), Some("1"));
    let r = send_to(
        &server,
        fresh_ip(),
        "POST",
        "/mcp",
        Some(batch.clone()),
        MCP,
    )
    .await;
    assert_eq!(r.status, 503, "{}", r.text());
    // Gone, its answer leaves the budget: served again.
    drop(hog);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = send_to(&server, fresh_ip(), "GET", "/posts", None, &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
}
