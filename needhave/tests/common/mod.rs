//! The black-box harness: a list at a base URL, and a client that can speak
//! from many client IPs.
//!
//! By default each test binary spawns one `needhave serve` on an ephemeral
//! port with an in-memory database. With `NEEDHAVE_TEST_URL` set, the same
//! tests run against that list instead (`wrangler dev` in CI). Tests share
//! the list, so each uses fresh notes and fresh client IPs: a request binds
//! a 127.x.y.z source address (the native server's client IP is the TCP
//! peer) and sends the same address as `CF-Connecting-IP` (the Worker's).
#![allow(dead_code)]

pub mod local;
pub mod notes;
pub mod schema;

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpSocket;

pub struct Server {
    pub base: String,
    pub addr: SocketAddr,
    /// `host:port`, as a client would send it in `Host`.
    pub host: String,
    child: Option<Mutex<Child>>,
}

impl Server {
    /// Spawns `needhave serve` with extra arguments; it exits when this
    /// process does (its stdin closes).
    pub fn spawn(extra: &[&str]) -> Server {
        let (child, url) = spawn_serve("127.0.0.1:0", ":memory:", extra);
        let mut s = Server::at(&url);
        s.child = Some(Mutex::new(child));
        s
    }

    pub fn at(base: &str) -> Server {
        let base = base.trim_end_matches('/').to_string();
        let host = base
            .strip_prefix("http://")
            .expect("an http:// base URL")
            .to_string();
        let addr = host
            .to_socket_addrs()
            .expect("resolvable host")
            .find(SocketAddr::is_ipv4)
            .expect("an IPv4 address");
        Server {
            base,
            addr,
            host,
            child: None,
        }
    }

    pub fn is_remote(&self) -> bool {
        self.child.is_none()
    }
}

