//! Finding posts, black-box over HTTP: `GET /posts` with `kind`, `q`,
//! `limit` and `before`, against a list at a base URL (`needhave serve` by
//! default; `NEEDHAVE_TEST_URL` for another host of the same calls, such as
//! `wrangler dev`). The list may be shared with other tests, so every post
//! here carries a word of its own (`tag`), and every search asks for it.

mod common;

use std::collections::{HashMap, HashSet};

use common::*;
use serde_json::{json, Value};

/// A word no other post holds: letters only, so it is one word.
fn tag() -> String {
    let note = fresh_note("");
    let hex: String = note.chars().filter(char::is_ascii_hexdigit).collect();
    // Digits would be a word too, but a letter first keeps it clear of
    // numbers in other notes.
    let letters: String = hex
        .chars()
        .map(|c| (b'g' + c.to_digit(16).unwrap() as u8) as char)
        .collect();
    format!("t{letters}")
}

/// Posts that many notes, ten a client (the create rate), in order;
/// returns their ids.
async fn post_all(kind: &str, notes: &[String]) -> Vec<String> {
    let mut ids = Vec::new();
    for chunk in notes.chunks(10) {
        let c = Client::new();
        for note in chunk {
            let r = c.post("/posts", json!({"kind": kind, "note": note})).await;
            assert_eq!(r.status, 201, "{note}: {}", r.text());
            ids.push(r.json()["id"].as_str().unwrap().to_string());
        }
    }
    ids
}

async fn post(kind: &str, note: &str) -> String {
    post_all(kind, &[note.to_string()]).await.remove(0)
}

/// `GET /posts?…` with each value percent-encoded.
/// Posts `PENDING_MAX` notes of their own: every post made before them is
/// then in the index of words, not among the few newer posts a search
/// reads beside it (each of those is matched in Rust, each in the index by
/// FTS5; the word rules must hold both ways).
async fn into_the_index() {
    let notes: Vec<String> = (0..needhave::store::PENDING_MAX)
        .map(|_| fresh_note("filler"))
        .collect();
    post_all("have", &notes).await;
}

