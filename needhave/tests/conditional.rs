//! Conditional reads, black-box (so also against `wrangler dev`): every
//! public GET carries an `ETag` and `Cache-Control: public, max-age=…`,
//! answers a matching `If-None-Match` with 304 and no body, and the list's
//! tag moves when a post is added. A browser on any origin may read the
//! tag and revalidate.

mod common;

use common::*;

const EVIL: &str = "https://evil.example";

/// Held by every test here that writes a post, so that the list's version
/// moves only when the test that watches it says so.
static WRITES: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn max_age(r: &Resp) -> u64 {
    let cc = r.header("cache-control").expect("cache-control");
    assert!(cc.starts_with("public, "), "{cc}");
    cc.split("max-age=")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("no max-age in {cc}"))
}

/// A strong tag, `"…"`, of visible ASCII.
fn etag(r: &Resp) -> String {
    let tag = r.header("etag").expect("etag").to_string();
    assert!(
        tag.len() > 2 && tag.starts_with('"') && tag.ends_with('"'),
        "{tag}"
    );
    assert!(tag[1..tag.len() - 1]
        .bytes()
        .all(|b| b.is_ascii_graphic() && b != b'"'));
    tag
}

async fn get_if(path: &str, inm: &str) -> Resp {
    Client::new()
        .send("GET", path, None, &[("if-none-match", inm)])
        .await
}

/// What a 304 must be: no body, no content type, the same tag and caching
/// rule as the 200, and the public read's CORS.
fn assert_not_modified(r: &Resp, tag: &str, ok: &Resp) {
    assert_eq!(r.status, 304, "{}", r.text());
    assert!(r.body.is_empty());
    assert_eq!(r.header("content-type"), None);
    assert_eq!(r.header("etag"), Some(tag));
    assert_eq!(r.header("cache-control"), ok.header("cache-control"));
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
}

#[tokio::test]
async fn the_list_revalidates_and_its_tag_moves_with_a_new_post() {
    let _writes = WRITES.lock().await;
    create_post("need").await;
    let c = Client::new();
    let first = c.get("/posts").await;
    assert_eq!(first.status, 200);
    let tag = etag(&first);
    let age = max_age(&first);
    assert!((1..=60).contains(&age), "a few seconds: {age}");
    assert!(first
        .header("access-control-expose-headers")
        .is_some_and(|h| h.split(',').any(|n| n.trim() == "etag")));

    for inm in [
        tag.clone(),
        format!("W/{tag}"),
        format!("\"nope\", {tag}"),
        "*".to_string(),
    ] {
        assert_not_modified(&get_if("/posts", &inm).await, &tag, &first);
    }
    // Tags that are not the current one: the whole list.
    for inm in [
        "\"nope\"",
        "\"p0-0-0\"",
        "\"p-1-0-0\"",
        "garbage",
        "\"p99999999999-0-0\"",
    ] {
        let r = get_if("/posts", inm).await;
        assert_eq!(r.status, 200, "{inm}");
        assert_eq!(r.body, first.body, "{inm}");
        assert_eq!(r.header("etag"), Some(tag.as_str()));
    }

    let post = create_post("have").await;
    let after = get_if("/posts", &tag).await;
    assert_eq!(after.status, 200, "a new post makes the old tag stale");
    let new_tag = etag(&after);
    assert_ne!(new_tag, tag);
    assert!(after.text().contains(&post.id));
    assert_not_modified(&get_if("/posts", &new_tag).await, &new_tag, &after);
    // The same answer for the same version, from any client.
    assert_eq!(Client::new().get("/posts").await.body, after.body);
}

