//! The list's own request and response, free of hyper and of the Worker, so
//! that the same dispatcher serves both; and the contract's input rules for
//! path ids and JSON bodies.

use serde::Serialize;
use serde_json::Value;

use crate::api::Route;
use crate::error::{ApiError, Code};

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

    /// `{"error": CODE}` ([`crate::error::ErrorBody`], which documents it),
    /// written from the code's name rather than through serde.
    pub fn error(code: Code) -> Self {
        let mut body = b"{\"error\":".to_vec();
        write_str(&mut body, code.as_str());
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

    pub fn from_json<T: ToJson>(route: &Route, status: u16, result: Result<T, ApiError>) -> Self {
        Response::from_answer(route, status, result.as_ref().map(|v| v as &dyn ToJson))
    }

    /// `from_json` without its type: one copy for every route.
    fn from_answer(route: &Route, status: u16, result: Result<&dyn ToJson, &ApiError>) -> Self {
        match result {
            Ok(v) => Response::new(status, JSON, v.to_json()),
            Err(e) => Response::declared_error(route, *e),
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
            Some(crate::api::Body::Media(m)) => m,
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

/// The parsed JSON object of a request body.
pub type Fields = serde_json::Map<String, Value>;

/// A request body type, read from its JSON object. Derived
/// (`needhave_macros::FromBody`): each field is read by its name through
/// [`BodyField`], and a field that does not fit makes the whole body `None`.
pub trait FromBody: Sized {
    fn from_body(fields: &Fields) -> Option<Self>;
}

/// One field of a request body, from its member (`None`: absent). Unknown
/// members are never asked for, so they are ignored.
pub trait BodyField: Sized {
    fn read(member: Option<&Value>) -> Option<Self>;
}

/// Required: a string, present.
impl BodyField for String {
    fn read(member: Option<&Value>) -> Option<Self> {
        member?.as_str().map(str::to_string)
    }
}

/// Optional: absent or null is `None`; any other type does not fit.
impl BodyField for Option<String> {
    fn read(member: Option<&Value>) -> Option<Self> {
        match member {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(s)) => Some(Some(s.clone())),
            Some(_) => None,
        }
    }
}

/// The request body as `T`: a JSON object, or `bad_request`. Unknown fields
/// are ignored; missing or mistyped required fields are `bad_request`.
///
/// Parsed as a `Value` and read field by field ([`FromBody`]) rather than
/// through serde's typed readers (`from_slice::<T>`, `from_value`): their
/// errors carry messages (`invalid type: floating point `1.5`, expected a
/// string`), and building those links core's float printing, about 14 KB of
/// the Worker's .wasm; and a derived `Deserialize` is a copy of serde's
/// visitor machinery per body type. The list never shows such a message: a
/// body that does not fit is `bad_request`.
pub fn json_body<T: FromBody>(req: &Request) -> Result<T, ApiError> {
    T::from_body(&body_object(req)?).ok_or(ApiError::from(Code::BadRequest))
}

/// The body as a JSON object: the part of `json_body` that does not depend
/// on `T`, which the dispatcher runs once for every route.
pub fn body_object(req: &Request) -> Result<Fields, ApiError> {
    match serde_json::from_slice(&req.body) {
        Ok(Value::Object(fields)) => Ok(fields),
        _ => Err(ApiError::from(Code::BadRequest)),
    }
}

/// An answer written as JSON, byte for byte as `serde_json::to_vec` writes
/// the same value (no whitespace, members in declaration order, the same
/// string escapes). Derived for answer structs (`needhave_macros::ToJson`):
/// one line per field over these few impls, instead of a serde `Serialize`
/// per answer type through serde_json's serializer.
pub trait ToJson {
    fn write_json(&self, out: &mut Vec<u8>);

    fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_json(&mut out);
        out
    }
}

impl ToJson for str {
    fn write_json(&self, out: &mut Vec<u8>) {
        write_str(out, self)
    }
}

impl ToJson for String {
    fn write_json(&self, out: &mut Vec<u8>) {
        write_str(out, self)
    }
}

impl ToJson for bool {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if *self { b"true" } else { b"false" })
    }
}

/// `None` is `null`, as serde writes it (a field that leaves it out says
/// `skip_serializing_if`, which the derive honours).
impl<T: ToJson> ToJson for Option<T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Some(v) => v.write_json(out),
            None => out.extend_from_slice(b"null"),
        }
    }
}

impl<T: ToJson> ToJson for [T] {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            item.write_json(out);
        }
        out.push(b']');
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        self.as_slice().write_json(out)
    }
}

