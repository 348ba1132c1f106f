//! An expiry happens with time, not with a write: the list, its pages,
//! its feed, their tags, the native server's kept list and every
//! `Cache-Control` follow the clock. In process, with the time of each
//! call chosen (`Ctx::now_ms`), on a store that vouches for its kept list
//! and on one that does not (D1's case); then `needhave serve` restarted
//! on its file "later" (`NEEDHAVE_TEST_NOW_OFFSET_S`); then the kept
//! list's own path of the native server, with the process's clock moved.

mod common;

use std::sync::Arc;

use common::*;
use needhave::http::{Request, Response};
use needhave::store::sqlite::SqliteStore;
use needhave::store::testing::Counting;
use needhave::store::Store;
use needhave::{Config, Ctx};
use serde_json::{json, Value};

/// A list in this process, each call at a time of its choosing.
struct List {
    store: Arc<dyn Store>,
    config: Arc<Config>,
}

impl List {
    fn new(store: Arc<dyn Store>) -> List {
        List {
            store,
            config: Arc::new(Config {
                ip_salt: "life-time".into(),
                ..Config::default()
            }),
        }
    }

    async fn call(
        &self,
        at: i64,
        method: &str,
        path: &str,
        body: Option<Value>,
        inm: Option<&str>,
    ) -> Response {
        let mut req = Request::new(method, path);
        if let Some(b) = body {
            req.body = b.to_string().into_bytes();
        }
        if let Some(tag) = inm {
            req.headers.push(("if-none-match".into(), tag.into()));
        }
        let ip = format!("10.1.{}.{}", at % 200, at % 97);
        let mut ctx = Ctx::new(
            &needhave::routes::API,
            self.store.clone(),
            self.config.clone(),
            &ip,
        );
        ctx.now_ms = at;
        needhave::handle(&req, &ctx).await
    }

    async fn json(&self, at: i64, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let r = self.call(at, method, path, body, None).await;
        (
            r.status,
            serde_json::from_slice(&r.body).unwrap_or(Value::Null),
        )
    }
}

