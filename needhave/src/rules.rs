//! The cheap filter: what a note or message must be, and the limits.
//!
//! Pure functions and constants. The limits themselves are enforced in SQL
//! (see `handlers/`), inside the statement that writes, so that concurrent
//! requests cannot slip past a read-then-write gap; this file only names them.

use crate::error::Code;

/// Characters (Unicode scalar values) a note or message may have, trimmed.
pub const MAX_CHARS: usize = 500;
/// Hidden (unaccepted) first messages a post may have waiting at once.
pub const WAITING_CAP: i64 = 20;
/// Successful post creations per IP in the last hour.
pub const CREATES_PER_HOUR: i64 = 10;
/// Successful first replies per IP in the last hour.
pub const REPLIES_PER_HOUR: i64 = 20;
/// The window of the per-IP limits: the last 60 minutes, in milliseconds.
pub const HOUR_MS: i64 = 60 * 60 * 1000;
/// Posts in the public list.
pub const LIST_SIZE: i64 = 100;
/// Later messages shown in a thread (the most recent ones).
pub const THREAD_SIZE: i64 = 100;
/// Request bodies above this get 413.
pub const MAX_BODY: usize = 64 * 1024;

/// Trims Unicode whitespace at both ends and checks the length; the trimmed
/// text is what is stored and returned.
pub fn text(raw: &str) -> Result<&str, Code> {
    let t = raw.trim();
    if t.is_empty() {
        Err(Code::EmptyNote)
    } else if t.chars().nth(MAX_CHARS).is_some() {
        Err(Code::HugeNote)
    } else {
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_after_trim() {
        assert_eq!(text(""), Err(Code::EmptyNote));
        assert_eq!(text(" \t\n\u{3000}\u{a0}"), Err(Code::EmptyNote));
    }

    #[test]
    fn length_counts_scalar_values() {
        assert_eq!(text(&"é".repeat(500)), Ok("é".repeat(500).as_str()));
        assert_eq!(text(&"a".repeat(501)), Err(Code::HugeNote));
        assert!(text(&"😀".repeat(500)).is_ok());
        assert_eq!(text(&"😀".repeat(501)), Err(Code::HugeNote));
    }

    #[test]
    fn trims_before_counting() {
        let padded = format!("  {}  \u{2003}", "a".repeat(500));
        assert_eq!(text(&padded), Ok("a".repeat(500).as_str()));
    }
}
