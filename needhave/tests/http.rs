//! Every HTTP line of the contract, black-box, against a list at a base URL
//! (`needhave serve` by default; `NEEDHAVE_TEST_URL` for another host of the
//! same calls, such as `wrangler dev`).
//!
//! Each scenario is also re-run by `every_declared_status_is_produced`, which
//! then checks that every status the table declares for every route was seen:
//! a status nobody can produce is a lie in the OpenAPI document.

mod common;

use std::collections::HashSet;

use common::*;
use serde_json::{json, Value};

const ZERO_ID: &str = "00000000000000000000000000000000";

scenarios![
    home_page,
    openapi_document,
    documents,
    healthz,
    create_post_answer,
    create_post_bad_input,
    create_post_order_of_checks,
    text_length_and_trimming,
    duplicate_notes,
    normalized_duplicates,
    concurrent_normalized_copies,
    invisible_and_unreadable_texts,
    contact_details_table,
    contact_details_order,
    create_rate_limit,
    list_posts,
    list_posts_bad_parameters,
    read_post,
    first_reply,
    first_reply_bad_input,
    public_messages_are_always_empty,
    waiting_list,
    waiting_cap,
    reply_rate_limit,
    accepting,
    callback_and_thread,
    thread_privacy,
    thread_shows_first_then_100_most_recent,
    thread_message_errors,
    thread_rate_limit,
    concurrent_thread_messages,
    secrets_are_shown_once,
    head_is_get_without_the_body,
    unknown_routes_and_methods,
    body_too_large,
    concurrent_first_replies,
    concurrent_creates,
    concurrent_accepts,
    mcp_transport,
];

#[test]
fn every_declared_status_is_produced() {
    // A 500 is the server failing, which no well-run list does to a
    // black-box client: `tests/failsafe.rs` produces every declared one
    // in process (no IP salt, no client IP). A 503 of `/healthz` is the
    // store failing too: `tests/operating.rs` puts a failing store behind
    // a real socket. A post's life needs the operator's removal:
    // `tests/life.rs` produces those statuses.
    let missing = unseen(run_all(), |route, s| {
        !(s == 500 || (route.path == "/healthz" && s == 503) || is_life_status(route, s))
    });
    assert!(
        missing.is_empty(),
        "declared but never produced: {missing:#?}"
    );
}

/// A probe's answer: the store answered, so the instance serves.
async fn healthz() {
    let r = Client::new().get("/healthz").await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json(), json!({"status": "ok"}));
    assert!(r
        .header("content-type")
        .is_some_and(|c| c.starts_with("application/json")));
}

/// Every document of the table answers (their contents: `discovery.rs`).
async fn documents() {
    let c = Client::new();
    for route in needhave::routes::ROUTES
        .iter()
        .filter(|r| r.method == "GET" && !r.path.contains(':'))
    {
        let r = c.get(route.path).await;
        assert_eq!(r.status, 200, "GET {}", route.path);
    }
    // A trailing slash is forgiven, as clients paste URLs with one.
    let slash = c.get("/posts/").await;
    assert_eq!(slash.status, 200);
    assert!(slash.json()["posts"].is_array());
}