/// `needhave serve` on `addr` with database `db`, the way the tests start
/// it: warn-level logs to this process's stderr, stdout piped (for
/// [`start`] to read the URL from), stdin piped. A caller changes what its
/// test needs (logs, stdin, stderr, more arguments) before [`start`].
pub fn serve_command(addr: &str, db: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_needhave"));
    cmd.args(["serve", "--addr", addr, "--db"])
        .arg(db)
        .env("NEEDHAVE_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    cmd
}

/// Spawns `cmd` (a [`serve_command`]) and waits for the line it prints
/// once it listens (`needhave: serving http://ADDR (database …)`).
/// Returns the child and that URL.
pub fn start(cmd: &mut Command) -> (Child, String) {
    let mut child = cmd.spawn().expect("spawn needhave serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("first line");
    let url = line
        .strip_prefix("needhave: serving ")
        .and_then(|rest| rest.split_whitespace().next())
        .filter(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    (child, url)
}

/// Spawns `needhave serve` on `addr` with database `db`; it exits when this
/// process does (its stdin closes). Returns the child and the URL it prints.
pub fn spawn_serve(addr: &str, db: &str, extra: &[&str]) -> (Child, String) {
    start(serve_command(addr, db).arg("--exit-with-stdin").args(extra))
}

/// A `needhave serve` of one test's own (on a database of its choosing),
/// killed when dropped; it reads as the [`Server`] it serves.
pub struct Owned {
    pub child: Child,
    pub server: Server,
}

impl Owned {
    pub fn spawn(addr: &str, db: &str, extra: &[&str]) -> Owned {
        let (child, url) = spawn_serve(addr, db, extra);
        Owned {
            child,
            server: Server::at(&url),
        }
    }
}

impl std::ops::Deref for Owned {
    type Target = Server;
    fn deref(&self) -> &Server {
        &self.server
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `sig` (`TERM`, `INT`, `KILL`) to `child`, as an operator's `kill`.
pub fn signal(child: &Child, sig: &str) {
    let sent = Command::new("kill")
        .args([format!("-{sig}"), child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success(), "kill -{sig} {}", child.id());
}

/// The database file of this binary's local list, when the binary asked
/// for one ([`on_file`]) before its first request.
static LOCAL_DB: OnceLock<std::path::PathBuf> = OnceLock::new();

/// Whether the list under test is another host's (`NEEDHAVE_TEST_URL`).
fn remote_url() -> Option<String> {
    std::env::var("NEEDHAVE_TEST_URL")
        .ok()
        .filter(|url| !url.is_empty())
}

/// The list under test for this binary.
pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| match (remote_url(), LOCAL_DB.get()) {
        (Some(url), _) => Server::at(&url),
        (None, Some(db)) => {
            let (child, url) = spawn_serve("127.0.0.1:0", db.to_str().unwrap(), &[]);
            let mut s = Server::at(&url);
            s.child = Some(Mutex::new(child));
            s
        }
        (None, None) => Server::spawn(&[]),
    })
}

/// Makes this binary's local list one on a database file (not in memory),
/// whose path it returns, for tests that also write the file beside the
/// server, as its operator does; `None` when the list under test is
/// another host's. Called before the binary's first request.
pub fn on_file() -> Option<&'static std::path::Path> {
    if remote_url().is_some() {
        return None;
    }
    let db = LOCAL_DB.get_or_init(|| scratch("list").join("list.db"));
    Some(db.as_path())
}

fn random_u32() -> u32 {
    let mut b = [0u8; 4];
    getrandom::fill(&mut b).expect("randomness");
    u32::from_le_bytes(b)
}

/// A client IP no other test uses: 127.x.y.z, never 127.0.0.1.
pub fn fresh_ip() -> Ipv4Addr {
    static USED: OnceLock<Mutex<HashSet<Ipv4Addr>>> = OnceLock::new();
    let used = USED.get_or_init(Default::default);
    loop {
        let r = random_u32();
        let ip = Ipv4Addr::new(
            127,
            1 + (r % 250) as u8,
            (r >> 8) as u8,
            1 + ((r >> 16) % 250) as u8,
        );
        if used.lock().unwrap().insert(ip) {
            return ip;
        }
    }
}

/// A note nobody else posted.
/// The ids of a list answer's (or a `list_posts` result's) posts, in order.
pub fn listed(v: &serde_json::Value) -> Vec<String> {
    v["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect()
}

/// The samples of a Prometheus text scrape, by series (name and labels).
pub fn samples(text: &str) -> std::collections::HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap();
            (series.to_string(), value.parse().unwrap())
        })
        .collect()
}

/// A scrape of the metrics listener `metrics` (`--metrics-addr`), in the
/// Prometheus text format, by series.
pub async fn scrape(metrics: &Server) -> std::collections::HashMap<String, f64> {
    let r = send_to(
        metrics,
        std::net::Ipv4Addr::LOCALHOST,
        "GET",
        "/metrics",
        None,
        &[],
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(r
        .header("content-type")
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    samples(&r.text())
}

/// A loopback address with a port nobody listens on now, for a second
/// listener (`--metrics-addr`).
pub fn free_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

/// A fresh, empty directory of the calling test's own under the system's
/// temporary one (`label` names it for a reader of `/tmp`).
pub fn scratch(label: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "needhave-{label}-{}-{:08x}",
        std::process::id(),
        random_u32()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn fresh_note(label: &str) -> String {
    format!("{label} #{:08x}{:08x}", random_u32(), random_u32())
}

#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|_| {
            panic!(
                "not JSON (status {}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn error(&self) -> String {
        self.json()["error"].as_str().unwrap_or("").to_string()
    }

    /// Asserts `{"error": code}` with `status`.
    #[track_caller]
    pub fn expect_error(&self, status: u16, code: &str) {
        assert_eq!(
            (self.status, self.error()),
            (status, code.to_string()),
            "body: {}",
            self.text()
        );
        assert!(self
            .header("content-type")
            .is_some_and(|c| c.starts_with("application/json")));
    }
}

/// What the tests saw: (method, route pattern, status), for the coverage test.
pub fn seen() -> &'static Mutex<HashSet<(String, String, u16)>> {
    static SEEN: OnceLock<Mutex<HashSet<(String, String, u16)>>> = OnceLock::new();
    SEEN.get_or_init(Default::default)
}

/// Declares each scenario (an `async fn` of the binary's) as a test of its
/// own, `each::NAME`, and `run_all()`, which runs them all in order, for
/// the binary's coverage test ([`unseen`]). With `setup PATH;` first,
/// each test calls `PATH()` before its scenario.
#[macro_export]
macro_rules! scenarios {
    (setup $setup:path; $($name:ident),* $(,)?) => {
        mod each {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    $setup();
                    super::$name().await
                }
            )*
        }

        async fn run_all() {
            $( $name().await; )*
        }
    };
    ($($name:ident),* $(,)?) => {
        $crate::scenarios!(setup $crate::common::no_setup; $($name),*);
    };
}

/// The setup of scenarios that need none.
pub fn no_setup() {}

