//! Read replicas as the Worker uses them, checked natively with a fake D1.
//!
//! The fake has a primary and a replica that lags behind it until a session
//! asks for a bookmark the replica has not reached (as D1 waits for a
//! replica to catch up). It records where every batch's session started.
//! Through the real dispatcher and `store::session::Sessions` (the very code
//! the Worker runs over D1), every route of `ROUTES` is called and the
//! session of each of its calls checked against what the contract needs:
//! public reads may start anywhere, every write and every read behind a
//! secret or a key starts at the primary. Then the bookmark round trip:
//! the answer's `x-d1-bookmark`, sent back, makes the next read see the
//! write, including across the steps of one MCP request.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use common::local;
use needhave::http::{Request, Response};
use needhave::platform::BoxFuture;
use needhave::routes::ROUTES;
use needhave::store::session::{SessionAnswer, SessionDb, Sessions, BOOKMARK_HEADER};
use needhave::store::sqlite::SqliteStore;
use needhave::store::{Consistency, Statement, Store, StoreResult};
use needhave::Config;
use serde_json::{json, Value as Json};

/// A D1 with one replica. Bookmarks are the number of write batches the
/// primary has committed, as 8 hex digits.
struct FakeD1 {
    primary: SqliteStore,
    replica: SqliteStore,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Every batch that may have written, in commit order.
    log: Vec<Vec<Statement>>,
    /// How many of `log` the replica has applied.
    applied: usize,
    /// Where each batch's session started, in call order.
    starts: Vec<String>,
}

fn bookmark(n: usize) -> String {
    format!("{n:08x}")
}

impl FakeD1 {
    fn new() -> Arc<Self> {
        Arc::new(FakeD1 {
            primary: SqliteStore::open(":memory:").unwrap(),
            replica: SqliteStore::open(":memory:").unwrap(),
            state: Mutex::new(State::default()),
        })
    }

    fn starts(&self) -> Vec<String> {
        std::mem::take(&mut self.state.lock().unwrap().starts)
    }

    /// Brings the replica up to `n` write batches.
    async fn catch_up(&self, n: usize) {
        loop {
            let next = {
                let s = self.state.lock().unwrap();
                if s.applied >= n.min(s.log.len()) {
                    return;
                }
                s.log[s.applied].clone()
            };
            self.replica.batch(next).await.unwrap();
            self.state.lock().unwrap().applied += 1;
        }
    }
}

/// One request's handle on the shared fake (each request makes its own
/// `Sessions`, as the Worker does).
struct Handle(Arc<FakeD1>);

impl SessionDb for Handle {
    fn batch_from<'a>(
        &'a self,
        start: &'a str,
        statements: Vec<Statement>,
    ) -> BoxFuture<'a, StoreResult<SessionAnswer>> {
        Box::pin(async move {
            let d1 = &self.0;
            d1.state.lock().unwrap().starts.push(start.to_string());
            let writes = statements.iter().any(|s| s.sql.starts_with("INSERT"));
            if writes || start == "first-primary" {
                // D1 sends writes to the primary whatever the session.
                let rows = d1.primary.batch(statements.clone()).await?;
                let mut s = d1.state.lock().unwrap();
                if writes {
                    s.log.push(statements);
                }
                return Ok((rows, Some(bookmark(s.log.len()))));
            }
            if start != "first-unconstrained" {
                let wanted = usize::from_str_radix(start, 16).expect("a bookmark of ours");
                d1.catch_up(wanted).await;
            }
            let rows = d1.replica.batch(statements).await?;
            let applied = d1.state.lock().unwrap().applied;
            Ok((rows, Some(bookmark(applied))))
        })
    }
}

struct List {
    d1: Arc<FakeD1>,
    config: Arc<Config>,
}

impl List {
    fn new() -> Self {
        List {
            d1: FakeD1::new(),
            config: local::salted("sessions-test"),
        }
    }

    async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<Json>,
        bookmark: Option<&str>,
    ) -> Response {
        let mut req = local::request(method, path, body.as_ref());
        if let Some(b) = bookmark {
            req.headers.push((BOOKMARK_HEADER.into(), b.into()));
        }
        let store = Arc::new(Sessions::new(Handle(self.d1.clone())));
        let ctx = local::ctx(store, self.config.clone(), "10.9.0.1");
        needhave::handle(&req, &ctx).await
    }

    async fn json(&self, method: &str, path: &str, body: Option<Json>) -> Json {
        let r = self.call(method, path, body, None).await;
        assert!(r.status < 300, "{method} {path}: {}", r.status);
        serde_json::from_slice(&r.body).unwrap()
    }
}

