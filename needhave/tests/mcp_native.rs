//! MCP on the native binary only: the Host check (DNS-rebinding protection)
//! of `needhave serve` on loopback and the operator's flags that widen it
//! and the Origin check, and `needhave mcp`, the stdio server, driven over
//! real pipes against a `needhave serve` on an ephemeral port, and against
//! lists that are down, hang or answer garbage, in both MCP eras, and
//! sending back the list's D1 bookmark.

mod common;

use common::schema::{self, Rev};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_needhave");

fn random_hex() -> String {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).unwrap();
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn fresh_note(label: &str) -> String {
    format!("{label} #{}", random_hex())
}

// ------------------------------------------------------------ needhave serve

/// A `needhave serve` of this test's own, on `:memory:`.
use common::Owned as Serve;

impl Serve {
    fn loopback(extra: &[&str]) -> Serve {
        Serve::spawn("127.0.0.1:0", ":memory:", extra)
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `POST /mcp` with exactly these headers (Host included).
    fn post(&self, host: &str, headers: &[(&str, &str)], body: &Value) -> (u16, String) {
        raw_post(self.addr, "/mcp", host, headers, &body.to_string())
    }
}

/// One HTTP/1.1 request over a plain socket, so that the Host header is
/// whatever the test says (a DNS-rebinding page's browser sends the
/// attacker's name).
fn raw_post(
    addr: SocketAddr,
    path: &str,
    host: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {out:?}"));
    let body = out
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

fn init() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "mcp_native", "version": "0"}}})
}

// ------------------------------------------------------ Host and Origin

#[test]
fn loopback_serve_refuses_foreign_host_names() {
    let s = Serve::loopback(&[]);
    let p = s.port();
    for host in [
        "evil.example.com".to_string(),
        format!("evil.example.com:{p}"),
        format!("localhost.evil.example:{p}"),
        format!("127.0.0.1.nip.io:{p}"),
        format!("10.0.0.1:{p}"),
        "0.0.0.0".to_string(),
    ] {
        let (status, body) = s.post(&host, &[], &init());
        assert_eq!(status, 403, "Host: {host}: {body}");
        let v: Value = serde_json::from_str(&body).expect("a JSON body");
        assert!(v["error"]["code"].is_i64(), "{v}");
        // The refusal carries the request's id (1), never a made-up null.
        assert_eq!(v["id"], 1, "{v}");
        assert!(!body.contains("protocolVersion"), "nothing ran");
    }
    for host in [
        format!("localhost:{p}"),
        format!("LocalHost:{p}"),
        format!("127.0.0.1:{p}"),
        format!("[::1]:{p}"),
        "localhost".to_string(),
        "127.0.0.1".to_string(),
    ] {
        let (status, body) = s.post(&host, &[], &init());
        assert_eq!(status, 200, "Host: {host}: {body}");
    }
    // The conformance suite's two requests.
    let (status, _) = s.post(
        "evil.example.com",
        &[("Origin", "http://evil.example.com")],
        &init(),
    );
    assert_eq!(status, 403);
    let own = format!("localhost:{p}");
    let (status, _) = s.post(&own, &[("Origin", &format!("http://{own}"))], &init());
    assert_eq!(status, 200);
    // A loopback Host with a foreign Origin: still 403.
    let (status, _) = s.post(&own, &[("Origin", "http://evil.example.com")], &init());
    assert_eq!(status, 403);
    // Another loopback name than the Host is not the same origin.
    let (status, _) = s.post(
        &own,
        &[("Origin", &format!("http://127.0.0.1:{p}"))],
        &init(),
    );
    assert_eq!(status, 403);
}

#[test]
fn allow_host_widens_the_host_check() {
    let s = Serve::loopback(&[
        "--allow-host",
        "mcp.example",
        "--allow-host",
        "other.example:8443",
    ]);
    let p = s.port();
    for host in [
        format!("mcp.example:{p}"),
        "mcp.example".to_string(),
        "MCP.example".to_string(),
        "other.example:8443".to_string(),
        format!("localhost:{p}"),
    ] {
        let (status, body) = s.post(&host, &[], &init());
        assert_eq!(status, 200, "Host: {host}: {body}");
    }
    for host in [
        "evil.example".to_string(),
        "other.example".to_string(),
        "other.example:9999".to_string(),
        "sub.mcp.example".to_string(),
    ] {
        let (status, _) = s.post(&host, &[], &init());
        assert_eq!(status, 403, "Host: {host}");
    }
    // The allowed host's own origin is fine; a foreign one is not.
    let (status, _) = s.post("mcp.example", &[("Origin", "https://mcp.example")], &init());
    assert_eq!(status, 200);
    let (status, _) = s.post(
        "mcp.example",
        &[("Origin", "https://evil.example")],
        &init(),
    );
    assert_eq!(status, 403);
}

