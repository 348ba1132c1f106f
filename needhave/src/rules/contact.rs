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
fn holds_email(c: &[char]) -> bool {
    let local_char = |ch: char| is_alphanumeric(ch) || "._%+-'".contains(ch);
    let domain_char = |ch: char| is_alphanumeric(ch) || ch == '-' || ch == '.';
    c.iter().enumerate().any(|(at, &ch)| {
        if ch != '@' {
            return false;
        }
        let local = c[..at]
            .iter()
            .rev()
            .take_while(|&&ch| local_char(ch))
            .filter(|&&ch| is_alphanumeric(ch))
            .count();
        if local == 0 {
            return false;
        }
        let domain: String = c[at + 1..]
            .iter()
            .take_while(|&&ch| domain_char(ch))
            .collect();
        let domain = domain.trim_end_matches(['.', '-']);
        let labels: Vec<&str> = domain.split('.').collect();
        labels.len() >= 2
            && labels.iter().all(|l| !l.is_empty())
            && labels
                .last()
                .is_some_and(|tld| tld.chars().count() >= 2 && tld.chars().all(is_alphabetic))
    })
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
    let Some(chain) = chain(c, if plus { i + 1 } else { i }) else {
        return false;
    };
    if !closes(c.get(chain.end).copied()) || near_currency(c, i, chain.end) {
        return false;
    }
    let digits: usize = chain.groups.iter().map(|g| g.len()).sum();
    if !PHONE_DIGITS.contains(&digits) {
        return false;
    }
    plus || chain.paren || written_in_groups(&chain)
}

/// Digit groups and what joined them, from one start.
struct Chain {
    groups: Vec<String>,
    seps: Vec<char>,
    /// A group was written in parentheses: an area code.
    paren: bool,
    /// Index just past the chain.
    end: usize,
}

fn is_sep(c: char) -> bool {
    matches!(c, ' ' | '.' | '-')
}

fn digits_from(c: &[char], j: usize) -> String {
    c[j.min(c.len())..]
        .iter()
        .take_while(|ch| ch.is_ascii_digit())
        .collect()
}

fn chain(c: &[char], start: usize) -> Option<Chain> {
    let mut out = Chain {
        groups: Vec::new(),
        seps: Vec::new(),
        paren: false,
        end: start,
    };
    let mut j = start;
    loop {
        let group_start = |k: usize| c.get(k).is_some_and(|ch| ch.is_ascii_digit() || *ch == '(');
        if c.get(j) == Some(&'(') {
            let d = digits_from(c, j + 1);
            if !(1..=5).contains(&d.len()) || c.get(j + 1 + d.len()) != Some(&')') {
                break;
            }
            j += d.len() + 2;
            out.groups.push(d);
            out.paren = true;
            out.end = j;
            // "(415) 555-0100", "(415)555-0100".
            match c.get(j) {
                Some(&s) if is_sep(s) && group_start(j + 1) => {
                    out.seps.push(s);
                    j += 1;
                }
                Some(ch) if ch.is_ascii_digit() => out.seps.push(')'),
                _ => break,
            }
            continue;
        }
        let d = digits_from(c, j);
        if d.is_empty() {
            break;
        }
        j += d.len();
        out.groups.push(d);
        out.end = j;
        match c.get(j) {
            Some(&s) if is_sep(s) && group_start(j + 1) => {
                out.seps.push(s);
                j += 1;
            }
            _ => break,
        }
    }
    // A separator is only taken with a group after it; drop a dangling one.
    out.seps.truncate(out.groups.len().saturating_sub(1));
    (!out.groups.is_empty()).then_some(out)
}

/// What may stand before a phone number: nothing, a space, or opening and
/// sentence punctuation. A letter, digit, `#`, `/`, `-`, `.` or currency
/// sign before it makes it part of a code, a path, a serial or a price.
fn opens(prev: Option<char>) -> bool {
    match prev {
        None => true,
        Some(p) => p.is_whitespace() || "\"'([{<:;,!?«“‘".contains(p),
    }
}

/// What may stand after one: nothing, a space, or closing and sentence
/// punctuation.
fn closes(next: Option<char>) -> bool {
    match next {
        None => true,
        Some(n) => n.is_whitespace() || ".,;:!?)]}>\"'»”’".contains(n),
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

fn is_year(g: &str) -> bool {
    g.len() == 4 && (g.starts_with("19") || g.starts_with("20"))
}

/// Three or more groups, one separator throughout, no one-digit group but
/// a leading country code; not a look-alike.
fn written_in_groups(ch: &Chain) -> bool {
    let g = &ch.groups;
    let Some(&sep) = ch.seps.first() else {
        return false;
    };
    if g.len() < 3 || ch.seps.iter().any(|&s| s != sep) || g[1..].iter().any(|d| d.len() < 2) {
        return false;
    }
    let short = |d: &String| d.len() <= 2;
    // 2024-01-15, 15.01.2024, 01-15-2024.
    let date = g.len() == 3
        && ((is_year(&g[0]) && short(&g[1]) && short(&g[2]))
            || (is_year(&g[2]) && short(&g[0]) && short(&g[1])));
    // 2024-2025-2026.
    let years = g.iter().all(|d| is_year(d));
    // 192.168.100.200.
    let ip = sep == '.'
        && g.len() == 4
        && g.iter()
            .all(|d| d.len() <= 3 && d.parse::<u16>().is_ok_and(|n| n <= 255));
    // 10 000 000 tokens, 1.500.000 (a round quantity in thousands).
    let round = g[0].len() <= 3 && g[1..].iter().all(|d| d.len() == 3) && g[g.len() - 1] == "000";
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