/// The statuses of the table's routes that `wanted` asks for and no
/// request of `scenarios` (a binary's `run_all()`, run on a runtime of its
/// own) was answered with, each as `METHOD /path STATUS`: a status nobody
/// can produce is a lie in the OpenAPI document.
pub fn unseen(
    scenarios: impl std::future::Future<Output = ()>,
    wanted: impl Fn(&needhave::api::Route, u16) -> bool,
) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(scenarios);
    let seen = seen().lock().unwrap().clone();
    let mut missing = Vec::new();
    for route in needhave::routes::ROUTES {
        for status in route.statuses().filter(|s| wanted(route, *s)) {
            if !seen.contains(&(route.method.to_string(), route.path.to_string(), status)) {
                missing.push(format!("{} {} {}", route.method, route.path, status));
            }
        }
    }
    missing
}

/// What a stopped child wrote to its piped stderr.
pub fn stderr_of(child: &mut Child) -> String {
    let mut log = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut log).unwrap();
    log
}

/// Whether `status` of `route` is one of a post's life that
/// `tests/life.rs` produces, on a list of its own whose database file it
/// writes the operator's removals into: every answer of a close and of a
/// report, every 410 (removed), and a first reply's 409 (ended).
/// `tests/http.rs` leaves exactly these to it.
pub fn is_life_status(route: &needhave::api::Route, status: u16) -> bool {
    matches!(route.path, "/posts/:id/close" | "/posts/:id/report")
        || status == 410
        || (route.method == "POST" && route.path == "/posts/:id/messages" && status == 409)
}

/// A client speaking from one IP.
#[derive(Clone, Copy)]
pub struct Client {
    pub ip: Ipv4Addr,
}

impl Default for Client {
    fn default() -> Self {
        Self::new()
    }
}

impl Client {
    pub fn new() -> Self {
        Client { ip: fresh_ip() }
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.send("GET", path, None, &[]).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.send("POST", path, Some(body.to_string().into_bytes()), &[])
            .await
    }

    pub async fn post_raw(&self, path: &str, body: &[u8]) -> Resp {
        self.send("POST", path, Some(body.to_vec()), &[]).await
    }

    pub async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let server = server();
        send_to(server, self.ip, method, path, body, headers).await
    }
}

/// What `wrangler dev`'s proxy answers when its own pooled connection to the
/// Worker dies under a request: the proxy and workerd both close a
/// keep-alive connection after 5 s idle, and a request written at that
/// moment is lost before it reaches the Worker (cloudflare/workers-sdk#14641;
/// reproduced against this Worker on a route it answers 404 from the path
/// alone). wrangler retries a GET or HEAD itself and answers any other
/// method with this 503, naming a restart that did not happen.
const WRANGLER_DROPPED: &[u8] = b"Your worker restarted mid-request.";

pub async fn send_to(
    server: &Server,
    ip: Ipv4Addr,
    method: &str,
    path: &str,
    body: Option<Vec<u8>>,
    headers: &[(&str, &str)],
) -> Resp {
    send_claimed(server, ip, &ip.to_string(), method, path, body, headers).await
}

/// The list the tests may tell any client address (IPv6 ones included,
/// which a test cannot bind): the list under test when it is remote (the
/// Worker reads `CF-Connecting-IP`), else a `needhave serve` of this
/// binary's that believes `CF-Connecting-IP`, as an operator behind
/// Cloudflare would run it.
pub fn claimed_server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    if server().is_remote() {
        return server();
    }
    SERVER.get_or_init(|| Server::spawn(&["--client-ip-header", "CF-Connecting-IP"]))
}

/// A request from a fresh 127.x.y.z socket that says its client address
/// is `claimed` (`CF-Connecting-IP`): for [`claimed_server`].
pub async fn send_as(claimed: &str, method: &str, path: &str, body: Option<Vec<u8>>) -> Resp {
    send_claimed(
        claimed_server(),
        fresh_ip(),
        claimed,
        method,
        path,
        body,
        &[],
    )
    .await
}

/// Held shared by every request this binary sends, and alone by a writer
/// outside the server ([`alone_with_the_list`]).
static OUTSIDE_WRITER: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// Runs `write`, a process that writes the list's file beside the server
/// (an operator's `wrangler d1 execute --local`), while no request of this
/// binary is in flight. A local D1 is one SQLite file that workerd opens
/// without a busy timeout: a second process's write makes any statement the
/// Worker runs meanwhile fail with SQLITE_BUSY, and the request a 500 that
/// production never sees, where D1 itself runs the operator's statement.
pub async fn alone_with_the_list<T>(write: impl FnOnce() -> T) -> T {
    let _alone = OUTSIDE_WRITER.write().await;
    write()
}

