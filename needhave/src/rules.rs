//! The cheap filter: what a note or message must be, and the limits.
//!
//! Pure functions and constants. The limits themselves are enforced in SQL
//! (see `handlers/`), inside the statement that writes, so that concurrent
//! requests cannot slip past a read-then-write gap; this file only names them.
//!
//! Text rules, in the contract's order: visible-empty, huge, unreadable
//! (control characters), and for a post's note only, contact details and
//! its normalized key (the duplicate rule, checked in SQL).

mod contact;
mod ignorable;
mod key;

pub use ignorable::is_default_ignorable;
pub use key::fold;

use crate::error::Code;

/// Characters (Unicode scalar values) a note or message may have, trimmed.
pub const MAX_CHARS: usize = 500;
/// Hidden (unaccepted) first messages a post may have waiting at once.
pub const WAITING_CAP: i64 = 20;
/// Successful post creations per IP in the last hour.
pub const CREATES_PER_HOUR: i64 = 10;
/// Successful first replies per IP in the last hour.
pub const REPLIES_PER_HOUR: i64 = 20;
/// Successful later (thread) messages per IP in the last hour: a thread is
/// private, so nothing else stops one client filling the disk through it.
pub const THREAD_MESSAGES_PER_HOUR: i64 = 100;
/// Waiting first messages one client may have on one post: its share of
/// the post's [`WAITING_CAP`], so that a few clients cannot close a post.
pub const WAITING_PER_CLIENT: i64 = 3;
/// What a waiting-cap refusal says to come back after: a slot frees only
/// when the post's author accepts a reply, which the list cannot foresee;
/// an hour is the window of the other limits.
pub const WAITING_RETRY_SECS: u32 = 3600;
/// How many clients' worth a site (an IPv6 /48, see `client`) may write:
/// each per-client rate times this, counted beside the client's own.
pub const SITE_FACTOR: i64 = 10;
pub const SITE_CREATES_PER_HOUR: i64 = CREATES_PER_HOUR * SITE_FACTOR;
pub const SITE_REPLIES_PER_HOUR: i64 = REPLIES_PER_HOUR * SITE_FACTOR;
pub const SITE_THREAD_MESSAGES_PER_HOUR: i64 = THREAD_MESSAGES_PER_HOUR * SITE_FACTOR;
/// The window of the per-IP limits: the last 60 minutes, in milliseconds.
pub const HOUR_MS: i64 = 60 * 60 * 1000;
/// Posts in the public list.
pub const LIST_SIZE: i64 = 100;
/// Later messages shown in a thread (the most recent ones).
pub const THREAD_SIZE: i64 = 100;
/// Request bodies above this get 413.
pub const MAX_BODY: usize = 64 * 1024;

/// Trims Unicode whitespace at both ends and checks what is left: nothing
/// visible (only whitespace and default-ignorable characters) is
/// `empty_note`, over 500 characters `huge_note`, a control character other
/// than tab, newline and carriage return `bad_note`. The trimmed text is what
/// is stored and returned. For notes and message texts alike.
pub fn text(raw: &str) -> Result<&str, Code> {
    let t = raw.trim();
    // One pass for the three rules (then judged in their order): one loop
    // in the Worker rather than three iterator chains.
    let (mut visible, mut chars, mut unreadable) = (false, 0, false);
    for c in t.chars() {
        visible |= !(c.is_whitespace() || is_default_ignorable(c));
        chars += 1;
        unreadable |= is_unreadable(c);
    }
    if !visible {
        Err(Code::EmptyNote)
    } else if chars > MAX_CHARS {
        Err(Code::HugeNote)
    } else if unreadable {
        Err(Code::BadNote)
    } else {
        Ok(t)
    }
}

/// C0, DEL and C1 (Unicode `Cc`), but tab, newline and carriage return:
/// nothing a reader sees, and each one six bytes (`\u0001`) in every JSON
/// answer that carries it.
fn is_unreadable(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// A post's note that passed every text rule, with its duplicate key.
#[derive(Debug, PartialEq, Eq)]
pub struct Note<'a> {
    /// Trimmed, as written: what is stored and shown.
    pub text: &'a str,
    /// The normalized key the duplicate rule compares (see `key`).
    pub key: String,
}

/// The duplicate key of a note, whatever it holds: what `note` returns,
/// and what the migration gives rows written before the key existed.
pub fn note_key(text: &str) -> String {
    key::of_folded(&fold(text))
}

/// The rules of a post's note: [`text`], then contact details (an e-mail
/// address or a phone number is `contact_details`: the note is public).
pub fn note(raw: &str) -> Result<Note<'_>, Code> {
    let text = text(raw)?;
    let folded = fold(text);
    if contact::holds_contact(&folded) {
        return Err(Code::ContactDetails);
    }
    Ok(Note {
        text,
        key: key::of_folded(&folded),
    })
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
    fn nothing_visible_is_empty() {
        for s in [
            "\u{200b}",
            " \u{feff} \u{2060}\u{180e}",
            "\u{200c}\u{200d}\u{fe0f}",
            "\u{ad}",
        ] {
            assert_eq!(text(s), Err(Code::EmptyNote), "{s:?}");
        }
        assert_eq!(text("\u{200b}a\u{200b}"), Ok("\u{200b}a\u{200b}"));
    }

    #[test]
    fn control_characters_are_unreadable() {
        for s in [
            "a\u{0}b",
            "a\u{1}",
            "\u{1b}[31mred",
            "a\u{7f}",
            "a\u{80}b",
            "a\u{85}b",
            "a\u{9f}",
        ] {
            assert_eq!(text(s), Err(Code::BadNote), "{s:?}");
        }
        assert_eq!(text("a\tb\r\nc"), Ok("a\tb\r\nc"));
        // Order: empty, then huge, then unreadable.
        assert_eq!(text(&"\u{1}".repeat(501)), Err(Code::HugeNote));
        assert_eq!(text("\u{1}"), Err(Code::BadNote));
        // Trimmed first: a control that is whitespace (NEL) at an end goes.
        assert_eq!(text("\u{85}ok\u{85}"), Ok("ok"));
    }

    #[test]
    fn note_rules_in_order() {
        assert_eq!(note(" \u{200b} "), Err(Code::EmptyNote));
        assert_eq!(note("mail bob@example.com\u{1}"), Err(Code::BadNote));
        assert_eq!(note("mail bob@example.com"), Err(Code::ContactDetails));
        // Hidden behind an invisible character or full-width digits.
        assert_eq!(note("bob@exa\u{200b}mple.com"), Err(Code::ContactDetails));
        assert_eq!(
            note("＋１ ４１５ ５５５ ０１００"),
            Err(Code::ContactDetails)
        );
        let n = note("  Need a Bike!  ").unwrap();
        assert_eq!((n.text, n.key.as_str()), ("Need a Bike!", "need a bike"));
        // Message texts may carry contact details: only `note` refuses them.
        assert_eq!(text("bob@example.com"), Ok("bob@example.com"));
    }

    #[test]
    fn trims_before_counting() {
        let padded = format!("  {}  \u{2003}", "a".repeat(500));
        assert_eq!(text(&padded), Ok("a".repeat(500).as_str()));
    }
}
