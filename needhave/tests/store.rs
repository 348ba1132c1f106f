//! In-process checks of how the list uses its store: one round trip per
//! call, no table scans, no secrets or raw IPs at rest, the hour window, and
//! a failing store answered as a clean 500.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use common::local;
use needhave::http::Response;
use needhave::routes::ROUTES;
use needhave::store::sqlite::SqliteStore;
use needhave::store::testing::{Counting, Failing};
use needhave::store::{Store, Value};
use needhave::Config;
use serde_json::{json, Value as Json};

struct List {
    /// Counts round trips and keeps every statement it ran.
    store: Arc<Counting>,
    config: Arc<Config>,
    /// The client IP of `call`.
    ip: Mutex<&'static str>,
}

impl List {
    fn new() -> Self {
        List {
            store: Arc::new(Counting::new(SqliteStore::open(":memory:").unwrap())),
            config: local::salted("test-salt"),
            ip: Mutex::new("10.0.0.1"),
        }
    }

    async fn call_at(
        &self,
        ip: &str,
        now_ms: i64,
        method: &str,
        path: &str,
        body: Option<Json>,
    ) -> Response {
        let ctx = local::ctx_at(self.store.clone(), self.config.clone(), ip, now_ms);
        local::call(&ctx, method, path, body.as_ref()).await
    }

    async fn call(&self, method: &str, path: &str, body: Option<Json>) -> (u16, Json) {
        let ip = *self.ip.lock().unwrap();
        let r = self
            .call_at(ip, needhave::platform::now_ms(), method, path, body)
            .await;
        (r.status, local::json(&r))
    }

    /// A `have` with `note` from `ip`, which must be created.
    async fn post_have(&self, ip: &str, note: &str) {
        let body = json!({"kind": "have", "note": note});
        let r = self
            .call_at(
                ip,
                needhave::platform::now_ms(),
                "POST",
                "/posts",
                Some(body),
            )
            .await;
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    }

    fn trips(&self) -> usize {
        self.store.trips()
    }
}

/// A post, a first reply, an acceptance and a later message.
struct Flow {
    post: Json,
    reply: Json,
    /// A second first reply, still waiting.
    waiting: Json,
    key: String,
}

async fn flow(list: &List, tag: &str) -> Flow {
    let (_, post) = list
        .call(
            "POST",
            "/posts",
            Some(json!({"kind": "need", "note": format!("a need {tag}")})),
        )
        .await;
    let (_, reply) = list
        .call(
            "POST",
            &format!("/posts/{}/messages", post["id"].as_str().unwrap()),
            Some(json!({"text": "first"})),
        )
        .await;
    let (_, accepted) = list
        .call(
            "POST",
            &format!("/posts/{}/accept", post["id"].as_str().unwrap()),
            Some(json!({"secret": post["secret"], "message_id": reply["id"]})),
        )
        .await;
    let key = accepted["thread_key"].as_str().unwrap().to_string();
    list.call(
        "POST",
        "/threads/messages",
        Some(json!({"thread_key": key, "text": "later"})),
    )
    .await;
    let (_, waiting) = list
        .call(
            "POST",
            &format!("/posts/{}/messages", post["id"].as_str().unwrap()),
            Some(json!({"text": "second"})),
        )
        .await;
    Flow {
        post,
        reply,
        waiting,
        key,
    }
}

