//! Contact details in a post's note: an e-mail address or a phone number.
//!
//! A post's note is public, and contact belongs in the private thread after
//! acceptance, so a note that carries an address is refused. The rule is
//! narrow on purpose: no keyword lists, and a false refusal of an honest
//! note costs more than a missed obfuscation ("bob at example dot com"
//! passes), since the note is all a poster has. The cases it must and must
//! not catch are a committed table, `tests/data/contact-notes.tsv`, checked
//! natively and over HTTP (on the Worker too).
//!
//! Both scanners read the note *folded* (see [`super::key::fold`]): without
//! invisible characters and in NFKC, so that a zero-width space inside an
//! address or full-width digits (`４１５`) do not hide it; then unmasked
//! ([`unmask`]): digits of every script (`٤١٥`, `४१५`, `๔๑๕`) read as the
//! digits they are, the dots that work as dots in a domain name (U+3002;
//! U+FF0E and U+FF61 fold to `.` and U+3002) as `.`, dashes as hyphens and
//! the braille blank as a space.
//!
//! # What a phone number is
//!
//! 7 to 15 digits (E.164's longest) written as one: starting with `+`, or
//! with an area code in parentheses, or in groups. Groups are where a phone
//! number and a list of numbers look alike (`415 555 0100` and `sizes 36 38
//! 40 42`), and where the rule is decided, by how dial plans are written
//! (ITU-T E.123 and the national conventions) against how numbers are:
//!
//! - One separator throughout (space, dot or hyphen), groups after the first
//!   of 2 to 4 digits, the first of 1 to 5: every national grouping has this
//!   shape (`020 7946 0958`, `01 23 45 67 89`, `1-800-555-0199`); an ISBN's
//!   one-digit groups, a version's or a time's mixed separators do not.
//! - Then evidence that the groups are pieces of one number, any of:
//!   a leading `0` (the trunk prefix of most national formats: `020`, `06`,
//!   `0412`; a list of numbers does not write one); hyphens (a list is not
//!   hyphenated; a range is two groups); or one of the groupings of the
//!   plans that have no trunk prefix: 3-3-4 and 1-3-3-4 (North America),
//!   2-4-4 and 3-4-4 (Mexico, Brazil, China, Japan, Korea), or four or more
//!   groups ending in two pairs after a longer one (3-3-2-2, 2-3-2-2,
//!   3-2-2-2, 4-2-2-2: Spain, Poland, Belgium, Switzerland, Russia).
//! - And nothing that says it is numbers instead: a quantity in thousands
//!   (`1 234 567`, `1.234.567`, `612 345 678`: first group 1 to 3 digits,
//!   not `0`, every other exactly 3, joined by spaces or dots, as SI and
//!   European writing group digits); a progression (`36 38 40 42`, `199 249
//!   299 349`, `128 256 512`, `01 02 03 04`: a constant step or a constant
//!   ratio, which real numbers all but never form); round numbers (every
//!   group ends in `0`: `100 500 1000`); a date, years, an IP address, or a
//!   serial of equal groups of four or more.
//! - Two groups are a phone number only as a trunk prefix and a subscriber
//!   block: `0` and 1 to 4 more digits, a space or hyphen, 6 to 8 digits
//!   (`06-12345678`, `030 1234567`); `2024-2025` and `0800-1700` are not.
//!
//! What this lets through, knowingly: numbers of the plans above written
//! without their prefix in a shape that is also a quantity or a list
//! (`612 345 678` is how Spain writes mobiles, and how SI writes 612,345,678;
//! `12 34 56 78` is Danish, and a list of sizes). With `+` and the country
//! code they are caught.
//!
//! Hand-written scanners rather than a regex crate: the Worker's size budget
//! has no room for a regex engine, and the shapes are small.

use crate::platform::{is_alphabetic, is_alphanumeric};

/// Whether `folded` holds an e-mail address or a phone number.
pub fn holds_contact(folded: &str) -> bool {
    let c: Vec<char> = folded.chars().map(unmask).collect();
    holds_email(&c) || (0..c.len()).any(|i| phone_at(&c, i))
}

