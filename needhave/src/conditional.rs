//! Conditional reads: every public `GET` answer carries an `ETag` and a
//! `Cache-Control`, and a request whose `If-None-Match` names the current
//! tag gets `304 Not Modified` with no body. An agent that watches the list
//! then costs a header or two per look.
//!
//! Tags are strong: a tag names one sequence of bytes of one media type.
//! They are compared weakly, as RFC 9110 asks of `If-None-Match`, so a tag
//! a proxy weakened (`W/"…"`, as Cloudflare does when it compresses) still
//! matches.
//!
//! Two kinds of tags:
//! - a *version tag*, for the answers that are a function of the list's
//!   version ([`Version`]: its newest post, its newest end by a row, its
//!   latest expiry passed; each moves only when a page may change) and of
//!   the request's parameters: the public list and the feed. The tag holds
//!   the version, so a handler reads the version the client has from its
//!   `If-None-Match` and asks the store only whether that is still the
//!   version ([`known_version`]): a 304 costs no read of the posts;
//! - a *content tag*, for every other public `GET` (a post, the documents):
//!   a digest of the answer's media type and bytes, added by [`dress`]
//!   after the handler ran.

use std::borrow::Cow;

use crate::api::Route;
use crate::http::{Request, Response};
use crate::store::Consistency;
pub use crate::store::Version;

/// The public list, its pages and its feed: a few seconds, since the list
/// changes; a watcher revalidates with `If-None-Match` after that. Less
/// when a post it shows expires sooner ([`until`]).
pub const LIST_MAX_AGE: u32 = 5;
pub const LIST_CACHE: &str = "public, max-age=5";

/// Any other public answer without a `Cache-Control` of its own (a
/// document), and a post (which may end, or be taken down by the
/// operator), unless it expires sooner.
pub const READ_MAX_AGE: u32 = 60;
pub const READ_CACHE: &str = "public, max-age=60";

/// The caching rule of an answer that is fresh for at most `max_age`
/// seconds and, since a post it shows ends by itself at `ends` (Unix ms,
/// if any), not past that: a kept answer is never served past the
/// earliest expiry it shows. `max_age` is the answer's usual rule (5 for
/// a page, 60 for a post).
pub fn until(max_age: u32, ends: Option<i64>, now_ms: i64) -> Cow<'static, str> {
    let left = ends.map_or(u64::MAX, |e| {
        u64::try_from((e - now_ms) / 1000).unwrap_or(0)
    });
    let secs = u64::from(max_age).min(left);
    // The usual rules as the constants they are (no text made per answer).
    match (secs == u64::from(max_age), max_age) {
        (true, LIST_MAX_AGE) => LIST_CACHE.into(),
        (true, READ_MAX_AGE) => READ_CACHE.into(),
        _ => ["public, max-age=", &secs.to_string()].concat().into(),
    }
}

/// Whether `req`'s `If-None-Match` matches `tag` by the weak comparison
/// (RFC 9110 §13.1.2): the opaque parts are equal, `W/` ignored, and `*`
/// matches any current answer.
pub fn matches(req: &Request, tag: &str) -> bool {
    matches_in(req.header("if-none-match"), tag)
}

/// [`matches`], given the `If-None-Match` header's value.
pub fn matches_in(header: Option<&str>, tag: &str) -> bool {
    let Some(header) = header else {
        return false;
    };
    let tag = opaque(tag);
    header
        .split(',')
        .map(str::trim)
        .any(|t| t == "*" || opaque(t) == tag)
}

/// A tag without its weakness mark.
fn opaque(tag: &str) -> &str {
    tag.strip_prefix("W/").unwrap_or(tag)
}