#[test]
fn allow_host_star_turns_the_host_check_off_but_not_the_origin_check() {
    let s = Serve::loopback(&["--allow-host", "*"]);
    for host in ["evil.example", "anything.at.all:1234", "localhost"] {
        let (status, body) = s.post(host, &[], &init());
        assert_eq!(status, 200, "Host: {host}: {body}");
    }
    let (status, _) = s.post("localhost", &[("Origin", "https://evil.example")], &init());
    assert_eq!(status, 403);
}

#[test]
fn allow_origin_adds_origins() {
    let s = Serve::loopback(&[
        "--allow-origin",
        "https://app.example",
        "--allow-origin",
        "http://localhost:5173/",
    ]);
    let host = format!("127.0.0.1:{}", s.port());
    for origin in [
        "https://app.example",
        "HTTPS://APP.EXAMPLE",
        "http://localhost:5173",
    ] {
        let (status, body) = s.post(&host, &[("Origin", origin)], &init());
        assert_eq!(status, 200, "Origin: {origin}: {body}");
    }
    for origin in [
        "https://app.example.evil",
        "http://app.example",
        "https://app.example:444",
        "http://localhost:5174",
        "null",
    ] {
        let (status, _) = s.post(&host, &[("Origin", origin)], &init());
        assert_eq!(status, 403, "Origin: {origin}");
    }
    // The Host check is not widened by --allow-origin.
    let (status, _) = s.post("app.example", &[("Origin", "https://app.example")], &init());
    assert_eq!(status, 403);
}

#[test]
fn a_server_not_on_loopback_has_no_host_check_but_keeps_the_origin_check() {
    let s = Serve::spawn("0.0.0.0:0", ":memory:", &[]);
    let (status, body) = s.post("needhave.example", &[], &init());
    assert_eq!(status, 200, "{body}");
    let (status, _) = s.post(
        "needhave.example",
        &[("Origin", "https://needhave.example")],
        &init(),
    );
    assert_eq!(status, 200);
    let (status, _) = s.post(
        "needhave.example",
        &[("Origin", "https://evil.example")],
        &init(),
    );
    assert_eq!(status, 403);
}

// ------------------------------------------------------- needhave mcp (stdio)

/// `needhave mcp` over real pipes; killed (by its PID) when dropped.
struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Every stdout line that was not a JSON object: must stay empty.
    junk: Arc<Mutex<Vec<String>>>,
}

impl StdioServer {
    fn spawn(list_url: Option<&str>, env: &[(&str, &str)]) -> StdioServer {
        let mut cmd = Command::new(BIN);
        cmd.arg("mcp")
            .env_remove("NEEDHAVE_LIST_URL")
            .env_remove("NEEDHAVE_LIST_TIMEOUT")
            .env("NEEDHAVE_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(u) = list_url {
            cmd.env("NEEDHAVE_LIST_URL", u);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn needhave mcp");
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = channel();
        let junk = Arc::new(Mutex::new(Vec::new()));
        let junk2 = junk.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if !serde_json::from_str::<Value>(&line)
                    .is_ok_and(|v| v.is_object() || v.is_array())
                {
                    junk2.lock().unwrap().push(line.clone());
                }
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let err = Arc::new(Mutex::new(String::new()));
        let err2 = err.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            let mut r = BufReader::new(stderr);
            while r.read_line(&mut s).is_ok_and(|n| n > 0) {
                err2.lock().unwrap().push_str(&s);
                s.clear();
            }
        });
        StdioServer {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: err,
            junk,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, v: &Value) {
        self.send_raw(format!("{v}\n").as_bytes());
    }

    #[track_caller]
    fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("an answer within 30 s");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line:?}"))
    }

    #[track_caller]
    fn rpc(&mut self, v: Value) -> Value {
        self.send(&v);
        let r = self.recv();
        assert_eq!(r["id"], v["id"], "{r}");
        r
    }

    #[track_caller]
    fn tool(&mut self, name: &str, args: Value) -> Value {
        let r = self.rpc(json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
            "params": {"name": name, "arguments": args}}));
        assert!(r.get("error").is_none(), "{r}");
        r["result"].clone()
    }

    /// Closes stdin and waits for the exit; the exit status must be success.
    fn close_and_wait(&mut self) {
        drop(self.stdin.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status}");
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "needhave mcp did not exit on stdin EOF"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            self.junk.lock().unwrap().is_empty(),
            "stdout: {:?}",
            self.junk
        );
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[track_caller]
fn ok(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"], "{result}");
    text
}