fn ids(list: &Value) -> Vec<&str> {
    list["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect()
}

/// A post that expires in 300 s and one that never does, created at `t0`;
/// then the list before, near and at the expiry.
async fn expiry_at(list: &List) {
    let t0 = needhave::platform::now_ms();
    let (status, a) = list
        .json(
            t0,
            "POST",
            "/posts",
            Some(json!({"kind": "need", "note": "ends in five minutes", "expires_in": 300})),
        )
        .await;
    assert_eq!(status, 201, "{a}");
    let (_, b) = list
        .json(
            t0,
            "POST",
            "/posts",
            Some(json!({"kind": "need", "note": "stays a while"})),
        )
        .await;
    let (a_id, b_id) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());
    let ends = t0 + 300_000;
    assert_eq!(a["expires_at"], needhave::platform::rfc3339(ends));

    // Open: listed, kept for the usual few seconds.
    let first = list.call(t0, "GET", "/posts", None, None).await;
    let page: Value = serde_json::from_slice(&first.body).unwrap();
    assert_eq!(ids(&page), [b_id, a_id]);
    assert_eq!(first.header("cache-control"), Some("public, max-age=5"));
    let tag = first.header("etag").unwrap().to_string();
    let read = list
        .call(t0, "GET", &format!("/posts/{a_id}"), None, None)
        .await;
    assert_eq!(read.header("cache-control"), Some("public, max-age=60"));
    let never = list
        .call(t0, "GET", &format!("/posts/{b_id}"), None, None)
        .await;
    assert_eq!(never.header("cache-control"), Some("public, max-age=60"));

    // Two seconds before: the same list, kept no longer than the expiry.
    let near = ends - 2_000;
    let r = list.call(near, "GET", "/posts", None, Some(&tag)).await;
    assert_eq!(
        (r.status, r.header("cache-control")),
        (304, Some("public, max-age=2"))
    );
    let r = list.call(near, "GET", "/posts", None, None).await;
    assert_eq!(
        (r.header("etag"), r.header("cache-control")),
        (Some(tag.as_str()), Some("public, max-age=2"))
    );
    for path in ["/posts?kind=need", "/posts.atom"] {
        let r = list.call(near, "GET", path, None, None).await;
        assert_eq!(
            r.header("cache-control"),
            Some("public, max-age=2"),
            "{path}"
        );
    }
    let r = list
        .call(near, "GET", &format!("/posts/{a_id}"), None, None)
        .await;
    assert_eq!(r.header("cache-control"), Some("public, max-age=2"));

    // At the expiry: out of the list, its pages and its feed, its tag moved
    // (the kept list is not served past it), still read by id.
    let r = list.call(ends, "GET", "/posts", None, Some(&tag)).await;
    assert_eq!(r.status, 200, "no 304 for a list that changed");
    assert_ne!(r.header("etag"), Some(tag.as_str()));
    assert_eq!(r.header("cache-control"), Some("public, max-age=5"));
    let page: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(ids(&page), [b_id]);
    let new_tag = r.header("etag").unwrap().to_string();
    let r = list
        .call(ends + 1, "GET", "/posts", None, Some(&new_tag))
        .await;
    assert_eq!(r.status, 304, "an expiry moves the tag once");
    let (_, kind) = list.json(ends, "GET", "/posts?kind=need", None).await;
    assert_eq!(ids(&kind), [b_id]);
    let feed = list.call(ends, "GET", "/posts.atom", None, None).await;
    let feed = String::from_utf8(feed.body.to_vec()).unwrap();
    assert!(feed.contains(b_id) && !feed.contains(a_id));
    let (status, read) = list
        .json(ends, "GET", &format!("/posts/{a_id}"), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        read,
        json!({"id": a_id, "kind": "need", "note": "ends in five minutes",
            "created_at": a["created_at"], "status": "expired",
            "expires_at": a["expires_at"], "ended_at": a["expires_at"]})
    );
    let r = list
        .call(ends, "GET", &format!("/posts/{a_id}"), None, None)
        .await;
    assert_eq!(r.header("cache-control"), Some("public, max-age=60"));

    // Ended: no new first reply, no close; its author still reads and
    // accepts; a report is taken.
    let (status, reply) = list
        .json(
            t0 + 1,
            "POST",
            &format!("/posts/{a_id}/messages"),
            Some(json!({"text": "in time"})),
        )
        .await;
    assert_eq!(status, 201, "{reply}");
    let (status, v) = list
        .json(
            ends,
            "POST",
            &format!("/posts/{a_id}/messages"),
            Some(json!({"text": "late"})),
        )
        .await;
    assert_eq!((status, v), (409, json!({"error": "ended"})));
    let secret = a["secret"].as_str().unwrap();
    let (status, v) = list
        .json(
            ends,
            "POST",
            &format!("/posts/{a_id}/close"),
            Some(json!({"secret": secret})),
        )
        .await;
    assert_eq!((status, v), (409, json!({"error": "ended"})));
    let (status, waiting) = list
        .json(
            ends,
            "POST",
            &format!("/posts/{a_id}/waiting"),
            Some(json!({"secret": secret})),
        )
        .await;
    assert_eq!(
        (status, waiting["messages"][0]["id"].clone()),
        (200, reply["id"].clone())
    );
    let (status, v) = list
        .json(
            ends,
            "POST",
            &format!("/posts/{a_id}/accept"),
            Some(json!({"secret": secret, "message_id": reply["id"], "close": true})),
        )
        .await;
    assert_eq!(status, 201, "{v}");
    assert_eq!(
        (&v["status"], &v["ended_at"]),
        (&json!("expired"), &a["expires_at"])
    );
    let (status, _) = list
        .json(
            ends,
            "POST",
            &format!("/posts/{a_id}/report"),
            Some(json!({"reason": "spam"})),
        )
        .await;
    assert_eq!(status, 202);
    // A close just before the expiry is the end.
    let (_, c) = list
        .json(
            t0,
            "POST",
            "/posts",
            Some(json!({"kind": "have", "note": "closed in time", "expires_in": 300})),
        )
        .await;
    let c_id = c["id"].as_str().unwrap();
    let (status, closed) = list
        .json(
            ends - 1,
            "POST",
            &format!("/posts/{c_id}/close"),
            Some(json!({"secret": c["secret"]})),
        )
        .await;
    assert_eq!(status, 201);
    let (_, read) = list
        .json(ends + 60_000, "GET", &format!("/posts/{c_id}"), None)
        .await;
    assert_eq!(
        (&read["status"], &read["ended_at"]),
        (&json!("closed"), &closed["ended_at"])
    );
}

/// SQLite in memory: its kept list is vouched for by its own write count,
/// and must not outlive the first expiry it shows.
#[tokio::test]
async fn an_expiry_ends_a_post_on_a_store_that_keeps_the_list() {
    expiry_at(&List::new(Arc::new(SqliteStore::open(":memory:").unwrap()))).await;
}