/// The version tag of an answer: `"<kind><posts>-<ends>-<expired>"`, with
/// `.<variant>` when the answer depends on more than the version (the
/// parameters, the origin). `kind` tells the representations of one
/// version apart (the list as JSON, the feed as Atom).
pub fn version_tag(kind: char, version: Version, variant: &str) -> String {
    let mut tag = String::with_capacity(48 + variant.len());
    tag.push('"');
    tag.push(kind);
    for (i, part) in [version.posts, version.ends, version.expired]
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            tag.push('-');
        }
        // Digit by digit into the tag: no String of its own.
        let start = tag.len();
        let mut n = part.unsigned_abs();
        loop {
            tag.insert(start, char::from(b'0' + (n % 10) as u8));
            n /= 10;
            if n == 0 {
                break;
            }
        }
    }
    if !variant.is_empty() {
        tag.push('.');
        tag.push_str(variant);
    }
    tag.push('"');
    tag
}

/// The version of the first tag in `req`'s `If-None-Match` that is a
/// version tag of this `kind` and `variant`: the version of the answer the
/// client holds. A forged one costs nothing: it only makes the store
/// compare another number.
pub fn known_version(req: &Request, kind: char, variant: &str) -> Option<Version> {
    known_version_in(req.header("if-none-match"), kind, variant)
}

/// [`known_version`], given the `If-None-Match` header's value.
pub fn known_version_in(header: Option<&str>, kind: char, variant: &str) -> Option<Version> {
    header?.split(',').find_map(|t| {
        let inner = opaque(t.trim()).strip_prefix('"')?.strip_suffix('"')?;
        let rest = inner.strip_prefix(kind)?;
        let (version, rest_variant) = rest.split_once('.').unwrap_or((rest, ""));
        if rest_variant != variant {
            return None;
        }
        Version::parse(version)
    })
}

/// A short digest of `parts` (each ended by a NUL, so that parts cannot
/// run into each other), for a tag: 64 bits of SHA-256, in hex.
pub fn digest(parts: &[&[u8]]) -> String {
    let mut framed: Vec<&[u8]> = Vec::with_capacity(parts.len() * 2);
    for p in parts {
        framed.push(p);
        framed.push(b"\0");
    }
    let mut hex = crate::secrets::digest_hex(&framed);
    hex.truncate(16);
    hex
}

/// `304 Not Modified` for `tag`: no body and no content type, the tag and
/// the caching rule a 200 would carry.
pub fn not_modified(tag: &str, cache: &str) -> Response {
    Response::empty(304)
        .with_header("etag", tag)
        .with_header("cache-control", cache)
}

/// A 200 answer with its version tag and caching rule, or the 304 when the
/// client holds it already.
pub fn tagged(req: &Request, resp: Response, tag: &str, cache: &str) -> Response {
    if matches(req, tag) {
        return not_modified(tag, cache);
    }
    resp.with_header("etag", tag)
        .with_header("cache-control", cache)
}

