//! Faults, through a real socket: a handler panic becomes a 500
//! `{"error":"internal"}` and the server goes on serving (same connection,
//! later requests); a store failure leaks nothing; and a short crash-safety
//! check: `kill -9` of `needhave serve` during writes, a restart on the same
//! file, and every write answered 201 is there, the file passes
//! `PRAGMA integrity_check`, and the per-IP limit still holds.
//!
//! The long forms (60 s mixed load, a longer crash) are `bench/run`'s and
//! `.ci/faults`'.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use needhave::platform::BoxFuture;
use needhave::store::sqlite::SqliteStore;
use needhave::store::{Row, Statement, Store, StoreError, StoreResult};
use needhave::Config;
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpSocket};

// ---------------------------------------------------------------- a client

struct Conn {
    sender: SendRequest<Full<Bytes>>,
    host: String,
}

struct Answer {
    status: u16,
    headers: hyper::HeaderMap,
    body: Bytes,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| panic!("not JSON: {:?}", String::from_utf8_lossy(&self.body)))
    }
}

async fn connect(addr: SocketAddr, ip: Ipv4Addr) -> std::io::Result<Conn> {
    let sock = TcpSocket::new_v4()?;
    sock.bind(SocketAddr::new(ip.into(), 0))?;
    let stream = sock.connect(addr).await?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(std::io::Error::other)?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(Conn {
        sender,
        host: addr.to_string(),
    })
}

impl Conn {
    async fn send(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Result<Answer, hyper::Error> {
        self.sender.ready().await?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let req = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", &self.host)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .expect("request");
        let resp = self.sender.send_request(req).await?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.into_body().collect().await?.to_bytes();
        Ok(Answer {
            status,
            headers,
            body,
        })
    }
}

// ---------------------------------------------------------------- panics

/// A store that panics (or fails) on the statements that touch `posts`
/// when told to, and otherwise is a real in-memory store.
struct Faulty {
    inner: SqliteStore,
    panic: AtomicBool,
    fail: AtomicBool,
    calls: AtomicUsize,
}

const DETAIL: &str = "disk on fire at /var/secret/path 0123456789abcdef";

impl Store for Faulty {
    fn batch(&self, statements: Vec<Statement>) -> BoxFuture<'_, StoreResult<Vec<Vec<Row>>>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.panic.load(Ordering::SeqCst) {
            panic!("store panicked on purpose: {DETAIL}");
        }
        if self.fail.load(Ordering::SeqCst) {
            return Box::pin(async { Err(StoreError(DETAIL.to_string())) });
        }
        self.inner.batch(statements)
    }
}