/// One request for each route, given a flow to refer to, and the round trips
/// it may make. `GET /`, `GET /openapi.json` and the other documents make
/// none.
fn sample(route: &str, f: &Flow) -> (String, Option<Json>, usize) {
    let pid = f.post["id"].as_str().unwrap();
    let mid = f.reply["id"].as_str().unwrap();
    match route {
        "GET /" => ("/".into(), None, 0),
        "GET /openapi.json" => ("/openapi.json".into(), None, 0),
        "GET /posts" => ("/posts".into(), None, 1),
        // The feed: the same list, one statement.
        "GET /posts.atom" => ("/posts.atom".into(), None, 1),
        "POST /posts" => (
            "/posts".into(),
            Some(json!({"kind": "have", "note": "another"})),
            1,
        ),
        "GET /posts/:id" => (format!("/posts/{pid}"), None, 1),
        "POST /posts/:id/messages" => (
            format!("/posts/{pid}/messages"),
            Some(json!({"text": "hi"})),
            1,
        ),
        "GET /posts/:id/messages" => (format!("/posts/{pid}/messages"), None, 1),
        "POST /posts/:id/waiting" => (
            format!("/posts/{pid}/waiting"),
            Some(json!({"secret": f.post["secret"]})),
            1,
        ),
        "POST /posts/:id/accept" => (
            format!("/posts/{pid}/accept"),
            Some(json!({"secret": f.post["secret"], "message_id": f.waiting["id"]})),
            1,
        ),
        // The flow's post ends here: the routes after it in the table
        // work on an ended post (a report, threads, reading it).
        "POST /posts/:id/close" => (
            format!("/posts/{pid}/close"),
            Some(json!({"secret": f.post["secret"]})),
            1,
        ),
        "POST /posts/:id/report" => (
            format!("/posts/{pid}/report"),
            Some(json!({"reason": "spam", "text": "a report"})),
            1,
        ),
        "POST /messages/:id/thread" => (
            format!("/messages/{mid}/thread"),
            Some(json!({"secret": f.reply["secret"]})),
            1,
        ),
        "POST /threads" => ("/threads".into(), Some(json!({"thread_key": f.key})), 1),
        "POST /threads/messages" => (
            "/threads/messages".into(),
            Some(json!({"thread_key": f.key, "text": "x"})),
            1,
        ),
        // A tool call is the route it runs: one round trip.
        "POST /mcp" => (
            "/mcp".into(),
            Some(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "read_post", "arguments": {"id": pid}}})),
            1,
        ),
        // The probe: one round trip, to know the store answers.
        "GET /healthz" => ("/healthz".into(), None, 1),
        // The documents (robots.txt, llms.txt, the card, …) are rendered
        // from the table: no store at all.
        other if other.starts_with("GET /") && !other.contains(':') => (other[4..].into(), None, 0),
        other => panic!("no sample request for {other}: add one to `sample` in tests/store.rs"),
    }
}

/// A flow, then one request of every route, then a refused create (the
/// note of the flow's post again).
async fn every_route(list: &List, tag: &str) -> Flow {
    let f = flow(list, tag).await;
    for route in ROUTES {
        let (path, body, _) = sample(&format!("{} {}", route.method, route.path), &f);
        list.call(route.method, &path, body).await;
    }
    list.call(
        "POST",
        "/posts",
        Some(json!({"kind": "need", "note": format!("a need {tag}")})),
    )
    .await;
    f
}

#[tokio::test]
async fn every_call_is_one_round_trip() {
    let list = List::new();
    let f = flow(&list, "round trips").await;
    for route in ROUTES {
        let name = format!("{} {}", route.method, route.path);
        let (path, body, expected) = sample(&name, &f);
        let before = list.trips();
        let (status, answer) = list.call(route.method, &path, body).await;
        assert!(status < 400, "{name}: {status} {answer}");
        assert_eq!(
            list.trips() - before,
            expected,
            "{name} makes {expected} round trip(s)"
        );
    }
    // Refusals too: a limit is named from the same round trip.
    let before = list.trips();
    let (status, _) = list
        .call(
            "POST",
            "/posts",
            Some(json!({"kind": "need", "note": "a need dup"})),
        )
        .await;
    let (status2, _) = list
        .call(
            "POST",
            "/posts",
            Some(json!({"kind": "need", "note": "a need dup"})),
        )
        .await;
    assert_eq!((status, status2), (201, 409));
    assert_eq!(list.trips() - before, 2);
}

