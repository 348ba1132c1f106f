//! `GET /posts` from the memo, answered before the shared request is made
//! (`kept_list` in `native/serve.rs`), against the same request through
//! the shared pipeline: two servers on one store, one of them with the
//! memo's path off, must answer every request byte for byte alike (the
//! `date` header aside), whether the memo's path takes it or hands it on.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::local;
use needhave::config::Config;
use needhave::native::serve::{serve, Policy};
use needhave::store::sqlite::SqliteStore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn start(store: Arc<SqliteStore>, general_only: bool) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let config = Config {
        ip_salt: "kept-list".into(),
        allowed_origins: vec!["https://app.example".into()],
        ..Config::default()
    };
    let policy = Policy {
        general_only,
        ..Policy::default()
    };
    tokio::spawn(serve(
        listener,
        store,
        config,
        policy,
        std::future::pending(),
    ));
    addr
}

/// The raw answer to `request` on a connection of its own, without its
/// `date` line; read to its end (by `content-length`, none for a `HEAD` or
/// a 304) or to the connection's close.
async fn exchange(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(request).await.expect("write");
    let head_only = request.starts_with(b"HEAD ");
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).to_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            let length = if head_only || head.starts_with("http/1.1 304") {
                0
            } else {
                length
            };
            if raw.len() >= end + 4 + length {
                break;
            }
        }
        let read = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf));
        match read.await.expect("an answer within 10 s") {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    let text = raw;
    let mut out = Vec::new();
    let mut rest = &text[..];
    let mut in_head = true;
    while in_head {
        let Some(end) = rest.windows(2).position(|w| w == b"\r\n") else {
            break;
        };
        let line = &rest[..end + 2];
        in_head = end > 0;
        if !line.to_ascii_lowercase().starts_with(b"date:") {
            out.extend_from_slice(line);
        }
        rest = &rest[end + 2..];
    }
    out.extend_from_slice(rest);
    out
}

fn request(method: &str, target: &str, headers: &[&str], body: &str) -> Vec<u8> {
    let mut r = format!("{method} {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n");
    for h in headers {
        r.push_str(h);
        r.push_str("\r\n");
    }
    if !body.is_empty() {
        r.push_str(&format!("content-length: {}\r\n", body.len()));
    }
    r.push_str("\r\n");
    r.push_str(body);
    r.into_bytes()
}