#[track_caller]
fn err(result: &Value, code: &str) {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    let text: Value = serde_json::from_str(text).unwrap();
    assert_eq!(text["error"], code, "{result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
}

#[track_caller]
fn unreachable(result: &Value, url: &str) -> String {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap().to_string();
    assert!(text.contains(url), "{url} not named in {text:?}");
    text
}

#[test]
fn stdio_server_full_flow_against_needhave_serve() {
    let list = Serve::loopback(&[]);
    let mut m = StdioServer::spawn(Some(&list.base), &[]);

    // initialize echoes; the initialized notification gets no line at all.
    let r = m.rpc(init());
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(r["result"]["serverInfo"]["name"], "needhave");
    assert!(r["result"]["capabilities"]["tools"].is_object());
    assert!(r["result"]["instructions"].is_string());
    m.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // Blank lines are skipped too.
    m.send_raw(b"\n  \r\n");
    let r = m.rpc(json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}));
    assert_eq!(r["result"], json!({}));

    // tools/list: the same table as POST /mcp.
    let r = m.rpc(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert_eq!(
        r["result"],
        needhave::mcp::tools::list(&needhave::routes::API)
    );
    let (status, body) = list.post(
        &format!("127.0.0.1:{}", list.port()),
        &[],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), r);

    // The whole flow, each call made over HTTP against the list.
    let note = fresh_note("stdio need");
    let post = ok(&m.tool("create_need", json!({"note": note})));
    let (pid, psecret) = (
        post["id"].as_str().unwrap().to_string(),
        post["secret"].as_str().unwrap().to_string(),
    );
    assert_eq!(post["note"], note.as_str());
    let have = ok(&m.tool("create_have", json!({"note": fresh_note("stdio have")})));
    assert_eq!(have["kind"], "have");
    let listed = ok(&m.tool("list_posts", json!({})));
    assert!(listed.to_string().contains(&pid));
    assert!(!listed.to_string().contains(&psecret));
    // Its filters travel to the list as the query string of GET /posts.
    let word = note.rsplit('#').next().unwrap();
    let found = ok(&m.tool("list_posts", json!({"query": word, "kind": "need"})));
    assert_eq!(
        found["posts"],
        json!([{"id": pid, "kind": "need", "note": note,
            "created_at": post["created_at"], "status": "open"}])
    );
    let none = ok(&m.tool("list_posts", json!({"query": word, "kind": "have"})));
    assert_eq!(none["posts"], json!([]));
    err(
        &m.tool("list_posts", json!({"cursor": "forged"})),
        "bad_request",
    );
    err(&m.tool("list_posts", json!({"kind": "both"})), "bad_kind");
    assert_eq!(
        ok(&m.tool("read_post", json!({"id": pid}))),
        json!({"id": pid, "kind": "need", "note": note,
            "created_at": post["created_at"], "status": "open"})
    );
    let first = ok(&m.tool(
        "write_first_reply",
        json!({"post_id": pid, "text": "hello"}),
    ));
    let (mid, msecret) = (
        first["id"].as_str().unwrap().to_string(),
        first["secret"].as_str().unwrap().to_string(),
    );
    assert_eq!(first["hidden"], true);
    assert_eq!(
        ok(&m.tool("read_thread", json!({"message_id": mid, "secret": msecret}))),
        json!({"accepted": false})
    );
    assert_eq!(
        ok(&m.tool("accept_reply", json!({"post_id": pid, "secret": psecret}))),
        json!({"messages": [{"id": mid, "text": "hello"}]})
    );
    let key = ok(&m.tool(
        "accept_reply",
        json!({"post_id": pid, "secret": psecret, "message_id": mid}),
    ))["thread_key"]
        .as_str()
        .unwrap()
        .to_string();
    let thread = ok(&m.tool("read_thread", json!({"message_id": mid, "secret": msecret})));
    assert_eq!(thread["accepted"], true);
    assert_eq!(thread["thread_key"], key.as_str());
    assert_eq!(thread["messages"], json!([{"id": mid, "text": "hello"}]));
    let later = ok(&m.tool(
        "write_thread_message",
        json!({"thread_key": key, "text": "later"}),
    ));
    assert_eq!(later["post_id"], pid.as_str());
    assert_eq!(
        ok(&m.tool("read_thread", json!({"thread_key": key}))),
        json!({"post_id": pid, "messages": [
            {"id": mid, "text": "hello"},
            {"id": later["id"], "text": "later"},
        ]})
    );

    // A post's life travels: its expiry, and a close (`close: false`
    // asks for the waiting replies, as no `close` does).
    let brief = ok(&m.tool(
        "create_have",
        json!({"note": fresh_note("stdio have for a day"), "expires_in": 86_400}),
    ));
    assert!(brief["expires_at"]
        .as_str()
        .is_some_and(|t| t > brief["created_at"].as_str().unwrap()));
    let (bid, bsecret) = (
        brief["id"].as_str().unwrap(),
        brief["secret"].as_str().unwrap(),
    );
    assert_eq!(
        ok(&m.tool(
            "accept_reply",
            json!({"post_id": bid, "secret": bsecret, "close": false})
        )),
        json!({"messages": []})
    );
    let closed = ok(&m.tool(
        "accept_reply",
        json!({"post_id": bid, "secret": bsecret, "close": true}),
    ));
    assert_eq!(closed["status"], "closed");
    assert_eq!(
        ok(&m.tool("read_post", json!({"id": bid})))["status"],
        "closed"
    );
    err(
        &m.tool(
            "create_need",
            json!({"note": fresh_note("stdio"), "expires_in": 299}),
        ),
        "bad_expiry",
    );

    // The list's rules come back as isError results.
    err(&m.tool("create_need", json!({"note": "  "})), "empty_note");
    err(
        &m.tool("create_need", json!({"note": "z".repeat(501)})),
        "huge_note",
    );
    err(
        &m.tool("create_have", json!({"note": note})),
        "duplicate_note",
    );
    err(
        &m.tool("read_post", json!({"id": "0".repeat(32)})),
        "not_found",
    );
    err(&m.tool("read_post", json!({"id": "../posts"})), "not_found");
    err(
        &m.tool(
            "accept_reply",
            json!({"post_id": pid, "secret": "f".repeat(64)}),
        ),
        "bad_secret",
    );
    err(
        &m.tool(
            "accept_reply",
            json!({"post_id": pid, "secret": psecret, "message_id": mid}),
        ),
        "already_accepted",
    );
    err(&m.tool("read_thread", json!({})), "bad_request");
    err(
        &m.tool(
            "write_thread_message",
            json!({"thread_key": "0".repeat(64), "text": "x"}),
        ),
        "not_found",
    );

    // JSON-RPC's own errors.
    let r = m.rpc(json!({"jsonrpc": "2.0", "id": 3, "method": "nope"}));
    assert_eq!(r["error"]["code"], -32601);
    let r = m.rpc(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "nope", "arguments": {}}}));
    assert_eq!(r["error"]["code"], -32602);
    // Arguments the tool does not take: an isError result naming them.
    let r = m.rpc(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "create_need", "arguments": {"note": 1}}}));
    err(&r["result"], "bad_request");
    assert!(r["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("argument `note` must be a string"));
    // Unparseable lines, even bytes that are not UTF-8: -32700, id null,
    // and the server goes on.
    for bad in [&b"{not json\n"[..], b"\xff\xfe\xfd\n", b"[1,\n"] {
        m.send_raw(bad);
        let r = m.recv();
        assert_eq!(r["error"]["code"], -32700, "{r}");
        assert!(r["id"].is_null());
    }
    let r = m.rpc(json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}));
    assert_eq!(r["result"], json!({}));

    // A batch of 12 creates: the stdio server's HTTP calls all come from
    // one IP, which already made 3 posts above: 7 more pass.
    let batch: Vec<Value> = (0..12)
        .map(|i| {
            json!({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
            "params": {"name": "create_need", "arguments": {"note": fresh_note("stdio batch")}}})
        })
        .collect();
    m.send(&Value::Array(batch));
    let replies = m.recv();
    let replies = replies.as_array().expect("a batch answer");
    assert_eq!(replies.len(), 12);
    for (i, r) in replies.iter().enumerate() {
        assert_eq!(r["id"], 100 + i);
        if i < 7 {
            ok(&r["result"]);
        } else {
            err(&r["result"], "rate_limited");
        }
    }
    // Only notifications: nothing written.
    m.send(&json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]));
    let r = m.rpc(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}));
    assert_eq!(r["id"], 7);

    m.close_and_wait();
    // Logs went to stderr, naming the list it talks to.
    let log = m.stderr.lock().unwrap().clone();
    assert!(log.contains(&list.base), "stderr: {log}");
    assert!(!log.contains(&psecret) && !log.contains(&key));
}

