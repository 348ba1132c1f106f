//! The limits a crowd of addresses meets: an IPv6 site (/48) shares ten
//! clients' worth of each rate, one client holds at most 3 of a post's 20
//! waiting places, every 429 says when to come back (`Retry-After`), and a
//! post costs on disk no more than about what it shows.
//!
//! The black-box tests run against `needhave serve` and, through
//! NEEDHAVE_TEST_URL, the Worker; they tell the list IPv6 addresses through
//! `CF-Connecting-IP` ([`claimed_server`]). The in-process tests set the
//! request's clock (`Ctx::now_ms`) to check `Retry-After` to the second,
//! and measure the database file.

mod common;

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};

use common::*;
use needhave::http::Response;
use needhave::rules;
use needhave::store::sqlite::SqliteStore;
use needhave::Config;
use serde_json::{json, Value};

type Call = Pin<Box<dyn Future<Output = Resp> + Send>>;

/// Runs every call at once and waits for all of them.
async fn at_once(calls: Vec<Call>) -> Vec<Resp> {
    let handles: Vec<_> = calls.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

/// How many answers have this status and error code ("" for a success).
fn count(resps: &[Resp], status: u16, code: &str) -> usize {
    resps
        .iter()
        .filter(|r| r.status == status && (status < 400 || r.error() == code))
        .count()
}

/// Every 429 carries `Retry-After` in whole seconds, 1 to `max`.
#[track_caller]
fn retry_afters(resps: &[Resp], max: u64) {
    for r in resps.iter().filter(|r| r.status == 429) {
        let v = r
            .header("retry-after")
            .unwrap_or_else(|| panic!("429 without Retry-After"));
        let secs: u64 = v.parse().unwrap_or_else(|_| panic!("Retry-After {v:?}"));
        assert!((1..=max).contains(&secs), "Retry-After {secs}");
    }
}

/// A /48 no other test uses, as its first three groups (`fdXX:XXXX:XXXX`).
fn fresh_site() -> String {
    static USED: OnceLock<Mutex<HashSet<u64>>> = OnceLock::new();
    loop {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).unwrap();
        let n = u64::from_le_bytes(b) & 0xff_ffff_ffff;
        if USED.get_or_init(Default::default).lock().unwrap().insert(n) {
            return format!(
                "fd{:02x}:{:x}:{:x}",
                n >> 32,
                (n >> 16) & 0xffff,
                n & 0xffff
            );
        }
    }
}

/// The `n`-th /64 of a site, as an address in it.
fn in_site(site: &str, n: usize) -> String {
    format!("{site}:{n:x}:1:2:3:4")
}

fn create(ip: String, label: &'static str) -> Call {
    Box::pin(async move {
        let body = json!({"kind": "have", "note": fresh_note(label)}).to_string();
        send_as(&ip, "POST", "/posts", Some(body.into_bytes())).await
    })
}

fn first_reply(ip: String, post: String) -> Call {
    Box::pin(async move {
        let body = json!({"text": fresh_note("reply")}).to_string();
        send_as(
            &ip,
            "POST",
            &format!("/posts/{post}/messages"),
            Some(body.into_bytes()),
        )
        .await
    })
}

/// A post made by an IPv4 client of its own (not counted for any site).
async fn post_id() -> (String, String) {
    let r = send_as(
        &fresh_ip().to_string(),
        "POST",
        "/posts",
        Some(
            json!({"kind": "need", "note": fresh_note("a post")})
                .to_string()
                .into_bytes(),
        ),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let v = r.json();
    (
        v["id"].as_str().unwrap().into(),
        v["secret"].as_str().unwrap().into(),
    )
}

/// 110 creates fired at once from 110 /64s of one /48: exactly 100 get in,
/// each of the others is `rate_limited` with `Retry-After`; the next /48
/// is not held back, and one /64 still gets only its own 10.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_shares_ten_clients_worth_of_creates() {
    let site = fresh_site();
    let calls = (0..110)
        .map(|i| create(in_site(&site, i), "site"))
        .collect();
    let resps = at_once(calls).await;
    assert_eq!(count(&resps, 201, ""), 100);
    assert_eq!(count(&resps, 429, "rate_limited"), 10);
    retry_afters(&resps, 3600);
    // Another /64 of the same site: still refused.
    create(in_site(&site, 0xffff), "site")
        .await
        .expect_error(429, "rate_limited");
    // Another site is its own.
    let other = fresh_site();
    let r = create(in_site(&other, 1), "site").await;
    assert_eq!(r.status, 201, "{}", r.text());
    // A /64 counts its own 10, whichever address of it asks.
    let calls = (0..12)
        .map(|i| create(format!("{other}:7:{i:x}::1"), "one /64"))
        .collect();
    let resps = at_once(calls).await;
    assert_eq!(count(&resps, 201, ""), 10);
    assert_eq!(count(&resps, 429, "rate_limited"), 2);
    retry_afters(&resps, 3600);
}

