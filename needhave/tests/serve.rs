//! `needhave serve` as an operator sees it: the URL it prints, one log line
//! per request that never holds a secret, key, note text or IP, a clean exit
//! on Ctrl-C, a database file that survives a restart, and one server per
//! file.

mod common;

use std::process::{Command, Stdio};

use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_hold_no_secrets_and_ctrl_c_stops_cleanly() {
    let dir = scratch("serve");
    let db = dir.join("list.db");
    let spawn = || {
        let (child, url) = start(
            serve_command("127.0.0.1:0", &db)
                .env("NEEDHAVE_LOG", "info")
                .stdin(Stdio::null())
                .stderr(Stdio::piped()),
        );
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        (child, Server::at(&url))
    };
    let (mut child, server) = spawn();
    let ip = fresh_ip();
    let note = fresh_note("a log-shy need");
    let post = send_to(
        &server,
        ip,
        "POST",
        "/posts",
        Some(
            json!({"kind": "need", "note": note})
                .to_string()
                .into_bytes(),
        ),
        &[],
    )
    .await
    .json();
    let id = post["id"].as_str().unwrap().to_string();
    let secret = post["secret"].as_str().unwrap().to_string();
    let text = fresh_note("a private first message");
    let reply = send_to(
        &server,
        ip,
        "POST",
        &format!("/posts/{id}/messages"),
        Some(json!({"text": text}).to_string().into_bytes()),
        &[],
    )
    .await
    .json();
    let accepted = send_to(
        &server,
        ip,
        "POST",
        &format!("/posts/{id}/accept"),
        Some(
            json!({"secret": secret, "message_id": reply["id"]})
                .to_string()
                .into_bytes(),
        ),
        &[],
    )
    .await
    .json();
    let key = accepted["thread_key"].as_str().unwrap().to_string();
    send_to(
        &server,
        ip,
        "POST",
        "/threads",
        Some(json!({"thread_key": key}).to_string().into_bytes()),
        &[],
    )
    .await;
    send_to(&server, ip, "GET", &format!("/threads/{key}"), None, &[]).await;

    // Ctrl-C: a clean exit.
    signal(&child, "INT");
    let exit = child.wait().unwrap();
    assert!(exit.success(), "exit after SIGINT: {exit:?}");
    let log = stderr_of(&mut child);

    let lines: Vec<&str> = log.lines().filter(|l| l.contains("status=")).collect();
    assert_eq!(lines.len(), 5, "one line per request:\n{log}");
    assert!(
        lines[1].contains("/posts/:id/messages") && lines[1].contains("status=201"),
        "{}",
        lines[1]
    );
    assert!(lines
        .iter()
        .all(|l| l.contains("micros=") && l.contains("method=")));
    for secret_thing in [
        &secret,
        reply["secret"].as_str().unwrap(),
        &key,
        &note,
        &text,
        &ip.to_string(),
        &id,
    ] {
        assert!(
            !log.contains(secret_thing),
            "{secret_thing} in the log:\n{log}"
        );
    }

    // The file keeps what was written, across a restart.
    let (mut child, server) = spawn();
    let path = format!("/posts/{id}");
    let read = || send_to(&server, fresh_ip(), "GET", &path, None, &[]);
    assert_eq!(read().await.json()["note"], note.as_str());

    // One server per file: a second one on it fails to start, and says why.
    let second = Command::new(env!("CARGO_BIN_EXE_needhave"))
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--db",
            db.to_str().unwrap(),
        ])
        // Were it to start, it stops at once (stdin is closed): no hang.
        .arg("--exit-with-stdin")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "a second server started: {err}");
    assert!(
        err.contains("one needhave serve per database"),
        "unclear: {err}"
    );
    // …and the first one still answers.
    assert_eq!(read().await.status, 200);

    signal(&child, "TERM");
    assert!(child.wait().unwrap().success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The client IP is the TCP peer unless the operator names a header: a
/// client cannot pick its own IP to get round the per-IP limits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_ip_header_only_when_the_operator_says_so() {
    let create = |server: &'static Server, source, header_ip: &'static str| async move {
        let body = json!({"kind": "have", "note": fresh_note("ip")})
            .to_string()
            .into_bytes();
        send_to(
            server,
            source,
            "POST",
            "/posts",
            Some(body),
            &[("x-real-ip", header_ip)],
        )
        .await
        .status
    };
    // By default a header is ignored: eleven source addresses, one header value.
    let plain: &'static Server = Box::leak(Box::new(Server::spawn(&[])));
    for _ in 0..11 {
        assert_eq!(create(plain, fresh_ip(), "203.0.113.7").await, 201);
    }
    // Told to trust it, the header is the client.
    let proxied: &'static Server = Box::leak(Box::new(Server::spawn(&[
        "--client-ip-header",
        "X-Real-IP",
    ])));
    for _ in 0..10 {
        assert_eq!(create(proxied, fresh_ip(), "203.0.113.8").await, 201);
    }
    assert_eq!(create(proxied, fresh_ip(), "203.0.113.8").await, 429);
    assert_eq!(create(proxied, fresh_ip(), "203.0.113.9").await, 201);
}