#[test]
fn stdio_server_exits_on_stdin_eof() {
    let mut m = StdioServer::spawn(Some("http://127.0.0.1:9"), &[]);
    m.close_and_wait();
    // And after answering something.
    let mut m = StdioServer::spawn(Some("http://127.0.0.1:9"), &[]);
    let r = m.rpc(init());
    assert!(r["result"].is_object());
    m.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    // A last line without a newline is still answered before the exit.
    drop(m.stdin.take());
    assert_eq!(m.recv()["id"], 2);
    m.close_and_wait();
}

#[test]
fn stdio_server_with_the_list_down_answers_is_error_naming_the_url() {
    // A port nobody listens on.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let mut m = StdioServer::spawn(Some(&url), &[]);
    // The protocol needs no list.
    assert!(m.rpc(init())["result"].is_object());
    let r = m.rpc(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert_eq!(r["result"]["tools"].as_array().unwrap().len(), 8);
    for (name, args) in [
        ("list_posts", json!({})),
        ("create_need", json!({"note": "n"})),
        (
            "read_thread",
            json!({"message_id": "0".repeat(32), "secret": "s"}),
        ),
    ] {
        let started = Instant::now();
        unreachable(&m.tool(name, args), &url);
        assert!(started.elapsed() < Duration::from_secs(15));
    }
    // Still serving.
    assert_eq!(
        m.rpc(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))["result"],
        json!({})
    );
    m.close_and_wait();
}

#[test]
fn stdio_server_with_a_hanging_list_times_out_into_is_error() {
    // Accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let held = Arc::new(Mutex::new(Vec::new()));
    let held2 = held.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            held2.lock().unwrap().push(s);
        }
    });
    let mut m = StdioServer::spawn(Some(&url), &[("NEEDHAVE_LIST_TIMEOUT", "1")]);
    let started = Instant::now();
    let text = unreachable(&m.tool("list_posts", json!({})), &url);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}: {text}");
    assert!(took >= Duration::from_millis(900), "took {took:?}: {text}");
    m.close_and_wait();
}