/// 210 first replies fired at once from 210 /64s of one /48, spread over
/// 21 posts (10 each, inside every waiting cap): exactly 200 get in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_shares_ten_clients_worth_of_first_replies() {
    let mut posts = Vec::new();
    for _ in 0..21 {
        posts.push(post_id().await.0);
    }
    let site = fresh_site();
    let calls = (0..210)
        .map(|i| first_reply(in_site(&site, i), posts[i % 21].clone()))
        .collect();
    let resps = at_once(calls).await;
    assert_eq!(count(&resps, 201, ""), 200);
    assert_eq!(count(&resps, 429, "rate_limited"), 10);
    retry_afters(&resps, 3600);
    // Another site may still answer.
    let r = first_reply(in_site(&fresh_site(), 1), posts[0].clone()).await;
    assert_eq!(r.status, 201, "{}", r.text());
}

/// One client's share of a post's waiting: 40 first replies fired at once
/// from one client give exactly 3; another client still gets in; an
/// acceptance frees one of the 3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_holds_three_of_a_posts_waiting() {
    let (post, secret) = post_id().await;
    let me = in_site(&fresh_site(), 1);
    let calls = (0..40)
        .map(|_| first_reply(me.clone(), post.clone()))
        .collect();
    let resps = at_once(calls).await;
    assert_eq!(count(&resps, 201, ""), 3);
    assert_eq!(count(&resps, 429, "too_many"), 37);
    for r in resps.iter().filter(|r| r.status == 429) {
        assert_eq!(r.header("retry-after"), Some("3600"));
    }
    // Another address of the same /64 is the same client.
    first_reply(me.replace(":1:2:3:4", ":9:9:9:9"), post.clone())
        .await
        .expect_error(429, "too_many");
    // Another client is not held back.
    let r = first_reply(fresh_ip().to_string(), post.clone()).await;
    assert_eq!(r.status, 201, "{}", r.text());
    // Accepting one of mine frees one place of my share.
    let mine = resps.iter().find(|r| r.status == 201).unwrap();
    let body = json!({"secret": secret, "message_id": mine.json()["id"]}).to_string();
    let r = send_as(
        &fresh_ip().to_string(),
        "POST",
        &format!("/posts/{post}/accept"),
        Some(body.into_bytes()),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = first_reply(me.clone(), post.clone()).await;
    assert_eq!(r.status, 201, "{}", r.text());
    first_reply(me, post).await.expect_error(429, "too_many");
}

/// The share and the post's cap of 20 together, fired at once: 8 clients
/// × 4 replies give exactly 20 waiting, none with more than 3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_share_and_the_cap_hold_together() {
    let (post, _) = post_id().await;
    let clients: Vec<String> = (0..8).map(|_| fresh_ip().to_string()).collect();
    let calls = (0..32)
        .map(|i| first_reply(clients[i % 8].clone(), post.clone()))
        .collect();
    let resps = at_once(calls).await;
    assert_eq!(count(&resps, 201, ""), 20);
    assert_eq!(count(&resps, 429, "too_many"), 12);
    for c in 0..8 {
        let mine = (0..32)
            .filter(|i| i % 8 == c && resps[*i].status == 201)
            .count();
        assert!(mine <= 3, "client {c} holds {mine}");
    }
    retry_afters(&resps, 3600);
}

// ---- In process: Retry-After to the second, and the disk ----

struct List {
    store: Arc<SqliteStore>,
    config: Arc<Config>,
}

