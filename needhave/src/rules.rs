//! The cheap filter: what a note or message must be, and the limits.
//!
//! Pure functions and constants. The limits themselves are enforced in SQL
//! (see `handlers/`), inside the statement that writes, so that concurrent
//! requests cannot slip past a read-then-write gap; this file only names them.
//!
//! Text rules, in their order: nothing visible, huge, unreadable (control
//! characters) or hidden (bidirectional overrides, tag characters), and for
//! a post's note only, contact details and its normalized key (the duplicate
//! rule, checked in SQL). `docs/filter.md` says what each one is and why.

mod contact;
pub mod hot;
mod ignorable;
mod key;
mod kind;
mod life;
pub mod words;

pub use crate::platform::is_mark;
pub use ignorable::is_invisible;
pub use key::{fold, REFOLDED};
pub use kind::Kind;
pub use life::{expires_in, Reason, EXPIRES_IN_MAX, EXPIRES_IN_MIN};

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
/// Reports per client in the last hour; the same post reported again by
/// the same client is counted once (its first report is its row).
pub const REPORTS_PER_HOUR: i64 = 20;
pub const SITE_REPORTS_PER_HOUR: i64 = REPORTS_PER_HOUR * SITE_FACTOR;
/// Request bodies above this get 413.
pub const MAX_BODY: usize = 64 * 1024;

/// Trims Unicode whitespace at both ends and checks what is left: nothing
/// visible is `empty_note`, over 500 characters `huge_note`, a control
/// character other than tab, newline and carriage return, or text hidden
/// from the reader ([`is_hidden`]), `bad_note`. The trimmed text is what is
/// stored and returned. For notes and message texts alike.
///
/// Nothing visible: only [`is_blank`] characters and marks, since a mark
/// with no letter before it has nothing to draw on (in a text of blanks and
/// marks, no mark has a letter before it).
pub fn text(raw: &str) -> Result<&str, Code> {
    let t = raw.trim();
    // One pass for the rules (then judged in their order): one loop in the
    // Worker rather than one iterator chain per rule.
    let (mut visible, mut chars, mut bad) = (false, 0, false);
    // What the character before drew on: a variation selector needs one.
    let mut prev: Option<char> = None;
    let mut rest = t;
    while let Some(c) = rest.chars().next() {
        let mut len = c.len_utf8();
        if c == FLAG_BASE {
            if let Some(flag) = TAG_FLAGS.iter().find(|f| rest.starts_with(**f)) {
                len = flag.len();
                chars += TAG_FLAG_CHARS - 1;
            }
        } else {
            bad |= is_unreadable(c) || is_hidden(c) || is_stray_selector(c, prev);
        }
        prev = Some(c);
        // The mark test last: on the Worker it asks the JavaScript runtime.
        visible = visible || !(is_blank(c) || is_mark(c));
        chars += 1;
        rest = &rest[len..];
    }
    if !visible {
        Err(Code::EmptyNote)
    } else if chars > MAX_CHARS {
        Err(Code::HugeNote)
    } else if bad {
        Err(Code::BadNote)
    } else {
        Ok(t)
    }
}

/// Whitespace, the characters that render as nothing
/// ([`is_invisible`]: default-ignorables and format characters), and
/// U+2800 BRAILLE PATTERN BLANK, a letter-sized blank no font draws.
pub fn is_blank(c: char) -> bool {
    c.is_whitespace() || c == BRAILLE_BLANK || is_invisible(c)
}

const BRAILLE_BLANK: char = '\u{2800}';