/// A list on an ephemeral port that answers every request with the same
/// status line, extra header lines and body, and keeps each request's
/// first line (`POST /posts HTTP/1.1`).
struct Canned {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Canned {
    fn spawn(status: &str, headers: &str, content_type: &str, body: &str) -> Canned {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let record = requests.clone();
        let answer = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        std::thread::spawn(move || {
            for mut s in listener.incoming().flatten() {
                let head = read_request(&mut s);
                let first = head.lines().next().unwrap_or("").to_string();
                record.lock().unwrap().push(first);
                let _ = s.write_all(answer.as_bytes());
            }
        });
        Canned { url, requests }
    }

    fn json(status: &str, body: &str) -> Canned {
        Canned::spawn(status, "", "application/json", body)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// Reads one request whole (the head, then `Content-Length` bytes of body),
/// so that closing after the answer never resets the connection under the
/// client; returns the head.
fn read_request(s: &mut TcpStream) -> String {
    read_whole(s).0
}

/// [`read_request`]'s head and body.
fn read_whole(s: &mut TcpStream) -> (String, String) {
    let mut req = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(i) = req.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return (String::from_utf8_lossy(&req).into_owned(), String::new()),
            Ok(k) => req.extend_from_slice(&buf[..k]),
        }
    };
    let head = String::from_utf8_lossy(&req[..end]).into_owned();
    let length = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse().ok())?
    });
    while req.len() < end + length.unwrap_or(0) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => req.extend_from_slice(&buf[..k]),
        }
    }
    (head, String::from_utf8_lossy(&req[end..]).into_owned())
}

/// A host of the previous release's calls: the answers it gave, without a
/// post's life (no `created_at`, no `status`), and no close route (404,
/// as any unknown path). Keeps each request's first line and body.
struct OldHost {
    url: String,
    requests: Arc<Mutex<Vec<(String, Value)>>>,
}

impl OldHost {
    const POST: &str = "0123456789abcdef0123456789abcdef";

    fn spawn() -> OldHost {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
        let record = requests.clone();
        std::thread::spawn(move || {
            for mut s in listener.incoming().flatten() {
                let (head, body) = read_whole(&mut s);
                let first = head.lines().next().unwrap_or("").to_string();
                let post = json!({"id": Self::POST, "kind": "need", "note": "an old need"});
                let route = first.split(' ').take(2).collect::<Vec<_>>().join(" ");
                let (status, answer) = match route.split('?').next().unwrap() {
                    "POST /posts" => ("201 Created", {
                        let mut p = post.clone();
                        p["secret"] = json!("s3cret");
                        p
                    }),
                    "GET /posts" => ("200 OK", json!({"posts": [post]})),
                    r if r == format!("GET /posts/{}", Self::POST) => ("200 OK", post),
                    r if r.ends_with("/waiting") => (
                        "200 OK",
                        json!({"messages": [{"id": "m1", "text": "hello"}]}),
                    ),
                    r if r.ends_with("/accept") => ("201 Created", json!({"thread_key": "k"})),
                    _ => ("404 Not Found", json!({"error": "not_found"})),
                };
                record
                    .lock()
                    .unwrap()
                    .push((first, serde_json::from_str(&body).unwrap_or(Value::Null)));
                let answer = answer.to_string();
                let _ = s.write_all(
                    format!(
                        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                        answer.len()
                    )
                    .as_bytes(),
                );
            }
        });
        OldHost { url, requests }
    }

    fn last(&self) -> (String, Value) {
        self.requests.lock().unwrap().last().cloned().unwrap()
    }
}

