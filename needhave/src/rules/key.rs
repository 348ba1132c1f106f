//! The normalized key of a post's note: "the same text pasted again" is a
//! duplicate even when case, punctuation, spacing, invisible characters or
//! the Unicode form differ (the list's rule: a copy is not a new note).
//!
//! The key is NFKC, lower-cased and its case folded as readers of the
//! script fold it ([`fold`]: the Greek final sigma is sigma, the Turkish
//! dotted capital I is i), invisible characters (default-ignorables
//! and format characters) removed, every run of
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

use super::ignorable::is_invisible;
use crate::platform::{is_alphanumeric, is_mark};

/// The note as the contact and key rules read it: invisible characters
/// ([`is_invisible`]) removed (before NFKC too, so that a zero-width space
/// between a letter and its accent does not keep them apart), NFKC,
/// lower-cased, and its case folded where lower case alone keeps apart
/// what readers take as one letter ([`final_sigma`]).
///
/// But for the 72 characters NFKC expands past three characters ([`LONG`]:
/// U+FDFA to 18, U+FDFB to 8, squared katakana and units to 4–6), which
/// stand for themselves: a note of 500 characters folds to at most about
/// 1,500, so no note costs the rules (or the key's store) much more than an
/// ASCII one. They go through NFKC as one placeholder each ([`HOLD`], which
/// NFKC and lower-casing leave as it is and no other character becomes) and
/// are put back in order after, so that both targets' NFKC does the same.
pub fn fold(text: &str) -> String {
    let mut visible = String::with_capacity(text.len());
    let mut held = Vec::new();
    for c in text.chars() {
        if is_invisible(c) {
            continue;
        }
        if c == HOLD || is_long(c) {
            held.push(c);
            visible.push(HOLD);
        } else {
            visible.push(c);
        }
    }
    let mut folded = final_sigma(crate::platform::nfkc_lowercase(&visible));
    // NFKC maps a few compatibility characters onto ignorable ones; and
    // the dot above that lower-casing leaves on the Turkish dotted capital
    // I goes ([`final_sigma`] says why).
    let mut after_i = false;
    folded.retain(|c| {
        let dot = after_i && c == '\u{307}';
        after_i = c == 'i';
        !dot && !is_invisible(c)
    });
    if held.is_empty() {
        return folded;
    }
    let mut held = held.into_iter();
    folded
        .chars()
        .map(|c| {
            if c == HOLD {
                held.next().unwrap_or(c)
            } else {
                c
            }
        })
        .collect()
}

/// Lower case as readers of each script compare letters, where lower
/// case alone keeps two forms of one letter apart: the Greek final sigma
/// (ς, which lower-casing gives a capital sigma at the end of a word) is
/// sigma (σ), so that ΟΔΟΣ, οδος and οδοσ are one word and ΚΟΣ begins
/// ΚΟΣΜΗΜΑΤΑ; and the dot above that lower-casing leaves on the Turkish
/// dotted capital I (İ is i and U+0307) is dropped ([`fold`]), so that
/// İstanbul is istanbul. Unicode's case folding does the first and not
/// the second, and neither target has it without tables of its own: both
/// lower-case (the platform's), then this, in the same Rust on both. The
/// two sigmas differ in their last UTF-8 byte only (CF 82, CF 83), so the
/// bytes are changed in place: the least code the Worker links for it.
fn final_sigma(lower: String) -> String {
    let mut bytes = lower.into_bytes();
    for i in 1..bytes.len() {
        if bytes[i - 1] == 0xcf && bytes[i] == 0x82 {
            bytes[i] = 0x83;
        }
    }
    String::from_utf8(bytes).unwrap_or_default()
}

/// The characters whose NFKC form holds a capital sigma, a final sigma,
/// the Turkish dotted capital I or a combining dot above: the only ones
/// by which the case folding of [`fold`] can change a note's fold, so the
/// notes whose key and words an upgrade computes again (`store::migrate`).
/// Source: `unicodedata.normalize("NFKC", c)` over every code point; a
/// test holds the table to this build's NFKC.
pub const REFOLDED: &[char] = &[
    '\u{130}',
    '\u{2d9}',
    '\u{307}',
    '\u{3a3}',
    '\u{3c2}',
    '\u{3f2}',
    '\u{3f9}',
    '\u{1d6ba}',
    '\u{1d6d3}',
    '\u{1d6f4}',
    '\u{1d70d}',
    '\u{1d72e}',
    '\u{1d747}',
    '\u{1d768}',
    '\u{1d781}',
    '\u{1d7a2}',
    '\u{1d7bb}',
];