/// As D1 sees its database: no clock vouches for the kept list; the
/// statement's version holds the latest expiry passed.
#[tokio::test]
async fn an_expiry_ends_a_post_on_a_store_others_write() {
    let store = Counting::written_by_others(SqliteStore::open(":memory:").unwrap());
    expiry_at(&List::new(Arc::new(store))).await;
}

/// `needhave serve` on `db`, with its clock `offset` seconds ahead when
/// given; its stderr piped (the warning). The server exits when its stdin
/// closes.
fn serve_later(db: &str, offset: Option<&str>) -> (std::process::Child, Server) {
    let mut cmd = serve_command("127.0.0.1:0", db);
    cmd.arg("--exit-with-stdin")
        .stderr(std::process::Stdio::piped());
    if let Some(o) = offset {
        cmd.env("NEEDHAVE_TEST_NOW_OFFSET_S", o);
    }
    let (child, url) = start(&mut cmd);
    (child, Server::at(&url))
}

/// Stops a server started by [`serve_later`]: what it logged.
fn stop(mut child: std::process::Child) -> String {
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    stderr_of(&mut child)
}

/// A post that expires in 300 s, seen expired by the same file's server
/// restarted 301 s "later"; one without an expiry is still open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_later_sees_the_post_expired() {
    let dir = scratch("later");
    let db = dir.join("list.db");
    let db = db.to_str().unwrap();
    let (child, server) = serve_later(db, None);
    let client = Client::new();
    let post = |body: Value| {
        let server = &server;
        async move {
            send_to(
                server,
                client.ip,
                "POST",
                "/posts",
                Some(body.to_string().into_bytes()),
                &[],
            )
            .await
        }
    };
    let a = post(json!({"kind": "need", "note": "a bike by friday", "expires_in": 300}))
        .await
        .json();
    let b = post(json!({"kind": "need", "note": "a bike some day"}))
        .await
        .json();
    let log = stop(child);
    assert!(!log.contains("NEEDHAVE_TEST_NOW_OFFSET_S"), "{log}");

    let (child, server) = serve_later(db, Some("301"));
    let get = |path: String| {
        let server = &server;
        async move { send_to(server, client.ip, "GET", &path, None, &[]).await }
    };
    let read = get(format!("/posts/{}", a["id"].as_str().unwrap()))
        .await
        .json();
    assert_eq!(
        (&read["status"], &read["ended_at"]),
        (&json!("expired"), &a["expires_at"])
    );
    let read = get(format!("/posts/{}", b["id"].as_str().unwrap()))
        .await
        .json();
    assert_eq!(read["status"], "open");
    let listed = listed(&get("/posts".into()).await.json());
    assert_eq!(listed, [b["id"].as_str().unwrap()]);
    let r = send_to(
        &server,
        Client::new().ip,
        "POST",
        &format!("/posts/{}/messages", a["id"].as_str().unwrap()),
        Some(br#"{"text":"too late"}"#.to_vec()),
        &[],
    )
    .await;
    r.expect_error(409, "ended");
    // Its clock, for everything: a new post is created 301 s "later".
    let before = needhave::platform::now_ms();
    let c = send_to(
        &server,
        Client::new().ip,
        "POST",
        "/posts",
        Some(br#"{"kind":"have","note":"a later have"}"#.to_vec()),
        &[],
    )
    .await
    .json();
    let created = c["created_at"].as_str().unwrap().to_string();
    let log = stop(child);
    assert!(
        created.as_str() >= needhave::platform::rfc3339(before + 300_000).as_str(),
        "{created}"
    );
    assert!(
        log.contains("WARN") && log.contains("NEEDHAVE_TEST_NOW_OFFSET_S"),
        "a warning says the clock is moved: {log}"
    );
    std::fs::remove_dir_all(dir).ok();
}

/// A clock offset that is not whole seconds is refused at start.
#[test]
fn a_clock_offset_must_be_whole_seconds() {
    let dir = scratch("offset");
    let db = dir.join("list.db");
    for bad in ["abc", "1.5", "300s", "99999999999999999999"] {
        let out = serve_command("127.0.0.1:0", &db)
            .env("NEEDHAVE_TEST_NOW_OFFSET_S", bad)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("NEEDHAVE_TEST_NOW_OFFSET_S") && err.contains(bad),
            "{bad}: {err}"
        );
        assert!(!db.exists(), "{bad}: no file left behind");
    }
    std::fs::remove_dir_all(dir).ok();
}