/// What the contract needs of each route that reads or writes the list.
fn expected(method: &str, path: &str) -> Option<Consistency> {
    use Consistency::*;
    Some(match (method, path) {
        ("GET", "/posts" | "/posts/:id" | "/posts/:id/messages") => Replica,
        ("POST", "/posts" | "/posts/:id/messages" | "/threads/messages") => Primary,
        ("POST", "/posts/:id/accept") => Primary,
        // Reads behind a secret or a thread key.
        ("POST", "/posts/:id/waiting" | "/messages/:id/thread" | "/threads") => Primary,
        _ => return None,
    })
}

fn start_of(c: Consistency) -> &'static str {
    match c {
        Consistency::Replica => "first-unconstrained",
        Consistency::Primary => "first-primary",
    }
}

#[tokio::test]
async fn every_route_reads_where_the_table_says() {
    let list = List::new();
    let post = list
        .json(
            "POST",
            "/posts",
            Some(json!({"kind": "need", "note": "sessions: a post"})),
        )
        .await;
    let (post_id, post_secret) = (
        post["id"].as_str().unwrap(),
        post["secret"].as_str().unwrap(),
    );
    let reply = |t: &str| json!({"text": t});
    let first = list
        .json(
            "POST",
            &format!("/posts/{post_id}/messages"),
            Some(reply("one")),
        )
        .await;
    let second = list
        .json(
            "POST",
            &format!("/posts/{post_id}/messages"),
            Some(reply("two")),
        )
        .await;
    let accepted = list
        .json(
            "POST",
            &format!("/posts/{post_id}/accept"),
            Some(json!({"secret": post_secret, "message_id": first["id"]})),
        )
        .await;
    let thread_key = accepted["thread_key"].as_str().unwrap();
    list.d1.starts();

    let mut checked = BTreeMap::new();
    for route in ROUTES {
        // A request that gets as far as the store: real ids, real secrets.
        let path = route.path.replace(
            ":id",
            if route.path.starts_with("/messages") {
                first["id"].as_str().unwrap()
            } else {
                post_id
            },
        );
        let body = match (route.method, route.path) {
            ("POST", "/posts") => json!({"kind": "have", "note": "sessions: another"}),
            ("POST", "/posts/:id/messages") => reply("three"),
            ("POST", "/posts/:id/waiting") => json!({"secret": post_secret}),
            ("POST", "/posts/:id/accept") => {
                json!({"secret": post_secret, "message_id": second["id"]})
            }
            ("POST", "/posts/:id/close") => json!({"secret": post_secret}),
            ("POST", "/posts/:id/report") => json!({"reason": "spam"}),
            ("POST", "/messages/:id/thread") => json!({"secret": first["secret"]}),
            ("POST", "/threads") => json!({"thread_key": thread_key}),
            ("POST", "/threads/messages") => json!({"thread_key": thread_key, "text": "later"}),
            ("POST", "/mcp") => json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            _ => json!({}),
        };
        let body = (route.method != "GET").then_some(body);
        // The replica has seen everything so far: a replica read finds it.
        list.d1.catch_up(usize::MAX).await;
        let r = list.call(route.method, &path, body, None).await;
        assert!(
            r.status < 300,
            "{} {}: {}",
            route.method,
            route.path,
            r.status
        );
        let starts = list.d1.starts();
        // Whatever a route does, its calls start where its line says.
        let want = start_of(route.consistency);
        assert!(
            starts.iter().all(|s| s == want),
            "{} {} declares {:?} but started {starts:?}",
            route.method,
            route.path,
            route.consistency
        );
        if let Some(need) = expected(route.method, route.path) {
            assert_eq!(
                route.consistency, need,
                "{} {} in the table",
                route.method, route.path
            );
            assert!(
                !starts.is_empty(),
                "{} {} made no call",
                route.method,
                route.path
            );
            checked.insert((route.method, route.path), starts.len());
        }
        if route.method != "GET" {
            assert_eq!(
                route.consistency,
                Consistency::Primary,
                "{} {}: only a GET may read a replica",
                route.method,
                route.path
            );
        }
    }
    assert_eq!(
        checked.len(),
        10,
        "every contract route that reads or writes: {checked:?}"
    );
}