impl List {
    fn open(path: &str) -> List {
        List {
            store: Arc::new(SqliteStore::open(path).unwrap()),
            config: local::salted("test-salt"),
        }
    }

    async fn call(&self, ip: &str, now_ms: i64, path: &str, body: Value) -> Response {
        let ctx = local::ctx_at(self.store.clone(), self.config.clone(), ip, now_ms);
        local::call(&ctx, "POST", path, Some(&body)).await
    }

    async fn post(&self, ip: &str, now_ms: i64, note: &str) -> Response {
        self.call(ip, now_ms, "/posts", json!({"kind": "need", "note": note}))
            .await
    }
}

fn id_of(r: &Response) -> String {
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    v["id"].as_str().unwrap().to_string()
}

#[track_caller]
fn refused(r: &Response, code: &str, retry_after: &str) {
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!((r.status, v["error"].as_str()), (429, Some(code)));
    assert_eq!(r.header("retry-after"), Some(retry_after));
}

const T0: i64 = 1_800_000_000_000;
const S: i64 = 1_000;

/// A create refused by the client's rate says when its oldest counted post
/// leaves the hour, rounded up; one millisecond before, the same request
/// is refused with 1; at that moment it is admitted.
#[tokio::test]
async fn retry_after_of_the_client_rate() {
    let list = List::open(":memory:");
    for i in 0..10 {
        let r = list
            .post("10.1.1.1", T0 + i * 60 * S, &format!("note {i}"))
            .await;
        assert_eq!(r.status, 201);
    }
    refused(
        &list.post("10.1.1.1", T0 + 10 * 60 * S, "over").await,
        "rate_limited",
        "3000",
    );
    refused(
        &list.post("10.1.1.1", T0 + 10 * 60 * S + 1, "over").await,
        "rate_limited",
        "3000",
    );
    refused(
        &list.post("10.1.1.1", T0 + 10 * 60 * S + 999, "over").await,
        "rate_limited",
        "3000",
    );
    refused(
        &list.post("10.1.1.1", T0 + 3600 * S - 1, "over").await,
        "rate_limited",
        "1",
    );
    // The oldest left the hour (the window is "created_at > now - 1 h").
    assert_eq!(list.post("10.1.1.1", T0 + 3600 * S, "in").await.status, 201);
    // Full again: now the second oldest (at 60 s) is the one to wait for.
    refused(
        &list.post("10.1.1.1", T0 + 3600 * S, "over").await,
        "rate_limited",
        "60",
    );
}

/// A site's refusal waits for the site's oldest row, also when the asking
/// /64 has written nothing; when both the client and the site are full,
/// for the later of the two.
#[tokio::test]
async fn retry_after_of_the_site_rate() {
    let list = List::open(":memory:");
    for i in 0..100i64 {
        let ip = format!("2001:db8:5:{:x}::1", i / 10);
        let r = list
            .post(&ip, T0 + i * 10 * S, &format!("site note {i}"))
            .await;
        assert_eq!(r.status, 201, "{i}");
    }
    let now = T0 + 1_000 * S;
    // A fresh /64: only the site refuses; its oldest row is at T0.
    refused(
        &list.post("2001:db8:5:ff::1", now, "x").await,
        "rate_limited",
        "2600",
    );
    // The last /64 is full too: its oldest is at 900 s, later than the site's.
    refused(
        &list.post("2001:db8:5:9::1", now, "x").await,
        "rate_limited",
        "3500",
    );
    // Another site is not held back.
    assert_eq!(list.post("2001:db8:6::1", now, "x").await.status, 201);
}