#[tokio::test]
async fn no_statement_scans_a_table() {
    let list = List::new();
    let f = every_route(&list, "plans").await;
    // MCP's two-step read.
    list.call(
        "POST",
        "/mcp",
        Some(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "read_thread", "arguments": {"message_id": f.reply["id"], "secret": f.reply["secret"]}}})),
    )
    .await;
    // A post's life: an accept that closes, a page of a kind and a next
    // page of the open posts, the operator's removals of a message and of
    // a post.
    let g = flow(&list, "plans, closed by an accept").await;
    let pid = g.post["id"].as_str().unwrap();
    let (status, _) = list
        .call(
            "POST",
            &format!("/posts/{pid}/accept"),
            Some(json!({"secret": g.post["secret"], "message_id": g.waiting["id"], "close": true})),
        )
        .await;
    assert_eq!(status, 201);
    list.call("GET", "/posts?kind=need", None).await;
    list.post_have("10.9.0.1", "plans, open one").await;
    list.post_have("10.9.0.2", "plans, open two").await;
    let (_, page) = list.call("GET", "/posts?limit=1", None).await;
    let next = page["next"].as_str().unwrap();
    list.call("GET", &format!("/posts?limit=1&before={next}"), None)
        .await;
    for id in [g.reply["id"].as_str().unwrap(), pid] {
        let done = needhave::handlers::life::remove(list.store.as_ref(), id, "plans", 1)
            .await
            .unwrap();
        assert!(matches!(done, needhave::handlers::life::Removal::Done(_)));
    }
    let statements = list.store.statements();
    let mut plans = BTreeMap::new();
    for s in &statements {
        plans.entry(s.sql).or_insert_with(|| s.params.clone());
    }
    assert!(plans.len() >= 12, "saw {} distinct statements", plans.len());
    let mut scans = Vec::new();
    list.store.inner().with_connection(|conn| {
        for (sql, params) in &plans {
            let details = query_plan(conn, sql, params);
            if std::env::var_os("SHOW_PLANS").is_some() {
                eprintln!("{sql}\n  {details:?}");
            }
            for d in details {
                // `SCAN posts` / `SCAN messages` without an index reads the
                // whole table; an index scan is allowed only under a LIMIT.
                let words: Vec<&str> = d.split_whitespace().collect();
                let table = [
                    "posts",
                    "messages",
                    "live",
                    "post_ends",
                    "p",
                    "f",
                    "a",
                    "m",
                    "l",
                ];
                let full = words.first() == Some(&"SCAN")
                    && words.get(1).is_some_and(|t| table.contains(t))
                    && (!d.contains("INDEX") || !sql.contains("LIMIT"));
                if full {
                    scans.push(format!("{d}\n    in: {sql}"));
                }
            }
        }
    });
    assert!(scans.is_empty(), "full table scans:\n{}", scans.join("\n"));
}

