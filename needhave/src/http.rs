//! The list's own request and response, free of hyper and of the Worker, so
//! that the same dispatcher serves both; and the contract's input rules for
//! path ids and JSON bodies.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{ApiError, Code, ErrorBody};
use crate::table::Route;

#[derive(Clone, Debug, Default)]
pub struct Request {
    pub method: String,
    /// Path only, without the query.
    pub path: String,
    /// Names in lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn new(method: &str, path: &str) -> Self {
        Request {
            method: method.to_string(),
            path: path.split('?').next().unwrap_or("").to_string(),
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
    pub body: Vec<u8>,
}

/// An HTML page body.
pub struct Html(pub String);

pub const JSON: &str = "application/json";

impl Response {
    pub fn new(status: u16, content_type: &str, body: Vec<u8>) -> Self {
        Response {
            status,
            headers: vec![("content-type", content_type.to_string())],
            body,
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
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn error(code: Code) -> Self {
        Response::json(code.status(), &ErrorBody { error: code })
    }

    pub fn from_error(e: &ApiError) -> Self {
        Response::error(e.0)
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

    pub fn from_json<T: Serialize>(
        route: &Route,
        status: u16,
        result: Result<T, ApiError>,
    ) -> Self {
        match result {
            Ok(v) => Response::json(status, &v),
            Err(e) => Response::declared_error(route, e),
        }
    }

    pub fn from_html(route: &Route, status: u16, result: Result<Html, ApiError>) -> Self {
        match result {
            Ok(Html(page)) => Response::new(status, "text/html; charset=utf-8", page.into_bytes()),
            Err(e) => Response::declared_error(route, e),
        }
    }

    pub fn from_empty(route: &Route, status: u16, result: Result<(), ApiError>) -> Self {
        match result {
            Ok(()) => Response::empty(status),
            Err(e) => Response::declared_error(route, e),
        }
    }

    /// An error the table does not declare for this route is a bug: the
    /// OpenAPI document and the MCP descriptions would be lying. Debug builds
    /// (the tests) fail loudly; release builds still answer the code.
    fn declared_error(route: &Route, e: ApiError) -> Self {
        debug_assert!(
            e.0 == Code::Internal || route.declares(e.0),
            "{} {} returned undeclared error {:?}",
            route.method,
            route.path,
            e.0
        );
        Response::from_error(&e)
    }
}

/// A path id: 32 lowercase hex characters. Anything else is `not_found`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Id(String);

impl Id {
    pub fn parse(s: &str) -> Option<Id> {
        let ok = s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        ok.then(|| Id(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The request body as `T`: a JSON object, or `bad_request`. Unknown fields
/// are ignored; missing or mistyped required fields are `bad_request`.
pub fn json_body<T: DeserializeOwned>(req: &Request) -> Result<T, ApiError> {
    // serde would also accept a JSON array for a struct; the contract wants
    // an object.
    let first = req.body.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return Err(ApiError(Code::BadRequest));
    }
    serde_json::from_slice(&req.body).map_err(|_| ApiError(Code::BadRequest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert!(Id::parse("0123456789abcdef0123456789abcdef").is_some());
        assert!(Id::parse("0123456789ABCDEF0123456789abcdef").is_none());
        assert!(Id::parse("0123456789abcdef0123456789abcde").is_none());
        assert!(Id::parse("0123456789abcdef0123456789abcdeg").is_none());
        assert!(Id::parse("").is_none());
    }

    #[test]
    fn bodies() {
        #[derive(serde::Deserialize, Debug)]
        struct B {
            #[allow(dead_code)]
            a: String,
        }
        let mut r = Request::new("POST", "/x");
        for bad in [&b"[\"x\"]"[..], b"", b"null", b"{", b"{\"a\":1}", b"{}"] {
            r.body = bad.to_vec();
            assert_eq!(json_body::<B>(&r).unwrap_err(), ApiError(Code::BadRequest));
        }
        r.body = b" {\"a\":\"x\",\"extra\":true}".to_vec();
        assert!(json_body::<B>(&r).is_ok());
    }
}