async fn serve_faulty() -> (Arc<Faulty>, SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let store = Arc::new(Faulty {
        inner: SqliteStore::open(":memory:").expect("store"),
        panic: AtomicBool::new(false),
        fail: AtomicBool::new(false),
        calls: AtomicUsize::new(0),
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = Config {
        ip_salt: "faults".into(),
        ..Config::default()
    };
    tokio::spawn(needhave::native::serve::serve(
        listener,
        store.clone(),
        config,
        needhave::native::serve::Policy::default(),
        async {
            let _ = stopped.await;
        },
    ));
    (store, addr, stop)
}

fn assert_internal(a: &Answer) {
    assert_eq!(a.status, 500);
    assert_eq!(a.json(), json!({"error": "internal"}));
    assert_eq!(
        a.headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    let text = String::from_utf8_lossy(&a.body);
    assert!(
        !text.contains("fire") && !text.contains("panicked"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_panic_is_a_500_and_the_server_lives_on() {
    let (store, addr, _stop) = serve_faulty().await;
    let ip = Ipv4Addr::new(127, 0, 0, 1);
    let mut c = connect(addr, ip).await.expect("connect");
    let before = c.send("GET", "/posts", None).await.expect("list");
    assert_eq!(before.status, 200);

    store.panic.store(true, Ordering::SeqCst);
    let listed = c
        .send("GET", "/posts", None)
        .await
        .expect("answer, not a reset");
    assert_internal(&listed);
    // A POST answer after a panic still may not be cached.
    let created = c
        .send(
            "POST",
            "/posts",
            Some(json!({"kind": "need", "note": "during a panic"})),
        )
        .await
        .expect("same connection still answers");
    assert_internal(&created);
    assert_eq!(
        created
            .headers
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("no-store")
    );
    // Routes that do not touch the store are unaffected meanwhile.
    let home = c.send("GET", "/", None).await.expect("home");
    assert_eq!(home.status, 200);

    // Many panics at once, on fresh connections: every one a 500.
    let mut tasks = Vec::new();
    for i in 0..16u8 {
        tasks.push(tokio::spawn(async move {
            let mut c = connect(addr, Ipv4Addr::new(127, 9, 0, i + 1))
                .await
                .expect("connect");
            c.send("GET", "/posts", None).await.expect("answer").status
        }));
    }
    for t in tasks {
        assert_eq!(t.await.expect("task"), 500);
    }

    // And the server is whole afterwards, on the old connection and a new one.
    store.panic.store(false, Ordering::SeqCst);
    let after = c
        .send(
            "POST",
            "/posts",
            Some(json!({"kind": "have", "note": "after the panics"})),
        )
        .await
        .expect("old connection");
    assert_eq!(after.status, 201, "{:?}", after.body);
    let mut fresh = connect(addr, ip).await.expect("new connection");
    let list = fresh.send("GET", "/posts", None).await.expect("list");
    assert_eq!(list.status, 200);
    assert_eq!(list.json()["posts"][0]["note"], "after the panics");
    assert!(store.calls.load(Ordering::SeqCst) >= 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_failure_is_a_500_that_leaks_nothing() {
    let (store, addr, _stop) = serve_faulty().await;
    store.fail.store(true, Ordering::SeqCst);
    let mut c = connect(addr, Ipv4Addr::new(127, 0, 0, 1))
        .await
        .expect("connect");
    let id = "0123456789abcdef0123456789abcdef";
    let calls: [(&str, String, Option<Value>); 5] = [
        ("GET", "/posts".into(), None),
        (
            "POST",
            "/posts".into(),
            Some(json!({"kind": "need", "note": "n"})),
        ),
        (
            "POST",
            format!("/posts/{id}/messages"),
            Some(json!({"text": "t"})),
        ),
        (
            "POST",
            "/threads".into(),
            Some(json!({"thread_key": "k".repeat(64)})),
        ),
        (
            "POST",
            "/mcp".into(),
            Some(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": {"name": "list_posts", "arguments": {}}})),
        ),
    ];
    for (method, path, body) in calls {
        let a = c.send(method, &path, body).await.expect("answer");
        let text = String::from_utf8_lossy(&a.body).into_owned();
        assert!(!text.contains("fire"), "{method} {path} leaked: {text}");
        if path == "/mcp" {
            // A tool whose call failed: an isError result, not a transport error.
            assert_eq!(a.status, 200, "{text}");
            assert_eq!(a.json()["result"]["isError"], true, "{text}");
        } else {
            assert_internal(&a);
        }
    }
}

// ---------------------------------------------------------------- kill -9

use common::Owned as Serve;

impl Serve {
    fn start(db: &str) -> Serve {
        Serve::spawn("127.0.0.1:0", db, &[])
    }
}

/// An id answered 201, what it is, and the address that wrote it.
type Written = (String, &'static str, Ipv4Addr);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_write_loses_no_answered_write() {
    let dir = common::scratch("faults");
    let db = dir.join("crash.db").to_string_lossy().into_owned();
    let server = Serve::start(&db);
    let addr = server.addr;

    // 16 writers, each on its own address: create a post, answer it, 10
    // times, then the next address. What was answered 201 goes in `said`.
    let said: Arc<Mutex<Vec<Written>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut writers = Vec::new();
    for w in 0..16u32 {
        let said = said.clone();
        let stop = stop.clone();
        writers.push(tokio::spawn(async move {
            let mut n = 0u32;
            'addresses: while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                let ip = Ipv4Addr::new(127, 20, w as u8, (n / 10 % 250) as u8 + 1);
                let Ok(mut c) = connect(addr, ip).await else {
                    break;
                };
                for _ in 0..10 {
                    n += 1;
                    let note = format!("crash writer {w} post {n}");
                    let Ok(a) = c
                        .send(
                            "POST",
                            "/posts",
                            Some(json!({"kind": "need", "note": note})),
                        )
                        .await
                    else {
                        break 'addresses;
                    };
                    assert_eq!(a.status, 201, "{:?}", a.body);
                    let id = a.json()["id"].as_str().unwrap_or_default().to_string();
                    said.lock().unwrap().push((id.clone(), "post", ip));
                    let Ok(a) = c
                        .send(
                            "POST",
                            &format!("/posts/{id}/messages"),
                            Some(json!({"text": "first"})),
                        )
                        .await
                    else {
                        break 'addresses;
                    };
                    assert_eq!(a.status, 201, "{:?}", a.body);
                    let mid = a.json()["id"].as_str().unwrap_or_default().to_string();
                    said.lock().unwrap().push((mid, "first", ip));
                }
            }
        }));
    }
    // Let the writes run, then kill -9 in the middle of them.
    let started = Instant::now();
    while said.lock().unwrap().len() < 300 && started.elapsed() < Duration::from_secs(15) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::SeqCst);
    drop(server); // SIGKILL
    for w in writers {
        w.await.expect("writer");
    }
    let said = said.lock().unwrap().clone();
    assert!(said.len() >= 100, "only {} writes answered", said.len());

    // Restart on the same file.
    let server = Serve::start(&db);
    let mut c = connect(server.addr, Ipv4Addr::new(127, 0, 0, 1))
        .await
        .expect("connect after restart");
    for (id, what, _) in said.iter().filter(|(_, w, _)| *w == "post") {
        let a = c
            .send("GET", &format!("/posts/{id}"), None)
            .await
            .expect("get");
        assert_eq!(
            a.status, 200,
            "{what} {id} answered 201 before the kill is gone"
        );
    }
    // The limit survives the crash: an address that made 10 posts gets 429.
    let full = said
        .iter()
        .filter(|(_, w, _)| *w == "post")
        .map(|(_, _, ip)| *ip)
        .find(|ip| {
            said.iter()
                .filter(|(_, w, i)| *w == "post" && i == ip)
                .count()
                == 10
        })
        .expect("an address with 10 posts");
    let mut c = connect(server.addr, full).await.expect("connect");
    let a = c
        .send(
            "POST",
            "/posts",
            Some(json!({"kind": "have", "note": "one more after the crash"})),
        )
        .await
        .expect("create");
    assert_eq!(
        (a.status, a.json()),
        (429, json!({"error": "rate_limited"}))
    );
    drop(server);

    let conn = rusqlite::Connection::open(&db).expect("open");
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(ok, "ok");
    for (id, what, _) in &said {
        let sql = if *what == "post" {
            "SELECT count(*) FROM posts WHERE id = ?1"
        } else {
            "SELECT count(*) FROM messages WHERE id = ?1 AND role = 'first'"
        };
        let n: i64 = conn.query_row(sql, [id], |r| r.get(0)).expect("count");
        assert_eq!(n, 1, "{what} {id} answered 201 is not in the file");
    }
    let over: i64 = conn
        .query_row(
            "SELECT count(*) FROM (SELECT ip_hash FROM posts GROUP BY ip_hash HAVING count(*) > 10)",
            [],
            |r| r.get(0),
        )
        .expect("limit");
    assert_eq!(over, 0, "an IP has more than 10 posts");
    drop(conn);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A harness's server (`--exit-with-stdin`) still stops on SIGTERM while
/// its stdin stays open: the blocking stdin watch must not hold the exit.
#[test]
fn sigterm_stops_a_server_whose_stdin_is_open() {
    let mut server = Serve::start(":memory:");
    common::signal(&server.child, "TERM");
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(15) {
        if let Ok(Some(status)) = server.child.try_wait() {
            // Exit 0 after a graceful stop, or by the signal itself if it
            // came before the handler was installed: either way, it exits.
            use std::os::unix::process::ExitStatusExt;
            assert!(status.success() || status.signal() == Some(15), "{status}");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("needhave serve --exit-with-stdin ignored SIGTERM for 15 s");
}