async fn home_page() {
    let r = Client::new().get("/").await;
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    // The contract's service-desc link, first of the one Link header that
    // names every discovery document (checked in `discovery.rs`).
    assert!(r.header("link").is_some_and(|l| l
        .starts_with(r#"</openapi.json>; rel="service-desc"; type="application/openapi+json""#)));
    let html = r.text();
    let statement = "A public list of needs and haves. Agents post what they need and what they have. No accounts. No matcher.";
    assert!(
        html.contains(statement),
        "the product statement is on the page"
    );
    let between = |open: &str, close: &str| -> String {
        let start = html.find(open).unwrap_or_else(|| panic!("{open} missing")) + open.len();
        let end = html[start..].find(close).unwrap() + start;
        html[start..end].to_lowercase()
    };
    let title = between("<title>", "</title>");
    let h1 = between("<h1>", "</h1>");
    for words in [&title, &h1] {
        assert!(
            words.contains("public list") && words.contains("needs") && words.contains("haves")
        );
    }
    assert!(html.contains(&format!(
        r#"<meta name="description" content="{statement}">"#
    )));
    assert!(html.contains(
        r#"<link rel="service-desc" type="application/openapi+json" href="/openapi.json">"#
    ));
    assert!(html.contains(r#"href="/posts""#) && html.contains(r#"href="/openapi.json""#));
    let lower = html.to_lowercase();
    for absent in [
        "<script",
        "<form",
        "noindex",
        "<iframe",
        "<img",
        "analytics",
    ] {
        assert!(!lower.contains(absent), "{absent} on the home page");
    }
    // No posts on the page, live or example.
    let p = create_post("need").await;
    let again = Client::new().get("/").await.text();
    assert!(!again.contains(&p.note) && !again.contains(&p.id));
}

async fn openapi_document() {
    let r = Client::new().get("/openapi.json").await;
    assert_eq!(r.status, 200);
    assert!(r
        .header("content-type")
        .unwrap()
        .starts_with("application/json"));
    let doc = r.json();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    let mut expected = HashSet::new();
    for route in needhave::routes::ROUTES {
        let path: String = route
            .path
            .split('/')
            .map(|s| {
                s.strip_prefix(':')
                    .map_or(s.to_string(), |p| format!("{{{p}}}"))
            })
            .collect::<Vec<_>>()
            .join("/");
        expected.insert(path.clone());
        let op = &paths[&path][route.method.to_lowercase()];
        assert!(
            op.is_object(),
            "{} {} is in the document",
            route.method,
            route.path
        );
        for status in route.statuses() {
            assert!(
                op["responses"][status.to_string()].is_object(),
                "{} {} documents {status}",
                route.method,
                route.path
            );
        }
    }
    let documented: HashSet<String> = paths.keys().cloned().collect();
    assert_eq!(documented, expected, "exactly the calls that exist");
    let text = r.text().to_lowercase();
    for absent in ["matcher\"", "account\"", "price", "payment"] {
        assert!(!text.contains(absent), "{absent} in the document");
    }
}

async fn create_post_answer() {
    for kind in ["need", "have"] {
        let note = fresh_note(kind);
        let r = Client::new()
            .post(
                "/posts",
                json!({"kind": kind, "note": format!("  {note}\n")}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text());
        assert_eq!(r.header("cache-control"), Some("no-store"));
        let v = r.json();
        assert_eq!(v["kind"], kind);
        assert_eq!(v["note"], note.as_str(), "stored and returned trimmed");
        assert!(is_hex(v["id"].as_str().unwrap(), 32));
        assert!(is_hex(v["secret"].as_str().unwrap(), 64));
        let keys: HashSet<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            HashSet::from(["id", "kind", "note", "secret", "created_at"])
        );
    }
}

async fn create_post_bad_input() {
    let c = Client::new();
    for body in [&b"[1,2]"[..], b"\"x\"", b"{", b"", b"null", b"42"] {
        c.post_raw("/posts", body)
            .await
            .expect_error(400, "bad_request");
    }
    for body in [
        json!({"kind": "need"}),
        json!({"kind": "need", "note": 5}),
        json!({"kind": "need", "note": null}),
        json!({"kind": 1, "note": "x"}),
    ] {
        c.post("/posts", body)
            .await
            .expect_error(400, "bad_request");
    }
    for body in [
        json!({"note": fresh_note("no kind")}),
        json!({"kind": "offer", "note": fresh_note("bad kind")}),
        json!({"kind": "NEED", "note": fresh_note("bad kind")}),
        json!({"kind": null, "note": fresh_note("bad kind")}),
    ] {
        c.post("/posts", body).await.expect_error(400, "bad_kind");
    }
    // Unknown fields are ignored.
    let r = c
        .post(
            "/posts",
            json!({"kind": "have", "note": fresh_note("extra"), "contact": "x"}),
        )
        .await;
    assert_eq!(r.status, 201);
    assert!(r.json().get("contact").is_none());
}

async fn create_post_order_of_checks() {
    let c = Client::new();
    // bad_request before bad_kind.
    c.post("/posts", json!({"kind": "offer"}))
        .await
        .expect_error(400, "bad_request");
    // bad_kind before empty/huge.
    c.post("/posts", json!({"kind": "offer", "note": "  "}))
        .await
        .expect_error(400, "bad_kind");
    // empty/huge before duplicate.
    c.post("/posts", json!({"kind": "need", "note": ""}))
        .await
        .expect_error(400, "empty_note");
    // duplicate before the rate limit: an IP at its limit posting a
    // duplicate hears about the duplicate.
    let taken = create_post("need").await;
    for _ in 0..10 {
        let r = c
            .post(
                "/posts",
                json!({"kind": "need", "note": fresh_note("fill")}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    c.post("/posts", json!({"kind": "have", "note": taken.note}))
        .await
        .expect_error(409, "duplicate_note");
    c.post(
        "/posts",
        json!({"kind": "have", "note": fresh_note("over")}),
    )
    .await
    .expect_error(429, "rate_limited");
}

async fn text_length_and_trimming() {
    let c = Client::new();
    let tag = fresh_note("")[2..].to_string();
    // 500 é pass (1000 bytes), 501 a fail.
    let e500: String = format!("{}{}", "é".repeat(500 - tag.chars().count()), tag);
    assert_eq!(e500.chars().count(), 500);
    let r = c
        .post("/posts", json!({"kind": "have", "note": e500}))
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    c.post("/posts", json!({"kind": "have", "note": "a".repeat(501)}))
        .await
        .expect_error(400, "huge_note");
    // Trimming is Unicode whitespace, before counting.
    let padded = format!(
        "\u{3000}\u{a0} {}\u{2003}\t",
        "b".repeat(500 - tag.len()) + &tag
    );
    let r = c
        .post("/posts", json!({"kind": "need", "note": padded}))
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["note"].as_str().unwrap().chars().count(), 500);
    for blank in ["", "   ", "\u{3000}\n\t\u{a0}"] {
        c.post("/posts", json!({"kind": "need", "note": blank}))
            .await
            .expect_error(400, "empty_note");
    }
    // The same rules for message text.
    let p = create_post("need").await;
    let path = format!("/posts/{}/messages", p.id);
    c.post(&path, json!({"text": " \n "}))
        .await
        .expect_error(400, "empty_note");
    c.post(&path, json!({"text": "ü".repeat(501)}))
        .await
        .expect_error(400, "huge_note");
    let r = Client::new()
        .post(&path, json!({"text": "ü".repeat(500)}))
        .await;
    assert_eq!(r.status, 201);
}

async fn duplicate_notes() {
    let p = create_post("need").await;
    // Any kind, after trimming, from anyone.
    Client::new()
        .post(
            "/posts",
            json!({"kind": "have", "note": format!("  {}  ", p.note)}),
        )
        .await
        .expect_error(409, "duplicate_note");
    // Duplicate is a posts rule only: the same text as a message is fine.
    let r = Client::new()
        .post(
            &format!("/posts/{}/messages", p.id),
            json!({"text": p.note}),
        )
        .await;
    assert_eq!(r.status, 201);
}

/// The committed key vectors (`tests/data/note-keys.tsv`) over HTTP: notes
/// that share a key are copies of each other, notes of different keys are
/// not. On the Worker, where NFKC is the JavaScript runtime's, this is what
/// proves it agrees with the native crate that `tests/rules.rs` checks.
async fn normalized_duplicates() {
    let rows = data_table("note-keys.tsv");
    // One tag for the run, after the note: it keeps the notes new and every
    // key apart from other runs' without changing which notes share one.
    let tag = format!(" z{}", &fresh_note("")[2..]);
    let mut first_of: Vec<&str> = Vec::new();
    let mut wrong = Vec::new();
    for row in &rows {
        let (key, note) = (row[0].as_str(), row[1].as_str());
        let copy = first_of.contains(&key);
        let r = Client::new()
            .post(
                "/posts",
                json!({"kind": "need", "note": format!("{note}{tag}")}),
            )
            .await;
        let want = if copy { 409 } else { 201 };
        if r.status != want {
            wrong.push(format!(
                "{note:?} (key {key:?}): want {want}, got {} {}",
                r.status,
                r.text()
            ));
        }
        if r.status == 201 {
            // Stored and shown as written.
            assert_eq!(r.json()["note"], format!("{note}{tag}").trim());
        }
        if !copy {
            first_of.push(key);
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Copies that differ only in case, spacing, punctuation and invisible
/// characters, fired at once: the unique key index lets exactly one in.
async fn concurrent_normalized_copies() {
    let base = fresh_note("race");
    let variants = [
        base.clone(),
        base.to_uppercase(),
        format!("{base}!"),
        format!("\u{200b}{base}"),
        base.replace(' ', "  "),
        format!("{base}\u{feff}"),
        base.replace(' ', "\u{a0}"),
        format!("¡{base}?"),
    ];
    let futures = variants
        .into_iter()
        .map(|note| {
            Box::pin(async move {
                Client::new()
                    .post("/posts", json!({"kind": "have", "note": note}))
                    .await
            }) as std::pin::Pin<Box<dyn std::future::Future<Output = Resp> + Send>>
        })
        .collect();
    let t = tally(&statuses(futures).await);
    assert_eq!(count(&t, 201, ""), 1, "{t:?}");
    assert_eq!(count(&t, 409, "duplicate_note"), 7, "{t:?}");
}

/// Nothing visible is empty, a control character is unreadable: for notes,
/// first replies and thread messages alike.
async fn invisible_and_unreadable_texts() {
    let p = create_post("need").await;
    let a = reply(&p).await;
    let key = accept(&p, &a).await;
    let reply_path = format!("/posts/{}/messages", p.id);
    let c = Client::new();
    let send = |field: &'static str, text: String| {
        let (path, body) = match field {
            "note" => ("/posts".to_string(), json!({"kind": "need", "note": text})),
            "reply" => (reply_path.clone(), json!({"text": text})),
            _ => (
                "/threads/messages".to_string(),
                json!({"thread_key": key, "text": text}),
            ),
        };
        async move { c.post(&path, body).await }
    };
    for field in ["note", "reply", "thread"] {
        for blank in [
            "\u{200b}",
            " \u{feff}\u{2060} ",
            "\u{180e}\u{200c}\u{200d}",
            "\u{fe0f}\u{ad}\u{3164}",
            "\u{2800}",
            "\u{fff9}\u{fffb} \u{600}",
            "\u{301}\u{93f}",
        ] {
            send(field, blank.to_string())
                .await
                .expect_error(400, "empty_note");
        }
        for bad in [
            "\u{1}",
            "a\u{0}b",
            "\u{1b}[2J",
            "x\u{7f}",
            "x\u{85}y",
            "\u{9f}z",
            "\u{202e}",
            "x\u{2066}",
            "\u{e0041}\u{e0042}",
        ] {
            send(field, format!("{bad} {}", fresh_note(field)))
                .await
                .expect_error(400, "bad_note");
        }
        // Tab, newline and carriage return are text; so is an invisible
        // character beside visible ones.
        let fine = format!("line\tone\r\nline two\u{200b} {}", fresh_note(field));
        let r = send(field, fine.clone()).await;
        assert_eq!(r.status, 201, "{field}: {}", r.text());
        // Order: empty and huge before unreadable.
        send(field, "\u{1}".repeat(501))
            .await
            .expect_error(400, "huge_note");
    }
}

/// The committed table of notes that hold contact details and notes that
/// only look like it (`tests/data/contact-notes.tsv`), through `POST /posts`.
async fn contact_details_table() {
    let rows = data_table("contact-notes.tsv");
    let mut wrong = Vec::new();
    for row in &rows {
        let (expect, note) = (row[0].as_str(), row[1].as_str());
        // A fresh tag keeps the passing notes new; it holds no digits a
        // phone could take (it starts with a letter and follows a space).
        let body = json!({"kind": "have", "note": format!("{note} z{}", &fresh_note("")[2..])});
        let r = Client::new().post("/posts", body).await;
        let ok = match expect {
            "pass" => r.status == 201,
            code => (r.status, r.error()) == (400, code.to_string()),
        };
        if !ok {
            wrong.push(format!("{expect} {note:?}: {} {}", r.status, r.text()));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Contact details after the text rules and before duplicate and rate limit;
/// a post's note only: replies and thread messages are private.
async fn contact_details_order() {
    let c = Client::new();
    c.post(
        "/posts",
        json!({"kind": "need", "note": "bob@example.com \u{1}"}),
    )
    .await
    .expect_error(400, "bad_note");
    for _ in 0..10 {
        let r = c
            .post(
                "/posts",
                json!({"kind": "need", "note": fresh_note("fill")}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    c.post(
        "/posts",
        json!({"kind": "have", "note": format!("call (415) 555-0100 {}", fresh_note(""))}),
    )
    .await
    .expect_error(400, "contact_details");
    let p = create_post("have").await;
    let a = Client::new()
        .post(
            &format!("/posts/{}/messages", p.id),
            json!({"text": "write to bob@example.com or +1 415 555 0100"}),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let a = Reply {
        id: a.json()["id"].as_str().unwrap().to_string(),
        secret: a.json()["secret"].as_str().unwrap().to_string(),
        text: String::new(),
    };
    let key = accept(&p, &a).await;
    let r = Client::new()
        .post(
            "/threads/messages",
            json!({"thread_key": key, "text": "mine is alice@example.org"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
}

async fn create_rate_limit() {
    let c = Client::new();
    for i in 0..10 {
        let r = c
            .post(
                "/posts",
                json!({"kind": "need", "note": fresh_note("rate")}),
            )
            .await;
        assert_eq!(r.status, 201, "create {i}: {}", r.text());
    }
    c.post(
        "/posts",
        json!({"kind": "have", "note": fresh_note("rate")}),
    )
    .await
    .expect_error(429, "rate_limited");
    // Another IP is not affected.
    let r = Client::new()
        .post(
            "/posts",
            json!({"kind": "need", "note": fresh_note("rate")}),
        )
        .await;
    assert_eq!(r.status, 201);
}

async fn list_posts() {
    // 101 new posts from 11 IPs: the list is the 100 newest, newest first.
    let mut mine = Vec::new();
    for _ in 0..11 {
        let c = Client::new();
        for _ in 0..10 {
            if mine.len() == 101 {
                break;
            }
            let note = fresh_note("list");
            let r = c
                .post("/posts", json!({"kind": "have", "note": note}))
                .await;
            assert_eq!(r.status, 201);
            mine.push(r.json()["id"].as_str().unwrap().to_string());
        }
    }
    let r = Client::new().get("/posts").await;
    assert_eq!(r.status, 200);
    let posts = r.json()["posts"].as_array().unwrap().clone();
    assert_eq!(posts.len(), 100);
    for p in &posts {
        let mut keys: HashSet<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
        // Where its author gave one (`tests/life.rs`).
        keys.remove("expires_at");
        assert_eq!(
            keys,
            HashSet::from(["id", "kind", "note", "created_at", "status"])
        );
        assert_eq!(p["status"], "open");
    }
    let ids: Vec<&str> = posts.iter().map(|p| p["id"].as_str().unwrap()).collect();
    // Other tests may post at the same time on a shared list; ours keep their order.
    let ours: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| mine.iter().any(|m| m == id))
        .collect();
    let expected: Vec<&str> = mine
        .iter()
        .rev()
        .map(String::as_str)
        .take(ours.len())
        .collect();
    assert_eq!(ours, expected, "newest first");
    assert!(!ids.contains(&mine[0].as_str()) || ours.len() < 101);
    if !server().is_remote() {
        // Alone on the list only in an isolated run; at least most are ours.
        assert!(ours.len() >= 50, "{} of ours in the 100 newest", ours.len());
    }
}

/// The list's parameters as the table declares them: a kind that is not
/// one is `bad_kind`; a count, a query or a cursor out of bounds is
/// `bad_request` (the breadth of it: `tests/search.rs`).
async fn list_posts_bad_parameters() {
    let c = Client::new();
    for bad in ["/posts?kind=needs", "/posts?kind=", "/posts?kind=Need"] {
        c.get(bad).await.expect_error(400, "bad_kind");
    }
    for bad in [
        "/posts?limit=0",
        "/posts?limit=101",
        "/posts?limit=ten",
        "/posts?before=not-a-cursor",
        "/posts?q=a+b+c+d+e+f+g+h+i",
    ] {
        c.get(bad).await.expect_error(400, "bad_request");
    }
    let r = c.get("/posts?kind=need&limit=1").await;
    assert_eq!(r.status, 200, "{}", r.text());
    // The feed takes the same two filters, checked the same way.
    c.get("/posts.atom?kind=needs")
        .await
        .expect_error(400, "bad_kind");
    c.get("/posts.atom?q=a+b+c+d+e+f+g+h+i")
        .await
        .expect_error(400, "bad_request");
}

async fn read_post() {
    let p = create_post("have").await;
    let r = Client::new().get(&format!("/posts/{}", p.id)).await;
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(
        v,
        json!({"id": p.id, "kind": "have", "note": p.note,
            "created_at": v["created_at"], "status": "open"})
    );
    // Its age (its format: `tests/life.rs`).
    assert!(v["created_at"].as_str().is_some_and(|t| t.ends_with('Z')));
    let c = Client::new();
    c.get(&format!("/posts/{ZERO_ID}"))
        .await
        .expect_error(404, "not_found");
    for bad in [
        "xyz",
        &p.id.to_uppercase(),
        &p.id[..31],
        &format!("{}0", p.id),
    ] {
        c.get(&format!("/posts/{bad}"))
            .await
            .expect_error(404, "not_found");
    }
}

async fn first_reply() {
    let p = create_post("need").await;
    let r = Client::new()
        .post(
            &format!("/posts/{}/messages", p.id),
            json!({"text": "  I can help  "}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let v = r.json();
    assert_eq!(v["post_id"], p.id.as_str());
    assert_eq!(v["hidden"], true);
    assert!(is_hex(v["id"].as_str().unwrap(), 32));
    assert!(is_hex(v["secret"].as_str().unwrap(), 64));
    let keys: HashSet<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, HashSet::from(["id", "post_id", "hidden", "secret"]));
}

async fn first_reply_bad_input() {
    let p = create_post("need").await;
    let c = Client::new();
    let path = format!("/posts/{}/messages", p.id);
    for body in [&b"[]"[..], b"{}", b"{\"text\":1}", b"nope"] {
        c.post_raw(&path, body)
            .await
            .expect_error(400, "bad_request");
    }
    // Order: bad_request, empty/huge, then the post must exist.
    let missing = format!("/posts/{ZERO_ID}/messages");
    c.post(&missing, json!({}))
        .await
        .expect_error(400, "bad_request");
    c.post(&missing, json!({"text": ""}))
        .await
        .expect_error(400, "empty_note");
    c.post(&missing, json!({"text": "x".repeat(501)}))
        .await
        .expect_error(400, "huge_note");
    c.post(&missing, json!({"text": "hello"}))
        .await
        .expect_error(404, "not_found");
    c.post("/posts/nothex/messages", json!({"text": "hello"}))
        .await
        .expect_error(404, "not_found");
    // A path id that is not one is `not_found` before the body is read.
    for path in [
        "/posts/nothex/messages",
        "/posts/nothex/waiting",
        "/posts/nothex/accept",
        "/messages/nothex/thread",
    ] {
        for body in [&b"nope"[..], b"[]", b"{}"] {
            c.post_raw(path, body).await.expect_error(404, "not_found");
        }
    }
}

async fn public_messages_are_always_empty() {
    let p = create_post("need").await;
    let r1 = reply(&p).await;
    let _r2 = reply(&p).await;
    let key = accept(&p, &r1).await;
    let _ = Client::new()
        .post(
            "/threads/messages",
            json!({"thread_key": key, "text": "later"}),
        )
        .await;
    let r = Client::new()
        .get(&format!("/posts/{}/messages", p.id))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!({"messages": []}));
    Client::new()
        .get(&format!("/posts/{ZERO_ID}/messages"))
        .await
        .expect_error(404, "not_found");
}

async fn waiting_list() {
    let p = create_post("need").await;
    let a = reply(&p).await;
    let b = reply(&p).await;
    let c = reply(&p).await;
    let path = format!("/posts/{}/waiting", p.id);
    let r = Client::new().post(&path, json!({"secret": p.secret})).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json(),
        json!({"messages": [{"id": a.id, "text": a.text}, {"id": b.id, "text": b.text}, {"id": c.id, "text": c.text}]}),
        "oldest first, no secrets, no keys"
    );
    accept(&p, &b).await;
    let r = Client::new().post(&path, json!({"secret": p.secret})).await;
    assert_eq!(
        r.json(),
        json!({"messages": [{"id": a.id, "text": a.text}, {"id": c.id, "text": c.text}]}),
        "accepted ones are left out"
    );
    let other = create_post("have").await;
    let cl = Client::new();
    cl.post(&path, json!({"secret": other.secret}))
        .await
        .expect_error(403, "bad_secret");
    cl.post(&path, json!({"secret": ""}))
        .await
        .expect_error(403, "bad_secret");
    cl.post(&path, json!({}))
        .await
        .expect_error(400, "bad_request");
    cl.post(&path, json!({"secret": 1}))
        .await
        .expect_error(400, "bad_request");
    cl.post(
        &format!("/posts/{ZERO_ID}/waiting"),
        json!({"secret": p.secret}),
    )
    .await
    .expect_error(404, "not_found");
    // An empty waiting list.
    let r = Client::new()
        .post(
            &format!("/posts/{}/waiting", other.id),
            json!({"secret": other.secret}),
        )
        .await;
    assert_eq!(r.json(), json!({"messages": []}));
}

async fn waiting_cap() {
    let p = create_post("need").await;
    let mut replies = Vec::new();
    for _ in 0..20 {
        replies.push(reply(&p).await);
    }
    let path = format!("/posts/{}/messages", p.id);
    Client::new()
        .post(&path, json!({"text": "one more"}))
        .await
        .expect_error(429, "too_many");
    // too_many comes before the rate limit.
    let full = Client::new();
    for _ in 0..20 {
        let q = create_post("have").await;
        let r = full
            .post(
                &format!("/posts/{}/messages", q.id),
                json!({"text": "fill"}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    full.post(&path, json!({"text": "over both"}))
        .await
        .expect_error(429, "too_many");
    // Accepting one frees a place.
    accept(&p, &replies[0]).await;
    let r = Client::new()
        .post(&path, json!({"text": "now there is room"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    Client::new()
        .post(&path, json!({"text": "full again"}))
        .await
        .expect_error(429, "too_many");
}

async fn reply_rate_limit() {
    let c = Client::new();
    for i in 0..20 {
        let p = create_post("need").await;
        let r = c
            .post(&format!("/posts/{}/messages", p.id), json!({"text": "hi"}))
            .await;
        assert_eq!(r.status, 201, "reply {i}");
    }
    let p = create_post("need").await;
    c.post(&format!("/posts/{}/messages", p.id), json!({"text": "hi"}))
        .await
        .expect_error(429, "rate_limited");
    // Another IP may still answer.
    let r = Client::new()
        .post(&format!("/posts/{}/messages", p.id), json!({"text": "hi"}))
        .await;
    assert_eq!(r.status, 201);
}

async fn accepting() {
    let p = create_post("need").await;
    let a = reply(&p).await;
    let c = Client::new();
    let path = format!("/posts/{}/accept", p.id);
    c.post(&path, json!({"secret": p.secret}))
        .await
        .expect_error(400, "bad_request");
    c.post(&path, json!({"message_id": a.id}))
        .await
        .expect_error(400, "bad_request");
    c.post(&path, json!({"secret": a.secret, "message_id": a.id}))
        .await
        .expect_error(403, "bad_secret");
    c.post(&path, json!({"secret": p.secret, "message_id": ZERO_ID}))
        .await
        .expect_error(404, "not_found");
    c.post(
        &format!("/posts/{ZERO_ID}/accept"),
        json!({"secret": p.secret, "message_id": a.id}),
    )
    .await
    .expect_error(404, "not_found");
    // A first message of another post is not this post's.
    let q = create_post("have").await;
    let elsewhere = reply(&q).await;
    c.post(
        &path,
        json!({"secret": p.secret, "message_id": elsewhere.id}),
    )
    .await
    .expect_error(404, "not_found");

    let r = c
        .post(&path, json!({"secret": p.secret, "message_id": a.id}))
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let v = r.json();
    assert!(is_hex(v["thread_key"].as_str().unwrap(), 64));
    assert_eq!(v.as_object().unwrap().len(), 1);
    c.post(&path, json!({"secret": p.secret, "message_id": a.id}))
        .await
        .expect_error(409, "already_accepted");
}

async fn callback_and_thread() {
    let p = create_post("need").await;
    let a = reply(&p).await;
    let c = Client::new();
    let cb = format!("/messages/{}/thread", a.id);
    let r = c.post(&cb, json!({"secret": a.secret})).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json(),
        json!({"accepted": false}),
        "no thread_key field at all"
    );
    c.post(&cb, json!({"secret": p.secret}))
        .await
        .expect_error(403, "bad_secret");
    c.post(&cb, json!({}))
        .await
        .expect_error(400, "bad_request");
    c.post(
        &format!("/messages/{ZERO_ID}/thread"),
        json!({"secret": a.secret}),
    )
    .await
    .expect_error(404, "not_found");
    // The post itself is not a first message.
    c.post(
        &format!("/messages/{}/thread", p.id),
        json!({"secret": p.secret}),
    )
    .await
    .expect_error(404, "not_found");

    let key = accept(&p, &a).await;
    let r = c.post(&cb, json!({"secret": a.secret})).await;
    assert_eq!(r.header("cache-control"), Some("no-store"));
    assert_eq!(
        r.json(),
        json!({"accepted": true, "thread_key": key}),
        "the same key"
    );

    let w = c
        .post(
            "/threads/messages",
            json!({"thread_key": key, "text": " thanks "}),
        )
        .await;
    assert_eq!(w.status, 201, "{}", w.text());
    let wv = w.json();
    assert_eq!(wv["post_id"], p.id.as_str());
    assert!(is_hex(wv["id"].as_str().unwrap(), 32));
    let w2 = c
        .post(
            "/threads/messages",
            json!({"thread_key": key, "text": "and more"}),
        )
        .await;
    let r = c.post("/threads", json!({"thread_key": key})).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json(),
        json!({"post_id": p.id, "messages": [
            {"id": a.id, "text": a.text},
            {"id": wv["id"], "text": "thanks"},
            {"id": w2.json()["id"], "text": "and more"},
        ]})
    );
}

async fn thread_privacy() {
    let p = create_post("need").await;
    let a = reply(&p).await;
    let b = reply(&p).await;
    let key = accept(&p, &a).await;
    let c = Client::new();
    // The other respondent learns nothing.
    let r = c
        .post(
            &format!("/messages/{}/thread", b.id),
            json!({"secret": b.secret}),
        )
        .await;
    assert_eq!(r.json(), json!({"accepted": false}));
    assert!(!r.text().contains(&key));
    // Not even with their own secret on the accepted message.
    c.post(
        &format!("/messages/{}/thread", a.id),
        json!({"secret": b.secret}),
    )
    .await
    .expect_error(403, "bad_secret");
    // Anyone without the key: 404.
    c.post("/threads", json!({"thread_key": "0".repeat(64)}))
        .await
        .expect_error(404, "not_found");
    c.post("/threads", json!({"thread_key": b.secret}))
        .await
        .expect_error(404, "not_found");
    c.post("/threads", json!({}))
        .await
        .expect_error(400, "bad_request");
    // The key in the path never returns or accepts the conversation.
    let r = c.get(&format!("/threads/{key}")).await;
    r.expect_error(404, "not_found");
    let r = c
        .post(&format!("/threads/{key}"), json!({"thread_key": key}))
        .await;
    assert_eq!(r.status, 404);
    assert!(!r.text().contains(&a.text));
    let r = c
        .post(
            &format!("/threads/{key}/messages"),
            json!({"text": "sneaky"}),
        )
        .await;
    assert_eq!(r.status, 404);
    let r = c
        .post(
            &format!("/threads/{key}/messages"),
            json!({"thread_key": key, "text": "sneaky"}),
        )
        .await;
    assert_eq!(r.status, 404);
    let thread = c.post("/threads", json!({"thread_key": key})).await.json();
    assert!(
        !thread.to_string().contains("sneaky"),
        "nothing was written through the path"
    );
    assert!(
        !thread.to_string().contains(&b.text),
        "other respondents' messages are not in it"
    );
}

async fn thread_shows_first_then_100_most_recent() {
    let p = create_post("need").await;
    let a = reply(&p).await;
    let key = accept(&p, &a).await;
    // Two writers: one address may write 100 an hour.
    let (a_side, b_side) = (Client::new(), Client::new());
    for i in 0..105 {
        let c = if i % 2 == 0 { a_side } else { b_side };
        let r = c
            .post(
                "/threads/messages",
                json!({"thread_key": key, "text": format!("line {i}")}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let v = a_side
        .post("/threads", json!({"thread_key": key}))
        .await
        .json();
    let texts: Vec<&str> = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 101);
    assert_eq!(texts[0], a.text);
    let expected: Vec<String> = (5..105).map(|i| format!("line {i}")).collect();
    assert_eq!(
        texts[1..],
        expected.iter().map(String::as_str).collect::<Vec<_>>()[..]
    );
}

async fn thread_message_errors() {
    let p = create_post("need").await;
    let a = reply(&p).await;
    let key = accept(&p, &a).await;
    let c = Client::new();
    c.post("/threads/messages", json!({"thread_key": key}))
        .await
        .expect_error(400, "bad_request");
    c.post("/threads/messages", json!({"text": "x"}))
        .await
        .expect_error(400, "bad_request");
    c.post(
        "/threads/messages",
        json!({"thread_key": key, "text": "\t"}),
    )
    .await
    .expect_error(400, "empty_note");
    c.post(
        "/threads/messages",
        json!({"thread_key": key, "text": "z".repeat(501)}),
    )
    .await
    .expect_error(400, "huge_note");
    c.post(
        "/threads/messages",
        json!({"thread_key": "f".repeat(64), "text": "x"}),
    )
    .await
    .expect_error(404, "not_found");
    // The post secret and the reply secret are not the key.
    c.post(
        "/threads/messages",
        json!({"thread_key": p.secret, "text": "x"}),
    )
    .await
    .expect_error(404, "not_found");
    c.post(
        "/threads/messages",
        json!({"thread_key": a.secret, "text": "x"}),
    )
    .await
    .expect_error(404, "not_found");
}

/// 100 later messages per IP per hour, across threads; after the text
/// rules and the thread lookup.
async fn thread_rate_limit() {
    let p = create_post("need").await;
    let a = reply(&p).await;
    let key = accept(&p, &a).await;
    let other = accept_new(&p).await;
    let c = Client::new();
    for i in 0..100 {
        // Two threads: the limit is the address's, not the thread's.
        let k = if i % 2 == 0 { &key } else { &other };
        let r = c
            .post(
                "/threads/messages",
                json!({"thread_key": k, "text": format!("m {i}")}),
            )
            .await;
        assert_eq!(r.status, 201, "message {i}: {}", r.text());
    }
    c.post(
        "/threads/messages",
        json!({"thread_key": key, "text": "one more"}),
    )
    .await
    .expect_error(429, "rate_limited");
    // Order: text rules and not_found come first.
    c.post("/threads/messages", json!({"thread_key": key, "text": " "}))
        .await
        .expect_error(400, "empty_note");
    c.post(
        "/threads/messages",
        json!({"thread_key": "e".repeat(64), "text": "x"}),
    )
    .await
    .expect_error(404, "not_found");
    // Another address in the same thread is not affected.
    let r = Client::new()
        .post(
            "/threads/messages",
            json!({"thread_key": key, "text": "still open"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
}

/// A thread of its own for another first reply on `p`; its key.
async fn accept_new(p: &Post) -> String {
    let a = reply(p).await;
    accept(p, &a).await
}

/// 120 later messages fired at once from one address: exactly 100 written.
///
/// Natively, against a server of its own whose per-IP connection cap is
/// above 120: with the default cap (64) the server turns the excess
/// connections away before they are requests, and this is about the store's
/// limit, not the connection cap.
async fn concurrent_thread_messages() {
    static WIDE: std::sync::OnceLock<Server> = std::sync::OnceLock::new();
    let server: &'static Server = if server().is_remote() {
        server()
    } else {
        WIDE.get_or_init(|| Server::spawn(&["--max-connections-per-ip", "256"]))
    };
    let post = |ip, path: &str, body: Value| {
        let body = Some(body.to_string().into_bytes());
        let path = path.to_string();
        async move { send_to(server, ip, "POST", &path, body, &[]).await }
    };
    let p = post(
        fresh_ip(),
        "/posts",
        json!({"kind": "have", "note": fresh_note("flood")}),
    )
    .await
    .json();
    let post_id = p["id"].as_str().unwrap();
    let a = post(
        fresh_ip(),
        &format!("/posts/{post_id}/messages"),
        json!({"text": "first"}),
    )
    .await
    .json();
    let key = post(
        fresh_ip(),
        &format!("/posts/{post_id}/accept"),
        json!({"secret": p["secret"], "message_id": a["id"]}),
    )
    .await
    .json()["thread_key"]
        .as_str()
        .unwrap()
        .to_string();
    let ip = fresh_ip();
    let futures = (0..120)
        .map(|i| {
            let body = json!({"thread_key": key, "text": format!("flood {i}")});
            Box::pin(post(ip, "/threads/messages", body))
                as std::pin::Pin<Box<dyn std::future::Future<Output = Resp> + Send>>
        })
        .collect();
    let t = tally(&statuses(futures).await);
    assert_eq!(count(&t, 201, ""), 100, "{t:?}");
    assert_eq!(count(&t, 429, "rate_limited"), 20, "{t:?}");
    let thread = post(fresh_ip(), "/threads", json!({"thread_key": key}))
        .await
        .json();
    assert_eq!(thread["messages"].as_array().unwrap().len(), 101);
}

async fn secrets_are_shown_once() {
    let p = create_post("need").await;
    let a = reply(&p).await;
    let key = accept(&p, &a).await;
    let c = Client::new();
    c.post(
        "/threads/messages",
        json!({"thread_key": key, "text": "hello"}),
    )
    .await;
    let answers = [
        c.get("/posts").await,
        c.get(&format!("/posts/{}", p.id)).await,
        c.get(&format!("/posts/{}/messages", p.id)).await,
        c.post(
            &format!("/posts/{}/waiting", p.id),
            json!({"secret": p.secret}),
        )
        .await,
        c.post(
            &format!("/messages/{}/thread", a.id),
            json!({"secret": a.secret}),
        )
        .await,
        c.post("/threads", json!({"thread_key": key})).await,
        c.get("/").await,
        c.get("/openapi.json").await,
    ];
    for r in &answers {
        let text = r.text();
        assert!(!text.contains(&p.secret), "post secret shown again");
        assert!(!text.contains(&a.secret), "reply secret shown again");
    }
    // The key reaches only the author (accept) and the accepted respondent
    // (callback); reading the thread does not repeat it.
    assert!(!answers[5].text().contains(&key));
    assert!(!answers[3].text().contains(&key));
}

/// `HEAD` on every `GET` route: the `GET`'s status and headers, its
/// `Content-Length` the length of the body the `GET` sends, and no body;
/// a conditional `HEAD` is a 304 like the `GET`.
async fn head_is_get_without_the_body() {
    let c = Client::new();
    let post = create_post("have").await;
    let read = format!("/posts/{}", post.id);
    let paths = [
        "/",
        "/openapi.json",
        "/llms.txt",
        "/robots.txt",
        "/healthz",
        "/posts",
        "/posts?kind=have&limit=3",
        "/posts.atom",
        read.as_str(),
        &format!("{read}/messages"),
        &format!("/posts/{ZERO_ID}"),
        "/posts?limit=0",
        "/.well-known/agent-skills/index.json",
    ];
    for path in paths {
        // The list changes under concurrent tests: the two answers are of
        // the same list when their tags agree.
        let (mut get, mut head) = (c.get(path).await, c.send("HEAD", path, None, &[]).await);
        for _ in 0..100 {
            if get.header("etag") == head.header("etag") {
                break;
            }
            get = c.get(path).await;
            head = c.send("HEAD", path, None, &[]).await;
        }
        assert_eq!(
            head.header("etag"),
            get.header("etag"),
            "HEAD {path}: never the same list as a GET"
        );
        assert_eq!(head.status, get.status, "HEAD {path}");
        assert!(head.body.is_empty(), "HEAD {path}: a body");
        assert_eq!(
            head.header("content-length"),
            Some(get.body.len().to_string().as_str()),
            "HEAD {path}"
        );
        for name in [
            "content-type",
            "etag",
            "cache-control",
            "access-control-allow-origin",
        ] {
            assert_eq!(head.header(name), get.header(name), "HEAD {path}: {name}");
        }
    }
    // A conditional HEAD of an unchanged list is 304; other tests add to
    // the list meanwhile, so the pair is asked again until nothing came
    // between them.
    let mut answer = (0, 0);
    for _ in 0..100 {
        let get = c.get("/posts").await;
        let tag = get.header("etag").expect("an etag");
        let head = c
            .send("HEAD", "/posts", None, &[("if-none-match", tag)])
            .await;
        answer = (head.status, head.body.len());
        if answer.0 == 304 {
            break;
        }
        assert_eq!(answer, (200, 0), "a conditional HEAD of a changed list");
    }
    assert_eq!(answer, (304, 0));
}

async fn unknown_routes_and_methods() {
    let c = Client::new();
    for path in [
        "/nope",
        "/posts//",
        "/posts/x/y/z",
        "/threads/x",
        "/mcp/x",
        "/openapi",
        "//",
    ] {
        c.get(path).await.expect_error(404, "not_found");
    }
    let cases: &[(&str, &str, &str)] = &[
        ("DELETE", "/posts", "GET, HEAD, POST"),
        ("PUT", "/", "GET, HEAD"),
        ("POST", "/openapi.json", "GET, HEAD"),
        ("GET", "/threads", "POST"),
        ("HEAD", "/threads", "POST"),
        (
            "PATCH",
            "/posts/00000000000000000000000000000000",
            "GET, HEAD",
        ),
        (
            "GET",
            "/posts/00000000000000000000000000000000/waiting",
            "POST",
        ),
        (
            "DELETE",
            "/posts/00000000000000000000000000000000/messages",
            "GET, HEAD, POST",
        ),
        ("GET", "/mcp", "POST"),
        ("DELETE", "/mcp", "POST"),
    ];
    for (method, path, allow) in cases {
        let r = c.send(method, path, None, &[]).await;
        if *method == "HEAD" {
            assert_eq!((r.status, r.body.len()), (405, 0), "{method} {path}");
        } else {
            r.expect_error(405, "method_not_allowed");
        }
        let mut got: Vec<&str> = r.header("allow").unwrap_or("").split(", ").collect();
        let mut want: Vec<&str> = allow.split(", ").collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{method} {path}");
    }
}

async fn body_too_large() {
    let c = Client::new();
    let big = json!({"kind": "need", "note": "x".repeat(70 * 1024)}).to_string();
    let r = c.post_raw("/posts", big.as_bytes()).await;
    r.expect_error(413, "too_large");
    let p = create_post("need").await;
    let big = json!({"text": "y".repeat(65 * 1024)}).to_string();
    c.post_raw(&format!("/posts/{}/messages", p.id), big.as_bytes())
        .await
        .expect_error(413, "too_large");
    // Just under the limit is read, and judged on its content.
    let under = json!({"kind": "need", "note": "x".repeat(60 * 1024)}).to_string();
    c.post_raw("/posts", under.as_bytes())
        .await
        .expect_error(400, "huge_note");
}

async fn statuses(
    futures: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = Resp> + Send>>>,
) -> Vec<Resp> {
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

fn tally(resps: &[Resp]) -> Vec<(u16, String)> {
    let mut t: Vec<(u16, String)> = resps
        .iter()
        .map(|r| {
            (
                r.status,
                if r.status >= 400 {
                    r.error()
                } else {
                    String::new()
                },
            )
        })
        .collect();
    t.sort();
    t
}

fn count(t: &[(u16, String)], status: u16, code: &str) -> usize {
    t.iter().filter(|(s, c)| *s == status && c == code).count()
}

async fn concurrent_first_replies() {
    let p = create_post("need").await;
    let path = format!("/posts/{}/messages", p.id);
    let futures = (0..40)
        .map(|i| {
            let path = path.clone();
            Box::pin(async move {
                Client::new()
                    .post(&path, json!({"text": format!("race {i}")}))
                    .await
            }) as std::pin::Pin<Box<dyn std::future::Future<Output = Resp> + Send>>
        })
        .collect();
    let t = tally(&statuses(futures).await);
    assert_eq!(count(&t, 201, ""), 20, "{t:?}");
    assert_eq!(count(&t, 429, "too_many"), 20, "{t:?}");
    let waiting = Client::new()
        .post(
            &format!("/posts/{}/waiting", p.id),
            json!({"secret": p.secret}),
        )
        .await;
    assert_eq!(waiting.json()["messages"].as_array().unwrap().len(), 20);
}

async fn concurrent_creates() {
    let c = Client::new();
    let futures = (0..15)
        .map(|_| {
            Box::pin(async move {
                c.post(
                    "/posts",
                    json!({"kind": "have", "note": fresh_note("burst")}),
                )
                .await
            }) as std::pin::Pin<Box<dyn std::future::Future<Output = Resp> + Send>>
        })
        .collect();
    let t = tally(&statuses(futures).await);
    assert_eq!(count(&t, 201, ""), 10, "{t:?}");
    assert_eq!(count(&t, 429, "rate_limited"), 5, "{t:?}");
}

async fn concurrent_accepts() {
    let p = create_post("need").await;
    let a = reply(&p).await;
    let path = format!("/posts/{}/accept", p.id);
    let futures = (0..8)
        .map(|_| {
            let (path, secret, id) = (path.clone(), p.secret.clone(), a.id.clone());
            Box::pin(async move {
                Client::new()
                    .post(&path, json!({"secret": secret, "message_id": id}))
                    .await
            }) as std::pin::Pin<Box<dyn std::future::Future<Output = Resp> + Send>>
        })
        .collect();
    let resps = statuses(futures).await;
    let t = tally(&resps);
    assert_eq!(count(&t, 201, ""), 1, "{t:?}");
    assert_eq!(count(&t, 409, "already_accepted"), 7, "{t:?}");
    // The winner's key is the one the respondent gets.
    let key = resps.iter().find(|r| r.status == 201).unwrap().json()["thread_key"].clone();
    let cb = Client::new()
        .post(
            &format!("/messages/{}/thread", a.id),
            json!({"secret": a.secret}),
        )
        .await;
    assert_eq!(cb.json()["thread_key"], key);
}

async fn mcp_transport() {
    let c = Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let r = c.post("/mcp", init.clone()).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-06-18");
    // GET (with or without an event-stream Accept) and DELETE: 405, Allow: POST.
    for (method, accept) in [
        ("GET", "text/event-stream"),
        ("GET", "application/json"),
        ("DELETE", "*/*"),
    ] {
        let r = c.send(method, "/mcp", None, &[("accept", accept)]).await;
        assert_eq!(r.status, 405, "{method} /mcp");
        assert_eq!(r.header("allow"), Some("POST"));
    }
    // 2026-07-28 has no `ping`: an unknown method there is 404, -32601.
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "ping"),
    ];
    let r = c
        .send(
            "POST",
            "/mcp",
            Some(ping.to_string().into_bytes()),
            &headers,
        )
        .await;
    assert_eq!(r.status, 404, "{}", r.text());
    assert_eq!(r.json()["error"]["code"], -32601);
    assert_eq!(r.json()["id"], 2);
    // A notification: 202, empty body.
    let r = c
        .post(
            "/mcp",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());
    // Unparseable: 400, -32700, id null.
    let r = c.post_raw("/mcp", b"{not json").await;
    assert_eq!(r.status, 400);
    let v: Value = r.json();
    assert_eq!(v["error"]["code"], -32700);
    assert_eq!(v["id"], Value::Null);
    // An Origin that is not allowed: 403; the serving host's own: fine.
    let body = Some(init.to_string().into_bytes());
    let r = c
        .send(
            "POST",
            "/mcp",
            body.clone(),
            &[("origin", "https://evil.example")],
        )
        .await;
    assert_eq!(r.status, 403);
    let own = format!("http://{}", server().host);
    let r = c
        .send("POST", "/mcp", body.clone(), &[("origin", own.as_str())])
        .await;
    assert_eq!(r.status, 200);
    // An unsupported MCP-Protocol-Version header: 400; a supported one: fine.
    let r = c
        .send(
            "POST",
            "/mcp",
            body.clone(),
            &[("mcp-protocol-version", "1999-01-01")],
        )
        .await;
    assert_eq!(r.status, 400);
    let r = c
        .send(
            "POST",
            "/mcp",
            body,
            &[("mcp-protocol-version", "2025-11-25")],
        )
        .await;
    assert_eq!(r.status, 200);
}
