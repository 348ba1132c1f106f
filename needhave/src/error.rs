//! The contract's error codes, and the one error type handlers return.
//!
//! A code fixes its status: the table lists codes under statuses for the
//! reader and the OpenAPI document, and a test checks the two agree.

use needhave_macros::schema;
use serde::Serialize;

#[schema]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    BadRequest,
    BadKind,
    EmptyNote,
    HugeNote,
    BadNote,
    ContactDetails,
    /// `expires_in` is not a whole number of seconds from 300 to 7,776,000.
    BadExpiry,
    /// A report's `reason` is not one of the six.
    BadReason,
    BadSecret,
    BadOrigin,
    NotFound,
    MethodNotAllowed,
    DuplicateNote,
    AlreadyAccepted,
    /// The post has ended (closed, or expired): no new first reply, no
    /// second close.
    Ended,
    /// The operator removed the post: every call that names it.
    Removed,
    TooLarge,
    TooMany,
    RateLimited,
    Internal,
    Unavailable,
    /// The native server's answers in flight are at their memory budget:
    /// come back after `Retry-After`.
    Busy,
}

impl Code {
    pub const ALL: &'static [Code] = &[
        Code::BadRequest,
        Code::BadKind,
        Code::EmptyNote,
        Code::HugeNote,
        Code::BadNote,
        Code::ContactDetails,
        Code::BadExpiry,
        Code::BadReason,
        Code::BadSecret,
        Code::BadOrigin,
        Code::NotFound,
        Code::MethodNotAllowed,
        Code::DuplicateNote,
        Code::AlreadyAccepted,
        Code::Ended,
        Code::Removed,
        Code::TooLarge,
        Code::TooMany,
        Code::RateLimited,
        Code::Internal,
        Code::Unavailable,
        Code::Busy,
    ];

    pub const fn status(self) -> u16 {
        match self {
            Code::BadRequest
            | Code::BadKind
            | Code::EmptyNote
            | Code::HugeNote
            | Code::BadNote
            | Code::ContactDetails
            | Code::BadExpiry
            | Code::BadReason => 400,
            Code::BadSecret | Code::BadOrigin => 403,
            Code::NotFound => 404,
            Code::MethodNotAllowed => 405,
            Code::DuplicateNote | Code::AlreadyAccepted | Code::Ended => 409,
            Code::Removed => 410,
            Code::TooLarge => 413,
            Code::TooMany | Code::RateLimited => 429,
            Code::Internal => 500,
            Code::Unavailable | Code::Busy => 503,
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Code::BadRequest => "bad_request",
            Code::BadKind => "bad_kind",
            Code::EmptyNote => "empty_note",
            Code::HugeNote => "huge_note",
            Code::BadNote => "bad_note",
            Code::ContactDetails => "contact_details",
            Code::BadExpiry => "bad_expiry",
            Code::BadReason => "bad_reason",
            Code::BadSecret => "bad_secret",
            Code::BadOrigin => "bad_origin",
            Code::NotFound => "not_found",
            Code::MethodNotAllowed => "method_not_allowed",
            Code::DuplicateNote => "duplicate_note",
            Code::AlreadyAccepted => "already_accepted",
            Code::Ended => "ended",
            Code::Removed => "removed",
            Code::TooLarge => "too_large",
            Code::TooMany => "too_many",
            Code::RateLimited => "rate_limited",
            Code::Internal => "internal",
            Code::Unavailable => "unavailable",
            Code::Busy => "busy",
        }
    }
}

/// What a handler returns when it does not succeed. Only the code (and,
/// for a refusal that ends, when to come back) reaches the client; a store
/// failure's detail goes to the operator's log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiError(pub Code, Option<u32>);

impl From<Code> for ApiError {
    fn from(code: Code) -> Self {
        ApiError(code, None)
    }
}

impl ApiError {
    /// A refusal the same request passes after `seconds` (at least 1):
    /// the answer carries `Retry-After`.
    pub fn retry_after(code: Code, seconds: u32) -> Self {
        ApiError(code, Some(seconds.max(1)))
    }

    /// The whole seconds of this refusal's `Retry-After`, if it has one.
    pub fn retry_after_secs(&self) -> Option<u32> {
        self.1
    }
}

/// The body of every error answer: `{"error": CODE}`.
#[schema]
#[derive(Serialize)]
pub struct ErrorBody {
    pub error: Code,
}