/// C0, DEL and C1 (Unicode `Cc`), but tab, newline and carriage return:
/// nothing a reader sees, and each one six bytes (`\u0001`) in every JSON
/// answer that carries it.
fn is_unreadable(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// What shows a reader something other than what the text holds: the
/// bidirectional embeddings, overrides and isolates (U+202A–202E,
/// U+2066–2069), which reorder what follows them (`moc.elpmaxe@bob` behind
/// U+202E reads `bob@example.com`), and the tag characters (U+E0001,
/// U+E0020–E007F), an invisible copy of ASCII that a model reads and a person
/// never sees. Tags are text only inside the three flags that are made of
/// them ([`TAG_FLAGS`]), which [`text`] steps over whole. The marks that
/// set a direction without reordering (U+200E, U+200F, U+061C) stay:
/// right-to-left text needs them.
pub fn is_hidden(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{e0001}' | '\u{e0020}'..='\u{e007f}')
}

/// A variation selector that selects nothing: one after another, after a
/// blank or at the start, or an ideographic one (VS17–VS256) after
/// anything but an ideograph. Every variation sequence the standard
/// defines is one base and one selector, and each selector renders as
/// nothing, so a run of them is a channel a model reads and a person never
/// sees: 256 selectors carry a byte each behind a single emoji.
fn is_stray_selector(c: char, prev: Option<char>) -> bool {
    let ideographic = matches!(c, '\u{e0100}'..='\u{e01ef}');
    if !(ideographic || matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{180b}'..='\u{180d}' | '\u{180f}'))
    {
        return false;
    }
    match prev {
        None => true,
        Some(p) if is_blank(p) => true,
        Some(p) => ideographic && !is_ideograph(p),
    }
}

/// The CJK unified and compatibility ideographs: the bases of the
/// ideographic variation sequences.
fn is_ideograph(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}' | '\u{20000}'..='\u{3ffff}')
}

/// The black flag that the tag flags are built on.
const FLAG_BASE: char = '\u{1f3f4}';

/// The emoji tag sequences that are flags: England, Scotland, Wales (the
/// black flag, the subdivision code in tag letters, CANCEL TAG). Only these
/// three: any other run of tags, even after a black flag, can spell words.
pub const TAG_FLAGS: [&str; 3] = [
    "\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}",
    "\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}",
    "\u{1f3f4}\u{e0067}\u{e0062}\u{e0077}\u{e006c}\u{e0073}\u{e007f}",
];

/// Characters (scalar values) of each of [`TAG_FLAGS`].
const TAG_FLAG_CHARS: usize = 7;

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
    fn blanks_and_lone_marks_are_empty() {
        for s in [
            "\u{2800}",
            "\u{fff9}\u{fffa}\u{fffb}",
            "\u{301}",
            " \u{301}\u{308} ",
            "\u{2800}\u{20dd}\u{600}",
            "\u{93f}",
            "\u{13430}\u{110bd}",
        ] {
            assert_eq!(text(s), Err(Code::EmptyNote), "{s:?}");
        }
        // A mark on a letter is visible, and so is a letter after blanks.
        for s in ["e\u{301}", "\u{2800}x", "\u{fff9}\u{4e00}", "\u{301}a"] {
            assert_eq!(text(s), Ok(s), "{s:?}");
        }
    }

    #[test]
    fn hidden_text_is_bad() {
        for s in [
            "\u{202e}moc.elpmaxe@bob",
            "a\u{202a}b",
            "a\u{202d}b\u{202c}",
            "x\u{2066}y\u{2069}",
            "x\u{2067}y",
            "x\u{2068}y",
            "hi\u{e0001}",
            "hi\u{e0069}\u{e0067}\u{e006e}\u{e006f}\u{e0072}\u{e0065}",
            "hi\u{e007f}",
            // Tags after a black flag that are not one of the three flags.
            "\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e007f}",
            "\u{1f3f4}\u{e0075}\u{e0073}\u{e0074}\u{e0078}\u{e007f}",
            "\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}",
        ] {
            assert_eq!(text(s), Err(Code::BadNote), "{s:?}");
        }
        for s in TAG_FLAGS {
            let note = format!("kilts {s} {s}");
            assert_eq!(text(&note), Ok(note.as_str()));
            assert_eq!(text(s), Ok(s));
        }
        // Variation selectors: one after a base is a variation sequence;
        // more, or one with nothing to vary, carries hidden bytes.
        for s in [
            "hi \u{1f600}\u{fe0f}\u{fe0e}",
            "\u{1f600}\u{e0100}\u{e0101}\u{e0102}",
            "a\u{fe00}\u{fe01}",
            "\u{fe0f}hi",
            "hi \u{fe0f}",
            "hi\u{200b}\u{fe0f}",
            "a\u{e0100}",
            "\u{1820}\u{180b}\u{180c}",
        ] {
            assert_eq!(text(s), Err(Code::BadNote), "{s:?}");
        }
        for s in [
            "\u{2764}\u{fe0f} ok",
            "#\u{fe0f}\u{20e3} keycap",
            "\u{1f3f3}\u{fe0f}\u{200d}\u{1f308} flag",
            "\u{1f468}\u{200d}\u{2764}\u{fe0f}\u{200d}\u{1f468}",
            "\u{845b}\u{e0100} ivs",
            "\u{2229}\u{fe00}",
            "\u{1820}\u{180b}",
        ] {
            assert_eq!(text(s), Ok(s), "{s:?}");
        }
        // Direction marks stay: right-to-left text needs them.
        for s in [
            "\u{5e9}\u{5dc}\u{5d5}\u{5dd} \u{200f}ok",
            "a\u{200e}b\u{61c}",
        ] {
            assert_eq!(text(s), Ok(s));
        }
        // Order: empty and huge first; a flag counts its seven characters.
        assert_eq!(text("\u{202e}"), Err(Code::EmptyNote));
        assert_eq!(text("\u{e0041}\u{e0042}"), Err(Code::EmptyNote));
        assert_eq!(
            text(&TAG_FLAGS[0].repeat(71)),
            Ok(TAG_FLAGS[0].repeat(71).as_str())
        );
        assert_eq!(text(&TAG_FLAGS[0].repeat(72)), Err(Code::HugeNote));
        assert_eq!(
            text(&format!("{}\u{202e}", "a".repeat(500))),
            Err(Code::HugeNote)
        );
        // Notes and texts alike, before contact details.
        assert_eq!(note("\u{202e}moc.elpmaxe@bob"), Err(Code::BadNote));
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