#[tokio::test]
async fn a_post_revalidates() {
    let _writes = WRITES.lock().await;
    let post = create_post("need").await;
    let path = format!("/posts/{}", post.id);
    let ok = Client::new().get(&path).await;
    assert_eq!(ok.status, 200);
    let tag = etag(&ok);
    max_age(&ok);
    assert_not_modified(&get_if(&path, &tag).await, &tag, &ok);
    assert_not_modified(&get_if(&path, &format!("W/{tag}")).await, &tag, &ok);
    // Another post has another tag; the first post's tag does not fit it.
    let other = create_post("have").await;
    let other_path = format!("/posts/{}", other.id);
    let r = get_if(&other_path, &tag).await;
    assert_eq!(r.status, 200);
    assert_ne!(etag(&r), tag);
    // A post that does not exist is a 404 with no tag, whatever is asked.
    let r = get_if(&format!("/posts/{}", "0".repeat(32)), "*").await;
    r.expect_error(404, "not_found");
    assert_eq!(r.header("etag"), None);
}

#[tokio::test]
async fn documents_revalidate_per_media_type() {
    for path in [
        "/",
        "/index.md",
        "/openapi.json",
        "/llms.txt",
        "/robots.txt",
        "/sitemap.xml",
        "/mcp/server-card",
        "/.well-known/agent-skills/index.json",
        "/.well-known/agent-skills/needhave/SKILL.md",
    ] {
        let ok = Client::new().get(path).await;
        assert_eq!(ok.status, 200, "{path}");
        let tag = etag(&ok);
        max_age(&ok);
        assert_not_modified(&get_if(path, &tag).await, &tag, &ok);
    }
    // The home page as HTML and as Markdown: two representations, two tags.
    let html = Client::new().get("/").await;
    let md = Client::new()
        .send("GET", "/", None, &[("accept", "text/markdown")])
        .await;
    assert_ne!(etag(&html), etag(&md));
    let r = Client::new()
        .send(
            "GET",
            "/",
            None,
            &[("accept", "text/markdown"), ("if-none-match", &etag(&html))],
        )
        .await;
    assert_eq!(r.status, 200, "the HTML's tag does not fit the Markdown");
}

#[tokio::test]
async fn writes_and_errors_carry_no_tag() {
    let _writes = WRITES.lock().await;
    let c = Client::new();
    let r = c
        .post(
            "/posts",
            serde_json::json!({"kind": "need", "note": fresh_note("tagless")}),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.header("etag"), None);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let r = get_if("/nope", "*").await;
    r.expect_error(404, "not_found");
    assert_eq!(r.header("etag"), None);
}

/// A page on another origin may revalidate the list: its `If-None-Match`
/// makes the browser ask first, and a read is open to every origin.
#[tokio::test]
async fn any_origin_may_preflight_a_conditional_read() {
    let r = Client::new()
        .send(
            "OPTIONS",
            "/posts",
            None,
            &[
                ("origin", EVIL),
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "if-none-match"),
            ],
        )
        .await;
    assert_eq!(r.status, 204, "{}", r.text());
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    let allowed = r.header("access-control-allow-headers").unwrap_or("");
    assert!(
        allowed.split(',').any(|h| h.trim() == "if-none-match"),
        "{allowed}"
    );
    assert!(r
        .header("access-control-allow-methods")
        .is_some_and(|m| m.contains("GET") && !m.contains("POST")));
    // A write from there is still refused.
    let r = Client::new()
        .send(
            "OPTIONS",
            "/posts",
            None,
            &[("origin", EVIL), ("access-control-request-method", "POST")],
        )
        .await;
    r.expect_error(403, "bad_origin");
}

// ------------------------------------------------ what a 304 costs the store

mod cost {
    use std::sync::Arc;

    use needhave::store::sqlite::SqliteStore;
    use needhave::store::testing::Counting;
    use needhave::Ctx;
    use serde_json::json;

    use crate::common::local;

    /// SQLite seen as D1 sees its database: written by others, so with no
    /// clock that vouches for the kept list; counts round trips and rows.
    fn as_on_d1() -> Arc<Counting> {
        Arc::new(Counting::written_by_others(
            SqliteStore::open(":memory:").unwrap(),
        ))
    }