fn etag(answer: &[u8]) -> String {
    String::from_utf8_lossy(answer)
        .lines()
        .find_map(|l| l.strip_prefix("etag: ").map(str::to_string))
        .expect("an etag")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memo_path_answers_as_the_shared_pipeline_does() {
    let store = Arc::new(SqliteStore::open(":memory:").expect("store"));
    let fast = start(store.clone(), false).await;
    let general = start(store.clone(), true).await;
    let post = |n: usize| {
        request(
            "POST",
            "/posts",
            &["content-type: application/json"],
            &format!(r#"{{"kind":"need","note":"a bike for the {n}th ride"}}"#),
        )
    };
    for n in 0..3 {
        let created = exchange(general, &post(n)).await;
        assert!(created.starts_with(b"HTTP/1.1 201 "), "{created:?}");
    }
    let bare = request("GET", "/posts", &[], "");
    // Once through the shared pipeline, which keeps the list in the memo.
    let first = exchange(fast, &bare).await;
    assert!(first.starts_with(b"HTTP/1.1 200 "));
    let tag = etag(&first);
    let weak = format!("W/{tag}");
    let inner = tag.trim_matches('"');
    // `p<posts>-<ends>-<expired>`: one post less is the list before.
    let (posts, rest) = inner[1..].split_once('-').unwrap();
    let stale = format!("\"p{}-{rest}\"", posts.parse::<i64>().unwrap() - 1);
    let padded = format!("\"p0{}\"", &inner[1..]);
    let listed = format!("\"x\", {stale} ,{weak}");
    let inm = |t: &str| format!("if-none-match: {t}");
    // One past the cap of 64 headers (with `host`): 431.
    let too_many: Vec<String> = (0..64).map(|i| format!("x-h{i}: {i}")).collect();
    let many: Vec<&str> = too_many.iter().map(String::as_str).collect();
    let cases: Vec<Vec<u8>> = vec![
        bare.clone(),
        request("GET", "/posts?", &[], ""),
        request("GET", "/posts?kind=", &[], ""),
        request("GET", "/posts?limit=100", &[], ""),
        request("GET", "/posts/", &[], ""),
        request("GET", "/posts#top", &[], ""),
        request("GET", "http://127.0.0.1/posts", &[], ""),
        request("HEAD", "/posts", &[], ""),
        request("OPTIONS", "/posts", &["origin: https://app.example"], ""),
        request("GET", "/posts", &["origin: https://evil.example"], ""),
        request("GET", "/posts", &["origin: https://app.example"], ""),
        request("GET", "/posts", &["host: evil.example"], ""),
        request("GET", "/posts", &[&inm(&tag)], ""),
        request("GET", "/posts", &[&inm(&weak)], ""),
        request("GET", "/posts", &[&inm(&listed)], ""),
        request("GET", "/posts", &[&inm("*")], ""),
        request("GET", "/posts", &[&inm(&stale)], ""),
        request("GET", "/posts", &[&inm(&padded)], ""),
        request("GET", "/posts", &[&inm(&stale), &inm(&tag)], ""),
        request(
            "GET",
            "/posts",
            &[&inm(&tag), "origin: https://evil.example"],
            "",
        ),
        request("GET", "/posts", &["if-none-match: \"p1\u{e9}\""], ""),
        request("GET", "/posts", &["x-d1-bookmark: 0000"], ""),
        request("GET", "/posts", &["connection: close"], ""),
        request("GET", "/posts", &many, ""),
        request("GET", "/posts", &[], "{}"),
    ];
    for case in &cases {
        let a = exchange(fast, case).await;
        let b = exchange(general, case).await;
        assert_eq!(
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b),
            "{}",
            String::from_utf8_lossy(case)
        );
        assert!(!a.is_empty(), "{}", String::from_utf8_lossy(case));
    }
    // A write moves the list: the next answer is the new list, on both.
    exchange(general, &post(3)).await;
    for case in [&bare, &request("GET", "/posts", &[&inm(&tag)], "")] {
        let a = exchange(fast, case).await;
        let b = exchange(general, case).await;
        assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
        assert!(a.starts_with(b"HTTP/1.1 200 "));
        assert_ne!(etag(&a), tag);
    }
}

/// A server whose clients all hold the current list's tag (a restart under
/// watchers): the first 304 keeps the list, and the ones after it make no
/// round trip, on the memo's path or not.
#[tokio::test]
async fn a_304_on_an_empty_memo_keeps_the_list() {
    use needhave::store::testing::Counting;
    use needhave::store::Store;
    let store = Arc::new(Counting::new(SqliteStore::open(":memory:").unwrap()));
    let ctx = local::ctx(store.clone(), local::salted("kept-list"), "10.0.0.1");
    let create = serde_json::json!({"kind": "have", "note": "a kept list"});
    let created = local::call(&ctx, "POST", "/posts", Some(&create)).await;
    assert_eq!(created.status, 201);
    // The tag of the one post's list, as a client kept it from before.
    let tag = "\"p1-0-0\"";
    assert!(store.inner().memo().unwrap().get("posts").is_none());
    let mut held = local::request("GET", "/posts", None);
    held.headers.push(("if-none-match".into(), tag.into()));
    let first = needhave::handle(&held, &ctx).await;
    assert_eq!((first.status, first.header("etag")), (304, Some(tag)));
    assert!(first.body.is_empty());
    assert!(store.inner().memo().unwrap().get("posts").is_some());
    let before = store.trips();
    let again = needhave::handle(&held, &ctx).await;
    assert_eq!(again, first);
    assert_eq!(store.trips(), before, "a round trip for a kept list");
    let ok = local::call(&ctx, "GET", "/posts", None).await;
    assert_eq!((ok.status, ok.header("etag")), (200, Some(tag)));
}