/// The native server's own path for the kept list (`native::serve`)
/// answers from memory only before the first expiry it shows, and says
/// the usual `Cache-Control` only while that is further than its max-age:
/// with the process's clock moved under it (the one test in this binary
/// that moves it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kept_list_path_follows_the_clock() {
    use needhave::native::serve::{serve, Policy};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let store = Arc::new(SqliteStore::open(":memory:").unwrap());
    let config = Config {
        ip_salt: "kept-path".into(),
        ..Config::default()
    };
    tokio::spawn(serve(
        listener,
        store,
        config,
        Policy::default(),
        std::future::pending(),
    ));
    let server = Server::at(&format!("http://{addr}"));
    let c = Client::new();
    let a = send_to(
        &server,
        c.ip,
        "POST",
        "/posts",
        Some(br#"{"kind":"need","note":"soon gone","expires_in":300}"#.to_vec()),
        &[],
    )
    .await
    .json();
    let a_id = a["id"].as_str().unwrap();
    // Twice: kept by the first, answered from the memory by the second.
    for _ in 0..2 {
        let r = send_to(&server, c.ip, "GET", "/posts", None, &[]).await;
        assert_eq!(listed(&r.json()), [a_id]);
        assert_eq!(r.header("cache-control"), Some("public, max-age=5"));
    }
    needhave::platform::set_clock_offset_s(298);
    let r = send_to(&server, c.ip, "GET", "/posts", None, &[]).await;
    let near = (
        listed(&r.json()),
        r.header("cache-control").map(str::to_string),
    );
    needhave::platform::set_clock_offset_s(300);
    let r = send_to(&server, c.ip, "GET", "/posts", None, &[]).await;
    let at = listed(&r.json());
    needhave::platform::set_clock_offset_s(0);
    assert!(
        near.0 == [a_id]
            && matches!(
                near.1.as_deref(),
                Some("public, max-age=0" | "public, max-age=1" | "public, max-age=2")
            ),
        "{near:?}"
    );
    assert!(at.is_empty(), "the kept list outlived its expiry: {at:?}");
}

/// The ids a search of `q` finds at `at` on any page a reader asks it
/// of: the list, each kind's page, the feed and each kind's feed.
async fn searched(list: &List, at: i64, q: &str) -> Vec<String> {
    let mut found = Vec::new();
    for kind in ["", "kind=need&", "kind=have&"] {
        let (status, page) = list
            .json(at, "GET", &format!("/posts?{kind}q={q}"), None)
            .await;
        assert_eq!(status, 200, "{page}");
        found.extend(ids(&page).into_iter().map(String::from));
        let feed = list
            .call(at, "GET", &format!("/posts.atom?{kind}q={q}"), None, None)
            .await;
        assert_eq!(feed.status, 200);
        let feed = String::from_utf8(feed.body.to_vec()).unwrap();
        found.extend(
            feed.split("/posts/")
                .skip(1)
                .filter_map(|s| s.get(..32))
                .filter(|id| id.bytes().all(|b| b.is_ascii_hexdigit()))
                .map(String::from),
        );
    }
    found.sort();
    found.dedup();
    found
}