/// Against a host of the previous release: every tool still works on its
/// answers (the life's fields are optional in every output schema);
/// `expires_in` and `close` are passed on as they are; a close, which that
/// host has no call for, is an `isError` result, not a crash.
#[test]
fn stdio_server_works_against_a_host_without_a_posts_life() {
    let host = OldHost::spawn();
    let id = OldHost::POST;
    let mut m = StdioServer::spawn(Some(&host.url), &[]);
    let old = json!({"id": id, "kind": "need", "note": "an old need"});
    // A client checks each result against its tool's outputSchema: the old
    // answers must pass, so no field of a post's life is required there.
    let listed = m.rpc(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}));
    let schemas: std::collections::HashMap<String, Value> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().into(),
                t["outputSchema"].clone(),
            )
        })
        .collect();
    let call = |m: &mut StdioServer, name: &str, args: Value| {
        let result = ok(&m.tool(name, args));
        let validator = jsonschema::validator_for(&schemas[name]).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&result)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{name}: {result} fails its outputSchema: {errors:?}"
        );
        result
    };

    let created = call(
        &mut m,
        "create_need",
        json!({"note": "an old need", "expires_in": 86_400}),
    );
    assert_eq!(
        created,
        json!({"id": id, "kind": "need", "note": "an old need", "secret": "s3cret"})
    );
    assert_eq!(
        host.last(),
        (
            "POST /posts HTTP/1.1".into(),
            json!({"kind": "need", "note": "an old need", "expires_in": 86_400})
        )
    );
    assert_eq!(
        call(&mut m, "list_posts", json!({})),
        json!({"posts": [old]})
    );
    assert_eq!(call(&mut m, "read_post", json!({"id": id})), old);
    assert_eq!(
        call(
            &mut m,
            "accept_reply",
            json!({"post_id": id, "secret": "s3cret", "close": false})
        ),
        json!({"messages": [{"id": "m1", "text": "hello"}]})
    );
    assert_eq!(host.last().0, format!("POST /posts/{id}/waiting HTTP/1.1"));
    // An accept that closes: the accept's body carries `close`; the old
    // host ignores it and answers its key alone.
    assert_eq!(
        call(
            &mut m,
            "accept_reply",
            json!({"post_id": id, "secret": "s3cret", "message_id": "m1", "close": true})
        ),
        json!({"thread_key": "k"})
    );
    let (line, body) = host.last();
    assert_eq!(line, format!("POST /posts/{id}/accept HTTP/1.1"));
    assert_eq!(body["close"], true, "{body}");
    assert_eq!(body["message_id"], "m1", "{body}");
    // A close alone: that host has no such call.
    err(
        &m.tool(
            "accept_reply",
            json!({"post_id": id, "secret": "s3cret", "close": true}),
        ),
        "not_found",
    );
    assert_eq!(host.last().0, format!("POST /posts/{id}/close HTTP/1.1"));
    m.close_and_wait();
}

#[test]
fn stdio_server_with_a_list_answering_garbage_answers_is_error() {
    // An HTML error page where JSON was expected (a proxy in the way).
    let list = Canned::spawn(
        "502 Bad Gateway",
        "",
        "text/html",
        "<html><body>502 Bad Gateway</body></html>",
    );
    let mut m = StdioServer::spawn(Some(&list.url), &[]);
    let text = unreachable(
        &m.tool("read_post", json!({"id": "0".repeat(32)})),
        &list.url,
    );
    assert!(text.contains("502"), "{text}");
    m.close_and_wait();
}