#[tokio::test]
async fn a_bookmark_sent_back_reads_the_write() {
    let list = List::new();
    let created = list
        .call(
            "POST",
            "/posts",
            Some(json!({"kind": "have", "note": "sessions: fresh"})),
            None,
        )
        .await;
    assert_eq!(created.status, 201);
    let mark = created
        .header(BOOKMARK_HEADER)
        .expect("a bookmark")
        .to_string();
    let id = local::json(&created)["id"].as_str().unwrap().to_string();
    assert_eq!(list.d1.starts(), ["first-primary"]);

    // Without it: the nearest replica, which has not seen the post yet.
    let stale = list.call("GET", &format!("/posts/{id}"), None, None).await;
    assert_eq!(stale.status, 404, "the fake's replica lags");
    assert_eq!(list.d1.starts(), ["first-unconstrained"]);

    // With it: at least that fresh.
    let fresh = list
        .call("GET", &format!("/posts/{id}"), None, Some(&mark))
        .await;
    assert_eq!(fresh.status, 200);
    assert_eq!(list.d1.starts(), vec![mark.clone()]);
    assert_eq!(fresh.header(BOOKMARK_HEADER), Some(mark.as_str()));
    let listed = list.call("GET", "/posts", None, Some(&mark)).await;
    assert!(local::json(&listed)["posts"]
        .to_string()
        .contains("sessions: fresh"));
    list.d1.starts();

    // A write reads the primary whatever bookmark comes with it, and
    // answers a newer one.
    let again = list
        .call(
            "POST",
            "/posts",
            Some(json!({"kind": "need", "note": "sessions: later"})),
            Some(&mark),
        )
        .await;
    assert_eq!(list.d1.starts(), ["first-primary"]);
    let newer = again.header(BOOKMARK_HEADER).unwrap();
    assert!(newer > mark.as_str(), "{newer} after {mark}");

    // A call that queries nothing hands the client's bookmark back.
    let page = list.call("GET", "/", None, Some(&mark)).await;
    assert_eq!(page.header(BOOKMARK_HEADER), Some(mark.as_str()));
    assert!(list.d1.starts().is_empty());

    // What cannot be a bookmark is not passed on to the database.
    for junk in ["first-primary", "not a bookmark", ""] {
        let r = list.call("GET", "/posts", None, Some(junk)).await;
        assert_eq!(r.status, 200);
        assert_eq!(list.d1.starts(), ["first-unconstrained"], "{junk:?}");
    }
}

/// One MCP request runs several routes: a read after a write in the same
/// request starts at the write's bookmark, and the answer carries the newest.
#[tokio::test]
async fn mcp_steps_carry_the_bookmark() {
    let list = List::new();
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "create_need", "arguments": {"note": "sessions: over mcp"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "list_posts", "arguments": {}}},
    ]);
    let r = list.call("POST", "/mcp", Some(batch), None).await;
    assert_eq!(r.status, 200);
    let starts = list.d1.starts();
    assert_eq!(
        starts,
        ["first-primary", "00000001"],
        "the read starts at the write"
    );
    let answers = local::json(&r);
    let listed = answers[1]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(listed.contains("sessions: over mcp"), "{listed}");
    assert_eq!(r.header(BOOKMARK_HEADER), Some("00000001"));

    // A respondent's read_thread: the callback, then the thread, both on
    // the primary.
    let post = list
        .json(
            "POST",
            "/posts",
            Some(json!({"kind": "have", "note": "sessions: thread"})),
        )
        .await;
    let id = post["id"].as_str().unwrap();
    let first = list
        .json(
            "POST",
            &format!("/posts/{id}/messages"),
            Some(json!({"text": "hi"})),
        )
        .await;
    list.json(
        "POST",
        &format!("/posts/{id}/accept"),
        Some(json!({"secret": post["secret"], "message_id": first["id"]})),
    )
    .await;
    list.d1.starts();
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "read_thread",
                   "arguments": {"message_id": first["id"], "secret": first["secret"]}}});
    let r = list.call("POST", "/mcp", Some(call), None).await;
    assert_eq!(r.status, 200);
    assert_eq!(list.d1.starts(), ["first-primary", "first-primary"]);
    assert_eq!(local::json(&r)["result"]["isError"], false);
}

/// SQLite has one copy: no sessions, no bookmark header.
#[tokio::test]
async fn sqlite_ignores_consistency() {
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(":memory:").unwrap());
    assert!(store.session(Consistency::Replica).is_none());
    let ctx = local::ctx(store, local::salted("s"), "10.0.0.1");
    let mut req = Request::new("GET", "/posts");
    req.headers
        .push((BOOKMARK_HEADER.into(), "00000001".into()));
    let r = needhave::handle(&req, &ctx).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header(BOOKMARK_HEADER), None);
}