/// U+FFFC OBJECT REPLACEMENT CHARACTER: no decomposition, no case, nothing
/// composes with it, and no character's NFKC form holds it.
const HOLD: char = '\u{fffc}';

/// The characters whose NFKC form is longer than three characters, as
/// inclusive ranges of code points, sorted. Source: Unicode 14.0.0
/// (`unicodedata.normalize("NFKC", c)` over every code point); later
/// versions added none past three.
const LONG: &[(u16, u16)] = &[
    (0x2057, 0x2057),
    (0x2152, 0x2152),
    (0x2167, 0x2167),
    (0x2177, 0x2177),
    (0x247d, 0x2487),
    (0x2a0c, 0x2a0c),
    (0x321d, 0x321e),
    (0x3300, 0x3302),
    (0x3304, 0x3304),
    (0x3307, 0x3308),
    (0x330c, 0x330d),
    (0x3312, 0x3313),
    (0x3315, 0x3317),
    (0x3319, 0x331b),
    (0x331f, 0x3321),
    (0x332b, 0x332b),
    (0x332d, 0x332e),
    (0x3332, 0x3334),
    (0x3336, 0x3336),
    (0x333d, 0x333d),
    (0x3343, 0x3343),
    (0x3347, 0x3348),
    (0x334a, 0x334a),
    (0x334c, 0x334d),
    (0x3351, 0x3351),
    (0x3354, 0x3354),
    (0x3356, 0x3356),
    (0x337f, 0x337f),
    (0x3389, 0x3389),
    (0x33a8, 0x33a8),
    (0x33ae, 0x33af),
    (0x33c2, 0x33c2),
    (0x33c6, 0x33c6),
    (0x33d8, 0x33d8),
    (0xfdf2, 0xfdf8),
    (0xfdfa, 0xfdfc),
];

