//! The list's own request and response, free of hyper and of the Worker, so
//! that the same dispatcher serves both; and the contract's input rules for
//! path ids and JSON bodies.

use std::sync::Arc;

use serde::Serialize;

use crate::error::{ApiError, Code};

#[derive(Clone, Debug, Default)]
pub struct Request {
    pub method: String,
    /// Path only, without the query.
    pub path: String,
    /// The query string, without `?` (empty when there is none).
    pub query: String,
    /// Names in lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// `path` may carry a query string (`/posts?kind=need`): it is kept
    /// apart, in `query`.
    pub fn new(method: &str, path: &str) -> Self {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        Request {
            method: method.to_string(),
            path: path.to_string(),
            query: query.split('#').next().unwrap_or("").to_string(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Body,
}

/// An answer's bytes: its own, or a text the store keeps for many answers
/// (the list's memo), shared rather than copied: a copy of the list was
/// the largest single cost of a `GET /posts` served from the memo.
#[derive(Clone, Debug)]
pub enum Body {
    Own(Vec<u8>),
    Kept(Arc<str>),
}

impl Body {
    pub fn clear(&mut self) {
        *self = Body::Own(Vec::new());
    }
}

impl Default for Body {
    fn default() -> Self {
        Body::Own(Vec::new())
    }
}

impl std::ops::Deref for Body {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Body::Own(v) => v,
            Body::Kept(s) => s.as_bytes(),
        }
    }
}

impl From<Vec<u8>> for Body {
    fn from(v: Vec<u8>) -> Self {
        Body::Own(v)
    }
}

impl From<Body> for Vec<u8> {
    fn from(b: Body) -> Self {
        match b {
            Body::Own(v) => v,
            Body::Kept(s) => s.as_bytes().to_vec(),
        }
    }
}

/// Bytes equal bytes, however they are held.
impl PartialEq for Body {
    fn eq(&self, other: &Body) -> bool {
        **self == **other
    }
}

impl<T: AsRef<[u8]> + ?Sized> PartialEq<T> for Body {
    fn eq(&self, other: &T) -> bool {
        **self == *other.as_ref()
    }
}

/// An HTML page body.
pub struct Html(pub String);

pub const JSON: &str = "application/json";

/// Room for the headers an answer usually ends with (its own, the tag and
/// caching rule, CORS, `nosniff`): made once rather than grown three times.
const HEADERS: usize = 8;

impl Response {
    pub fn new(status: u16, content_type: &str, body: impl Into<Body>) -> Self {
        let mut headers = Vec::with_capacity(HEADERS);
        headers.push(("content-type", content_type.to_string()));
        Response {
            status,
            headers,
            body: body.into(),
        }
    }

    pub fn json<T: Serialize + ?Sized>(status: u16, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => Response::new(status, JSON, body),
            Err(_) => Response::error(Code::Internal),
        }
    }

    pub fn empty(status: u16) -> Self {
        Response {
            status,
            headers: Vec::with_capacity(HEADERS),
            body: Body::default(),
        }
    }

    /// `{"error": CODE}` ([`crate::error::ErrorBody`], which documents it),
    /// written from the code's name rather than through serde.
    pub fn error(code: Code) -> Self {
        let mut body = b"{\"error\":".to_vec();
        crate::json::write_str(&mut body, code.as_str());
        body.push(b'}');
        Response::new(code.status(), JSON, body)
    }

    pub fn from_error(e: &ApiError) -> Self {
        let resp = Response::error(e.0);
        match e.retry_after_secs() {
            Some(seconds) => resp.with_retry_after(seconds),
            None => resp,
        }
    }

    /// This answer with `Retry-After: seconds` (whole seconds, at least 1):
    /// when the same request would be admitted. Every 429 carries it, and
    /// any refusal that ends may (a 503 of a busy server).
    pub fn with_retry_after(self, seconds: u32) -> Self {
        let mut digits = String::new();
        let mut n = seconds.max(1);
        // Digit by digit, as `client` prints its keys: no formatting site.
        while n > 0 {
            digits.insert(0, char::from(b'0' + (n % 10) as u8));
            n /= 10;
        }
        self.with_header("retry-after", &digits)
    }

    pub fn method_not_allowed(allow: &str) -> Self {
        Response::error(Code::MethodNotAllowed).with_header("allow", allow)
    }

    pub fn with_header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value.to_string()));
        self
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A path id: 32 lowercase hex characters. Anything else is `not_found`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Id(String);

impl Id {
    pub fn parse(s: &str) -> Option<Id> {
        Id::valid(s).then(|| Id(s.to_string()))
    }

    /// Whether `s` is an id, without making one.
    pub fn valid(s: &str) -> bool {
        s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }

    /// The id `s`, which the caller checked with [`Id::valid`] (the
    /// dispatcher checks every path id of a request before it reads the
    /// body, then makes them). Debug builds check again.
    #[doc(hidden)]
    pub fn checked(s: &str) -> Id {
        debug_assert!(Id::valid(s), "unchecked id");
        Id(s.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_as_serde_json_writes_them() {
        for &code in Code::ALL {
            let r = Response::error(code);
            let want = serde_json::to_vec(&crate::error::ErrorBody { error: code }).unwrap();
            assert_eq!((r.status, &r.body[..]), (code.status(), &want[..]));
            assert_eq!(r.header("content-type"), Some(JSON));
        }
    }

    #[test]
    fn ids() {
        assert!(Id::parse("0123456789abcdef0123456789abcdef").is_some());
        assert!(Id::parse("0123456789ABCDEF0123456789abcdef").is_none());
        assert!(Id::parse("0123456789abcdef0123456789abcde").is_none());
        assert!(Id::parse("0123456789abcdef0123456789abcdeg").is_none());
        assert!(Id::parse("").is_none());
    }
}