fn url(params: &[(&str, &str)]) -> String {
    let mut out = String::from("/posts");
    for (i, (k, v)) in params.iter().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(k);
        out.push('=');
        for b in v.bytes() {
            if b.is_ascii_alphanumeric() {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// Ids as a search answers them.
fn v(ids: &[&String]) -> Vec<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

/// The ids a search answers, newest first (asserting a 200).
async fn ids(params: &[(&str, &str)]) -> Vec<String> {
    let r = Client::new().get(&url(params)).await;
    assert_eq!(r.status, 200, "{params:?}: {}", r.text());
    listed(&r.json())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kind_and_words_filter() {
    let t = tag();
    let need = post("need", &format!("{t} a bike for tonight")).await;
    let have = post("have", &format!("{t} a bike and a pump")).await;
    let other = post("have", &format!("{t} a pump only")).await;
    for in_the_index in [false, true] {
        if in_the_index {
            into_the_index().await;
        }
        assert_eq!(ids(&[("q", &t)]).await, v(&[&other, &have, &need]));
        assert_eq!(ids(&[("q", &t), ("kind", "need")]).await, v(&[&need]));
        assert_eq!(
            ids(&[("q", &t), ("kind", "have")]).await,
            v(&[&other, &have])
        );
        // Every word must match, in any order.
        assert_eq!(
            ids(&[("q", &format!("bike {t}"))]).await,
            v(&[&have, &need])
        );
        assert_eq!(ids(&[("q", &format!("pump bike {t}"))]).await, v(&[&have]));
        assert!(ids(&[("q", &format!("{t} scooter"))]).await.is_empty());
    }
    // A kind alone: only that kind, newest first, ours among them.
    let r = Client::new().get("/posts?kind=need").await.json();
    let posts = r["posts"].as_array().unwrap();
    assert!(posts.iter().all(|p| p["kind"] == "need"), "{r}");
    assert!(posts.iter().any(|p| p["id"] == need.as_str()));
    let r = Client::new().get("/posts?kind=have").await.json();
    let posts = r["posts"].as_array().unwrap();
    assert!(posts.iter().all(|p| p["kind"] == "have"), "{r}");
    // The answer's posts are public views: id, kind, note, age and
    // status, nothing else.
    let r = Client::new().get(&url(&[("q", &t)])).await.json();
    for p in r["posts"].as_array().unwrap() {
        let keys: HashSet<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            HashSet::from(["id", "kind", "note", "created_at", "status"])
        );
    }
    assert!(r.get("next").is_none(), "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn words_compare_as_the_duplicate_key_does() {
    let t = tag();
    let id = post(
        "have",
        &format!("{t}: BIKES and ｇｐｕ to\u{200b}night at the cafe\u{301}, ÄRGER 4090"),
    )
    .await;
    let finds = |q: String| async move { ids(&[("q", &q)]).await };
    for in_the_index in [false, true] {
        if in_the_index {
            into_the_index().await;
        }
        the_word_rules(&t, &id, finds).await;
    }
}

/// The cases of [`words_compare_as_the_duplicate_key_does`] for the post
/// `id`, tagged `t`.
async fn the_word_rules<F, Fut>(t: &str, id: &String, finds: F)
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Vec<String>>,
{
    for q in [
        format!("{t} bikes"),           // as written
        format!("{t} BiKeS"),           // case
        format!("{t} bike"),            // a prefix of a word
        format!("{t} b"),               // one letter
        format!("{t} gpu"),             // NFKC: full-width letters
        format!("{t} ＧＰＵ"),          // NFKC in the query too
        format!("{t} tonight"),         // the invisible character left out
        format!("{t} to\u{2060}night"), // and in the query
        format!("{t} café"),            // NFC against the note's NFD
        format!("{t} CAFE\u{301}"),
        format!("{t} ärger"),         // lower-casing beyond ASCII
        format!("{t} 409"),           // digits are words too
        format!("{t}, bikes!!"),      // punctuation separates, no more
        t[..t.len() - 2].to_string(), // the tag's own prefix
    ] {
        assert_eq!(finds(q.clone()).await, v(&[id]), "{q}");
    }
    for q in [
        format!("{t} ikes"),     // not the start of a word
        format!("{t} bikesx"),   // longer than the word
        format!("{t} to night"), // `to` matches, `night` starts no word
        format!("{t} cafés"),
        format!("{t} 090"),
    ] {
        assert!(finds(q.clone()).await.is_empty(), "{q}");
    }
}

/// Case folds as readers of the script expect: a Greek word ends in the
/// final sigma, which is sigma (ΚΟΣ begins ΚΟΣΜΗΜΑΤΑ, whose sigma is not
/// final; ΟΔΟΣ, οδος and οδοσ are one word), and the Turkish dotted
/// capital I is i. A word still does not begin inside another, and the
/// dotless ı is a letter of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn case_folds_as_readers_of_the_script_expect() {
    let t = tag();
    let jewels = post("have", &format!("{t} ΚΟΣΜΗΜΑΤΑ")).await;
    let road = post("need", &format!("{t} ΟΔΟΣ 5")).await;
    let city = post("have", &format!("{t} İstanbul")).await;
    for in_the_index in [false, true] {
        if in_the_index {
            into_the_index().await;
        }
        let q = |s: &str| format!("{t} {s}");
        for w in ["ΚΟΣ", "κος", "κοσ", "Κοσμ"] {
            assert_eq!(ids(&[("q", &q(w))]).await, v(&[&jewels]), "{w}");
        }
        for w in ["οδοσ", "οδος", "ΟΔΟΣ", "Οδος"] {
            assert_eq!(ids(&[("q", &q(w))]).await, v(&[&road]), "{w}");
        }
        for w in [
            "istanbul",
            "İSTANBUL",
            "ISTANBUL",
            "I\u{307}stanbul",
            "i\u{307}st",
        ] {
            assert_eq!(ids(&[("q", &q(w))]).await, v(&[&city]), "{w}");
        }
        for w in ["stanbul", "ıstanbul", "οδοσα", "σμηματα"] {
            assert!(ids(&[("q", &q(w))]).await.is_empty(), "{w}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_without_spaces_are_found_by_two_characters() {
    let t = tag();
    let zh = post("have", &format!("{t} 我有一辆自行车可以借")).await;
    let ja = post("need", &format!("{t} 今夜ノートパソコンを貸してください")).await;
    let th = post("have", &format!("{t} ขายจักรยานมือสอง")).await;
    let half = post("need", &format!("{t} ﾉｰﾄﾊﾟｿｺﾝ")).await;
    let mixed = post("have", &format!("{t} RTX4090显卡")).await;
    for in_the_index in [false, true] {
        if in_the_index {
            into_the_index().await;
        }
        unspaced_cases(&t, [&zh, &ja, &th, &half, &mixed]).await;
    }
}

/// The cases of [`scripts_without_spaces_are_found_by_two_characters`].
async fn unspaced_cases(t: &str, [zh, ja, th, half, mixed]: [&String; 5]) {
    let q = |s: &str| format!("{t} {s}");
    assert_eq!(ids(&[("q", &q("自行车"))]).await, v(&[zh]));
    assert_eq!(ids(&[("q", &q("自行"))]).await, v(&[zh]));
    assert_eq!(ids(&[("q", &q("行车"))]).await, v(&[zh]));
    assert_eq!(ids(&[("q", &q("一辆自行车可以借"))]).await, v(&[zh]));
    assert!(ids(&[("q", &q("车自"))]).await.is_empty());
    assert!(ids(&[("q", &q("自行车坏"))]).await.is_empty());
    // Katakana, also written half-width (NFKC makes it the same).
    assert_eq!(ids(&[("q", &q("パソコン"))]).await, v(&[half, ja]));
    assert_eq!(ids(&[("q", &q("ﾊﾟｿｺﾝ"))]).await, v(&[half, ja]));
    assert_eq!(ids(&[("q", &q("貸して"))]).await, v(&[ja]));
    assert_eq!(ids(&[("q", &q("จักรยาน"))]).await, v(&[th]));
    assert!(ids(&[("q", &q("ยานจัก"))]).await.is_empty());
    // A run inside a word of another script: the pieces apart.
    assert_eq!(ids(&[("q", &q("显卡"))]).await, v(&[mixed]));
    assert_eq!(ids(&[("q", &q("rtx"))]).await, v(&[mixed]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounds_of_the_parameters() {
    let c = Client::new();
    let t = tag();
    let id = post("need", &format!("{t} a b c d e f g")).await;
    // 8 words pass, 9 do not; 100 characters pass, 101 do not.
    assert_eq!(
        ids(&[("q", &format!("{t} a b c d e f g"))]).await,
        v(&[&id])
    );
    c.get(&url(&[("q", &format!("{t} a b c d e f g h"))]))
        .await
        .expect_error(400, "bad_request");
    let long = format!("{t}{}", " ".repeat(100 - t.chars().count()));
    assert_eq!(long.chars().count(), 100);
    assert_eq!(ids(&[("q", &long)]).await, v(&[&id]));
    c.get(&url(&[("q", &format!("{long}a"))]))
        .await
        .expect_error(400, "bad_request");
    // Characters, not bytes: 100 CJK characters are 300 bytes.
    let r = c.get(&url(&[("q", &"车".repeat(100))])).await;
    assert_eq!(r.status, 200, "{}", r.text());
    // A query with no word is no filter: the answer is the bare list's.
    for q in ["", "   ", "!!! ...", "\u{200b}"] {
        let (bare, blank) = loop {
            let bare = ids(&[("limit", "5")]).await;
            let blank = ids(&[("q", q), ("limit", "5")]).await;
            // Another test may post between the two calls: ask again.
            if bare == blank || bare == ids(&[("limit", "5")]).await {
                break (bare, blank);
            }
        };
        assert_eq!(blank, bare, "{q:?}");
    }
    // limit: 1 to 100.
    for ok in ["1", "50", "100"] {
        let n: usize = ok.parse().unwrap();
        let r = c.get(&format!("/posts?limit={ok}")).await.json();
        assert!(r["posts"].as_array().unwrap().len() <= n);
    }
    assert_eq!(ids(&[("limit", "1")]).await.len(), 1);
    for bad in ["0", "101", "-1", "1.5", "ten", "", "%31%30%31"] {
        c.get(&format!("/posts?limit={bad}"))
            .await
            .expect_error(400, "bad_request");
    }
    // kind: exactly need or have.
    for bad in ["needs", "NEED", "", "need,have", "%6Eeed%00"] {
        c.get(&format!("/posts?kind={bad}"))
            .await
            .expect_error(400, "bad_kind");
    }
    // A parameter given twice is ambiguous; unknown ones are ignored.
    c.get("/posts?kind=need&kind=have")
        .await
        .expect_error(400, "bad_kind");
    assert_eq!(c.get("/posts?page=2&sort=old").await.status, 200);
    // Not UTF-8 once decoded.
    c.get("/posts?q=%FF%FE")
        .await
        .expect_error(400, "bad_request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cursors_are_the_lists_own() {
    let t = tag();
    post_all(
        "have",
        &(0..3)
            .map(|i| format!("{t} cursor {i}"))
            .collect::<Vec<_>>(),
    )
    .await;
    let r = Client::new()
        .get(&url(&[("q", &t), ("limit", "1")]))
        .await
        .json();
    let next = r["next"]
        .as_str()
        .expect("next on a page with older matches")
        .to_string();
    assert_eq!(
        Client::new()
            .get(&url(&[("q", &t), ("before", &next)]))
            .await
            .status,
        200
    );
    // A cursor works with other filters too: it is a place in the list.
    assert_eq!(
        Client::new().get(&url(&[("before", &next)])).await.status,
        200
    );
    let mut altered = next.clone().into_bytes();
    let last = altered.len() - 1;
    altered[last] = if altered[last] == b'1' { b'2' } else { b'1' };
    let altered = String::from_utf8(altered).unwrap();
    let mut check = next.clone().into_bytes();
    check[0] = if check[0] == b'a' { b'b' } else { b'a' };
    let check = String::from_utf8(check).unwrap();
    for bad in [
        "",
        "0",
        "abc",
        "1",
        "zzzzzzzzzzzz",
        "00000000000000000000000000000000",
        &next.to_uppercase(),
        &altered,
        &check,
        &format!("{next}0"),
        &next[..next.len() - 1],
        &format!(" {next}"),
    ] {
        Client::new()
            .get(&url(&[("q", &t), ("before", bad)]))
            .await
            .expect_error(400, "bad_request");
    }
}

/// `next` is there exactly when older posts match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_is_exact() {
    let t = tag();
    let made = post_all(
        "need",
        &(0..5).map(|i| format!("{t} exact {i}")).collect::<Vec<_>>(),
    )
    .await;
    let page = |limit: &str, before: Option<String>| {
        let t = t.clone();
        let limit = limit.to_string();
        async move {
            let mut p = vec![("q", t.as_str()), ("limit", limit.as_str())];
            if let Some(b) = &before {
                p.push(("before", b.as_str()));
            }
            let r = Client::new().get(&url(&p)).await;
            assert_eq!(r.status, 200, "{}", r.text());
            r.json()
        }
    };
    for limit in ["5", "6", "100"] {
        let r = page(limit, None).await;
        assert_eq!(r["posts"].as_array().unwrap().len(), 5);
        assert!(r.get("next").is_none(), "limit {limit}: {r}");
    }
    let first = page("4", None).await;
    assert_eq!(first["posts"].as_array().unwrap().len(), 4);
    let next = first["next"].as_str().unwrap().to_string();
    let second = page("4", Some(next)).await;
    let last: Vec<&str> = second["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(last, [made[0].as_str()]);
    assert!(second.get("next").is_none(), "{second}");
    // Exactly a page left: the page before it has next, the last has none.
    let first = page("1", None).await;
    let r = page("4", Some(first["next"].as_str().unwrap().to_string())).await;
    assert_eq!(r["posts"].as_array().unwrap().len(), 4);
    assert!(r.get("next").is_none(), "{r}");
    // The bare list pages the same way: a next leads to older posts.
    let bare = Client::new().get("/posts").await.json();
    if let Some(next) = bare["next"].as_str() {
        let newer: Vec<&Value> = bare["posts"].as_array().unwrap().iter().collect();
        let older = Client::new().get(&url(&[("before", next)])).await.json();
        let older = older["posts"].as_array().unwrap();
        assert!(!older.is_empty());
        assert!(older.iter().all(|p| !newer.contains(&p)));
    }
}

/// 250 posts walked a page at a time while new ones keep arriving: each of
/// the 250 is seen exactly once, in order, and none of the new ones (they
/// are newer than the walk's first page).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_walk_while_posts_arrive() {
    let t = tag();
    let notes: Vec<String> = (0..250).map(|i| format!("{t} walk {i}")).collect();
    let made = post_all("have", &notes).await;
    for (filters, limit) in [
        (vec![("q", t.clone())], "30"),
        (vec![("q", t.clone()), ("kind", "have".into())], "100"),
    ] {
        let mut seen: Vec<String> = Vec::new();
        let mut before: Option<String> = None;
        let mut arrived = Vec::new();
        loop {
            let mut p: Vec<(&str, &str)> = filters.iter().map(|(k, v)| (*k, v.as_str())).collect();
            p.push(("limit", limit));
            if let Some(b) = &before {
                p.push(("before", b.as_str()));
            }
            let r = Client::new().get(&url(&p)).await;
            assert_eq!(r.status, 200, "{}", r.text());
            let v = r.json();
            seen.extend(
                v["posts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p["id"].as_str().unwrap().to_string()),
            );
            // A new matching post between pages.
            arrived.push(post("have", &fresh_note(&format!("{t} arrived"))).await);
            match v["next"].as_str() {
                Some(n) => before = Some(n.to_string()),
                None => break,
            }
        }
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for id in &seen {
            *counts.entry(id.as_str()).or_default() += 1;
        }
        assert!(counts.values().all(|&n| n == 1), "a post seen twice");
        let walked: Vec<&String> = seen.iter().filter(|id| made.contains(id)).collect();
        let want: Vec<&String> = made.iter().rev().collect();
        assert_eq!(walked, want, "every post once, newest first");
        // Only posts older than the first page: the ones that arrived
        // during an earlier walk, none of this walk's.
        assert!(seen.iter().all(|id| !arrived.contains(id)));
    }
}

/// `list_posts` in both eras, each argument.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_posts_takes_kind_query_and_cursor() {
    let t = tag();
    let need = post("need", &format!("{t} a ladder")).await;
    let have = post("have", &format!("{t} a ladder to lend")).await;
    let c = Client::new();
    // 2025: tools/call after no handshake is accepted (stateless).
    let r = tool_ok(&c.tool("list_posts", json!({"query": t})).await);
    assert_eq!(listed(&r), v(&[&have, &need]));
    let r = tool_ok(
        &c.tool("list_posts", json!({"query": format!("{t} LADDERS")}))
            .await,
    );
    assert!(listed(&r).is_empty());
    let r = tool_ok(
        &c.tool("list_posts", json!({"query": t, "kind": "need"}))
            .await,
    );
    assert_eq!(listed(&r), v(&[&need]));
    // Paging through MCP: the HTTP list's cursor, as `cursor`.
    let first = c.get(&url(&[("q", &t), ("limit", "1")])).await.json();
    let cursor = first["next"].as_str().unwrap();
    let r = tool_ok(
        &c.tool("list_posts", json!({"query": t, "cursor": cursor}))
            .await,
    );
    assert_eq!(listed(&r), v(&[&need]));
    assert!(r.get("next").is_none(), "{r}");
    let r = tool_ok(&c.tool("list_posts", json!({"kind": "have"})).await);
    assert!(r["posts"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["kind"] == "have"));
    // A full page carries next, which the tool takes back as cursor.
    let r = tool_ok(&c.tool("list_posts", json!({})).await);
    if let Some(next) = r["next"].as_str() {
        let again = tool_ok(&c.tool("list_posts", json!({"cursor": next})).await);
        let older = listed(&again);
        assert!(older.iter().all(|id| !listed(&r).contains(id)));
    }
    // The list's rules as tool errors.
    tool_err(
        &c.tool("list_posts", json!({"kind": "both"})).await,
        "bad_kind",
    );
    tool_err(
        &c.tool("list_posts", json!({"cursor": "forged"})).await,
        "bad_request",
    );
    tool_err(
        &c.tool("list_posts", json!({"query": "a b c d e f g h i"}))
            .await,
        "bad_request",
    );
    tool_err(
        &c.tool("list_posts", json!({"query": 5})).await,
        "bad_request",
    );
    tool_err(
        &c.tool("list_posts", json!({"limit": 5})).await,
        "bad_request",
    );

    // 2026-07-28: no handshake, the version in `_meta`.
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let call = |args: Value| {
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "list_posts", "arguments": args, "_meta": meta.clone()}})
    };
    let modern = |args: Value| {
        let payload = call(args);
        async move {
            let r = c
                .mcp_with(
                    &payload,
                    &[
                        ("mcp-protocol-version", "2026-07-28"),
                        ("mcp-method", "tools/call"),
                        ("mcp-name", "list_posts"),
                    ],
                )
                .await;
            assert_eq!(r.status, 200, "{}", r.text());
            r.json()["result"].clone()
        }
    };
    let r = tool_ok(&modern(json!({"query": t, "kind": "have"})).await);
    assert_eq!(listed(&r), v(&[&have]));
    let r = tool_ok(&modern(json!({"query": t, "cursor": cursor})).await);
    assert_eq!(listed(&r), v(&[&need]));
    tool_err(&modern(json!({"kind": "wants"})).await, "bad_kind");
}