async fn send_claimed(
    server: &Server,
    ip: Ipv4Addr,
    claimed: &str,
    method: &str,
    path: &str,
    body: Option<Vec<u8>>,
    headers: &[(&str, &str)],
) -> Resp {
    let _sending = OUTSIDE_WRITER.read().await;
    let resp = send_once(server, ip, claimed, method, path, body.clone(), headers).await;
    // Sent again, once, as wrangler does for a GET: the first never ran. (Had
    // it run, the second would meet the first's row, a duplicate note or a
    // spent limit, and the test would fail: a retry cannot hide a broken
    // rule.) Only against a remote list, never `needhave serve`.
    if server.is_remote() && resp.status == 503 && resp.body.starts_with(WRANGLER_DROPPED) {
        eprintln!("{method} {path}: dropped by wrangler's proxy (workers-sdk#14641), sent again");
        return send_once(server, ip, claimed, method, path, body, headers).await;
    }
    resp
}

async fn send_once(
    server: &Server,
    ip: Ipv4Addr,
    claimed: &str,
    method: &str,
    path: &str,
    body: Option<Vec<u8>>,
    headers: &[(&str, &str)],
) -> Resp {
    let socket = TcpSocket::new_v4().expect("socket");
    if server.addr.ip().is_loopback() {
        socket
            .bind(SocketAddr::new(IpAddr::V4(ip), 0))
            .expect("bind a 127.x.y.z source address");
    }
    let stream = socket.connect(server.addr).await.expect("connect");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", &server.host)
        .header("cf-connecting-ip", claimed);
    let has_body = body.is_some();
    if has_body
        && !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        builder = builder.header("content-type", "application/json");
    }
    for (n, v) in headers {
        builder = builder.header(*n, *v);
    }
    let req = builder
        .body(Full::new(Bytes::from(body.unwrap_or_default())))
        .expect("request");
    let resp = sender.send_request(req).await.expect("response");
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let body = resp
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    let bare = path.split('?').next().unwrap_or(path);
    if let Some(route) = needhave::routes::API.route(method, bare) {
        seen()
            .lock()
            .unwrap()
            .insert((route.method.to_string(), route.path.to_string(), status));
    }
    Resp {
        status,
        headers,
        body,
    }
}

/// A post, as its author knows it.
pub struct Post {
    pub id: String,
    pub secret: String,
    pub note: String,
}

/// A post of `kind` with `note` on `server`, from a fresh address: the
/// answer, whatever it is.
pub async fn create_on(server: &Server, kind: &str, note: &str) -> Resp {
    let body = serde_json::json!({"kind": kind, "note": note});
    let body = Some(body.to_string().into_bytes());
    send_to(server, fresh_ip(), "POST", "/posts", body, &[]).await
}

/// `POST /posts/:id/waiting` of `post`, by its author.
pub async fn waiting(post: &Post) -> Resp {
    Client::new()
        .post(
            &format!("/posts/{}/waiting", post.id),
            serde_json::json!({"secret": post.secret}),
        )
        .await
}

/// The ids of the waiting replies of `post`.
pub async fn waiting_ids(post: &Post) -> Vec<String> {
    let r = waiting(post).await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect()
}

pub async fn create_post(kind: &str) -> Post {
    let note = fresh_note(kind);
    let r = Client::new()
        .post("/posts", serde_json::json!({"kind": kind, "note": note}))
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let v = r.json();
    Post {
        id: v["id"].as_str().unwrap().to_string(),
        secret: v["secret"].as_str().unwrap().to_string(),
        note,
    }
}

/// A first reply, as its author knows it.
pub struct Reply {
    pub id: String,
    pub secret: String,
    pub text: String,
}

