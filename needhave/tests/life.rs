//! The life of a post, black-box: its age and status on every view, its
//! expiry (`expires_in`), its author's close, the operator's removal of a
//! post or a message, anyone's report, and what each does to the list, its
//! pages, its feed and their tags. Against `needhave serve` on a database
//! file of its own (the operator's removals are written into the file
//! beside the server, as `needhave remove` does), or against another host
//! of the same calls (`NEEDHAVE_TEST_URL`), whose operator's removal is
//! `NEEDHAVE_TEST_REMOVE` (a shell command, given `ID` and `REASON`).
//!
//! Each scenario is also re-run by `every_status_of_a_life_is_produced`,
//! which checks that the statuses `tests/http.rs` leaves to this file
//! (`common::is_life_status`) were all seen.
//!
//! An expiry happens with time: `tests/life_time.rs` moves the clock.

mod common;

use std::collections::{BTreeSet, HashSet};

use common::*;
use needhave::handlers::life::{self, Removal, Removed};
use needhave::store::sqlite::beside::Beside;
use serde_json::{json, Value};

const ZERO_ID: &str = "00000000000000000000000000000000";

scenarios![
    setup crate::on_file_only;
    a_post_has_its_age,
    expires_in_is_whole_seconds_in_its_bounds,
    expires_in_is_checked_in_the_documented_order,
    closing,
    close_errors_in_order,
    eight_concurrent_closes_make_one,
    an_accept_may_close,
    a_removed_post_answers_410_everywhere,
    a_removed_message_is_left_out,
    removed_replies_leave_the_waiting_cap,
    reports,
    report_errors_in_order,
    reports_are_counted_once_and_rated,
    tags_move_when_a_post_ends,
    mcp_closes_and_expires,
];

#[test]
fn every_status_of_a_life_is_produced() {
    on_file();
    let missing = unseen(run_all(), |route, s| s != 500 && is_life_status(route, s));
    assert!(
        missing.is_empty(),
        "declared but never produced: {missing:#?}"
    );
}

/// Before a test's first request: this binary's list is on a file.
fn on_file_only() {
    on_file();
}

/// Unix ms of an RFC 3339 time as the list writes it
/// (`2026-12-06T04:12:33.120Z`), checking that it is written so: UTC, to
/// the millisecond.
fn ms(time: &str) -> i64 {
    let b = time.as_bytes();
    assert!(
        b.len() == 24
            && b[4] == b'-'
            && b[7] == b'-'
            && b[10] == b'T'
            && b[13] == b':'
            && b[16] == b':'
            && b[19] == b'.'
            && b[23] == b'Z',
        "not RFC 3339 UTC to the millisecond: {time:?}"
    );
    let n = |from: usize, to: usize| -> i64 { time[from..to].parse().unwrap() };
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 24 + n(11, 13)) * 60 + n(14, 16)) * 60_000 + n(17, 19) * 1000 + n(20, 23)
}

#[test]
fn times_read_back() {
    for t in [0, 951_782_400_000, 1_796_530_353_120, 4_102_444_800_999] {
        assert_eq!(ms(&needhave::platform::rfc3339(t)), t);
    }
    assert_eq!(ms("2026-12-06T04:12:33.120Z"), 1_796_530_353_120);
}

/// The keys of a JSON object.
fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

/// A post created with `extra` fields in its body; its answer.
async fn create(kind: &str, extra: Value) -> (Post, Value) {
    let note = fresh_note(kind);
    let mut body = json!({"kind": kind, "note": note});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let r = Client::new().post("/posts", body).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let v = r.json();
    let post = Post {
        id: v["id"].as_str().unwrap().to_string(),
        secret: v["secret"].as_str().unwrap().to_string(),
        note,
    };
    (post, v)
}

async fn read(id: &str) -> Resp {
    Client::new().get(&format!("/posts/{id}")).await
}

async fn close(post: &Post) -> Resp {
    Client::new()
        .post(
            &format!("/posts/{}/close", post.id),
            json!({"secret": post.secret}),
        )
        .await
}

/// Whether `id` is on the first page of `path` (a list or a feed),
/// asked with a fresh client: the 100 newest open posts, ours among them
/// as long as the list is not busier than these tests.
async fn shown(path: &str, id: &str) -> bool {
    let r = Client::new().get(path).await;
    assert_eq!(r.status, 200, "{path}: {}", r.text());
    if path.starts_with("/posts.atom") {
        return r.text().contains(&format!("/posts/{id}<"));
    }
    listed(&r.json()).iter().any(|p| p == id)
}