/// The validators of a public `GET`'s 200 answer: its `Cache-Control`
/// (when the handler set none) and its tag (a content tag when the handler
/// set none), then the 304 if the client holds that tag. Other answers
/// (errors, writes, the secret-bearing reads, which read the primary) are
/// left as they are.
pub fn dress(req: &Request, route: Option<&Route>, resp: &mut Response) {
    if !matches!(req.method.as_str(), "GET" | "HEAD")
        || resp.status != 200
        || !route.is_some_and(|r| r.consistency == Consistency::Replica)
    {
        return;
    }
    if resp.header("cache-control").is_none() {
        resp.headers.push(("cache-control", READ_CACHE.to_string()));
    }
    let held = match resp.header("etag") {
        Some(tag) => matches(req, tag),
        None => {
            let media = resp.header("content-type").unwrap_or("");
            let tag = ["\"", &digest(&[media.as_bytes(), &resp.body]), "\""].concat();
            let held = matches(req, &tag);
            resp.headers.push(("etag", tag));
            held
        }
    };
    if held {
        resp.status = 304;
        resp.body.clear();
        resp.headers.retain(|(n, _)| *n != "content-type");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_inm(value: &str) -> Request {
        let mut r = Request::new("GET", "/posts");
        r.headers.push(("if-none-match".into(), value.into()));
        r
    }

    #[test]
    fn weak_comparison_lists_and_star() {
        let tag = "\"p12\"";
        for yes in ["\"p12\"", "W/\"p12\"", " \"x\" , W/\"p12\"", "*"] {
            assert!(matches(&with_inm(yes), tag), "{yes}");
        }
        for no in ["\"p13\"", "p12", "\"P12\"", "\"p12", ""] {
            assert!(!matches(&with_inm(no), tag), "{no}");
        }
        assert!(!matches(&Request::new("GET", "/posts"), tag));
    }

    fn version(posts: i64, ends: i64, expired: i64) -> Version {
        Version {
            posts,
            ends,
            expired,
        }
    }

    #[test]
    fn versions_read_back_from_their_tags() {
        assert_eq!(version_tag('p', version(12, 0, 0), ""), "\"p12-0-0\"");
        assert_eq!(
            version_tag('a', version(7, 3, 1_796_530_353_120), "ab"),
            "\"a7-3-1796530353120.ab\""
        );
        for v in [0, 9, 10, 1234567890, i64::MAX] {
            let want = version(v, v / 2, v / 3);
            let tag = version_tag('p', want, "");
            assert_eq!(tag, format!("\"p{}-{}-{}\"", v, v / 2, v / 3));
            assert_eq!(known_version(&with_inm(&tag), 'p', ""), Some(want));
            // The text the page's statement writes is the tag's.
            assert_eq!(Version::parse(&want.text()), Some(want));
        }
        let v = |inm: &str, kind, variant| known_version(&with_inm(inm), kind, variant);
        assert_eq!(v("\"p12-1-5\"", 'p', ""), Some(version(12, 1, 5)));
        assert_eq!(v("W/\"p12-0-0\"", 'p', ""), Some(version(12, 0, 0)));
        assert_eq!(v("\"x\", \"a7-2-0.ab\"", 'a', "ab"), Some(version(7, 2, 0)));
        // Another kind, another variant, a part missing or too many, no
        // number, or not a number: none.
        assert_eq!(v("\"a12-0-0\"", 'p', ""), None);
        assert_eq!(v("\"a7-0-0.ab\"", 'a', "cd"), None);
        assert_eq!(v("\"a7-0-0\"", 'a', "ab"), None);
        assert_eq!(v("\"p12\"", 'p', ""), None);
        assert_eq!(v("\"p12-0\"", 'p', ""), None);
        assert_eq!(v("\"p12-0-0-0\"", 'p', ""), None);
        assert_eq!(v("\"p--\"", 'p', ""), None);
        assert_eq!(v("\"p-1-0-0\"", 'p', ""), None);
        assert_eq!(v("\"p1-+2-0\"", 'p', ""), None);
        assert_eq!(v("\"p99999999999999999999-0-0\"", 'p', ""), None);
        assert_eq!(v("*", 'p', ""), None);
    }

    #[test]
    fn the_rules_say_their_ages() {
        assert_eq!(until(LIST_MAX_AGE, None, 0), LIST_CACHE);
        assert_eq!(until(READ_MAX_AGE, None, 0), READ_CACHE);
    }

    #[test]
    fn an_answer_is_kept_no_longer_than_its_first_expiry() {
        let now = 1_000_000;
        assert_eq!(until(5, None, now), "public, max-age=5");
        assert_eq!(until(5, Some(now + 60_000), now), "public, max-age=5");
        assert_eq!(until(60, Some(now + 30_999), now), "public, max-age=30");
        assert_eq!(until(5, Some(now + 2_500), now), "public, max-age=2");
        assert_eq!(until(5, Some(now + 999), now), "public, max-age=0");
        assert_eq!(until(5, Some(now - 1), now), "public, max-age=0");
    }
}