/// A folded character as the scanners read it: a decimal digit of any
/// script as its ASCII digit, U+3002 IDEOGRAPHIC FULL STOP (a label
/// separator of internationalized domain names, like U+FF0E and U+FF61,
/// which fold to `.` and to it) as `.`, the hyphens and dashes a phone
/// number is written with (U+2010–2013, U+2212) as `-`, and U+2800 BRAILLE
/// PATTERN BLANK as a space.
fn unmask(c: char) -> char {
    if c.is_ascii() {
        return c;
    }
    if let Some(d) = digit_value(c) {
        return char::from(b'0' + d);
    }
    match c {
        '\u{3002}' => '.',
        '\u{2010}'..='\u{2013}' | '\u{2212}' => '-',
        '\u{2800}' => ' ',
        other => other,
    }
}

/// The first code point (the zero) of each run of ten decimal digits
/// (general category `Nd`), sorted. Source: Unicode 16.0.0
/// `DerivedGeneralCategory.txt` (as `ucd-generate general-category
/// --include decimalnumber`, the table regex-syntax 0.8 ships); Unicode
/// assigns decimal digits only in such runs, zero to nine.
const DIGIT_ZEROS: &[u32] = &[
    0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66,
    0xde6, 0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90,
    0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10,
    0x104a0, 0x10d30, 0x10d40, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0,
    0x11650, 0x116c0, 0x116d0, 0x116da, 0x11730, 0x118e0, 0x11950, 0x11bf0, 0x11c50, 0x11d50,
    0x11da0, 0x11f50, 0x16130, 0x16a60, 0x16ac0, 0x16b50, 0x16d70, 0x1ccf0, 0x1d7ce, 0x1d7d8,
    0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e4f0, 0x1e5f1, 0x1e950, 0x1fbf0,
];

/// The value of a decimal digit of any script.
fn digit_value(c: char) -> Option<u8> {
    let n = c as u32;
    let i = DIGIT_ZEROS.partition_point(|&z| z <= n).checked_sub(1)?;
    let d = n - DIGIT_ZEROS[i];
    // Below ten: a digit (the runs are at least ten apart).
    (d < 10).then_some(d as u8)
}

/// `local@domain.tld`: a local part of letters, digits and `._%+-'`, a
/// domain of at least two dot-joined labels of letters, digits and hyphens,
/// the last one two or more letters. `@handle`, `me@home` and `a@b.c` are
/// not addresses.
///
/// One pass each way over the characters, with indexes rather than
/// collected strings and split labels: the Worker pays for every iterator
/// adapter and allocation in code.
fn holds_email(c: &[char]) -> bool {
    (0..c.len()).any(|at| c[at] == '@' && local_before(c, at) && domain_at(c, at + 1))
}

/// A letter or digit among the local-part characters just before `at`.
fn local_before(c: &[char], at: usize) -> bool {
    let mut k = at;
    let mut alnum = false;
    while k > 0 && (is_alphanumeric(c[k - 1]) || one_of("._%+-'", c[k - 1])) {
        k -= 1;
        alnum |= is_alphanumeric(c[k]);
    }
    alnum
}

/// Two or more non-empty labels from `start`, trailing dots and hyphens
/// left out, the last label two or more letters.
fn domain_at(c: &[char], start: usize) -> bool {
    let mut end = start;
    while end < c.len() && (is_alphanumeric(c[end]) || c[end] == '-' || c[end] == '.') {
        end += 1;
    }
    while end > start && matches!(c[end - 1], '.' | '-') {
        end -= 1;
    }
    let (mut dots, mut label) = (0, 0);
    for &ch in &c[start..end] {
        if ch != '.' {
            label += 1;
        } else if label == 0 {
            return false;
        } else {
            dots += 1;
            label = 0;
        }
    }
    dots > 0 && label >= 2 && c[end - label..end].iter().all(|&ch| is_alphabetic(ch))
}

/// Digits of one phone number, written as one.
const PHONE_DIGITS: std::ops::RangeInclusive<usize> = 7..=15;

