//! Browsers: which `Origin`s may call the list, and the CORS it speaks to
//! them. Shared by the native server and the Worker through
//! [`crate::handle`], and by `POST /mcp`, which answers its own refusal as
//! JSON-RPC.
//!
//! Why refuse at all, when no call uses cookies: a cross-site `text/plain`
//! POST needs no preflight, so without this check any web page could make
//! its visitors' browsers post (and spend their per-IP limits). A request
//! without `Origin` (agents, curl) is never a browser's cross-site call and
//! is unaffected.
//!
//! Allowed: the serving host's own origin (by its `Host`), and the ones the
//! operator names (`--allow-origin`, the Worker's `ALLOWED_ORIGINS`; `*`
//! allows every origin). Public `GET`s answer `Access-Control-Allow-Origin:
//! *` to anyone: the list is public data, and `*` never carries credentials.
//!
//! Also the list's own origin as a client reached it ([`serving`]), which
//! the documents and MCP's skill answers write their absolute URLs with.

use crate::config::Config;
use crate::error::Code;
use crate::http::{Request, Response};

/// Request headers a browser app may send: what MCP clients send over
/// Streamable HTTP, and what the Worker's D1 sessions read.
pub const ALLOW_HEADERS: &str = "content-type, accept, authorization, if-none-match, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id, x-d1-bookmark";

/// Response headers a browser app may read besides the safelisted ones.
pub const EXPOSE_HEADERS: &str =
    "etag, mcp-session-id, mcp-protocol-version, x-d1-bookmark, link, allow, retry-after";

pub const ALLOW_METHODS: &str = "GET, POST, OPTIONS";

/// A day: browsers cap it lower (Chromium at two hours) and use their cap.
pub const MAX_AGE: &str = "86400";

/// Whether `origin` may call the list, as sent with `req`.
pub fn origin_allowed(req: &Request, config: &Config, origin: &str) -> bool {
    let origin = origin.trim();
    // Origins compare case-insensitively; an operator's trailing slash is
    // forgiven.
    if config.allowed_origins.iter().any(|o| {
        let o = o.trim().trim_end_matches('/');
        o == "*" || o.eq_ignore_ascii_case(origin)
    }) {
        return true;
    }
    // The serving host's own origin, by its Host header.
    let Some(host) = req.header("host") else {
        return false;
    };
    // `scheme://host`, split at a char: a `&str` pattern links the two-way
    // searcher.
    origin.split_once(':').is_some_and(|(scheme, rest)| {
        (scheme == "http" || scheme == "https")
            && rest
                .strip_prefix("//")
                .is_some_and(|rest| rest.eq_ignore_ascii_case(host.trim()))
    })
}

/// The request's `Origin` when it is present and not allowed.
fn foreign<'a>(req: &'a Request, config: &Config) -> Option<&'a str> {
    req.header("origin")
        .filter(|o| !origin_allowed(req, config, o))
}

/// The answer to `OPTIONS` on any path: a preflight for an allowed origin,
/// `bad_origin` for another, and for a request without `Origin` the
/// methods of that path (`allow`, from the table).
pub fn preflight(req: &Request, config: &Config, allow: &str) -> Response {
    // A public read is open to every origin (as its answer says, `*`), also
    // when it needs a preflight (a conditional GET sends If-None-Match).
    let reads = matches!(
        req.header("access-control-request-method").map(str::trim),
        Some("GET" | "HEAD")
    );
    match req.header("origin") {
        None => Response::empty(204).with_header("allow", allow),
        Some(_) if reads && foreign(req, config).is_some() => Response::empty(204)
            .with_header("access-control-allow-methods", "GET, HEAD, OPTIONS")
            .with_header("access-control-allow-headers", ALLOW_HEADERS)
            .with_header("access-control-max-age", MAX_AGE)
            .with_header("access-control-allow-origin", "*"),
        Some(_) if foreign(req, config).is_some() => Response::error(Code::BadOrigin),
        Some(origin) => Response::empty(204)
            .with_header("access-control-allow-methods", ALLOW_METHODS)
            .with_header("access-control-allow-headers", ALLOW_HEADERS)
            .with_header("access-control-max-age", MAX_AGE)
            .with_header("access-control-allow-origin", origin.trim())
            .with_header("vary", "Origin"),
    }
}

