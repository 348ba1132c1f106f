//! What a note is indexed as, for finding it by its words: the duplicate
//! key's words (`fold`), pairs of characters in scripts written without
//! spaces, and its kind's term. The ground floor, since the store's
//! migrations index old posts with it; `search` builds queries from the
//! same pieces.

use super::{fold, Kind};
use crate::platform::is_alphanumeric;

/// The term every indexed post of a kind carries. `·` (U+00B7) is neither a
/// letter nor a digit, so no word of a note can be this term, and the
/// `ascii` tokenizer keeps it (it splits only at ASCII characters).
pub fn kind_term(kind: Kind) -> &'static str {
    match kind {
        Kind::Need => "\u{b7}need",
        Kind::Have => "\u{b7}have",
    }
}

/// An FTS5 query that every indexed post matches: which posts already have
/// their words (for the back-fill of an upgraded D1 database). The kind's
/// term with its mark, as [`index_text`] writes it: a post a Worker of an
/// earlier release moved into the index without marks is not indexed by
/// this measure, and `needhave d1-words` indexes it again.
pub const ANY_INDEXED: &str = "\"\u{207f}\u{b7}need\" OR \"\u{2b0}\u{b7}have\"";

/// An FTS5 query that every post in the cold part of the index matches:
/// its kind's term, which the cold part holds without a mark ([`marked`]).
pub const ANY_COLD: &str = "\"\u{b7}need\" OR \"\u{b7}have\"";

/// Whether `c` belongs to a script written without spaces between words.
pub fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        | 0x3000..=0x30FF // CJK marks (々, 〆), hiragana, katakana
        | 0x3100..=0x312F // Bopomofo
        | 0x31F0..=0x31FF // katakana extensions
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF66..=0xFF9F // half-width katakana (NFKC widens them anyway)
        | 0x20000..=0x3FFFF // CJK extensions B and later
    )
}