/// Whether a phone number starts at `c[i]`: 7 to 15 digits written as one,
/// starting with `+`, or with an area code in parentheses, or in groups of
/// a dial plan (see the module's text) — and not a price.
fn phone_at(c: &[char], i: usize) -> bool {
    let prev = i.checked_sub(1).map(|j| c[j]);
    if !opens(prev) {
        return false;
    }
    // Not from the middle of a number ("12 345 678": not at 345).
    if prev.is_some_and(is_sep) && i >= 2 && c[i - 2].is_ascii_digit() {
        return false;
    }
    let plus = c[i] == '+';
    let chain = chain(c, i + usize::from(plus));
    if chain.groups.is_empty()
        || !closes(c.get(chain.end).copied())
        || near_currency(c, i, chain.end)
    {
        return false;
    }
    let digits: usize = chain.groups.iter().map(|g| g.len()).sum();
    if !PHONE_DIGITS.contains(&digits) {
        return false;
    }
    plus || chain.paren || written_in_groups(&chain) || trunk_and_block(&chain)
}

/// Digit groups and what joined them, from one start.
struct Chain<'a> {
    /// Each group's digits, slices of the note.
    groups: Vec<&'a [char]>,
    /// The separator between the first two groups (`)` for `(415)555`).
    sep: Option<char>,
    /// Not one separator throughout.
    mixed: bool,
    /// A group was written in parentheses: an area code.
    paren: bool,
    /// Index just past the chain.
    end: usize,
}

fn is_sep(c: char) -> bool {
    matches!(c, ' ' | '.' | '-')
}

fn digits_at(c: &[char], j: usize) -> usize {
    c.get(j..)
        .map_or(0, |r| r.iter().take_while(|ch| ch.is_ascii_digit()).count())
}

/// Groups of digits (one of them may be in parentheses, of 1 to 5 digits)
/// joined by one separator each: "(415) 555-0100", "(415)555-0100",
/// "415.555.0100". A separator counts only with a group after it.
fn chain(c: &[char], start: usize) -> Chain<'_> {
    let mut out = Chain {
        groups: Vec::new(),
        sep: None,
        mixed: false,
        paren: false,
        end: start,
    };
    let mut pending = None;
    let mut j = start;
    loop {
        let open = c.get(j) == Some(&'(');
        let from = j + usize::from(open);
        let n = digits_at(c, from);
        if n == 0 || (open && (n > 5 || c.get(from + n) != Some(&')'))) {
            break;
        }
        if let Some(s) = pending.take() {
            out.mixed |= out.sep.is_some_and(|first| first != s);
            out.sep = out.sep.or(Some(s));
        }
        out.groups.push(&c[from..from + n]);
        j = from + n + usize::from(open);
        out.paren |= open;
        out.end = j;
        match c.get(j) {
            Some(&s)
                if is_sep(s)
                    && c.get(j + 1)
                        .is_some_and(|ch| ch.is_ascii_digit() || *ch == '(') =>
            {
                pending = Some(s);
                j += 1;
            }
            Some(ch) if open && ch.is_ascii_digit() => pending = Some(')'),
            _ => break,
        }
    }
    out
}

/// Whether `c` is one of `set`'s chars: by chars rather than
/// `str::contains(char)`, which links the two-way string searcher (a char
/// past ASCII is searched for as a string) into the Worker.
fn one_of(set: &str, c: char) -> bool {
    set.chars().any(|s| s == c)
}

/// What may stand before a phone number: nothing, a space, opening and
/// sentence punctuation, or a letter of a script written without spaces
/// (`電話138 0013 8000`). A letter of another script, a digit, `#`, `/`,
/// `-`, `.` or a currency sign before it makes it part of a code, a path, a
/// serial or a price.
fn opens(prev: Option<char>) -> bool {
    match prev {
        None => true,
        Some(p) => p.is_whitespace() || one_of("\"'([{<:;,!?«“‘、،؛", p) || unspaced(p),
    }
}

/// What may stand after one: nothing, a space, closing and sentence
/// punctuation, or a letter of a script written without spaces.
fn closes(next: Option<char>) -> bool {
    match next {
        None => true,
        Some(n) => n.is_whitespace() || one_of(".,;:!?)]}>\"'»”’、،؛؟", n) || unspaced(n),
    }
}

/// Han, kana, Thai, Lao, Khmer, Myanmar: scripts whose words are not
/// separated by spaces, so a number stands right beside them.
fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0e00..=0x0eff | 0x1000..=0x109f | 0x1780..=0x17ff
        | 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff
        | 0x20000..=0x3ffff)
}