/// A JSON string, escaped by serde_json itself (the same code that writes
/// every other string the list answers with, so the escapes cannot drift):
/// `"` and `\` escaped, control characters as `\n`, `\t`, … or `\u00XX`,
/// everything else (U+2028 included) as its UTF-8.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    // Writing to a Vec cannot fail, and a str always serializes.
    let _ = serde_json::to_writer(&mut *out, s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_as_serde_json_writes_them() {
        for &code in Code::ALL {
            let r = Response::error(code);
            let want = serde_json::to_vec(&crate::error::ErrorBody { error: code }).unwrap();
            assert_eq!((r.status, &r.body), (code.status(), &want));
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

    #[derive(needhave_macros::FromBody, Debug, PartialEq)]
    struct B {
        a: String,
        o: Option<String>,
    }

    #[test]
    fn bodies() {
        let mut r = Request::new("POST", "/x");
        for bad in [
            &b"[\"x\"]"[..],
            b"[]",
            b"\"a\"",
            b"1",
            b"",
            b"null",
            b"{",
            b"{\"a\":\"x\"} x",
            b"{\"a\":1}",
            b"{\"a\":1.5}",
            b"{\"a\":true}",
            b"{\"a\":null}",
            b"{\"a\":[\"x\"]}",
            b"{\"a\":{}}",
            b"{}",
            b"{\"o\":\"x\"}",
            b"{\"a\":\"x\",\"o\":1}",
            b"{\"a\":\"x\",\"o\":false}",
            b"{\"a\":\"x\",\"o\":[]}",
        ] {
            r.body = bad.to_vec();
            assert_eq!(
                json_body::<B>(&r).unwrap_err(),
                ApiError::from(Code::BadRequest),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let read = |body: &[u8]| {
            let mut r = Request::new("POST", "/x");
            r.body = body.to_vec();
            json_body::<B>(&r).unwrap()
        };
        let b = |a: &str, o: Option<&str>| B {
            a: a.to_string(),
            o: o.map(str::to_string),
        };
        // Unknown members ignored, absent or null optional is None, the last
        // of duplicate members counts (as serde_json's `Value` keeps it).
        assert_eq!(read(b" {\"a\":\"x\",\"extra\":true}"), b("x", None));
        assert_eq!(read(b"{\"a\":\"x\",\"o\":null}"), b("x", None));
        assert_eq!(
            read(b"{\"o\":\"\",\"a\":\"\\u00e9\"}"),
            b("\u{e9}", Some(""))
        );
        assert_eq!(read(b"{\"a\":\"x\",\"a\":\"y\"}"), b("y", None));
    }

    /// Strings that need care: serde_json's escapes, byte for byte.
    #[test]
    fn strings_as_serde_json_writes_them() {
        let tricky = [
            "",
            "plain",
            "\"quoted\"",
            "back\\slash\\",
            "tab\tnew\nline\rcr",
            "\u{0}\u{1}\u{7}\u{8}\u{b}\u{c}\u{1b}\u{1f}",
            "\u{7f}\u{80}\u{9f}",
            "line\u{2028}para\u{2029}",
            "caf\u{e9} \u{65e5}\u{672c} \u{1f6b2} \u{feff}\u{200b}",
            "</script><!--",
            "/slash",
        ];
        for s in tricky {
            assert_eq!(s.to_json(), serde_json::to_vec(s).unwrap(), "{s:?}");
            let owned = s.to_string();
            assert_eq!(owned.to_json(), serde_json::to_vec(&owned).unwrap());
            let v = vec![Some(owned.clone()), None];
            assert_eq!(v.to_json(), serde_json::to_vec(&v).unwrap());
        }
        assert_eq!(true.to_json(), b"true");
        assert_eq!(false.to_json(), b"false");
        assert_eq!(Vec::<String>::new().to_json(), b"[]");
    }

    #[derive(needhave_macros::ToJson, serde::Serialize)]
    struct Skips {
        #[serde(skip_serializing_if = "Option::is_none")]
        a: Option<String>,
        b: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        c: Option<String>,
        d: Option<String>,
    }

    #[test]
    fn skipped_members() {
        let s = |v: &str| Some(v.to_string());
        for (a, c, d) in [
            (None, None, None),
            (s("x"), None, s("\"")),
            (None, s("y"), None),
        ] {
            let v = Skips { a, b: true, c, d };
            assert_eq!(v.to_json(), serde_json::to_vec(&v).unwrap());
        }
    }
}