/// The words of a text, as the duplicate key has them.
pub fn words(text: &str) -> Vec<String> {
    let folded = fold(text);
    let mut out = Vec::new();
    let mut word = String::new();
    for c in folded.chars() {
        if is_alphanumeric(c) {
            word.push(c);
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// One piece of a word: a run of spaced-script characters, or a run of
/// unspaced ones.
pub enum Piece<'a> {
    Spaced(&'a str),
    Unspaced(&'a str),
}

pub fn pieces(word: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut current: Option<bool> = None;
    for (i, c) in word.char_indices() {
        let u = unspaced(c);
        if current.is_some_and(|cur| cur != u) {
            out.push(piece(&word[start..i], !u));
            start = i;
        }
        current = Some(u);
    }
    if let Some(u) = current {
        out.push(piece(&word[start..], u));
    }
    out
}

fn piece(s: &str, unspaced: bool) -> Piece<'_> {
    if unspaced {
        Piece::Unspaced(s)
    } else {
        Piece::Spaced(s)
    }
}

/// The adjacent pairs of a run's characters; a run of one character is
/// itself.
pub fn bigrams(run: &str) -> Vec<&str> {
    // Each pair from the start of one character to the start of the one
    // after the next (or the run's end): one walk of the starts.
    let mut starts = run.char_indices().map(|(i, _)| i).skip(1);
    let Some(mut next) = starts.next() else {
        return vec![run];
    };
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let end = starts.next().unwrap_or(run.len());
        out.push(&run[start..end]);
        if end == run.len() {
            return out;
        }
        (start, next) = (next, end);
    }
}

/// The character each term of a post's words begins with in the index:
/// its post's kind. So a search of one kind reads that kind's lists alone,
/// and a word and a kind whose posts never meet are an empty list, not two
/// lists walked to their ends. NFKC folds both to a plain letter, so no
/// word of a note holds either.
pub fn kind_mark(kind: Kind) -> char {
    match kind {
        Kind::Need => '\u{207f}',
        Kind::Have => '\u{2b0}',
    }
}

/// What the cold part of the index of words holds for a post: its terms
/// ([`expanded`]), each begun with the kind's mark ([`kind_mark`]), the
/// kind's own included ([`marked`]). The move out of `words_new` makes
/// the same text in SQL (`store::hot_cold::COLD`).
pub fn index_text(kind: Kind, note: &str) -> String {
    marked(kind, &expanded(&waiting_text(kind, note)))
}

/// A post's terms (`expanded`) as the cold part of the index holds them:
/// each term after the kind's begun with the kind's mark, the kind's term
/// without one. Unmarked, it sorts before both kinds' words (`·` is
/// U+00B7, the marks U+02B0 and U+207F) rather than after one kind's:
/// FTS5 seeks a term through the last term that begins a leaf before it,
/// so a word that no post of a kind holds, sorting after the kind's term,
/// would step through that term's list, every post of the kind.
pub fn marked(kind: Kind, terms: &str) -> String {
    let mut spaced = String::from(" ");
    spaced.push(kind_mark(kind));
    terms.replace(' ', &spaced)
}

/// What begins a run of three or more unspaced characters in a post's
/// waiting words, which stand for the run's pairs ([`terms`]): a waiting
/// post keeps about its note's bytes, where its pairs would be about
/// twice them. Neither a letter nor a digit, so no term holds it.
pub const RUN: char = '~';

/// What a post's words are while they wait in `words_new`: its kind's
/// term, then each distinct term of its note, separated by spaces; an
/// unspaced run of three characters or more once, after [`RUN`], for its
/// pairs (the move writes them out, `store::hot_cold::EXPAND`). A search
/// matches these words there by `instr`, a single unspaced character by
/// pattern (`search::Words::needles`).
pub fn waiting_text(kind: Kind, note: &str) -> String {
    let words = words(note);
    // Each term, and whether it is a run that waits whole.
    let mut terms: Vec<(&str, bool)> = Vec::new();
    for word in &words {
        for p in pieces(word) {
            terms.push(match p {
                Piece::Spaced(s) => (s, false),
                Piece::Unspaced(run) => (run, run.chars().nth(2).is_some()),
            });
        }
    }
    // A note has at most a few hundred terms: a linear look back is cheaper
    // than a hash set, and links no hasher into the Worker.
    let mut out = String::from(kind_term(kind));
    for (i, (t, run)) in terms.iter().enumerate() {
        if !terms[..i].contains(&(t, *run)) {
            out.push(' ');
            if *run {
                out.push(RUN);
            }
            out.push_str(t);
        }
    }
    out
}

/// The terms of a post's waiting words after its kind's term, in order,
/// each [`RUN`] written out as its pairs (as `store::hot_cold::EXPAND`
/// does in SQL; a pair two runs share comes twice).
pub fn terms(waiting: &str) -> impl Iterator<Item = &str> {
    waiting.split(' ').skip(1).flat_map(|term| {
        let (run, whole) = match term.strip_prefix(RUN) {
            Some(run) => (bigrams(run), None),
            None => (Vec::new(), Some(term)),
        };
        run.into_iter().chain(whole)
    })
}

/// A post's waiting words with each [`RUN`] written out as its pairs: its
/// kind's term, then its [`terms`].
pub fn expanded(waiting: &str) -> String {
    let mut out = waiting.split(' ').next().unwrap_or_default().to_string();
    for term in terms(waiting) {
        out.push(' ');
        out.push_str(term);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_indexed_as_their_key_words() {
        assert_eq!(
            index_text(Kind::Need, "Need a BIKE, bike!"),
            "\u{b7}need \u{207f}need \u{207f}a \u{207f}bike"
        );
        assert_eq!(
            waiting_text(Kind::Need, "Need a BIKE, bike!"),
            "\u{b7}need need a bike"
        );
        assert_eq!(
            waiting_text(Kind::Have, "ＧＰＵ to\u{200b}night"),
            "\u{b7}have gpu tonight"
        );
    }

    #[test]
    fn unspaced_runs_wait_whole_and_are_indexed_as_pairs() {
        let waiting = waiting_text(Kind::Have, "我有自行车, 自行车");
        assert_eq!(waiting, "\u{b7}have ~我有自行车 ~自行车");
        assert_eq!(
            expanded(&waiting),
            "\u{b7}have 我有 有自 自行 行车 自行 行车"
        );
        assert_eq!(
            index_text(Kind::Have, "我有自行车"),
            "\u{b7}have \u{2b0}我有 \u{2b0}有自 \u{2b0}自行 \u{2b0}行车"
        );
        // A run of two is its one pair; of one, itself.
        assert_eq!(
            waiting_text(Kind::Have, "RTX4090显卡"),
            "\u{b7}have rtx4090 显卡"
        );
        assert_eq!(waiting_text(Kind::Need, "车"), "\u{b7}need 车");
        assert_eq!(expanded("\u{b7}need 车 显卡"), "\u{b7}need 车 显卡");
    }
}