/// A page of words is a forward walk of the index from the cursor: FTS5
/// is the outer loop, takes the cursor's bound (an INTEGER, so that it
/// seeks), yields the rows in the page's order itself (no sort), and each
/// post is found by its row number.
#[tokio::test]
async fn a_page_of_words_walks_the_index_from_the_cursor() {
    let list = List::new();
    for i in 0..3 {
        list.post_have(&format!("10.8.0.{i}"), &format!("spare gpu {i}"))
            .await;
    }
    let (status, page) = list.call("GET", "/posts?q=gpu&limit=1", None).await;
    assert_eq!(status, 200);
    let next = page["next"].as_str().unwrap().to_string();
    let (status, page) = list
        .call("GET", &format!("/posts?q=gpu&limit=1&before={next}"), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(page["posts"][0]["note"], "spare gpu 1");
    let statements = list.store.statements();
    let words = statements
        .iter()
        .rev()
        .find(|s| s.sql.contains("MATCH"))
        .expect("a statement of the index of words");
    let plan = list
        .store
        .inner()
        .with_connection(|conn| query_plan(conn, words.sql, &words.params));
    let index = plan
        .iter()
        .position(|d| d.starts_with("SCAN post_words VIRTUAL TABLE"))
        .unwrap_or_else(|| panic!("{plan:?}"));
    // The index's part comes after the posts whose words wait in
    // words_new: a walk down its primary key from the cursor.
    let waiting = plan
        .iter()
        .position(|d| d.starts_with("SEARCH words_new USING INTEGER PRIMARY KEY (rowid<?)"))
        .unwrap_or_else(|| panic!("{plan:?}"));
    assert!(waiting < index, "{plan:?}");
    let posts = plan[index..]
        .iter()
        .position(|d| d.starts_with("SEARCH posts USING INTEGER PRIMARY KEY (rowid=?)"))
        .unwrap_or_else(|| panic!("{plan:?}"));
    assert!(posts > 0, "the index is the outer loop: {plan:?}");
    // FTS5's plan: 64 (`FTS5_BI_ORDER_ROWID`) yields rising row numbers,
    // its own order (192, with `FTS5_BI_ORDER_DESC`, walks against it);
    // `M` its MATCH, `>` a lower bound on the row number.
    let (number, string) = plan[index]
        .rsplit_once(' ')
        .and_then(|(_, i)| i.split_once(':'))
        .unwrap_or_else(|| panic!("{plan:?}"));
    assert_eq!(number, "64", "{plan:?}");
    assert!(string.contains('M') && string.contains('>'), "{plan:?}");
    // No sort of the page: the one temporary b-tree is the grouping of
    // the query's few terms by kind (whether each kind's are all hot).
    let temp: Vec<&String> = plan.iter().filter(|d| d.contains("TEMP B-TREE")).collect();
    assert_eq!(temp, ["USE TEMP B-TREE FOR GROUP BY"], "{plan:?}");
    // The cold part is a walk of its own from the cursor.
    assert!(
        plan.iter()
            .any(|d| d.starts_with("SCAN post_cold VIRTUAL TABLE INDEX 64:M1>")),
        "{plan:?}"
    );
}

/// SQLite's plan of a recorded statement, bound as the store bound it.
fn query_plan(conn: &rusqlite::Connection, sql: &str, params: &[Value]) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let params: Vec<rusqlite::types::Value> = params
        .iter()
        .map(|v| match v {
            Value::Null => rusqlite::types::Value::Null,
            Value::Int(n) => rusqlite::types::Value::Integer(*n),
            Value::Text(t) => rusqlite::types::Value::Text(t.clone()),
        })
        .collect();
    stmt.query_map(rusqlite::params_from_iter(params), |row| {
        row.get::<_, String>(3)
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Adds `n` old posts, each with one waiting first reply, straight into
/// the database.
fn seed(list: &List, from: usize, n: usize) {
    seed_posts(list.store.inner(), from, n);
}

fn seed_posts(store: &SqliteStore, from: usize, n: usize) {
    let old = needhave::platform::now_ms() - 3 * 3_600_000;
    store.with_connection(|conn| {
        let tx = conn.unchecked_transaction().unwrap();
        for i in from..from + n {
            tx.execute(
                "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
                 VALUES (?1, 'have', ?2, 'x', 'seed', ?3)",
                rusqlite::params![format!("{i:032x}"), format!("seeded {i}"), old + i as i64],
            )
            .unwrap();
            tx.execute(
                "INSERT INTO messages (id, post_id, role, text, secret_hash, ip_hash, created_at) \
                 VALUES (?1, ?2, 'first', 'hi', 'x', 'seed', ?3)",
                rusqlite::params![
                    format!("{:016x}{i:016x}", 1),
                    format!("{i:032x}"),
                    old + i as i64
                ],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    });
}

/// Runs every route (and the list twice more: changed, then unchanged) and
/// returns the SQLite VM steps each statement took.
async fn steps(list: &List, tag: &str) -> BTreeMap<&'static str, i32> {
    let sqls =
        || -> BTreeSet<&'static str> { list.store.statements().iter().map(|s| s.sql).collect() };
    let reset = |sqls: BTreeSet<&'static str>| {
        list.store.inner().with_connection(|conn| {
            sqls.into_iter()
                .map(|sql| {
                    let stmt = conn.prepare_cached(sql).unwrap();
                    (sql, stmt.reset_status(rusqlite::StatementStatus::VmStep))
                })
                .collect::<BTreeMap<_, _>>()
        })
    };
    reset(sqls());
    let f = every_route(list, tag).await;
    // A new post, so that the first list below has changed.
    let note = format!("steps {tag}");
    list.call(
        "POST",
        "/posts",
        Some(json!({"kind": "need", "note": note})),
    )
    .await;
    // Changed; then, after a write elsewhere, asked and unchanged (what D1
    // runs every time); then answered from the kept copy.
    for write_first in [false, true, false] {
        if write_first {
            let body = json!({"thread_key": f.key, "text": "between lists"});
            list.call("POST", "/threads/messages", Some(body)).await;
        }
        let (status, l) = list.call("GET", "/posts", None).await;
        assert_eq!(
            (status, l["posts"].as_array().map(Vec::len)),
            (200, Some(100))
        );
    }
    reset(sqls())
}

/// The work of every statement is bounded by what it answers, not by the
/// list's length: run every route on a list of 150 posts and of 3,150, and
/// compare SQLite's own count of the VM steps each statement took. (A query
/// plan can look fine and still walk a whole index: the public list once
/// checked its kept version row by row.) Also no statement is re-prepared
/// between calls, nor pushed out of the statement cache.
#[tokio::test]
async fn no_call_does_more_work_on_a_longer_list() {
    let list = List::new();
    seed(&list, 0, 150);
    *list.ip.lock().unwrap() = "10.0.1.1";
    let short = steps(&list, "short").await;
    seed(&list, 150, 3_000);
    *list.ip.lock().unwrap() = "10.0.2.1";
    let long = steps(&list, "long").await;
    assert!(short.len() >= 12, "saw {} statements", short.len());
    assert!(
        short.len() + 6 <= needhave::store::sqlite::STATEMENT_CACHE,
        "{} statements (and BEGIN, BEGIN IMMEDIATE, COMMIT, and a group commit's SAVEPOINT, RELEASE, ROLLBACK TO) do not fit the statement cache",
        short.len()
    );
    let mut grew = Vec::new();
    for (sql, &a) in &short {
        let b = long.get(sql).copied().unwrap_or(0);
        if std::env::var_os("SHOW_STEPS").is_some() {
            eprintln!("{a:>6} {b:>6}  {sql}");
        }
        if a == 0 {
            grew.push(format!("not measured (evicted from the cache?): {sql}"));
        }
        if b > a + a / 2 + 200 {
            grew.push(format!("{a} -> {b} steps: {sql}"));
        }
    }
    assert!(
        grew.is_empty(),
        "work grows with the list:\n{}",
        grew.join("\n")
    );
    list.store.inner().with_connection(|conn| {
        for sql in short.keys() {
            let stmt = conn.prepare_cached(sql).unwrap();
            let n = stmt.get_status(rusqlite::StatementStatus::RePrepare);
            assert_eq!(n, 0, "re-prepared {n} times: {sql}");
        }
    });
}

#[tokio::test]
async fn nothing_secret_at_rest() {
    let list = List::new();
    let flows = [flow(&list, "one").await, flow(&list, "two").await];
    let dump: Vec<String> = list.store.inner().with_connection(|conn| {
        let mut out = Vec::new();
        for table in ["posts", "messages"] {
            let mut stmt = conn.prepare(&format!("SELECT * FROM {table}")).unwrap();
            let n = stmt.column_count();
            let mut rows = stmt.query([]).unwrap();
            while let Some(row) = rows.next().unwrap() {
                for i in 0..n {
                    if let Ok(rusqlite::types::ValueRef::Text(t)) = row.get_ref(i) {
                        out.push(String::from_utf8_lossy(t).into_owned());
                    }
                }
            }
        }
        out
    });
    assert!(dump.len() > 20);
    for f in &flows {
        let post_secret = f.post["secret"].as_str().unwrap();
        let reply_secret = f.reply["secret"].as_str().unwrap();
        for value in &dump {
            assert!(!value.contains(post_secret), "post secret at rest");
            assert!(!value.contains(reply_secret), "reply secret at rest");
            assert!(!value.contains("10.0.0.1"), "raw client IP at rest");
        }
        // Only their hashes are kept.
        assert!(dump.contains(&needhave::secrets::sha256_hex(post_secret)));
        assert!(dump.contains(&needhave::secrets::sha256_hex(reply_secret)));
        // The accept row keeps the key (for the respondent's callback) and its hash.
        assert!(dump.contains(&f.key));
        assert!(dump.contains(&needhave::secrets::sha256_hex(&f.key)));
    }
}

#[tokio::test]
async fn limits_count_the_last_sixty_minutes() {
    let list = List::new();
    let now = 1_800_000_000_000i64;
    let minute = 60_000;
    let create = |at: i64, n: usize| {
        let list = &list;
        async move {
            let r = list
                .call_at(
                    "10.9.9.9",
                    at,
                    "POST",
                    "/posts",
                    Some(json!({"kind": "have", "note": format!("window {at} {n}")})),
                )
                .await;
            r.status
        }
    };
    for i in 0..10 {
        assert_eq!(create(now - 61 * minute, i).await, 201);
    }
    // Those are older than an hour now.
    for i in 0..10 {
        assert_eq!(create(now, i).await, 201, "create {i}");
    }
    assert_eq!(create(now, 10).await, 429);
    // 59 minutes later the first ten of `now` still count.
    assert_eq!(create(now + 59 * minute, 11).await, 429);
    assert_eq!(create(now + 61 * minute, 12).await, 201);
}

/// The public list is kept serialized between reads; a new post must show
/// at once, and a read with nothing new must not rebuild it.
#[tokio::test]
async fn the_kept_list_follows_every_new_post() {
    let list = List::new();
    let (_, empty) = list.call("GET", "/posts", None).await;
    assert_eq!(empty, json!({"posts": []}));
    let mut ids = Vec::new();
    for i in 0..3 {
        let (_, p) = list
            .call(
                "POST",
                "/posts",
                Some(json!({"kind": "have", "note": format!("kept {i}")})),
            )
            .await;
        ids.push(p["id"].clone());
        let (_, l) = list.call("GET", "/posts", None).await;
        let got: Vec<Json> = l["posts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].clone())
            .collect();
        let want: Vec<Json> = ids.iter().rev().cloned().collect();
        assert_eq!(got, want);
    }
    // Unchanged since the store last wrote: answered from the kept copy,
    // without a round trip.
    let before = list.trips();
    let (_, again) = list.call("GET", "/posts", None).await;
    assert_eq!(again["posts"].as_array().unwrap().len(), 3);
    assert_eq!(list.trips(), before);
    let kept = list.store.inner().memo().unwrap().get("posts").unwrap();
    assert_eq!(serde_json::from_str::<Json>(&kept.1).unwrap(), again);
    // Any write, even one that leaves the list as it is, makes the next
    // list ask the database (which answers "unchanged", no rows); the one
    // after that needs no round trip again.
    let (status, _) = list
        .call(
            "POST",
            &format!("/posts/{}/messages", ids[0].as_str().unwrap()),
            Some(json!({"text": "a write elsewhere"})),
        )
        .await;
    assert_eq!(status, 201);
    for expected in [1, 0] {
        let before = list.trips();
        let (_, l) = list.call("GET", "/posts", None).await;
        assert_eq!(l, again);
        assert_eq!(list.trips() - before, expected);
    }
}

/// A store shared with other writers (as D1 is, by every isolate): its memo
/// cannot vouch for anything, so every list asks, and follows what others
/// wrote behind its back.
#[tokio::test]
async fn a_shared_store_checks_the_kept_list_every_time() {
    let shared = Arc::new(Counting::written_by_others(
        SqliteStore::open(":memory:").unwrap(),
    ));
    let inner = shared.inner();
    let config = Arc::new(Config::default());
    let get = || async {
        let ctx = local::ctx(shared.clone(), config.clone(), "10.0.9.1");
        let r = local::call(&ctx, "GET", "/posts", None).await;
        serde_json::from_slice::<Json>(&r.body).unwrap()["posts"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(get().await, 0);
    seed_posts(inner, 0, 2);
    assert_eq!(get().await, 2);
    assert_eq!(get().await, 2);
    // Another writer adds a post; the kept list must not hide it.
    seed_posts(inner, 2, 1);
    assert_eq!(get().await, 3);
}

#[tokio::test]
async fn a_store_failure_is_a_plain_500() {
    let ctx = local::ctx(
        Arc::new(Failing::default()),
        Arc::new(Config::default()),
        "10.0.0.2",
    );
    for (method, path, body) in [
        ("GET", "/posts", None),
        ("POST", "/posts", Some(json!({"kind": "need", "note": "x"}))),
        ("POST", "/threads", Some(json!({"thread_key": "k"}))),
    ] {
        let r = local::call(&ctx, method, path, body.as_ref()).await;
        assert_eq!(r.status, 500);
        assert_eq!(r.body, br#"{"error":"internal"}"#, "no detail leaks");
    }
}

/// The writer merges the index of words whenever no write waits
/// (`store/sqlite/segments.rs`): a list written one post a commit keeps
/// its words in one or two segments, where FTS5 alone leaves up to fifteen
/// a level (it merges a level only at four, and small segments wait for
/// its write counter). Every merge is counted.
#[tokio::test]
async fn idle_moments_keep_the_index_of_words_in_few_segments() {
    use needhave::store::sqlite::segments;
    let list = List::new();
    let store = list.store.inner();
    for i in 0..150 {
        // Ten a client: the create rate is not what is tested.
        let ip = format!("10.9.{}.{}", i / 10, i % 10);
        list.post_have(&ip, &format!("spare gpu number {i} of many"))
            .await;
    }
    let started = std::time::Instant::now();
    while !store.with_connection(segments::settled).unwrap() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "still merging: {:?}",
            store.with_connection(segments::levels)
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let levels = store.with_connection(segments::levels).unwrap();
    let sizes: Vec<u64> = levels.iter().flat_map(|l| l.segments.clone()).collect();
    assert!(sizes.len() <= 2, "{levels:?}");
    assert!(
        store
            .group_stats()
            .merges
            .load(std::sync::atomic::Ordering::Relaxed)
            > 0
    );
    // The words are all still there.
    let (status, body) = list.call("GET", "/posts?q=gpu&limit=100", None).await;
    assert_eq!(status, 200);
    assert_eq!(body["posts"].as_array().unwrap().len(), 100);
}

/// The writer keeps a batch's savepoint journal in memory (the module doc
/// of `store::sqlite` says why), on a file as in memory.
#[test]
fn the_writer_journals_its_savepoints_in_memory() {
    let dir = common::scratch("store-temp");
    let path = dir.join("list.db");
    let store = SqliteStore::open(path.to_str().unwrap()).unwrap();
    let temp_store: i64 = store
        .with_connection(|c| c.query_row("PRAGMA temp_store", [], |r| r.get(0)))
        .unwrap();
    drop(store);
    std::fs::remove_dir_all(&dir).ok();
    // 2 is MEMORY; the default, 0, leaves it to the build (a file).
    assert_eq!(temp_store, 2);
}
