//! The JSON codec of the list's own bodies and answers: request bodies
//! read into their typed fields (`FromBody`, derived, over a `serde_json`
//! object), and answers written by `ToJson` (derived), byte for byte what
//! serde_json writes. Apart from `http.rs`, which is the request and the
//! response, so that each file holds one concern.

use serde_json::Value;

use crate::error::{ApiError, Code};

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

/// Optional: absent or null is `None`; any other type does not fit.
impl BodyField for Option<bool> {
    fn read(member: Option<&Value>) -> Option<Self> {
        match member {
            None | Some(Value::Null) => Some(None),
            Some(Value::Bool(b)) => Some(Some(*b)),
            Some(_) => None,
        }
    }
}

/// Any JSON value, as sent (absent or null is `None`): a field whose own
/// rule judges its type, so that it names its own error (`expires_in`:
/// `bad_expiry`) rather than `bad_request`.
impl BodyField for Option<Value> {
    fn read(member: Option<&Value>) -> Option<Self> {
        Some(member.filter(|v| !v.is_null()).cloned())
    }
}

/// The request body as `T`: a JSON object, or `bad_request`. Unknown fields
/// are ignored; missing or mistyped required fields are `bad_request`.
///
/// Parsed as a `Value` and read field by field ([`FromBody`]) rather than
/// through serde's typed readers (`from_slice::<T>`, `from_value`): their
/// errors carry messages (`invalid type: floating point `1.5`, expected a
/// string`), and building those links core's float printing; and a derived
/// `Deserialize` is a copy of serde's visitor machinery per body type:
/// together 13,133 B gzip of the Worker's .wasm (bench/worker-size.sh). The
/// list never shows such a message: a body that does not fit is
/// `bad_request`.
pub fn json_body<T: FromBody>(body: &[u8]) -> Result<T, ApiError> {
    T::from_body(&body_object(body)?).ok_or(ApiError::from(Code::BadRequest))
}

/// The body as a JSON object: the part of `json_body` that does not depend
/// on `T`, which the dispatcher runs once for every route.
pub fn body_object(body: &[u8]) -> Result<Fields, ApiError> {
    match serde_json::from_slice(body) {
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

impl ToJson for crate::rules::Kind {
    fn write_json(&self, out: &mut Vec<u8>) {
        self.as_str().write_json(out)
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
    fn bodies() {
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
            assert_eq!(
                json_body::<B>(bad).unwrap_err(),
                ApiError::from(Code::BadRequest),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let read = |body: &[u8]| json_body::<B>(body).unwrap();
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

    #[derive(needhave_macros::FromBody, Debug, PartialEq)]
    struct B {
        a: String,
        o: Option<String>,
    }
}