/// Whether a `POST` must be refused before it runs: its `Origin` is present
/// and not allowed. `raw` routes (`/mcp`) answer the refusal themselves, in
/// their own protocol, through [`origin_allowed`].
pub fn refuses(req: &Request, config: &Config, raw: bool) -> bool {
    req.method == "POST" && !raw && foreign(req, config).is_some()
}

/// The CORS headers of an answer: `*` on a `GET` (public data), the origin
/// itself on anything else it may call. Preflights carry theirs already.
pub fn decorate(req: &Request, config: &Config, resp: &mut Response) {
    if req.method == "OPTIONS" {
        return;
    }
    let allow = if req.method == "GET" || req.method == "HEAD" {
        "*"
    } else {
        match req.header("origin") {
            Some(o) if foreign(req, config).is_none() => {
                resp.headers.push(("vary", "Origin".to_string()));
                o.trim()
            }
            _ => return,
        }
    };
    resp.headers
        .push(("access-control-allow-origin", allow.to_string()));
    resp.headers
        .push(("access-control-expose-headers", EXPOSE_HEADERS.to_string()));
}

/// `scheme://host[:port]` of the serving host, for documents that must give
/// absolute URLs (sitemap, catalog, card): the operator's public URL when
/// set. Else the host is the request's `Host`, and the scheme `http` for a
/// loopback host (`needhave serve`, `wrangler dev`) and `https` for any
/// other (the Worker is served over TLS). Behind a proxy the operator has
/// vouched for, its `X-Forwarded-Host` and `X-Forwarded-Proto` (the last
/// value, the one it appended) come first; from anyone else they are
/// ignored, since these documents are cached publicly and one client's
/// header would name its host to every reader.
pub fn serving(req: &Request, config: &Config) -> String {
    if let Some(url) = &config.public_url {
        return url.clone();
    }
    let forwarded = |name| {
        config
            .trust_forwarded
            .then(|| req.header(name))
            .flatten()
            .and_then(|v: &str| v.rsplit(',').next())
            .map(str::trim)
    };
    let valid = |h: &&str| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic() && b != b'/');
    let host = forwarded("x-forwarded-host")
        .filter(valid)
        .or_else(|| req.header("host").map(str::trim).filter(valid))
        .unwrap_or("localhost");
    let scheme = match forwarded("x-forwarded-proto") {
        Some(p @ ("http" | "https")) => p,
        _ if is_loopback(host) => "http",
        _ => "https",
    };
    [scheme, "://", host].concat()
}