fn is_long(c: char) -> bool {
    let n = c as u32;
    (0x2057..=0xfdfc).contains(&n)
        && LONG
            .binary_search_by(|&(lo, hi)| {
                if u32::from(hi) < n {
                    std::cmp::Ordering::Less
                } else if u32::from(lo) > n {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
}

/// The key of an already [`fold`]ed note: its words (letters and digits,
/// [`words`]) joined by one space.
///
/// Where that is empty (a note of only symbols or emoji, such as "🚲" or
/// "!!!"), every such note would be a copy of every other; the key is then
/// the folded note with its runs of blanks (whitespace, U+2800) made one
/// space.
pub fn of_folded(folded: &str) -> String {
    let key = words(folded);
    if key.is_empty() {
        blank_runs(folded)
    } else {
        key
    }
}

/// Keeps letters and digits; every run of the others becomes one space;
/// trimmed. A mark counts with the letter or digit it is written on (a
/// vowel sign is a letter); one with no letter or digit before it (after a
/// space, a symbol, or at the start) draws on nothing and is a separator
/// like the others.
fn words(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut gap = false;
    // Whether the last character that is not a mark was kept: a mark here
    // still has its letter. Marks are asked about only where this matters.
    let mut on_letter = false;
    for c in s.chars() {
        if is_alphanumeric(c) && (on_letter || c.is_ascii() || !is_mark(c)) {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            on_letter = true;
            out.push(c);
        } else {
            gap = true;
            on_letter = on_letter && !c.is_ascii() && is_mark(c);
        }
    }
    out
}

/// The folded note with every run of blanks made one space, trimmed.
fn blank_runs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut gap = false;
    for c in s.chars() {
        if c.is_whitespace() || c == '\u{2800}' {
            gap = true;
        } else {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            out.push(c);
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
    fn format_characters_blanks_and_lone_marks_are_out() {
        let plain = key("need a bike");
        for s in [
            "need a bi\u{fff9}ke\u{fffb}",
            "\u{600}need a bike",
            "need a\u{2800}bike",
            "need a bike \u{301}",
            "\u{301}need a bike",
            "need a \u{93f}bike",
            "need a bike \u{2800}\u{20dd}",
        ] {
            assert_eq!(key(s), plain, "{s:?}");
        }
        // A mark on its letter is part of the word, also after another mark.
        assert_eq!(key("नमस्ते"), "नमस ते");
        assert_eq!(key("स्ि"), "स ि");
        assert_eq!(key("🚲\u{2800}🚲"), key("🚲 🚲"));
    }

    #[test]
    fn long_expansions_stand_for_themselves() {
        assert_eq!(key("\u{fdfa}"), "\u{fdfa}");
        assert_eq!(fold(&"\u{fdfa}".repeat(500)).chars().count(), 500);
        // A symbol (U+3347 is one) between words, or all there is.
        assert_eq!(key("A\u{3347}B"), "a b");
        assert_eq!(
            key("\u{3347} \u{fffc}\u{3348}"),
            "\u{3347} \u{fffc}\u{3348}"
        );
        // U+FFFC itself comes back as written, in its place.
        assert_eq!(
            fold("\u{fffc}\u{fdfa}\u{fffc}X"),
            "\u{fffc}\u{fdfa}\u{fffc}x"
        );
        // Three or fewer still fold.
        assert_eq!(key("\u{2474}"), "1");
        assert_eq!(key("\u{32b1}"), "36");
    }

    /// The table against this build's NFKC, every code point: a character is
    /// in `LONG` exactly when its NFKC form is longer than three characters.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn long_table_is_nfkc() {
        use unicode_normalization::UnicodeNormalization;
        let mut wrong = Vec::new();
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let mut buf = [0; 4];
            let n = c.encode_utf8(&mut buf).nfkc().count();
            if (n > 3) != is_long(c) {
                wrong.push(format!("{:04X}: {n}", c as u32));
            }
        }
        assert!(wrong.is_empty(), "{wrong:?}");
        for w in LONG.windows(2) {
            assert!(w[0].0 <= w[0].1 && w[0].1 < w[1].0, "{w:?}");
        }
    }

    #[test]
    fn case_folds_as_readers_of_the_script_expect() {
        // The Greek final sigma is sigma, wherever lower-casing puts it.
        assert_eq!(key("ΟΔΟΣ"), "οδοσ");
        assert_eq!(key("οδος"), key("οδοσ"));
        assert_eq!(key("ΚΟΣ ΚΟΣΜΗΜΑΤΑ"), "κοσ κοσμηματα");
        assert_eq!(key("\u{3f2}"), "σ");
        // The Turkish dotted capital I is i, however it is written.
        assert_eq!(key("İstanbul"), "istanbul");
        assert_eq!(key("I\u{307}STANBUL"), "istanbul");
        assert_eq!(key("i\u{307}stanbul"), "istanbul");
        // A dot above on another letter stays.
        assert_eq!(key("e\u{307}"), "\u{117}");
        assert_eq!(key("ı"), "ı");
    }

    /// The table against this build's NFKC, every code point: a character
    /// is in `REFOLDED` exactly when its NFKC form holds one of the four
    /// characters the case folding reads or is made from.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn refolded_table_is_nfkc() {
        use unicode_normalization::UnicodeNormalization;
        let want: Vec<char> = (0..=0x10ffff)
            .filter_map(char::from_u32)
            .filter(|c| {
                let mut buf = [0; 4];
                c.encode_utf8(&mut buf)
                    .nfkc()
                    .any(|n| matches!(n, '\u{3a3}' | '\u{3c2}' | '\u{130}' | '\u{307}'))
            })
            .collect();
        assert_eq!(REFOLDED, want.as_slice());
    }

    #[test]
    fn symbols_only_keep_a_key_of_their_own() {
        assert_ne!(key("🚲"), key("🍕"));
        assert_eq!(key("🚲  🚲"), key("🚲 🚲"));
        assert_eq!(key("!!!"), "!!!");
    }
}
