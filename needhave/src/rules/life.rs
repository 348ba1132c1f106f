//! What a post's life takes from a caller: how long it lasts (`expires_in`)
//! and why it is reported (a report's `reason`). Rules of the list, beside
//! the note's.

use serde_json::Value;

use crate::error::Code;

/// The shortest life a post may be given (`expires_in`), in seconds:
/// five minutes.
pub const EXPIRES_IN_MIN: i64 = 300;
/// The longest, in seconds: ninety days.
pub const EXPIRES_IN_MAX: i64 = 90 * 86_400;

/// A post's `expires_in` as sent (`None`: absent or null, never expiring)
/// as milliseconds to add to its creation time: a JSON integer of seconds
/// from [`EXPIRES_IN_MIN`] to [`EXPIRES_IN_MAX`]. Anything else (a string,
/// a fraction, out of range) is `bad_expiry`: agents rarely know a date,
/// so the post's duration is what they give, and the answer says when.
pub fn expires_in(sent: Option<&Value>) -> Result<Option<i64>, Code> {
    let Some(value) = sent.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    match value.as_i64() {
        Some(s) if (EXPIRES_IN_MIN..=EXPIRES_IN_MAX).contains(&s) => Ok(Some(s * 1000)),
        _ => Err(Code::BadExpiry),
    }
}

/// Why a post is reported: one of six, so that the operator can sort what
/// comes in.
#[needhave_macros::schema(serialize)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
// In place: tool input schemas have no `$ref`.
#[schemars(inline)]
pub enum Reason {
    Spam,
    Scam,
    Illegal,
    PromptInjection,
    ContactDetails,
    Other,
}

impl Reason {
    pub const ALL: [Reason; 6] = [
        Reason::Spam,
        Reason::Scam,
        Reason::Illegal,
        Reason::PromptInjection,
        Reason::ContactDetails,
        Reason::Other,
    ];

    pub fn parse(s: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Spam => "spam",
            Reason::Scam => "scam",
            Reason::Illegal => "illegal",
            Reason::PromptInjection => "prompt_injection",
            Reason::ContactDetails => "contact_details",
            Reason::Other => "other",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expiries() {
        let e = |v: Value| expires_in(Some(&v));
        assert_eq!(expires_in(None), Ok(None));
        assert_eq!(e(Value::Null), Ok(None));
        assert_eq!(e(json!(300)), Ok(Some(300_000)));
        assert_eq!(e(json!(86400)), Ok(Some(86_400_000)));
        assert_eq!(e(json!(7_776_000)), Ok(Some(7_776_000_000)));
        for bad in [
            json!(299),
            json!(7_776_001),
            json!(300.5),
            json!(300.0),
            json!("300"),
            json!(-300),
            json!(true),
            json!([300]),
            json!({}),
            json!(u64::MAX),
        ] {
            assert_eq!(e(bad.clone()), Err(Code::BadExpiry), "{bad}");
        }
    }

    /// The six reasons are the schema's CHECK's, in its order, and what
    /// serde writes.
    #[test]
    fn reasons() {
        let schema = include_str!("../../../schema.sql");
        let listed: Vec<String> = Reason::ALL
            .iter()
            .map(|r| format!("'{}'", r.as_str()))
            .collect();
        assert!(
            schema.contains(&format!("reason IN ({})", listed.join(", "))),
            "{listed:?}"
        );
        for r in Reason::ALL {
            assert_eq!(Reason::parse(r.as_str()), Some(r));
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
        }
        assert_eq!(Reason::parse("Spam"), None);
        assert_eq!(Reason::parse(""), None);
    }
}