pub async fn reply(post: &Post) -> Reply {
    let text = fresh_note("reply");
    let r = Client::new()
        .post(
            &format!("/posts/{}/messages", post.id),
            serde_json::json!({"text": text}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let v = r.json();
    Reply {
        id: v["id"].as_str().unwrap().to_string(),
        secret: v["secret"].as_str().unwrap().to_string(),
        text,
    }
}

pub async fn accept(post: &Post, reply: &Reply) -> String {
    let r = Client::new()
        .post(
            &format!("/posts/{}/accept", post.id),
            serde_json::json!({"secret": post.secret, "message_id": reply.id}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    r.json()["thread_key"].as_str().unwrap().to_string()
}

pub fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

// ---- MCP helpers (POST /mcp and the stdio server) ----

/// A JSON-RPC request (2025's form: no `_meta`).
pub fn rpc_request(id: Value, method: &str, params: Value) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A JSON-RPC `tools/call` request.
pub fn tool_call(id: u64, name: &str, arguments: Value) -> Value {
    rpc_request(
        id.into(),
        "tools/call",
        serde_json::json!({"name": name, "arguments": arguments}),
    )
}

/// Asserts a successful tool result and returns its structured content,
/// after checking that `content[0].text` is the same JSON.
#[track_caller]
pub fn tool_ok(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "tool result: {result}");
    tool_payload(result)
}

/// Asserts an `isError` tool result whose text is the list's
/// `{"error": code}` (with a `message` for argument errors), and which has
/// no structured content: the output schema describes answers, and some
/// clients validate error results against it. Returns the parsed text.
#[track_caller]
pub fn tool_err(result: &Value, code: &str) -> Value {
    assert_eq!(result["isError"], true, "tool result: {result}");
    let text = result["content"][0]["text"].as_str().unwrap_or("");
    let parsed: Value = serde_json::from_str(text).expect("content[0].text is JSON");
    assert_eq!(parsed["error"], code, "{result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    parsed
}

/// The structured content of a tool result, checked against its text.
#[track_caller]
pub fn tool_payload(result: &Value) -> Value {
    let content = result["content"].as_array().expect("content array");
    assert_eq!(content[0]["type"], "text", "{result}");
    let text = content[0]["text"].as_str().expect("text");
    let parsed: Value = serde_json::from_str(text).expect("content[0].text is JSON");
    assert!(result["structuredContent"].is_object(), "{result}");
    assert_eq!(
        parsed, result["structuredContent"],
        "text and structuredContent differ"
    );
    parsed
}

impl Client {
    /// `POST /mcp` with a JSON-RPC payload (a message or a batch).
    pub async fn mcp(&self, payload: Value) -> Resp {
        self.post("/mcp", payload).await
    }

    /// `POST /mcp` with extra headers.
    pub async fn mcp_with(&self, payload: &Value, headers: &[(&str, &str)]) -> Resp {
        self.send(
            "POST",
            "/mcp",
            Some(payload.to_string().into_bytes()),
            headers,
        )
        .await
    }

    /// `POST /mcp` with one JSON-RPC request; asserts HTTP 200, a JSON
    /// answer with the same id, and returns the whole JSON-RPC response.
    pub async fn rpc(&self, payload: Value) -> Value {
        let r = self.mcp(payload.clone()).await;
        assert_eq!(r.status, 200, "{payload} → {}", r.text());
        assert!(r
            .header("content-type")
            .is_some_and(|c| c.starts_with("application/json")));
        let v = r.json();
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        assert_eq!(v["id"], payload["id"], "{v}");
        // Everything asked without 2026-07-28's `_meta` is a 2025 answer.
        if let Some(method) = payload["method"].as_str() {
            if payload["params"].get("_meta").is_none() && schema::knows(method) {
                schema::assert_response(schema::Rev::Legacy, method, &payload, &v);
            }
        }
        v
    }

    /// Calls a tool over `POST /mcp` and returns its result (the tool
    /// result object, never a JSON-RPC error).
    pub async fn tool(&self, name: &str, arguments: Value) -> Value {
        let v = self.rpc(tool_call(7, name, arguments)).await;
        assert!(v.get("error").is_none(), "JSON-RPC error: {v}");
        v["result"].clone()
    }
}

/// A committed test table (`tests/data/NAME`): its rows, tab-separated, with
/// `#` comments and blank lines skipped and `\u{XXXX}`, `\t`, `\n`, `\\`
/// unescaped in every field, so invisible characters stay readable there.
pub fn data_table(name: &str) -> Vec<Vec<String>> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').map(unescape).collect())
        .collect()
}

fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let hex: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                let n = u32::from_str_radix(&hex, 16)
                    .unwrap_or_else(|_| panic!("bad escape in {field:?}"));
                out.push(char::from_u32(n).unwrap_or_else(|| panic!("bad escape in {field:?}")));
            }
            other => panic!("unknown escape \\{other:?} in {field:?}"),
        }
    }
    out
}
