//! The list's own request and response, free of hyper and of the Worker, so
//! that the same dispatcher serves both; and the contract's input rules for
//! path ids and JSON bodies.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

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

    /// A text document, of the media type the table gives its route.
    pub fn from_text(route: &Route, status: u16, result: Result<String, ApiError>) -> Self {
        let media = match route.success().map(|r| &r.body) {
            Some(crate::table::Body::Media(m)) => m,
            _ => "text/plain; charset=utf-8",
        };
        match result {
            Ok(text) => Response::new(status, media, text.into_bytes()),
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
    /// (the tests) fail loudly; release builds still answer the code. A
    /// store failure (500, or 503 for a vanished database file) can meet any
    /// route.
    fn declared_error(route: &Route, e: ApiError) -> Self {
        debug_assert!(
            matches!(e.0, Code::Internal | Code::Unavailable) || route.declares(e.0),
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
    // Parsed as a `Value` first, then read as `T`: see `from_value`.
    match serde_json::from_slice(&req.body) {
        // serde would also read a JSON array as a struct; the contract wants
        // an object.
        Ok(v @ Value::Object(_)) => from_value(&v).ok_or(ApiError(Code::BadRequest)),
        _ => Err(ApiError(Code::BadRequest)),
    }
}

/// Reads `T` out of a parsed JSON value (a request body, a store row), or
/// `None` when it does not fit.
///
/// Not `serde_json::from_value`, nor `from_slice::<T>`: their errors carry
/// messages, and building those links core's float printing
/// (`invalid type: floating point `1.5`, expected a string`), about 14 KB of
/// the Worker's .wasm. The list never shows such a message (a body that does
/// not fit is `bad_request`), so this reader's error has none. It reads what
/// serde_json's own reader does for the list's types: strings, numbers,
/// booleans, options (null is `None`), unit enum variants from strings,
/// arrays and objects.
pub fn from_value<T: DeserializeOwned>(v: &Value) -> Option<T> {
    T::deserialize(de::ValueReader(v)).ok()
}

mod de {
    use std::fmt;

    use serde::de::value::{MapDeserializer, SeqDeserializer};
    use serde::de::{self, Expected, IntoDeserializer, Unexpected, Visitor};
    use serde::forward_to_deserialize_any;
    use serde_json::Value;

    /// A value that does not fit. Deliberately without a message: see
    /// [`super::from_value`]. Every method of `de::Error` that would format
    /// one is overridden.
    #[derive(Debug)]
    pub struct Mismatch;

    impl fmt::Display for Mismatch {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("JSON value of another shape")
        }
    }

    impl std::error::Error for Mismatch {}

    impl de::Error for Mismatch {
        fn custom<T: fmt::Display>(_: T) -> Self {
            Mismatch
        }
        fn invalid_type(_: Unexpected<'_>, _: &dyn Expected) -> Self {
            Mismatch
        }
        fn invalid_value(_: Unexpected<'_>, _: &dyn Expected) -> Self {
            Mismatch
        }
        fn invalid_length(_: usize, _: &dyn Expected) -> Self {
            Mismatch
        }
        fn unknown_variant(_: &str, _: &'static [&'static str]) -> Self {
            Mismatch
        }
        fn unknown_field(_: &str, _: &'static [&'static str]) -> Self {
            Mismatch
        }
        fn missing_field(_: &'static str) -> Self {
            Mismatch
        }
        fn duplicate_field(_: &'static str) -> Self {
            Mismatch
        }
    }

    pub struct ValueReader<'a>(pub &'a Value);

    impl<'de> IntoDeserializer<'de, Mismatch> for ValueReader<'_> {
        type Deserializer = Self;
        fn into_deserializer(self) -> Self {
            self
        }
    }

    impl<'de> de::Deserializer<'de> for ValueReader<'_> {
        type Error = Mismatch;

        fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mismatch> {
            match self.0 {
                Value::Null => visitor.visit_unit(),
                Value::Bool(b) => visitor.visit_bool(*b),
                Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                    (Some(u), _, _) => visitor.visit_u64(u),
                    (_, Some(i), _) => visitor.visit_i64(i),
                    (_, _, Some(f)) => visitor.visit_f64(f),
                    _ => Err(Mismatch),
                },
                Value::String(s) => visitor.visit_str(s),
                Value::Array(items) => {
                    visitor.visit_seq(SeqDeserializer::new(items.iter().map(ValueReader)))
                }
                Value::Object(members) => visitor.visit_map(MapDeserializer::new(
                    members.iter().map(|(k, v)| (k.as_str(), ValueReader(v))),
                )),
            }
        }

        fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mismatch> {
            match self.0 {
                Value::Null => visitor.visit_none(),
                _ => visitor.visit_some(self),
            }
        }

        fn deserialize_enum<V: Visitor<'de>>(
            self,
            _name: &'static str,
            _variants: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, Mismatch> {
            match self.0 {
                Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
                _ => Err(Mismatch),
            }
        }

        forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf unit unit_struct newtype_struct seq tuple
            tuple_struct map struct identifier ignored_any
        }
    }
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
        for bad in [
            &b"[\"x\"]"[..],
            b"",
            b"null",
            b"{",
            b"{\"a\":1}",
            b"{\"a\":1.5}",
            b"{\"a\":null}",
            b"{\"a\":[\"x\"]}",
            b"{}",
        ] {
            r.body = bad.to_vec();
            assert_eq!(json_body::<B>(&r).unwrap_err(), ApiError(Code::BadRequest));
        }
        r.body = b" {\"a\":\"x\",\"extra\":true}".to_vec();
        assert!(json_body::<B>(&r).is_ok());
    }

    #[test]
    fn values() {
        use crate::handlers::posts::{Kind, PostView};
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct O {
            s: Option<String>,
            n: i64,
            f: f64,
            b: bool,
            v: Vec<u8>,
        }
        let v = serde_json::json!({"s": null, "n": -3, "f": 0.5, "b": true, "v": [1, 2]});
        let o = from_value::<O>(&v).unwrap();
        assert_eq!((o.s, o.n, o.f, o.b, o.v), (None, -3, 0.5, true, vec![1, 2]));
        let row = serde_json::json!({"id": "a", "kind": "have", "note": "n", "top": 7});
        assert_eq!(from_value::<PostView>(&row).unwrap().kind, Kind::Have);
        let row = serde_json::json!({"id": "a", "kind": "offer", "note": "n"});
        assert!(from_value::<PostView>(&row).is_none());
    }
}
