//! Contact details in a post's note: an e-mail address or a phone number.
//!
//! A post's note is public, and contact belongs in the private thread after
//! acceptance, so a note that carries an address is refused. The rule is
//! narrow on purpose (CONTRACT.md): no keyword lists, and a false refusal of
//! an honest note costs more than a missed obfuscation ("bob at example dot
//! com" passes), since the note is all a poster has. The cases it must and
//! must not catch are a committed table, `tests/data/contact-notes.tsv`,
//! checked natively and over HTTP.
//!
//! Both scanners read the note *folded* (see [`super::key::fold`]): without
//! default-ignorable characters and in NFKC, so that a zero-width space
//! inside an address or full-width digits (`４１５`) do not hide it.
//!
//! Hand-written scanners rather than a regex crate: the Worker's size budget
//! has no room for a regex engine, and the shapes are small.

use crate::platform::{is_alphabetic, is_alphanumeric};

/// Whether `folded` holds an e-mail address or a phone number.
pub fn holds_contact(folded: &str) -> bool {
    let c: Vec<char> = folded.chars().collect();
    holds_email(&c) || (0..c.len()).any(|i| phone_at(&c, i))
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
/// starting with `+`, or with an area code in parentheses, or in at least
/// three groups joined by spaces, dots or hyphens — and not a date, a range
/// of years, a version, an IP address, a round quantity, a price or a
/// serial that merely look like one.
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
    plus || chain.paren || written_in_groups(&chain)
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

/// What may stand before a phone number: nothing, a space, or opening and
/// sentence punctuation. A letter, digit, `#`, `/`, `-`, `.` or currency
/// sign before it makes it part of a code, a path, a serial or a price.
fn opens(prev: Option<char>) -> bool {
    match prev {
        None => true,
        Some(p) => p.is_whitespace() || one_of("\"'([{<:;,!?«“‘", p),
    }
}

/// What may stand after one: nothing, a space, or closing and sentence
/// punctuation.
fn closes(next: Option<char>) -> bool {
    match next {
        None => true,
        Some(n) => n.is_whitespace() || one_of(".,;:!?)]}>\"'»”’", n),
    }
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

/// Three or more groups, one separator throughout, no one-digit group but
/// a leading country code; not a look-alike.
fn written_in_groups(ch: &Chain) -> bool {
    let g = &ch.groups;
    let Some(sep) = ch.sep else {
        return false;
    };
    if g.len() < 3 || ch.mixed || g[1..].iter().any(|d| d.len() < 2) {
        return false;
    }
    let short = |d: &[char]| d.len() <= 2;
    // 2024-01-15, 15.01.2024, 01-15-2024.
    let date = g.len() == 3
        && ((is_year(g[0]) && short(g[1]) && short(g[2]))
            || (is_year(g[2]) && short(g[0]) && short(g[1])));
    // 2024-2025-2026.
    let years = g.iter().all(|d| is_year(d));
    // 192.168.100.200: each group a number up to 255, read by hand (no
    // integer parser for three digits).
    let ip = sep == '.'
        && g.len() == 4
        && g.iter().all(|d| {
            d.len() <= 3
                && d.iter()
                    .fold(0, |n, &ch| n * 10 + u32::from(ch) - u32::from('0'))
                    <= 255
        });
    // 10 000 000 tokens, 1.500.000 (a round quantity in thousands).
    let round =
        g[0].len() <= 3 && g[1..].iter().all(|d| d.len() == 3) && g[g.len() - 1] == ['0'; 3];
    // 4821-7734-9902: a serial or a card, not a dial plan.
    let serial = g[0].len() >= 4 && g.iter().all(|d| d.len() == g[0].len());
    !(date || years || ip || round || serial)
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
            "01 23 45 67 89",
            "612 345 678",
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
        ] {
            assert!(!holds_contact(s), "{s}");
        }
    }
}