/// A post that expires, one its author closes and one the operator
/// removes leave every search at once, whichever part of the index holds
/// their words: while they wait in `words_new`, then once moved (a common
/// word's list in the hot part; a rare word's in the cold part, beside a
/// hot one), until the sweep takes them out of the index. Each on a
/// store that keeps its list and on one that does not.
async fn ended_posts_leave_every_search(store: Arc<dyn Store>, db: &std::path::Path) {
    let list = List::new(store.clone());
    let t0 = needhave::platform::now_ms();
    let mut made = Vec::new();
    for (i, (kind, note, expires)) in [
        ("need", "bicycle wanted expiring1x", Some(300)),
        ("need", "bicycle wanted closing1x", None),
        ("have", "bicycle spare removing1x", None),
        ("have", "bicycle spare staying1x", None),
    ]
    .into_iter()
    .enumerate()
    {
        let mut body = json!({"kind": kind, "note": note});
        if let Some(s) = expires {
            body["expires_in"] = json!(s);
        }
        let (status, v) = list.json(t0 + i as i64, "POST", "/posts", Some(body)).await;
        assert_eq!(status, 201, "{v}");
        made.push(v);
    }
    let id = |i: usize| made[i]["id"].as_str().unwrap().to_string();
    let ends = t0 + 300_000;
    let mut all = (0..4).map(id).collect::<Vec<_>>();
    all.sort();
    assert_eq!(searched(&list, t0 + 10, "bicycle").await, all);
    let (status, v) = list
        .json(
            t0 + 10,
            "POST",
            &format!("/posts/{}/close", id(1)),
            Some(json!({"secret": made[1]["secret"]})),
        )
        .await;
    assert_eq!(status, 201, "{v}");
    let removed = needhave::handlers::life::remove(&*store, &id(2), "a test removes it", t0 + 10)
        .await
        .unwrap();
    assert_eq!(
        removed,
        needhave::handlers::life::Removal::Done(needhave::handlers::life::Removed::Post)
    );
    let staying = vec![id(3)];
    let nothing: Vec<String> = Vec::new();
    // Waiting in words_new: the expiring post until its expiry, the
    // closed and the removed one no longer.
    assert_eq!(searched(&list, ends - 1, "bicycle").await, {
        let mut v = vec![id(0), id(3)];
        v.sort();
        v
    });
    for (at, q, want) in [
        (ends, "bicycle", &staying),
        (ends, "expiring1x", &nothing),
        (ends - 1, "closing1x", &nothing),
        (ends - 1, "removing1x", &nothing),
        (ends, "staying1x", &staying),
    ] {
        assert_eq!(&searched(&list, at, q).await, want, "waiting: {q}");
    }
    // Enough posts that share the word to move all into the index and
    // make the word hot there.
    for n in 0..72i64 {
        let (status, v) = list
            .json(
                t0 + 100 + n,
                "POST",
                "/posts",
                Some(json!({"kind": "need", "note": format!("bicycle filler{n}x")})),
            )
            .await;
        assert_eq!(status, 201, "{v}");
    }
    // Moved: none of the four waits; the word is hot for needs (a list
    // of its own in the hot part), not for haves (the cold part).
    let file = rusqlite::Connection::open(db).unwrap();
    let waiting: i64 = file
        .query_row("SELECT count(*) FROM words_new WHERE post <= 4", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(waiting, 0);
    let is_hot = |p: &str| -> bool {
        file.query_row("SELECT count(*) FROM hot_prefixes WHERE p = ?1", [p], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap()
            > 0
    };
    assert!(is_hot("\u{207f}bicycle") && !is_hot("\u{2b0}bicycle"));
    for (at, q, want) in [
        (ends, "expiring1x", &nothing),
        (ends - 1, "closing1x", &nothing),
        (ends - 1, "removing1x", &nothing),
        (ends, "bicycle expiring1x", &nothing),
        (ends - 1, "bicycle closing1x", &nothing),
        (ends - 1, "bicycle removing1x", &nothing),
        (ends, "staying1x", &staying),
        (ends, "bicycle staying1x", &staying),
        (ends, "spare", &staying),
    ] {
        assert_eq!(&searched(&list, at, q).await, want, "moved: {q}");
    }
    let (_, page) = list
        .json(ends, "GET", "/posts?q=bicycle&limit=100", None)
        .await;
    assert_eq!(ids(&page).len(), 73, "the fillers and the one open post");
    let hot = searched(&list, ends, "bicycle").await;
    assert_eq!(hot.len(), 73);
    for gone in [id(0), id(1), id(2)] {
        assert!(!hot.contains(&gone), "moved, hot: {gone}");
    }
    // Before its expiry, the expiring post is found in both parts.
    assert_eq!(searched(&list, ends - 1, "expiring1x").await, [id(0)]);
    assert!(searched(&list, ends - 1, "bicycle").await.contains(&id(0)));
}

#[tokio::test]
async fn ended_posts_leave_every_search_on_a_store_that_keeps_the_list() {
    let dir = scratch("life-search");
    let db = dir.join("list.db");
    let store = SqliteStore::open(db.to_str().unwrap()).unwrap();
    ended_posts_leave_every_search(Arc::new(store), &db).await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn ended_posts_leave_every_search_on_a_store_others_write() {
    let dir = scratch("life-search");
    let db = dir.join("list.db");
    let store = Counting::written_by_others(SqliteStore::open(db.to_str().unwrap()).unwrap());
    ended_posts_leave_every_search(Arc::new(store), &db).await;
    let _ = std::fs::remove_dir_all(dir);
}