/// Whether the list shows `post` anywhere a reader finds it: the list, its
/// kind's page, the feed and its kind's feed, and a search of its note's
/// own word on each of them (the note as `fresh_note` writes it: its
/// label, then a word of 16 hex digits no other note holds).
async fn anywhere(post: &Post, kind: &str) -> Vec<bool> {
    let word = post.note.rsplit('#').next().unwrap();
    let mut seen = Vec::new();
    for path in [
        "/posts".to_string(),
        format!("/posts?kind={kind}"),
        format!("/posts?kind={kind}&limit=100"),
        "/posts.atom".to_string(),
        format!("/posts.atom?kind={kind}"),
        format!("/posts?q={word}"),
        format!("/posts?kind={kind}&q={word}"),
        format!("/posts.atom?q={word}"),
        format!("/posts.atom?kind={kind}&q={word}"),
    ] {
        seen.push(shown(&path, &post.id).await);
    }
    seen
}

/// The operator removes the post or message `id`, beside the server; the
/// removal, when the list under test is this binary's.
async fn remove(id: &str) -> Option<Removal> {
    if let Some(db) = on_file() {
        let store = Beside::open(db.to_str().unwrap()).unwrap();
        let now = needhave::platform::now_ms();
        return Some(
            life::remove(&store, id, "a test removes it", now)
                .await
                .unwrap(),
        );
    }
    let command = std::env::var("NEEDHAVE_TEST_REMOVE").expect(
        "NEEDHAVE_TEST_REMOVE: a shell command that removes the post or message $ID \
         for $REASON on the list under test",
    );
    let done = alone_with_the_list(|| {
        std::process::Command::new("sh")
            .args(["-c", &command])
            .env("ID", id)
            .env("REASON", "a test removes it")
            .status()
            .unwrap()
    })
    .await;
    assert!(done.success(), "{command}");
    None
}

/// A count of the rows `sql` counts, on this binary's own list; `None` on
/// another host's.
fn count(sql: &str, id: &str) -> Option<i64> {
    let db = on_file()?;
    let conn = rusqlite::Connection::open(db).unwrap();
    Some(conn.query_row(sql, [id], |r| r.get(0)).unwrap())
}