/// The first reply's and the thread's rates say when too; the waiting cap
/// and the client's share, which free only when the author accepts, say
/// an hour.
#[tokio::test]
async fn retry_after_of_replies_and_threads() {
    let list = List::open(":memory:");
    let mut posts = Vec::new();
    for i in 0..22 {
        let r = list
            .post(&format!("10.2.0.{i}"), T0, &format!("reply target {i}"))
            .await;
        posts.push(r);
    }
    let post = |i: usize| format!("/posts/{}/messages", id_of(&posts[i]));
    for i in 0..20 {
        let r = list
            .call(
                "10.3.3.3",
                T0 + i as i64 * S,
                &post(i),
                json!({"text": "hi"}),
            )
            .await;
        assert_eq!(r.status, 201, "{i}");
    }
    let r = list
        .call("10.3.3.3", T0 + 30 * S, &post(20), json!({"text": "hi"}))
        .await;
    refused(&r, "rate_limited", "3570");
    // The share: three from one client on post 21.
    for _ in 0..3 {
        let r = list
            .call("10.4.4.4", T0, &post(21), json!({"text": "hi"}))
            .await;
        assert_eq!(r.status, 201);
    }
    let r = list
        .call("10.4.4.4", T0, &post(21), json!({"text": "hi"}))
        .await;
    refused(&r, "too_many", &rules::WAITING_RETRY_SECS.to_string());
    // The thread rate: 100 later messages from one client.
    let v: Value = serde_json::from_slice(&posts[0].body).unwrap();
    let first: Value = serde_json::from_slice(
        &list
            .call("10.5.5.5", T0, &post(0), json!({"text": "t"}))
            .await
            .body,
    )
    .unwrap();
    let accepted = list
        .call(
            "10.2.0.0",
            T0,
            &format!("/posts/{}/accept", id_of(&posts[0])),
            json!({"secret": v["secret"], "message_id": first["id"]}),
        )
        .await;
    assert_eq!(accepted.status, 201);
    let key: Value = serde_json::from_slice(&accepted.body).unwrap();
    let line = json!({"thread_key": key["thread_key"], "text": "line"});
    for i in 0..100 {
        let r = list
            .call(
                "10.6.6.6",
                T0 + 5 * S + i,
                "/threads/messages",
                line.clone(),
            )
            .await;
        assert_eq!(r.status, 201, "{i}");
    }
    let r = list
        .call("10.6.6.6", T0 + 65 * S, "/threads/messages", line.clone())
        .await;
    refused(&r, "rate_limited", "3540");
}

/// Bytes the database file holds in use, after a checkpoint: pages that
/// are not free.
fn used_bytes(store: &SqliteStore) -> i64 {
    store.with_connection(|c| {
        c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        let get = |p: &str| c.query_row(p, [], |r| r.get::<_, i64>(0)).unwrap();
        (get("PRAGMA page_count") - get("PRAGMA freelist_count")) * get("PRAGMA page_size")
    })
}

/// What `n` posts of notes made by `note` cost on disk, per post, against
/// the bound of five times the note's UTF-8 bytes plus 1 KiB. Each post
/// from its own IPv6 site, so every row also keeps a site hash. Measured
/// at `n`, and with `every_size` also at each size `notes::measured_size`
/// names: the figures of the size that costs the most against its bound.
async fn disk_per_post(
    label: &str,
    n: usize,
    every_size: bool,
    note: impl Fn(usize) -> String,
) -> (i64, i64) {
    disk_per_post_of(label, n, every_size, note, |_| {}).await
}

/// [`disk_per_post`] on a list that `prepare` has written to first (what
/// it writes is not counted).
async fn disk_per_post_of(
    label: &str,
    n: usize,
    every_size: bool,
    note: impl Fn(usize) -> String,
    prepare: impl Fn(&rusqlite::Connection),
) -> (i64, i64) {
    let dir = scratch("limits-disk");
    let path = dir.join("disk.db");
    let list = List::open(path.to_str().unwrap());
    list.store.with_connection(|c| prepare(c));
    let before = used_bytes(&list.store);
    let mut bytes = 0;
    let mut worst = notes::Worst::default();
    for i in 0..n {
        let text = note(i);
        bytes += text.len() as i64;
        let r = list
            .post(&format!("2001:db8:{i:x}::1"), T0 + i as i64, &text)
            .await;
        assert_eq!(
            r.status,
            201,
            "{label} {i}: {}",
            String::from_utf8_lossy(&r.body)
        );
        let posts = (i + 1) as u64;
        if every_size && notes::measured_size(posts) {
            worst.see(posts, bytes, used_bytes(&list.store) - before);
        }
    }
    worst.see(n as u64, bytes, used_bytes(&list.store) - before);
    drop(list);
    std::fs::remove_dir_all(dir).ok();
    let (per_post, bound) = worst.per_post();
    eprintln!("disk per post, {label}: {per_post} B (bound {bound} B)");
    (per_post, bound)
}

