//! Browsers, black-box (`needhave serve` by default, `wrangler dev` in the
//! Worker's e2e): a POST from a foreign `Origin` is refused before it runs,
//! an allowed origin gets CORS (preflight and answers), public GETs are
//! `Access-Control-Allow-Origin: *`, and requests without `Origin` are
//! unaffected.

mod common;

use common::*;
use serde_json::json;

const EVIL: &str = "https://evil.example";

fn own_origin() -> String {
    let s = server();
    if s.is_remote() && s.base.starts_with("https://") {
        format!("https://{}", s.host)
    } else {
        format!("http://{}", s.host)
    }
}

async fn listed(note: &str) -> bool {
    let r = Client::new().get("/posts").await;
    r.text().contains(note)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_site_text_plain_post_is_refused_and_writes_nothing() {
    let c = Client::new();
    let note = fresh_note("cross-site");
    let body = json!({"kind": "need", "note": note}).to_string();
    for origin in [EVIL, "null", "http://evil.example"] {
        let r = c
            .send(
                "POST",
                "/posts",
                Some(body.clone().into_bytes()),
                &[("content-type", "text/plain"), ("origin", origin)],
            )
            .await;
        r.expect_error(403, "bad_origin");
        assert_eq!(r.header("access-control-allow-origin"), None, "{origin}");
    }
    assert!(!listed(&note).await);
    // The other writing calls too, before anything else is judged.
    let post = create_post("need").await;
    let r = c
        .send(
            "POST",
            &format!("/posts/{}/messages", post.id),
            Some(json!({"text": "hi"}).to_string().into_bytes()),
            &[("origin", EVIL)],
        )
        .await;
    r.expect_error(403, "bad_origin");
    let r = c
        .send(
            "POST",
            "/threads",
            Some(b"{}".to_vec()),
            &[("origin", EVIL)],
        )
        .await;
    r.expect_error(403, "bad_origin");
    // No Origin (agents, curl): unaffected.
    let r = c.send("POST", "/posts", Some(body.into_bytes()), &[]).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("access-control-allow-origin"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_own_origin_gets_cors_on_answers() {
    let c = Client::new();
    let own = own_origin();
    let note = fresh_note("same-site");
    let r = c
        .send(
            "POST",
            "/posts",
            Some(
                json!({"kind": "have", "note": note})
                    .to_string()
                    .into_bytes(),
            ),
            &[("origin", &own)],
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("access-control-allow-origin"), Some(own.as_str()));
    assert!(r
        .header("access-control-expose-headers")
        .is_some_and(|h| h.contains("mcp-session-id") && h.contains("mcp-protocol-version")));
    assert!(r.header("vary").is_some_and(|v| v.contains("Origin")));
    // Errors too: a browser app must be able to read the code.
    let r = c
        .send(
            "POST",
            "/threads",
            Some(b"{}".to_vec()),
            &[("origin", &own)],
        )
        .await;
    r.expect_error(400, "bad_request");
    assert_eq!(r.header("access-control-allow-origin"), Some(own.as_str()));
    // And /mcp.
    let r = c
        .mcp_with(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            &[("origin", &own)],
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), Some(own.as_str()));
    assert!(r.header("access-control-expose-headers").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preflight_on_any_route() {
    let c = Client::new();
    let own = own_origin();
    for path in ["/posts", "/mcp", "/threads/messages", "/no/such/route"] {
        let r = c
            .send(
                "OPTIONS",
                path,
                None,
                &[
                    ("origin", &own),
                    ("access-control-request-method", "POST"),
                    (
                        "access-control-request-headers",
                        "content-type, mcp-protocol-version",
                    ),
                ],
            )
            .await;
        assert_eq!(r.status, 204, "OPTIONS {path}: {}", r.text());
        assert_eq!(r.header("access-control-allow-origin"), Some(own.as_str()));
        let methods = r.header("access-control-allow-methods").unwrap_or("");
        assert!(
            methods.contains("POST") && methods.contains("GET"),
            "{methods}"
        );
        let headers = r.header("access-control-allow-headers").unwrap_or("");
        for h in [
            "content-type",
            "mcp-protocol-version",
            "mcp-method",
            "mcp-name",
            "mcp-session-id",
        ] {
            assert!(headers.contains(h), "{path}: {h} not in {headers}");
        }
        assert!(r
            .header("access-control-max-age")
            .is_some_and(|a| a.parse::<u32>().is_ok_and(|s| s > 0)));
        let r = c
            .send(
                "OPTIONS",
                path,
                None,
                &[("origin", EVIL), ("access-control-request-method", "POST")],
            )
            .await;
        r.expect_error(403, "bad_origin");
        assert_eq!(r.header("access-control-allow-origin"), None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_gets_are_open_to_every_origin() {
    let c = Client::new();
    for (path, origin) in [
        ("/posts", None),
        ("/posts", Some(EVIL)),
        ("/openapi.json", None),
        ("/", Some(EVIL)),
    ] {
        let headers: Vec<(&str, &str)> = origin.map(|o| ("origin", o)).into_iter().collect();
        let r = c.send("GET", path, None, &headers).await;
        assert_eq!(r.status, 200, "GET {path}");
        assert_eq!(
            r.header("access-control-allow-origin"),
            Some("*"),
            "GET {path}"
        );
    }
}

/// `OPTIONS` without `Origin` is a plain question, and its `Allow` names
/// exactly the methods the table serves at that path, `HEAD` with `GET`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_without_origin_allows_the_paths_own_methods() {
    let c = Client::new();
    let id = "0123456789abcdef0123456789abcdef";
    for (path, allow) in [
        ("/posts".to_string(), "GET, HEAD, POST, OPTIONS"),
        (format!("/posts/{id}"), "GET, HEAD, OPTIONS"),
        (format!("/posts/{id}/messages"), "POST, GET, HEAD, OPTIONS"),
        (format!("/posts/{id}/accept"), "POST, OPTIONS"),
        ("/robots.txt".to_string(), "GET, HEAD, OPTIONS"),
        ("/mcp".to_string(), "POST, OPTIONS"),
    ] {
        let r = c.send("OPTIONS", &path, None, &[]).await;
        assert_eq!((r.status, r.header("allow")), (204, Some(allow)), "{path}");
    }
}