/// A list that redirects: a write is an error naming the URL and saying
/// nothing was written, never the public list read back as a success; a
/// read is not followed either; the place it points to hears nothing, and
/// credentials in the `Location` are not shown.
#[test]
fn stdio_server_follows_no_redirect() {
    let elsewhere = Canned::json("200 OK", r#"{"posts":[]}"#);
    let target = elsewhere.url.replace("http://", "http://admin:hunter2@");
    for status in [
        "301 Moved Permanently",
        "302 Found",
        "307 Temporary Redirect",
    ] {
        let location = format!("Location: {target}/posts\r\n");
        let list = Canned::spawn(status, &location, "application/json", "{}");
        let mut m = StdioServer::spawn(Some(&list.url), &[]);
        let text = unreachable(&m.tool("create_need", json!({"note": "a need"})), &list.url);
        assert!(text.contains("nothing was written"), "{text}");
        assert!(text.contains(&status[..3]), "{text}");
        let text = unreachable(&m.tool("list_posts", json!({})), &list.url);
        assert!(text.contains("not followed"), "{text}");
        for text in [text, m.stderr.lock().unwrap().clone()] {
            assert!(!text.contains("hunter2"), "{text}");
        }
        assert_eq!(
            list.requests(),
            ["POST /posts HTTP/1.1", "GET /posts HTTP/1.1"]
        );
        m.close_and_wait();
    }
    assert_eq!(elsewhere.requests(), Vec::<String>::new());
}

/// A 2xx whose JSON is not the tool's answer is an error result, never
/// structured content.
#[test]
fn stdio_server_refuses_an_answer_not_of_the_tools_shape() {
    for (tool, args, body) in [
        ("list_posts", json!({}), r#"{"posts": 5}"#),
        (
            "list_posts",
            json!({}),
            r#"{"posts": [{"id": "a", "kind": "offer", "note": "n"}]}"#,
        ),
        ("list_posts", json!({}), r#"{"status": "ok"}"#),
        ("create_need", json!({"note": "n"}), r#"{"posts": []}"#),
        ("read_post", json!({"id": "0".repeat(32)}), r#"[1, 2]"#),
        (
            "read_thread",
            json!({"thread_key": "k"}),
            r#"{"post_id": "p", "messages": [{"id": "m"}]}"#,
        ),
    ] {
        let list = Canned::json("200 OK", body);
        let mut m = StdioServer::spawn(Some(&list.url), &[]);
        let r = m.tool(tool, args);
        let text = unreachable(&r, &list.url);
        assert!(text.contains("not its answer"), "{text}");
        assert!(r.get("structuredContent").is_none(), "{r}");
        m.close_and_wait();
    }
}

/// A newer list that answers more fields than this server knows still
/// works: the fields the tool's schema names are the result, the others
/// are left out (clients check the result against the advertised schema).
#[test]
fn stdio_server_takes_an_answer_with_fields_it_does_not_know() {
    let post = json!({"id": "a1", "kind": "need", "note": "n", "colour": "blue"});
    let list = Canned::json(
        "200 OK",
        &json!({"posts": [post], "next": "c", "status": "ok"}).to_string(),
    );
    let mut m = StdioServer::spawn(Some(&list.url), &[]);
    let got = ok(&m.tool("list_posts", json!({})));
    assert_eq!(
        got,
        json!({"posts": [{"id": "a1", "kind": "need", "note": "n"}], "next": "c"})
    );
    m.close_and_wait();
    let created = json!({"id": "a1", "kind": "have", "note": "n", "secret": "s", "status": "live"});
    let list = Canned::json("201 Created", &created.to_string());
    let mut m = StdioServer::spawn(Some(&list.url), &[]);
    let got = ok(&m.tool("create_have", json!({"note": "n"})));
    assert_eq!(
        got,
        json!({"id": "a1", "kind": "have", "note": "n", "secret": "s"})
    );
    m.close_and_wait();
}

/// A list URL with credentials is refused at start, and the refusal does
/// not show them.
#[test]
fn stdio_server_refuses_a_list_url_with_credentials_and_never_shows_them() {
    let output = Command::new(BIN)
        .arg("mcp")
        .env("NEEDHAVE_LIST_URL", "http://admin:hunter2@127.0.0.1:9/")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stderr.contains("http://***@127.0.0.1:9"), "{stderr}");
    assert!(stderr.contains("credentials"), "{stderr}");
    assert!(!stderr.contains("hunter2") && !stdout.contains("hunter2"));
    // Nor does the help, which names the variable.
    let help = Command::new(BIN)
        .args(["mcp", "--help"])
        .env("NEEDHAVE_LIST_URL", "http://admin:hunter2@127.0.0.1:9/")
        .output()
        .unwrap();
    assert!(help.status.success());
    assert!(!String::from_utf8_lossy(&help.stdout).contains("hunter2"));
}

#[test]
fn stdio_server_with_a_bad_url_or_the_default_url_never_crashes() {
    let mut m = StdioServer::spawn(Some("not a url"), &[]);
    unreachable(&m.tool("list_posts", json!({})), "not a url");
    m.close_and_wait();

    // No NEEDHAVE_LIST_URL: the live list. This machine may have no route
    // to it; either way the answer comes, and an error names the URL.
    let mut m = StdioServer::spawn(None, &[("NEEDHAVE_LIST_TIMEOUT", "5")]);
    let r = m.tool("list_posts", json!({}));
    if r["isError"] == true {
        unreachable(&r, "https://needhave.io");
    } else {
        assert!(r["structuredContent"]["posts"].is_array(), "{r}");
    }
    m.close_and_wait();
    let log = m.stderr.lock().unwrap().clone();
    assert!(log.contains("https://needhave.io"), "stderr: {log}");
}

// --------------------------------------------------- stdio, 2026-07-28

fn modern(id: Value, method: &str, params: Value) -> Value {
    let mut params = if params.is_object() {
        params
    } else {
        json!({})
    };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "mcp_native", "version": "0"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

impl StdioServer {
    /// A 2026-07-28 request; the answer is validated against that
    /// revision's schema (and a tool's against its output schema).
    #[track_caller]
    fn modern(&mut self, id: Value, method: &str, params: Value) -> Value {
        let req = modern(id, method, params);
        let r = self.rpc(req.clone());
        schema::assert_response(Rev::Modern, method, &req, &r);
        r
    }

    #[track_caller]
    fn modern_tool(&mut self, name: &str, args: Value) -> Value {
        let r = self.modern(
            json!(78),
            "tools/call",
            json!({"name": name, "arguments": args}),
        );
        assert!(r.get("error").is_none(), "{r}");
        assert_eq!(r["result"]["resultType"], "complete");
        r["result"].clone()
    }

    /// A 2025 request, validated against 2025-11-25.
    #[track_caller]
    fn legacy(&mut self, req: Value) -> Value {
        let r = self.rpc(req.clone());
        let method = req["method"].as_str().unwrap();
        schema::assert_response(Rev::Legacy, method, &req, &r);
        r
    }
}

/// Over stdio a dual-era client probes with `server/discover`; a modern one
/// then sends `_meta` on every request. The same process also serves a
/// 2025 client that opens with `initialize`: the era is per request.
#[test]
fn stdio_server_speaks_both_eras_against_needhave_serve() {
    let list = Serve::loopback(&[]);
    let mut m = StdioServer::spawn(Some(&list.base), &[]);

    let r = m.modern(json!("probe"), "server/discover", json!({}));
    let d = &r["result"];
    assert_eq!(d["supportedVersions"][0], "2026-07-28");
    assert!(d["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!("2025-11-25")));
    assert_eq!(
        (d["cacheScope"].as_str(), d["ttlMs"].is_u64()),
        (Some("public"), true)
    );
    assert_eq!(
        d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "needhave"
    );

    // What Python mcp 2.3 found missing over stdio: resultType, ttlMs, cacheScope.
    let r = m.modern(json!(1), "tools/list", json!({}));
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["cacheScope"], "public");
    assert!(r["result"]["ttlMs"].as_u64().is_some_and(|t| t > 0));
    assert_eq!(
        r["result"]["tools"],
        needhave::mcp::tools::list(&needhave::routes::API)["tools"]
    );

    // The full flow, every answer checked against its output schema.
    let note = fresh_note("stdio modern");
    let post = ok(&m.modern_tool("create_need", json!({"note": note})));
    let (id, secret) = (post["id"].clone(), post["secret"].clone());
    let first = ok(&m.modern_tool("write_first_reply", json!({"post_id": id, "text": "me"})));
    let (mid, rsecret) = (first["id"].clone(), first["secret"].clone());
    let waiting = ok(&m.modern_tool("accept_reply", json!({"post_id": id, "secret": secret})));
    assert_eq!(waiting["messages"][0]["id"], mid);
    let before = ok(&m.modern_tool("read_thread", json!({"message_id": mid, "secret": rsecret})));
    assert_eq!(before, json!({"accepted": false}));
    let key = ok(&m.modern_tool(
        "accept_reply",
        json!({"post_id": id, "secret": secret, "message_id": mid}),
    ))["thread_key"]
        .clone();
    let by_key = ok(&m.modern_tool("read_thread", json!({"thread_key": key})));
    let after = ok(&m.modern_tool("read_thread", json!({"message_id": mid, "secret": rsecret})));
    assert_eq!(
        (after["accepted"].clone(), after["thread_key"].clone()),
        (json!(true), key.clone())
    );
    assert_eq!(after["messages"], by_key["messages"]);
    ok(&m.modern_tool(
        "write_thread_message",
        json!({"thread_key": key, "text": "hi"}),
    ));
    ok(&m.modern_tool("list_posts", json!({})));
    let word = note.rsplit('#').next().unwrap();
    let found = ok(&m.modern_tool("list_posts", json!({"query": word})));
    assert_eq!(found["posts"][0]["id"], id);
    // Paging over stdio: a cursor from one page reads the next.
    let page = ok(&m.modern_tool("list_posts", json!({"kind": "need"})));
    if let Some(next) = page["next"].as_str() {
        let older = ok(&m.modern_tool("list_posts", json!({"kind": "need", "cursor": next})));
        assert!(older["posts"].as_array().is_some_and(|p| !p.is_empty()));
    }
    ok(&m.modern_tool("read_post", json!({"id": id})));
    err(
        &m.modern_tool("read_post", json!({"id": "0".repeat(32)})),
        "not_found",
    );
    err(&m.modern_tool("read_post", json!({})), "bad_request");

    // This era's errors, over stdio (no HTTP status to carry).
    let r = m.modern(json!(2), "ping", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = m.rpc(json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let mut bad = modern(json!(4), "tools/list", json!({}));
    bad["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = m.rpc(bad);
    assert_eq!(r["error"]["code"], -32022, "{r}");
    assert_eq!(r["error"]["data"]["supported"][0], "2026-07-28");
    schema::assert_valid(Rev::Modern, "UnsupportedProtocolVersionError", &r);

    // And a 2025 client on the same process.
    let r = m.legacy(init());
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        r["result"]["serverInfo"]["websiteUrl"],
        "https://needhave.io"
    );
    let r = m.legacy(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}));
    assert!(
        r["result"].get("resultType").is_none(),
        "2025 answers are unchanged"
    );
    let r = m.legacy(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "read_post", "arguments": {"id": id}}}));
    ok(&r["result"]);
    m.close_and_wait();
}

/// Issue 13: the stdio server reads its own writes on a list with replicas
/// by sending back the last `x-d1-bookmark` the list answered with.
#[test]
fn stdio_server_sends_back_the_last_bookmark() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let record = seen.clone();
    std::thread::spawn(move || {
        for (n, mut s) in listener.incoming().flatten().enumerate().take(4) {
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => req.extend_from_slice(&buf[..k]),
                }
            }
            let head = String::from_utf8_lossy(&req).to_string();
            let got = head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("x-d1-bookmark")
                    .then(|| v.trim().to_string())
            });
            record.lock().unwrap().push(got);
            // The third answer carries none: the last one is kept.
            let bookmark = if n == 2 {
                String::new()
            } else {
                format!("x-d1-bookmark: bm-{n}\r\n")
            };
            let body = r#"{"posts":[]}"#;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{bookmark}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let mut m = StdioServer::spawn(Some(&url), &[]);
    for _ in 0..4 {
        ok(&m.tool("list_posts", json!({})));
    }
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            None,
            Some("bm-0".into()),
            Some("bm-1".into()),
            Some("bm-1".into())
        ]
    );
    m.close_and_wait();
}