fn is_loopback(host: &str) -> bool {
    // The name as the Origin rules read it, without an IPv6 address's
    // brackets.
    let name = crate::hosts::host_name(host);
    let name = match name.strip_prefix('[') {
        Some(inner) => inner.strip_suffix(']').unwrap_or(inner),
        None => name,
    };
    name == "localhost" || name.ends_with(".localhost") || name.starts_with("127.") || name == "::1"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, host: &str, origin: Option<&str>) -> Request {
        let mut r = Request::new(method, "/posts");
        r.headers.push(("host".into(), host.into()));
        if let Some(o) = origin {
            r.headers.push(("origin".into(), o.into()));
        }
        r
    }

    fn config(origins: &[&str]) -> Config {
        Config {
            allowed_origins: origins.iter().map(|o| o.to_string()).collect(),
            ..Config::default()
        }
    }

    #[test]
    fn own_origin_named_ones_and_star() {
        let c = config(&["https://app.example/"]);
        let r = req("POST", "list.example:8443", None);
        assert!(origin_allowed(&r, &c, "https://list.example:8443"));
        assert!(origin_allowed(&r, &c, "http://LIST.example:8443"));
        assert!(origin_allowed(&r, &c, "https://app.example"));
        assert!(!origin_allowed(&r, &c, "https://list.example"));
        assert!(!origin_allowed(&r, &c, "ftp://list.example:8443"));
        assert!(!origin_allowed(&r, &c, "https://evil.example"));
        assert!(!origin_allowed(&r, &c, "null"));
        let star = config(&["*"]);
        assert!(origin_allowed(&r, &star, "https://evil.example"));
        assert!(origin_allowed(&r, &star, "null"));
    }

    #[test]
    fn refusal_is_for_foreign_posts_only() {
        let c = config(&[]);
        assert!(refuses(
            &req("POST", "h", Some("https://evil.example")),
            &c,
            false
        ));
        assert!(!refuses(
            &req("POST", "h", Some("https://evil.example")),
            &c,
            true
        ));
        assert!(!refuses(&req("POST", "h", Some("http://h")), &c, false));
        assert!(!refuses(&req("POST", "h", None), &c, false));
        assert!(!refuses(
            &req("GET", "h", Some("https://evil.example")),
            &c,
            false
        ));
    }

    #[test]
    fn preflights() {
        let c = config(&[]);
        let ok = preflight(&req("OPTIONS", "h", Some("http://h")), &c, "GET, OPTIONS");
        assert_eq!(ok.status, 204);
        assert_eq!(ok.header("access-control-allow-origin"), Some("http://h"));
        assert!(ok
            .header("access-control-allow-headers")
            .is_some_and(|h| h.contains("mcp-protocol-version")));
        assert!(ok.header("access-control-max-age").is_some());
        let bad = preflight(
            &req("OPTIONS", "h", Some("https://evil.example")),
            &c,
            "GET, OPTIONS",
        );
        assert_eq!(bad.status, 403);
        assert_eq!(bad.body, br#"{"error":"bad_origin"}"#);
        assert_eq!(bad.header("access-control-allow-origin"), None);
        let plain = preflight(&req("OPTIONS", "h", None), &c, "GET, OPTIONS");
        assert_eq!(
            (plain.status, plain.header("allow")),
            (204, Some("GET, OPTIONS"))
        );
    }

    #[test]
    fn answers_carry_cors() {
        let c = config(&["https://app.example"]);
        let mut r = Response::empty(201);
        decorate(&req("POST", "h", Some("https://app.example")), &c, &mut r);
        assert_eq!(
            r.header("access-control-allow-origin"),
            Some("https://app.example")
        );
        assert_eq!(
            r.header("access-control-expose-headers"),
            Some(EXPOSE_HEADERS)
        );
        assert_eq!(r.header("vary"), Some("Origin"));
        let mut r = Response::empty(200);
        decorate(&req("GET", "h", None), &c, &mut r);
        assert_eq!(r.header("access-control-allow-origin"), Some("*"));
        let mut r = Response::empty(201);
        decorate(&req("POST", "h", None), &c, &mut r);
        assert_eq!(r.header("access-control-allow-origin"), None);
        let mut r = Response::empty(403);
        decorate(&req("POST", "h", Some("https://evil.example")), &c, &mut r);
        assert_eq!(r.header("access-control-allow-origin"), None);
    }

    #[test]
    fn serving_origins() {
        let trusted = Config {
            trust_forwarded: true,
            ..Config::default()
        };
        let at = |host: Option<&str>, proto: Option<&str>| {
            let mut r = Request::new("GET", "/");
            if let Some(h) = host {
                r.headers.push(("host".into(), h.into()));
            }
            if let Some(p) = proto {
                r.headers.push(("x-forwarded-proto".into(), p.into()));
            }
            serving(&r, &trusted)
        };
        assert_eq!(at(Some("127.0.0.1:8787"), None), "http://127.0.0.1:8787");
        assert_eq!(at(Some("[::1]:80"), None), "http://[::1]:80");
        // No closing bracket: still the loopback name, and no panic.
        assert_eq!(at(Some("[::1"), None), "http://[::1");
        assert_eq!(at(Some("needhave.io"), None), "https://needhave.io");
        assert_eq!(at(Some("needhave.io"), Some("http")), "http://needhave.io");
        assert_eq!(
            at(Some("needhave.io"), Some("gopher")),
            "https://needhave.io"
        );
        assert_eq!(at(Some("evil/path"), None), "http://localhost");
        assert_eq!(at(None, None), "http://localhost");
        // Forwarded headers: the proxy's last value, and only when trusted.
        let mut r = Request::new("GET", "/");
        r.headers.push(("host".into(), "10.0.0.5:8787".into()));
        r.headers.push((
            "x-forwarded-host".into(),
            "evil.example, list.example".into(),
        ));
        r.headers
            .push(("x-forwarded-proto".into(), "http, https".into()));
        assert_eq!(serving(&r, &trusted), "https://list.example");
        assert_eq!(serving(&r, &Config::default()), "https://10.0.0.5:8787");
        let fixed = Config {
            public_url: Some("https://needhave.io".into()),
            ..trusted
        };
        assert_eq!(serving(&r, &fixed), "https://needhave.io");
    }
}