async fn a_post_has_its_age() {
    let before = needhave::platform::now_ms();
    let (post, v) = create("need", json!({})).await;
    let after = needhave::platform::now_ms();
    assert_eq!(
        keys(&v),
        BTreeSet::from(["id", "kind", "note", "secret", "created_at"])
    );
    let created = v["created_at"].as_str().unwrap();
    // The server's clock is this machine's, unless it is another host.
    if !server().is_remote() {
        assert!((before..=after).contains(&ms(created)), "{created}");
    }
    // The same age on every view, and `open`.
    let read = read(&post.id).await;
    assert_eq!(
        read.json(),
        json!({"id": post.id, "kind": "need", "note": post.note,
            "created_at": created, "status": "open"})
    );
    let r = Client::new().get("/posts?kind=need").await;
    let entry = r.json()["posts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == post.id.as_str())
        .cloned()
        .expect("on its kind's page");
    assert_eq!(entry, read.json());
    // The feed's entry: published and updated when it was posted.
    let feed = Client::new().get("/posts.atom").await.text();
    let at = feed
        .find(&format!("/posts/{}</id>", post.id))
        .expect("in the feed");
    let entry = &feed[at..at + feed[at..].find("</entry>").unwrap()];
    assert!(
        entry.contains(&format!("<published>{created}</published>"))
            && entry.contains(&format!("<updated>{created}</updated>")),
        "{entry}"
    );
}

async fn expires_in_is_whole_seconds_in_its_bounds() {
    for seconds in [300, 86_400, 7_776_000] {
        let (post, v) = create("have", json!({"expires_in": seconds})).await;
        assert_eq!(
            keys(&v),
            BTreeSet::from(["id", "kind", "note", "secret", "created_at", "expires_at"])
        );
        let (created, expires) = (
            ms(v["created_at"].as_str().unwrap()),
            ms(v["expires_at"].as_str().unwrap()),
        );
        assert_eq!(expires - created, seconds * 1000, "{v}");
        let read = read(&post.id).await.json();
        assert_eq!(
            (read["status"].as_str(), &read["expires_at"]),
            (Some("open"), &v["expires_at"])
        );
        assert!(read.get("ended_at").is_none());
        let page = Client::new().get("/posts?kind=have").await.json();
        let entry = page["posts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == post.id.as_str())
            .cloned()
            .expect("listed while open");
        assert_eq!(entry, read);
    }
    // `null` is no expiry.
    let (post, v) = create("have", json!({"expires_in": null})).await;
    assert!(v.get("expires_at").is_none(), "{v}");
    assert!(read(&post.id).await.json().get("expires_at").is_none());
    // The bounds and the types; the rule's breadth: `rules::life`.
    let c = Client::new();
    for bad in [
        json!(299),
        json!(7_776_001),
        json!(300.5),
        json!("300"),
        json!({}),
    ] {
        c.post(
            "/posts",
            json!({"kind": "need", "note": fresh_note("bad expiry"), "expires_in": bad}),
        )
        .await
        .expect_error(400, "bad_expiry");
    }
}

async fn expires_in_is_checked_in_the_documented_order() {
    let c = Client::new();
    let taken = create("need", json!({})).await.0.note;
    // bad_request, bad_kind, bad_expiry, empty/huge/bad_note,
    // contact_details, duplicate.
    let cases = [
        (
            json!({"kind": "need", "note": 5, "expires_in": 1}),
            "bad_request",
        ),
        (
            json!({"kind": "needs", "note": "", "expires_in": 1}),
            "bad_kind",
        ),
        (json!({"note": "", "expires_in": 1}), "bad_kind"),
        (
            json!({"kind": "need", "note": "", "expires_in": 1}),
            "bad_expiry",
        ),
        (
            json!({"kind": "need", "note": "x".repeat(501), "expires_in": "1"}),
            "bad_expiry",
        ),
        (
            json!({"kind": "need", "note": "write a@b.example", "expires_in": 1}),
            "bad_expiry",
        ),
        (
            json!({"kind": "need", "note": taken, "expires_in": 1}),
            "bad_expiry",
        ),
        (
            json!({"kind": "need", "note": " ", "expires_in": 300}),
            "empty_note",
        ),
        (
            json!({"kind": "need", "note": "write a@b.example", "expires_in": 300}),
            "contact_details",
        ),
        (
            json!({"kind": "need", "note": taken, "expires_in": 300}),
            "duplicate_note",
        ),
    ];
    for (body, code) in cases {
        let status = if code == "duplicate_note" { 409 } else { 400 };
        c.post("/posts", body.clone())
            .await
            .expect_error(status, code);
    }
}

async fn closing() {
    let (post, _) = create("need", json!({})).await;
    let reply = reply(&post).await;
    let other = common::reply(&post).await;
    let key = accept(&post, &reply).await;
    assert_eq!(anywhere(&post, "need").await, [true; 9]);
    let before = needhave::platform::now_ms();
    let r = close(&post).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let v = r.json();
    assert_eq!(keys(&v), BTreeSet::from(["id", "status", "ended_at"]));
    assert_eq!(
        (v["id"].as_str(), v["status"].as_str()),
        (Some(post.id.as_str()), Some("closed"))
    );
    let ended = v["ended_at"].as_str().unwrap();
    if !server().is_remote() {
        assert!(ms(ended) >= before);
    }
    // Out of the list, its pages and its feeds at once; still read by id,
    // closed, with when.
    assert_eq!(anywhere(&post, "need").await, [false; 9]);
    let read = read(&post.id).await;
    assert_eq!(read.status, 200);
    let read = read.json();
    assert_eq!(
        (read["status"].as_str(), read["ended_at"].as_str()),
        (Some("closed"), Some(ended))
    );
    assert!(read.get("expires_at").is_none());
    // No new first reply; its author reads and accepts the waiting ones;
    // the thread goes on.
    Client::new()
        .post(
            &format!("/posts/{}/messages", post.id),
            json!({"text": "late"}),
        )
        .await
        .expect_error(409, "ended");
    assert_eq!(waiting_ids(&post).await, [other.id.as_str()]);
    accept(&post, &other).await;
    let thread = Client::new()
        .post(
            "/threads/messages",
            json!({"thread_key": key, "text": "still here"}),
        )
        .await;
    assert_eq!(thread.status, 201, "{}", thread.text());
    // Closed once.
    close(&post).await.expect_error(409, "ended");
    // A report of an ended post is taken.
    let r = Client::new()
        .post(
            &format!("/posts/{}/report", post.id),
            json!({"reason": "other"}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
}

async fn close_errors_in_order() {
    let c = Client::new();
    let (post, _) = create("have", json!({})).await;
    let path = format!("/posts/{}/close", post.id);
    for body in [json!({}), json!({"secret": 5}), json!({"secret": null})] {
        c.post(&path, body).await.expect_error(400, "bad_request");
    }
    c.post_raw(&path, b"[]")
        .await
        .expect_error(400, "bad_request");
    c.post(&format!("/posts/{ZERO_ID}/close"), json!({"secret": "x"}))
        .await
        .expect_error(404, "not_found");
    c.post("/posts/nope/close", json!({"secret": post.secret}))
        .await
        .expect_error(404, "not_found");
    c.post(&path, json!({"secret": "wrong"}))
        .await
        .expect_error(403, "bad_secret");
    assert_eq!(close(&post).await.status, 201);
    // The secret before the end: a stranger learns nothing of it.
    c.post(&path, json!({"secret": "wrong"}))
        .await
        .expect_error(403, "bad_secret");
    close(&post).await.expect_error(409, "ended");
    // Removed before the secret: every call that names it.
    remove(&post.id).await;
    c.post(&path, json!({"secret": "wrong"}))
        .await
        .expect_error(410, "removed");
    close(&post).await.expect_error(410, "removed");
}

async fn eight_concurrent_closes_make_one() {
    let (post, _) = create("need", json!({})).await;
    let closes: Vec<_> = (0..8)
        .map(|_| {
            let (id, secret) = (post.id.clone(), post.secret.clone());
            tokio::spawn(async move {
                Client::new()
                    .post(&format!("/posts/{id}/close"), json!({"secret": secret}))
                    .await
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for c in closes {
        let r = c.await.unwrap();
        if r.status != 201 {
            r.expect_error(409, "ended");
        }
        statuses.push(r.status);
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 409, 409, 409, 409, 409, 409, 409]);
    assert_eq!(
        count(
            "SELECT count(*) FROM messages WHERE post_id = ?1 AND role = 'close'",
            &post.id
        ),
        on_file().map(|_| 1)
    );
}

async fn an_accept_may_close() {
    let (post, _) = create("have", json!({})).await;
    let (a, b, c) = (reply(&post).await, reply(&post).await, reply(&post).await);
    let accept_with = |message: &str, close: Value| {
        let body = json!({"secret": post.secret, "message_id": message, "close": close});
        let path = format!("/posts/{}/accept", post.id);
        async move { Client::new().post(&path, body).await }
    };
    // `close: false` (and null) accept only: the answer says nothing of the
    // post, which stays open.
    let r = accept_with(&a.id, json!(false)).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(keys(&r.json()), BTreeSet::from(["thread_key"]));
    assert_eq!(read(&post.id).await.json()["status"], "open");
    accept_with(&a.id, json!("yes"))
        .await
        .expect_error(400, "bad_request");
    // `close: true`: accepted and closed in one call.
    let r = accept_with(&b.id, json!(true)).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let v = r.json();
    assert_eq!(
        keys(&v),
        BTreeSet::from(["thread_key", "status", "ended_at"])
    );
    assert_eq!(v["status"], "closed");
    let read = read(&post.id).await.json();
    assert_eq!(
        (&read["status"], &read["ended_at"]),
        (&json!("closed"), &v["ended_at"])
    );
    assert!(!shown("/posts", &post.id).await);
    // On a closed post: the accept stands, the close part changes nothing.
    let r = accept_with(&c.id, json!(true)).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(
        (&r.json()["status"], &r.json()["ended_at"]),
        (&json!("closed"), &v["ended_at"])
    );
    assert_eq!(
        count(
            "SELECT count(*) FROM messages WHERE post_id = ?1 AND role = 'close'",
            &post.id
        ),
        on_file().map(|_| 1)
    );
}

async fn a_removed_post_answers_410_everywhere() {
    let (post, _) = create("need", json!({})).await;
    let (first, waiting_one) = (reply(&post).await, reply(&post).await);
    let key = accept(&post, &first).await;
    assert_eq!(anywhere(&post, "need").await, [true; 9]);
    if let Some(done) = remove(&post.id).await {
        assert_eq!(done, Removal::Done(Removed::Post));
    }
    let c = Client::new();
    let id = &post.id;
    read(id).await.expect_error(410, "removed");
    c.get(&format!("/posts/{id}/messages"))
        .await
        .expect_error(410, "removed");
    c.post(&format!("/posts/{id}/messages"), json!({"text": "hi"}))
        .await
        .expect_error(410, "removed");
    for secret in [post.secret.as_str(), "wrong"] {
        c.post(&format!("/posts/{id}/waiting"), json!({"secret": secret}))
            .await
            .expect_error(410, "removed");
        c.post(
            &format!("/posts/{id}/accept"),
            json!({"secret": secret, "message_id": waiting_one.id}),
        )
        .await
        .expect_error(410, "removed");
        c.post(&format!("/posts/{id}/close"), json!({"secret": secret}))
            .await
            .expect_error(410, "removed");
    }
    c.post(&format!("/posts/{id}/report"), json!({"reason": "spam"}))
        .await
        .expect_error(410, "removed");
    assert_eq!(anywhere(&post, "need").await, [false; 9]);
    // A thread names its key, not the post: it goes on.
    let r = c.post("/threads", json!({"thread_key": key})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = c
        .post(
            "/threads/messages",
            json!({"thread_key": key, "text": "after"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c
        .post(
            &format!("/messages/{}/thread", first.id),
            json!({"secret": first.secret}),
        )
        .await;
    assert_eq!(r.json()["thread_key"], key.as_str());
    // Twice changes nothing; an id that is nobody's says so.
    if let Some(again) = remove(&post.id).await {
        assert_eq!(again, Removal::Already(Removed::Post));
        assert_eq!(
            count(
                "SELECT count(*) FROM messages WHERE post_id = ?1 AND role = 'remove' AND parent_id IS NULL",
                id
            ),
            Some(1)
        );
        let db = on_file().unwrap().to_str().unwrap();
        let store = Beside::open(db).unwrap();
        for unknown in [ZERO_ID, "nope", ""] {
            let e = life::remove(&store, unknown, "x", 1).await.unwrap_err();
            assert!(matches!(e, life::RemoveError::Unknown), "{unknown}: {e}");
            assert_eq!(e.to_string(), "no post and no message has this id");
        }
        // Nor an accept or a later message's own decision rows.
        let accept_row: String = rusqlite::Connection::open(db)
            .unwrap()
            .query_row(
                "SELECT id FROM messages WHERE post_id = ?1 AND role = 'accept'",
                [id],
                |r| r.get(0),
            )
            .unwrap();
        assert!(matches!(
            life::remove(&store, &accept_row, "x", 1).await,
            Err(life::RemoveError::Unknown)
        ));
        for reason in ["", " \u{200b} ", &"x".repeat(501), "a\u{1}b"] {
            assert!(matches!(
                life::remove(&store, id, reason, 1).await,
                Err(life::RemoveError::Reason(_))
            ));
        }
    }
}

async fn a_removed_message_is_left_out() {
    let (post, _) = create("have", json!({})).await;
    let (kept, gone) = (reply(&post).await, reply(&post).await);
    assert_eq!(waiting_ids(&post).await, [kept.id.clone(), gone.id.clone()]);
    if let Some(done) = remove(&gone.id).await {
        assert_eq!(done, Removal::Done(Removed::Message));
    }
    // Out of the waiting list; accepting it is accepting nothing.
    assert_eq!(waiting_ids(&post).await, [kept.id.as_str()]);
    Client::new()
        .post(
            &format!("/posts/{}/accept", post.id),
            json!({"secret": post.secret, "message_id": gone.id}),
        )
        .await
        .expect_error(404, "not_found");
    // In a thread: the first message removed, then a later one; the thread
    // goes on, and still names its post.
    let key = accept(&post, &kept).await;
    let write = |text: &str| {
        let body = json!({"thread_key": key, "text": text});
        async move { Client::new().post("/threads/messages", body).await }
    };
    let later = write("later one").await.json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    write("later two").await;
    remove(&kept.id).await;
    remove(&later).await;
    let thread = Client::new()
        .post("/threads", json!({"thread_key": key}))
        .await
        .json();
    assert_eq!(thread["post_id"], post.id.as_str());
    let texts: Vec<&str> = thread["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["later two"]);
    assert_eq!(write("after").await.status, 201);
    // The post itself is untouched.
    assert_eq!(read(&post.id).await.json()["status"], "open");
    if let Some(again) = remove(&gone.id).await {
        assert_eq!(again, Removal::Already(Removed::Message));
    }
}

async fn removed_replies_leave_the_waiting_cap() {
    let (post, _) = create("need", json!({})).await;
    // Seven clients, three each: twenty waiting, the cap.
    let mut replies = Vec::new();
    for _ in 0..7 {
        let c = Client::new();
        for _ in 0..3 {
            if replies.len() == 20 {
                break;
            }
            let r = c
                .post(
                    &format!("/posts/{}/messages", post.id),
                    json!({"text": fresh_note("cap")}),
                )
                .await;
            assert_eq!(r.status, 201, "{}", r.text());
            replies.push((c, r.json()["id"].as_str().unwrap().to_string()));
        }
    }
    let full = Client::new()
        .post(
            &format!("/posts/{}/messages", post.id),
            json!({"text": "21st"}),
        )
        .await;
    full.expect_error(429, "too_many");
    // A removed reply frees its place in the cap and in its client's share.
    let (client, id) = &replies[0];
    remove(id).await;
    let r = client
        .post(
            &format!("/posts/{}/messages", post.id),
            json!({"text": "room again"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
}

async fn reports() {
    let (post, _) = create("need", json!({})).await;
    for reason in [
        "spam",
        "scam",
        "illegal",
        "prompt_injection",
        "contact_details",
        "other",
    ] {
        let r = Client::new()
            .post(
                &format!("/posts/{}/report", post.id),
                json!({"reason": reason}),
            )
            .await;
        assert_eq!((r.status, r.text()), (202, "{}".to_string()), "{reason}");
    }
    let r = Client::new()
        .post(
            &format!("/posts/{}/report", post.id),
            json!({"reason": "other", "text": format!("  {}  ", "é".repeat(500))}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    // A report hides nothing and changes nothing anyone reads.
    assert!(shown("/posts", &post.id).await);
    let read = read(&post.id).await.json();
    assert_eq!(read["status"], "open");
    assert_eq!(
        count(
            "SELECT count(*) FROM messages WHERE post_id = ?1 AND role = 'report' \
             AND ip_hash NOT LIKE '%.%' AND length(ip_hash) = 64",
            &post.id
        ),
        on_file().map(|_| 7),
        "one row a client, with its salted hash, never its address"
    );
    assert_eq!(
        count(
            "SELECT count(*) FROM messages WHERE post_id = ?1 AND role = 'report' \
             AND length(text) = 500 AND substr(text, 1, 1) = '\u{e9}' \
             AND substr(text, 500, 1) = '\u{e9}'",
            &post.id
        ),
        on_file().map(|_| 1),
        "the text trimmed"
    );
}

async fn report_errors_in_order() {
    let c = Client::new();
    let (post, _) = create("have", json!({})).await;
    let path = format!("/posts/{}/report", post.id);
    let unknown = format!("/posts/{ZERO_ID}/report");
    c.post_raw(&path, b"\"spam\"")
        .await
        .expect_error(400, "bad_request");
    for body in [
        json!({"reason": 5}),
        json!({"reason": ["spam"]}),
        json!({"reason": "spam", "text": 5}),
    ] {
        c.post(&path, body).await.expect_error(400, "bad_request");
    }
    for body in [
        json!({}),
        json!({"reason": null}),
        json!({"reason": "Spam"}),
        json!({"reason": "abuse"}),
        json!({"reason": ""}),
        json!({"reason": "nope", "text": ""}),
    ] {
        c.post(&path, body.clone())
            .await
            .expect_error(400, "bad_reason");
        c.post(&unknown, body).await.expect_error(400, "bad_reason");
    }
    for (text, code) in [
        (" \u{200b} ".to_string(), "empty_note"),
        ("x".repeat(501), "huge_note"),
        ("a\u{1}b".to_string(), "bad_note"),
    ] {
        c.post(&path, json!({"reason": "spam", "text": text}))
            .await
            .expect_error(400, code);
        // The text before the post: a bad report is bad wherever it goes.
        c.post(&unknown, json!({"reason": "spam", "text": text}))
            .await
            .expect_error(400, code);
    }
    c.post(&unknown, json!({"reason": "spam"}))
        .await
        .expect_error(404, "not_found");
    c.post("/posts/nope/report", json!({"reason": "spam"}))
        .await
        .expect_error(404, "not_found");
}

async fn reports_are_counted_once_and_rated() {
    let reporter = Client::new();
    let report = |id: &str| {
        let path = format!("/posts/{id}/report");
        async move { reporter.post(&path, json!({"reason": "spam"})).await }
    };
    let mut posts = Vec::new();
    for _ in 0..21 {
        posts.push(create("need", json!({})).await.0);
    }
    // The same post again: taken, counted once.
    for _ in 0..3 {
        assert_eq!(report(&posts[0].id).await.status, 202);
    }
    assert_eq!(
        count(
            "SELECT count(*) FROM messages WHERE post_id = ?1 AND role = 'report'",
            &posts[0].id
        ),
        on_file().map(|_| 1)
    );
    for p in &posts[1..20] {
        let r = report(&p.id).await;
        assert_eq!(r.status, 202, "{}", r.text());
    }
    // Twenty posts reported this hour: the twenty-first is refused until
    // the first report leaves the hour.
    let r = report(&posts[20].id).await;
    r.expect_error(429, "rate_limited");
    let wait: u32 = r.header("retry-after").unwrap().parse().unwrap();
    assert!((3590..=3600).contains(&wait), "{wait}");
    // A post this client reported already is still answered as taken.
    assert_eq!(report(&posts[5].id).await.status, 202);
    // Other clients are not this one.
    let r = Client::new()
        .post(
            &format!("/posts/{}/report", posts[20].id),
            json!({"reason": "scam"}),
        )
        .await;
    assert_eq!(r.status, 202);
}

/// The tag of a reader's answer at `path`.
async fn tag(path: &str) -> String {
    let r = Client::new().get(path).await;
    assert_eq!(r.status, 200);
    r.header("etag").unwrap().to_string()
}

/// `path`'s answer to a client that holds `tag`: 304 while nothing it
/// shows changed.
async fn held(path: &str, tag: &str) -> u16 {
    Client::new()
        .send("GET", path, None, &[("if-none-match", tag)])
        .await
        .status
}

async fn tags_move_when_a_post_ends() {
    let (post, _) = create("have", json!({})).await;
    let (other, _) = create("have", json!({})).await;
    let views = [
        "/posts",
        "/posts?kind=have",
        "/posts.atom",
        "/posts.atom?kind=have",
    ];
    let read_path = format!("/posts/{}", post.id);
    let mut tags = Vec::new();
    for v in views.iter().copied().chain([read_path.as_str()]) {
        tags.push(tag(v).await);
    }
    // Other tests write too; what matters is that a tag held from before
    // the end is never answered 304 after it.
    assert_eq!(close(&post).await.status, 201);
    for (v, t) in views.iter().copied().chain([read_path.as_str()]).zip(&tags) {
        assert_eq!(held(v, t).await, 200, "{v} after a close");
        assert_ne!(&tag(v).await, t, "{v}");
    }
    let mut tags = Vec::new();
    for v in views {
        tags.push(tag(v).await);
    }
    remove(&other.id).await;
    for (v, t) in views.iter().zip(&tags) {
        assert_eq!(held(v, t).await, 200, "{v} after a removal");
    }
}

async fn mcp_closes_and_expires() {
    let author = Client::new();
    let post = tool_ok(
        &author
            .tool(
                "create_need",
                json!({"note": fresh_note("mcp life"), "expires_in": 86_400}),
            )
            .await,
    );
    let id = post["id"].as_str().unwrap();
    let secret = post["secret"].as_str().unwrap();
    assert_eq!(
        ms(post["expires_at"].as_str().unwrap()) - ms(post["created_at"].as_str().unwrap()),
        86_400_000
    );
    for bad in [json!(299), json!(7_776_001)] {
        tool_err(
            &author
                .tool(
                    "create_have",
                    json!({"note": fresh_note("mcp"), "expires_in": bad}),
                )
                .await,
            "bad_expiry",
        );
    }
    // Mistyped: the tool's own argument check says so.
    let r = author
        .tool(
            "create_have",
            json!({"note": fresh_note("mcp"), "expires_in": "300"}),
        )
        .await;
    assert_eq!(r["isError"], true, "{r}");
    // read_post: its status.
    let read = tool_ok(&author.tool("read_post", json!({"id": id})).await);
    assert_eq!(
        (&read["status"], &read["expires_at"]),
        (&json!("open"), &post["expires_at"])
    );
    // accept_reply with close: false lists the waiting replies; with close:
    // true, closes.
    let reply_id = {
        let r = Client::new()
            .tool(
                "write_first_reply",
                json!({"post_id": id, "text": "mcp reply"}),
            )
            .await;
        tool_ok(&r)["id"].as_str().unwrap().to_string()
    };
    let listed = tool_ok(
        &author
            .tool(
                "accept_reply",
                json!({"post_id": id, "secret": secret, "close": false}),
            )
            .await,
    );
    assert_eq!(listed["messages"][0]["id"], reply_id.as_str());
    assert_eq!(read_status(id).await, "open");
    let closed = tool_ok(
        &author
            .tool(
                "accept_reply",
                json!({"post_id": id, "secret": secret, "close": true}),
            )
            .await,
    );
    assert_eq!(keys(&closed), BTreeSet::from(["id", "status", "ended_at"]));
    assert_eq!(closed["status"], "closed");
    assert_eq!(read_status(id).await, "closed");
    tool_err(
        &author
            .tool(
                "accept_reply",
                json!({"post_id": id, "secret": secret, "close": true}),
            )
            .await,
        "ended",
    );
    // With message_id too: accepted, the close part a no-op on a closed post.
    let both = tool_ok(
        &author
            .tool(
                "accept_reply",
                json!({"post_id": id, "secret": secret, "message_id": reply_id, "close": true}),
            )
            .await,
    );
    assert!(both["thread_key"].is_string());
    assert_eq!(
        (&both["status"], &both["ended_at"]),
        (&json!("closed"), &closed["ended_at"])
    );
    // Accept and close in one call, on an open post.
    let open = tool_ok(
        &author
            .tool("create_have", json!({"note": fresh_note("mcp")}))
            .await,
    );
    let open_id = open["id"].as_str().unwrap();
    let r = tool_ok(
        &Client::new()
            .tool(
                "write_first_reply",
                json!({"post_id": open_id, "text": "hello"}),
            )
            .await,
    );
    let both = tool_ok(
        &author
            .tool(
                "accept_reply",
                json!({"post_id": open_id, "secret": open["secret"], "message_id": r["id"], "close": true}),
            )
            .await,
    );
    assert_eq!(both["status"], "closed");
    assert_eq!(read_status(open_id).await, "closed");
    tool_err(
        &Client::new()
            .tool(
                "write_first_reply",
                json!({"post_id": open_id, "text": "late"}),
            )
            .await,
        "ended",
    );
}

async fn read_status(id: &str) -> String {
    read(id).await.json()["status"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A post with an expiry shows no secret on any public view.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_stay_out_of_every_view() {
    on_file();
    let (post, _) = create("need", json!({"expires_in": 600})).await;
    let texts: HashSet<String> = [
        read(&post.id).await.text(),
        Client::new().get("/posts").await.text(),
        Client::new().get("/posts.atom").await.text(),
    ]
    .into();
    for t in texts {
        assert!(!t.contains(&post.secret) && !t.contains("secret"), "{t}");
    }
}

/// The stdio server is built from these output schemas and may speak to a
/// host of an earlier release: that host's answers, without a post's
/// life, still fit them; so do this release's, with it.
#[test]
fn answers_without_a_life_fit_the_output_schemas() {
    let id = "0123456789abcdef0123456789abcdef";
    let post = json!({"id": id, "kind": "need", "note": "a bike"});
    let t = "2026-12-06T04:12:33.120Z";
    let alive = json!({"id": id, "kind": "need", "note": "a bike", "created_at": t,
        "status": "closed", "expires_at": t, "ended_at": t});
    let cases = [
        ("list_posts", json!({"posts": [post]})),
        ("list_posts", json!({"posts": [alive]})),
        ("read_post", post.clone()),
        ("read_post", alive.clone()),
        (
            "create_need",
            json!({"id": id, "kind": "need", "note": "n", "secret": "s"}),
        ),
        (
            "create_have",
            json!({"id": id, "kind": "have", "note": "n", "secret": "s", "created_at": t, "expires_at": t}),
        ),
        ("accept_reply", json!({"thread_key": "k"})),
        (
            "accept_reply",
            json!({"thread_key": "k", "status": "expired", "ended_at": t}),
        ),
        (
            "accept_reply",
            json!({"id": id, "status": "closed", "ended_at": t}),
        ),
    ];
    for (tool, content) in cases {
        common::schema::assert_answer(
            tool,
            &json!({"isError": false, "structuredContent": content}),
        );
    }
}
