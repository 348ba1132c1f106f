//! The normalized key of a post's note: "the same text pasted again" is a
//! duplicate even when case, punctuation, spacing, invisible characters or
//! the Unicode form differ (CONTRACT.md).
//!
//! The key is NFKC, lower-cased, default-ignorables removed, every run of
//! characters that are not letters or digits (`char::is_alphanumeric`:
//! Unicode Alphabetic or Numeric; the JavaScript runtime's `\p{Alphabetic}`
//! and `\p{N}` on the Worker, see [`crate::platform::is_alphanumeric`])
//! made one space, trimmed. NFKC and the
//! lower-casing come from the platform ([`crate::platform::nfkc_lowercase`]):
//! the `unicode-normalization` crate natively, the JavaScript runtime's
//! `String.prototype.normalize` on the Worker, so the Worker links no
//! normalization tables. `tests/data/note-keys.tsv` holds vectors that both
//! are checked against (natively in `tests/rules.rs`, and over HTTP in
//! `tests/http.rs`, which CI also runs against `wrangler dev`).

use super::ignorable::is_default_ignorable;

/// The note as the contact and key rules read it: default-ignorables
/// removed (before NFKC too, so that a zero-width space between a letter and
/// its accent does not keep them apart), NFKC, lower-cased.
pub fn fold(text: &str) -> String {
    let visible: String = text.chars().filter(|&c| !is_default_ignorable(c)).collect();
    let mut folded = crate::platform::nfkc_lowercase(&visible);
    // NFKC maps a few compatibility characters onto ignorable ones.
    folded.retain(|c| !is_default_ignorable(c));
    folded
}

/// The key of an already [`fold`]ed note.
///
/// Where the contract's key is empty (a note of only symbols or emoji, such
/// as "🚲" or "!!!"), every such note would be a copy of every other; the
/// key is then the folded note with its whitespace runs made one space.
pub fn of_folded(folded: &str) -> String {
    let key = runs(folded, crate::platform::is_alphanumeric);
    if key.is_empty() {
        runs(folded, |c| !c.is_whitespace())
    } else {
        key
    }
}

/// Keeps the characters `keep` accepts; every run of the others becomes one
/// space; trimmed.
fn runs(s: &str, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut gap = false;
    for c in s.chars() {
        if keep(c) {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            out.push(c);
        } else {
            gap = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> String {
        of_folded(&fold(s))
    }

    #[test]
    fn contract_examples() {
        assert_eq!(key("Need a bike!"), "need a bike");
        assert_eq!(key("need  a BIKE"), "need a bike");
        assert_eq!(key("Need a bike!"), key("Need a bike!"));
    }

    #[test]
    fn invisible_and_forms() {
        let plain = key("need a bike");
        for s in [
            "need a bi\u{200b}ke",
            "\u{feff}need a bike",
            "need\u{a0}a bike",
            "need a bike\u{2060}",
            "ｎｅｅｄ ａ ｂｉｋｅ",
        ] {
            assert_eq!(key(s), plain, "{s:?}");
        }
        // NFD and NFC, with a zero-width space between letter and accent.
        assert_eq!(key("cafe\u{301}"), key("café"));
        assert_eq!(key("cafe\u{200b}\u{301}"), key("café"));
        assert_eq!(key("ﬁle"), "file");
    }

    #[test]
    fn symbols_only_keep_a_key_of_their_own() {
        assert_ne!(key("🚲"), key("🍕"));
        assert_eq!(key("🚲  🚲"), key("🚲 🚲"));
        assert_eq!(key("!!!"), "!!!");
    }
}