    async fn get(ctx: &Ctx, inm: Option<&str>) -> needhave::http::Response {
        let mut req = local::request("GET", "/posts", None);
        if let Some(v) = inm {
            req.headers.push(("if-none-match".into(), v.into()));
        }
        needhave::handle(&req, ctx).await
    }

    #[tokio::test]
    async fn a_304_is_one_round_trip_that_reads_no_post() {
        let store = as_on_d1();
        let config = local::salted("salt");
        let ctx = local::ctx(store.clone(), config.clone(), "10.0.0.1");
        for i in 0..50 {
            let note = json!({"kind": "need", "note": format!("cost {i}")});
            let ip = format!("10.0.{i}.2");
            let r = local::call(
                &local::ctx(store.clone(), config.clone(), &ip),
                "POST",
                "/posts",
                Some(&note),
            )
            .await;
            assert_eq!(r.status, 201);
        }
        let first = get(&ctx, None).await;
        let tag = first.header("etag").unwrap().to_string();
        let (trips, rows) = (store.trips(), store.rows());
        // A client that holds the list: one statement, one row (the version).
        let r = get(&ctx, Some(&tag)).await;
        assert_eq!(r.status, 304);
        assert_eq!(store.trips() - trips, 1);
        assert_eq!(store.rows() - rows, 1);
        // The same from an isolate that kept nothing (a fresh memo).
        let fresh = as_on_d1();
        let empty = get(
            &local::ctx(fresh.clone(), config.clone(), "10.0.0.1"),
            Some(&tag),
        )
        .await;
        assert_eq!(empty.status, 200, "an empty list is not the held version");
        assert_eq!(empty.header("etag"), Some("\"p0-0-0\""));
        // Another version held: the kept copy answers, and the statement
        // returned only the version.
        let (trips, rows) = (store.trips(), store.rows());
        let r = get(&ctx, Some("\"p1-0-0\"")).await;
        assert_eq!(r.status, 200);
        assert_eq!(store.trips() - trips, 1);
        assert_eq!(store.rows() - rows, 1);
        assert_eq!(r.body, first.body);
    }
}

/// The MCP server card as its draft asks: its own media type when asked
/// for, `Vary: Accept`, a tag per media type, an hour of caching, CORS.
#[tokio::test]
async fn the_server_card_by_its_media_type() {
    const CARD: &str = "application/mcp-server-card+json";
    for path in ["/mcp/server-card", "/.well-known/mcp/server-card.json"] {
        let plain = Client::new().get(path).await;
        let asked = Client::new()
            .send("GET", path, None, &[("accept", CARD)])
            .await;
        assert_eq!(plain.header("content-type"), Some("application/json"));
        assert_eq!(asked.header("content-type"), Some(CARD));
        assert_eq!(asked.body, plain.body, "the same card either way");
        for r in [&plain, &asked] {
            assert!(r.header("vary").is_some_and(|v| v.contains("Accept")));
            assert_eq!(max_age(r), 3600);
            assert_eq!(r.header("access-control-allow-origin"), Some("*"));
            assert!(r
                .header("access-control-allow-headers")
                .is_some_and(|h| h.contains("If-None-Match")));
            assert!(r
                .header("access-control-expose-headers")
                .is_some_and(|h| h.split(',').any(|n| n.trim() == "etag")));
        }
        let (plain_tag, asked_tag) = (etag(&plain), etag(&asked));
        assert_ne!(plain_tag, asked_tag, "two representations, two tags");
        let r = Client::new()
            .send(
                "GET",
                path,
                None,
                &[("accept", CARD), ("if-none-match", &asked_tag)],
            )
            .await;
        assert_not_modified(&r, &asked_tag, &asked);
        let r = Client::new()
            .send(
                "GET",
                path,
                None,
                &[("accept", CARD), ("if-none-match", &plain_tag)],
            )
            .await;
        assert_eq!(r.status, 200);
    }
}