fn is_currency(c: char) -> bool {
    matches!(c, '$' | '\u{a2}'..='\u{a5}' | '\u{20a0}'..='\u{20cf}')
}

/// A currency sign just before or after (one space allowed): a price.
fn near_currency(c: &[char], start: usize, end: usize) -> bool {
    let before = |k: usize| k.checked_sub(1).and_then(|k| c.get(k)).copied();
    let after = |k: usize| c.get(k).copied();
    let sign = |ch: Option<char>| ch.is_some_and(is_currency);
    sign(before(start))
        || (before(start) == Some(' ') && sign(before(start - 1)))
        || sign(after(end))
        || (after(end) == Some(' ') && sign(after(end + 1)))
}

fn is_year(g: &[char]) -> bool {
    matches!(g, ['1', '9', _, _] | ['2', '0', _, _])
}

/// A group's value (at most five digits: no overflow).
fn value(g: &[char]) -> u64 {
    g.iter().fold(0, |n, &ch| {
        n * 10 + u64::from(u32::from(ch) - u32::from('0'))
    })
}

/// Groups in the shape of a dial plan, with evidence that they are one
/// number in pieces and none that they are numbers (see the module's text).
fn written_in_groups(ch: &Chain) -> bool {
    let g = &ch.groups;
    let Some(sep) = ch.sep else {
        return false;
    };
    if g.len() < 3
        || ch.mixed
        || g[0].len() > 5
        || g[1..].iter().any(|d| !(2..=4).contains(&d.len()))
        || numbers(g, sep)
    {
        return false;
    }
    let lens: Vec<usize> = g.iter().map(|d| d.len()).collect();
    let n = lens.len();
    let pairs_after_longer =
        n >= 4 && lens[n - 2..] == [2, 2] && lens[..n - 2].iter().any(|&l| l >= 3);
    let national = matches!(
        lens.as_slice(),
        [3, 3, 4] | [1, 3, 3, 4] | [2, 4, 4] | [3, 4, 4]
    ) || pairs_after_longer;
    g[0][0] == '0' || sep == '-' || national
}

/// Whether groups read as numbers rather than one number: a quantity in
/// thousands, a progression, round numbers, a date, years, an IP address,
/// a serial.
fn numbers(g: &[&[char]], sep: char) -> bool {
    let short = |d: &[char]| d.len() <= 2;
    // 1 234 567, 1.234.567, 612 345 678 (SI and European grouping).
    let thousands = sep != '-'
        && (1..=3).contains(&g[0].len())
        && g[0][0] != '0'
        && g[1..].iter().all(|d| d.len() == 3);
    let v: Vec<u64> = g.iter().map(|d| value(d)).collect();
    // 36 38 40 42, 01 02 03 04: a constant step.
    let step = v.windows(3).all(|w| w[1] + w[1] == w[0] + w[2]);
    // 128 256 512: a constant ratio.
    let ratio = v[0] > 0 && v.windows(3).all(|w| w[1] * w[1] == w[0] * w[2]);
    // 100 500 1000: every group a round number.
    let round = g.iter().all(|d| d[d.len() - 1] == '0');
    // 2024-01-15, 15.01.2024, 01-15-2024, 2024 01 15 10 30.
    let date = (is_year(g[0]) && short(g[1]) && short(g[2]))
        || (g.len() == 3 && is_year(g[2]) && short(g[0]) && short(g[1]));
    // 2024-2025-2026.
    let years = g.iter().all(|d| is_year(d));
    // 192.168.100.200.
    let ip =
        sep == '.' && g.len() == 4 && g.iter().all(|d| d.len() <= 3) && v.iter().all(|&n| n <= 255);
    // 4821-7734-9902: a serial or a card, not a dial plan.
    let serial = g[0].len() >= 4 && g.iter().all(|d| d.len() == g[0].len());
    thousands || step || ratio || round || date || years || ip || serial
}