/// A unique tail of CJK letters for note `i` (common/notes.rs).
fn tail(i: usize) -> String {
    notes::tail(i as u64)
}

/// Note `i` of a case.
type NoteOf = Box<dyn Fn(usize) -> String>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_costs_on_disk_about_what_it_shows() {
    let n = 300;
    let cases: Vec<(&str, NoteOf)> = vec![
        (
            "ascii 500",
            Box::new(|i| format!("{}{}", "a".repeat(498), tail(i))),
        ),
        (
            "U+FDFA x 498",
            Box::new(|i| format!("{}{}", "\u{fdfa}".repeat(498), tail(i))),
        ),
        (
            "4-byte letters x 498",
            Box::new(|i| format!("{}{}", "\u{20000}".repeat(498), tail(i))),
        ),
        ("two letters", Box::new(tail)),
        ("ordinary words, a young list", {
            let ordinary = notes::Ordinary::new();
            Box::new(move |i| ordinary.note(i as u64))
        }),
        // Words that no other note holds, in number.
        (
            "random words of 1-10 letters",
            Box::new(|i| notes::random_words(i as u64)),
        ),
        (
            "base64url",
            Box::new(|i| {
                notes::from_alphabet(
                    i as u64,
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
                )
            }),
        ),
        (
            "55 words of 8 ASCII letters",
            Box::new(|i| notes::unique_words(i as u64, 55, 8, 97, 26)),
        ),
        (
            "55 words of 8 Deseret letters",
            Box::new(|i| notes::unique_words(i as u64, 55, 8, 0x10428, 40)),
        ),
        // A run of letters written without spaces: it waits whole, and its
        // words and tokens share a page. Its letters are 7 apart from a
        // point of the post's own, so a post's pairs come back 40 posts
        // later (20,000 pairs in all) and merged segments share them.
        (
            "498 Han letters, 7 apart",
            Box::new(|i| notes::han(i as u64, |k| (i as u64 * 499 + k * 7) % 20000)),
        ),
        // And as spaced words: one-letter words of two-byte letters.
        (
            "distinct words x 166",
            Box::new(|i| {
                (0..166)
                    .map(|k| {
                        char::from_u32(0x3b1 + ((i + k) % 25) as u32)
                            .unwrap()
                            .to_string()
                            + &char::from_u32(0x430 + ((i / 25 + k) % 32) as u32)
                                .unwrap()
                                .to_string()
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
                    + " "
                    + &tail(i)
            }),
        ),
    ];
    for (label, note) in cases {
        // Every size: a list of Han notes costs the most while its
        // segments are apart, each holding the pairs once
        // (docs/design/search-costs.md, "The disk bound").
        let (per_post, bound) = disk_per_post(label, n, true, note).await;
        assert!(
            per_post <= bound,
            "{label}: {per_post} B a post, bound {bound} B"
        );
    }
}

/// A word as long as a query word can be, that every note holds and the
/// hot set holds to its end, as a list that many posts share promotes it
/// a character at a time: each post is a term of each of its hundred
/// prefixes in the hot part (and the word is not in the cold part), and
/// stays within the bound, in letters of one byte and of four.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_word_the_hot_set_holds_to_its_end_costs_about_its_note() {
    for (label, letter) in [
        ("100 ASCII letters", 'a'),
        ("100 Deseret letters", '\u{10428}'),
    ] {
        let word: String = (0..100u32)
            .map(|k| char::from_u32(letter as u32 + k % 26).unwrap())
            .collect();
        let marked = format!("\u{207f}{word}");
        let chain = |c: &rusqlite::Connection| {
            let ends = marked.char_indices().map(|(i, _)| i).skip(2);
            for end in ends.chain([marked.len()]) {
                c.execute("INSERT INTO hot_prefixes (p) VALUES (?1)", [&marked[..end]])
                    .unwrap();
            }
        };
        let note = |i: usize| format!("{word} {}", tail(i));
        let (per_post, bound) = disk_per_post_of(label, 300, true, note, chain).await;
        assert!(
            per_post <= bound,
            "{label}: {per_post} B a post, bound {bound} B"
        );
    }
}

/// A writer hands the tokens of its copy of the hot set with a post's
/// words only while the two share a page with another waiting post
/// (`store::WAITING_ROW_BYTES`); past that the post waits with its words
/// and what the cold part needs of them, and the move finds its tokens. Notes of 300 letters of 30
/// common ones, on a list where each of those letters and their pairs is
/// hot: a note's tokens are three times its words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_post_of_long_tokens_waits_with_its_words_alone() {
    let dir = scratch("limits-tokens");
    let path = dir.join("tokens.db");
    let list = List::open(path.to_str().unwrap());
    list.store.with_connection(|c| {
        let letters: Vec<char> = (0..30).map(|k| notes::letter(0x4e00, k)).collect();
        let mut hot: Vec<String> = letters.iter().map(|a| format!("\u{207f}{a}")).collect();
        for a in &letters {
            hot.extend(letters.iter().map(|b| format!("\u{207f}{a}{b}")));
        }
        for p in hot {
            c.execute("INSERT INTO hot_prefixes (p) VALUES (?1)", [p])
                .unwrap();
        }
    });
    let note = |i: u64| -> String {
        if i.is_multiple_of(2) {
            (0..300u64)
                .map(|k| notes::letter(0x4e00, notes::mix(i * 301 + k) % 30))
                .collect::<String>()
                + &tail(i as usize)
        } else {
            format!("a short note {}", tail(i as usize))
        }
    };
    for i in 0..100u64 {
        let note = note(i);
        let r = list
            .post(&format!("2001:db8:{i:x}::1"), T0 + i as i64, &note)
            .await;
        assert_eq!(r.status, 201, "{i}: {}", String::from_utf8_lossy(&r.body));
    }
    let rows: Vec<(i64, Option<i64>)> = list.store.with_connection(|c| {
        c.prepare(
            "SELECT length(CAST(words AS BLOB)), length(CAST(tokens AS BLOB)) + \
             coalesce(length(CAST(cold AS BLOB)), 0) FROM words_new",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
    });
    assert_eq!(rows.len(), 36, "100 posts, 64 moved");
    let limit = needhave::store::WAITING_ROW_BYTES as i64;
    let alone = rows.iter().filter(|(_, t)| t.is_none()).count();
    let with = rows.iter().filter(|(_, t)| t.is_some()).count();
    // The long notes wait alone; the short ones with their tokens.
    assert_eq!((alone, with), (18, 18), "{rows:?}");
    assert!(rows.iter().any(|(w, _)| *w > 900), "{rows:?}");
    for (words, tokens) in &rows {
        assert!(words + tokens.unwrap_or(0) <= limit, "{words} + {tokens:?}");
    }
    // Moved (28 more make 128) or waiting, each is found by its pairs and
    // letters as its note holds them.
    for i in 100..128u64 {
        let r = list
            .post(&format!("2001:db8:{i:x}::1"), T0 + i as i64, &note(i))
            .await;
        assert_eq!(r.status, 201);
    }
    let (a, b) = (notes::letter(0x4e00, 0), notes::letter(0x4e00, 1));
    for q in [format!("{a}{b}"), format!("{b}{a}"), a.to_string()] {
        let want = (0..128u64)
            .filter(|&i| {
                let n = note(i);
                match q.chars().count() {
                    // A single letter: a pair it begins.
                    1 => {
                        n.contains(&q)
                            && n.chars()
                                .collect::<Vec<_>>()
                                .windows(2)
                                .any(|w| w[0] == a && rules::words::unspaced(w[1]))
                    }
                    _ => n.contains(&q),
                }
            })
            .count();
        let path = format!("/posts?limit=100&q={}", urlencode(&q));
        let ctx = local::ctx(list.store.clone(), list.config.clone(), "2001:db8:ffff::1");
        let r = local::call(&ctx, "GET", &path, None).await;
        let found = serde_json::from_slice::<Value>(&r.body).unwrap()["posts"]
            .as_array()
            .unwrap()
            .len();
        assert!(want > 10, "{q}: {want}");
        assert_eq!(found, want, "{q}");
    }
    drop(list);
    std::fs::remove_dir_all(dir).ok();
}

/// `s` percent-encoded for a query string.
fn urlencode(s: &str) -> String {
    s.bytes().map(|b| format!("%{b:02X}")).collect()
}