/// Two groups: a trunk prefix (`0` and 1 to 4 digits) and a subscriber
/// block of 6 to 8 digits, joined by a space or a hyphen (`06-12345678`,
/// `030 1234567`, `07700 900123`).
fn trunk_and_block(ch: &Chain) -> bool {
    matches!(ch.sep, Some(' ' | '-'))
        && matches!(ch.groups.as_slice(),
            [t, b] if t[0] == '0' && (2..=5).contains(&t.len()) && (6..=8).contains(&b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        for s in [
            "bob@example.com",
            "write to bob.smith+list@mail.example.co.uk.",
            "(jo_e@x-y.org)",
            "jöhn@exämple.de",
            "bob@example\u{3002}com",
        ] {
            assert!(holds_contact(s), "{s}");
        }
        for s in [
            "@alice on the forum",
            "me@home",
            "a@b.c",
            "@ 5pm",
            "x@.com",
            "50 @ 3.50",
            "bob@example\u{b7}com",
        ] {
            assert!(!holds_contact(s), "{s}");
        }
    }

    #[test]
    fn phones() {
        for s in [
            "+1 415 555 0100",
            "+14155550100",
            "(415) 555-0100",
            "(415)555-0100",
            "415.555.0100",
            "415-555-0100",
            "call 1-800-555-0199 today",
            "+44 (0)20 7946 0958",
            "01 99 00 12 34",
            "020 7946 0958",
            "0412 345 678",
            "612-345-678",
            "06-12345678",
            "030 1234567",
            "91 123 45 67",
            "55 1234 5678",
            "\u{664}\u{661}\u{665} \u{665}\u{665}\u{665} \u{660}\u{661}\u{660}\u{660}",
            "415\u{2013}555\u{2013}0100",
            "415\u{2800}555\u{2800}0100",
            "\u{96fb}\u{8a71}138 0013 8000",
        ] {
            assert!(holds_contact(s), "{s}");
        }
        for s in [
            "10000000 tokens",
            "2024-2025",
            "1.2.3.4",
            "10.0.19045.1234",
            "192.168.100.200",
            "2024-01-15",
            "15.01.2024",
            "10 000 000 tokens",
            "$1 250 500",
            "1 250 500 €",
            "4821-7734-9902",
            "ABC-123-456-789",
            "415 5550100",
            "+5 karma",
            "10.30-11.45",
            "4155550100",
            "#415-555-0100",
            "ports 22 80 443",
            "sizes 36 38 40 42",
            "rooms 101 102 103 104",
            "prices 199 249 299 349",
            "matrix 128 256 512",
            "have 1 234 567 rows",
            "1.234.567 tokens left",
            "612 345 678",
            "tracks 01 02 03 04",
            "sizes 100 500 1000",
            "ports 80 443 8080",
            "open 0800-1700",
        ] {
            assert!(!holds_contact(s), "{s}");
        }
    }

    #[test]
    fn digits_of_every_script() {
        for (zero, name) in [
            ('\u{660}', "Arabic-Indic"),
            ('\u{6f0}', "Extended Arabic-Indic"),
            ('\u{966}', "Devanagari"),
            ('\u{9e6}', "Bengali"),
            ('\u{e50}', "Thai"),
            ('\u{1040}', "Myanmar"),
            ('\u{ff10}', "full-width"),
            ('\u{1d7ce}', "mathematical bold"),
        ] {
            for d in 0..10u8 {
                let c = char::from_u32(zero as u32 + u32::from(d)).unwrap();
                assert_eq!(digit_value(c), Some(d), "{name} {d}");
            }
            let next = char::from_u32(zero as u32 + 10).unwrap();
            assert!(
                digit_value(next).is_none_or(|d| d == 0),
                "{name}: past nine"
            );
        }
        for c in ['a', '\u{65f}', '\u{2070}', '\u{b2}', '\u{2160}', '\u{ff1a}'] {
            assert_eq!(digit_value(c), None, "{c:?}");
        }
        // Zeros every ten: sorted, and runs that do not overlap.
        for w in DIGIT_ZEROS.windows(2) {
            assert!(w[0] + 10 <= w[1], "{:X}", w[1]);
        }
    }

    /// The digit table against the standard library's: every decimal digit
    /// the table names is numeric, and every character `to_digit` knows is
    /// in it with the same value.
    #[test]
    fn digit_table_is_numeric() {
        for &z in DIGIT_ZEROS {
            for d in 0..10 {
                let c = char::from_u32(z + d).unwrap();
                assert!(c.is_numeric(), "{:X}", z + d);
            }
        }
        for c in '0'..='9' {
            assert_eq!(digit_value(c).map(u32::from), c.to_digit(10));
        }
    }
}
