//! Which prefixes of words have a list of their own in the index: the hot
//! set. A prefix is the kind's mark and one to a hundred characters of a
//! term; it is hot once enough posts hold it, and stays hot. The set is
//! closed under prefixes (a prefix is promoted only when its parent is
//! hot), which makes a word's deepest hot prefix one seek into a sorted
//! list: into `hot_prefixes` in the move's SQL (when a writer's copy is
//! behind) and into the copy itself ([`HotSet::depth`]).
//!
//! A word no other note holds gets no list of its own this way, only its
//! exact term in the cold index: what keeps a post of such words within
//! the disk bound (docs/design/search-index.md, "Two parts: hot and cold").

use super::words::{expanded, kind_mark, kind_term, marked, terms};
use super::Kind;

/// The characters of the longest hot prefix: the mark and a hundred, the
/// longest word a query can ask (`search::LONGEST_TERM`). So a query word
/// that many posts' words begin with, however long, reads a list of its
/// own: without one, FTS5 answers a prefix by merging the whole list of
/// every term that begins with it before the page's first row, which
/// costs what the list holds (a word of ten letters in half of 1 M
/// posts). A prefix deeper than eight characters is a term of every post
/// that holds it, as the shallower ones are: a post's hot terms are still
/// at most one a character of its words.
pub const DEEPEST: usize = 101;

/// The posts that must hold a prefix for it to be promoted (the move's
/// `store::hot_cold::PROMOTE` counts them; an upgrade's [`counted`]).
pub const PROMOTED_AT: u32 = 8;

/// One word in this many whose prefixes are not all hot offers itself (its
/// first [`DEEPEST`] characters) as a candidate for promotion: the move
/// promotes its first prefix that is not hot, and every longer one at once
/// when enough posts hold the whole word (`store::hot_cold::PROMOTE`). A
/// word that many posts hold is offered soon and is hot to its end after
/// one offer, not after a move a character; one that no other post holds
/// costs nothing most of the time.
pub const OFFER_ONE_IN: u64 = 16;

/// A copy of the hot set, as a writer keeps it, and how far it reaches:
/// `version` is the row number of the newest promotion it holds (the
/// store's `hot_prefixes` numbers promotions in order).
#[derive(Default, Clone, Debug)]
pub struct HotSet {
    /// Sorted: a lookup is a binary search, and a page of promotions
    /// (which come in the prefixes' order) merges in without a sort.
    prefixes: Vec<String>,
    version: i64,
}

/// What a writer hands the store for a post: its kind's term and every
/// hot prefix of its words, each once (the hot part's terms: a query word
/// that is hot is one of them, exactly), the words it offers, the
/// version they were taken at, and what the cold part needs of it when
/// that is much less than all its terms.
#[derive(Debug, PartialEq, Eq)]
pub struct Tokens {
    pub text: String,
    pub candidates: Vec<String>,
    pub version: i64,
    /// The kind's term and each term the hot part does not hold whole, as
    /// the cold part keeps them (`words::marked`), when shorter than half
    /// of all of them; `None`: all.
    pub cold: Option<String>,
}

impl HotSet {
    pub const fn new() -> Self {
        HotSet {
            prefixes: Vec::new(),
            version: 0,
        }
    }

    pub fn version(&self) -> i64 {
        self.version
    }

    pub fn len(&self) -> usize {
        self.prefixes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// Takes a page of promotions: the next ones after this copy's
    /// version, each with its number, in the prefixes' order (as
    /// `store::hot_cold::CATCH_UP` reads them). A page that is not the
    /// very next promotions (a copy that missed some, or rows it holds
    /// already) is left, so the version always means "every promotion up
    /// to here". Merged in: no sort.
    pub fn extend<I: IntoIterator<Item = (i64, String)>>(&mut self, rows: I) {
        let (mut new, mut low, mut high) = (Vec::new(), i64::MAX, i64::MIN);
        for (id, prefix) in rows {
            low = low.min(id);
            high = high.max(id);
            new.push(prefix);
        }
        let next = self.version + 1;
        let sorted = new.windows(2).all(|w| w[0] < w[1]);
        if new.is_empty() || low != next || high != self.version + new.len() as i64 || !sorted {
            return;
        }
        self.version = high;
        let old = std::mem::take(&mut self.prefixes);
        let mut merged = Vec::with_capacity(old.len() + new.len());
        let (mut a, mut b) = (old.into_iter().peekable(), new.into_iter().peekable());
        while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
            let next = if x <= y { a.next() } else { b.next() };
            merged.extend(next);
        }
        merged.extend(a);
        merged.extend(b);
        self.prefixes = merged;
    }

    /// [`extend`](Self::extend) with promotions in any order (a whole set
    /// read back, or one an upgrade counted and numbered): sorted first.
    pub fn extend_unsorted(&mut self, mut rows: Vec<(i64, String)>) {
        rows.sort_unstable_by(|a, b| a.1.cmp(&b.1));
        self.extend(rows);
    }

    /// The characters of `marked`'s deepest hot prefix (its mark counted),
    /// or 0 when not even its first letter is hot.
    ///
    /// One seek, as the move's SQL does it (`store::hot_cold`'s `depth`):
    /// the greatest hot prefix not after the word shares with it exactly
    /// its deepest hot prefix. That common part is hot, since the set is
    /// closed under prefixes; and a deeper hot prefix of the word would sit
    /// between that greatest one and the word, so the greatest would begin
    /// with it too.
    pub fn depth(&self, marked: &str) -> usize {
        let below = self.prefixes.partition_point(|p| p.as_str() <= marked);
        let Some(greatest) = below.checked_sub(1).map(|i| &self.prefixes[i]) else {
            return 0;
        };
        let common = greatest
            .chars()
            .zip(marked.chars())
            .take_while(|(a, b)| a == b)
            .count()
            .min(DEEPEST);
        if common >= 2 {
            common
        } else {
            0
        }
    }

    /// The tokens of a post of `kind` whose words wait as `waiting`
    /// (`words::waiting_text`), and its candidates (words whose prefixes
    /// are not all hot, marked, to [`DEEPEST`] characters), chosen by a
    /// hash of `post` (its id) and the word, so that a word is offered
    /// about one post in [`OFFER_ONE_IN`].
    pub fn tokens(&self, kind: Kind, post: &str, waiting: &str) -> Tokens {
        let mark = kind_mark(kind);
        let mut kind_token = String::new();
        kind_token.push(mark);
        kind_token.push_str(kind_term(kind));
        // Each term with its mark, and its deepest hot prefix.
        let mut words: Vec<(String, usize)> = Vec::new();
        let mut candidates = Vec::new();
        let mut cold = kind_term(kind).to_string();
        let mut all = cold.len();
        for term in terms(waiting) {
            let mut marked = String::with_capacity(term.len() + mark.len_utf8());
            marked.push(mark);
            marked.push_str(term);
            let chars = marked.chars().count();
            let depth = self.depth(&marked);
            all += 1 + marked.len();
            // A term whose every prefix is hot is found by the hot part
            // alone, whatever a query asks of it: a query word that begins
            // it is one of those prefixes. A term longer than the deepest
            // prefix always stays.
            if depth < chars {
                cold.push(' ');
                cold.push_str(&marked);
            }
            let deepest = chars.min(DEEPEST);
            if depth.max(1) < deepest && offered(post, term) {
                candidates.push(prefix(&marked, deepest).to_string());
            }
            words.push((marked, depth));
        }
        let mut hot: Vec<&str> = words
            .iter()
            .flat_map(|(marked, depth)| (2..=*depth).map(|n| prefix(marked, n)))
            .collect();
        // Terms are distinct; their prefixes need not be.
        hot.sort_unstable();
        hot.dedup();
        let mut text = kind_token;
        for token in hot {
            text.push(' ');
            text.push_str(token);
        }
        Tokens {
            text,
            candidates,
            version: self.version,
            cold: (cold.len() * 2 < all).then_some(cold),
        }
    }

    /// What the two parts of the index hold for a post of `kind` whose
    /// words wait as `waiting`: its hot part's terms, and its cold part's
    /// (`words::marked` when the hot part leaves it most of them), as a
    /// writer with this copy hands them to the move.
    pub fn parts(&self, kind: Kind, post: &str, waiting: &str) -> (String, String) {
        let tokens = self.tokens(kind, post, waiting);
        let cold = tokens
            .cold
            .unwrap_or_else(|| marked(kind, &expanded(waiting)));
        (tokens.text, cold)
    }
}

/// The hot set of posts already written, as an upgrade finds it: every
/// prefix (a kind's mark and one to a hundred characters of a term) that at
/// least `at_least` posts hold, in the order of promotion it is given
/// (shorter first, so that a parent comes before its children). Counted
/// one length at a time, each length only under a parent found hot, so no
/// count is kept for a prefix under one that no other post shares: what
/// keeps the count of a list of notes of new words small. `posts` gives
/// each post's kind and waiting words (`words::waiting_text`), afresh for
/// each length.
pub fn counted<'a, I>(posts: impl Fn() -> I, at_least: u32) -> Vec<String>
where
    I: Iterator<Item = (Kind, &'a str)>,
{
    let mut hot: Vec<String> = Vec::new();
    let mut parents: std::collections::HashSet<String> = std::collections::HashSet::new();
    for chars in 2..=DEEPEST {
        let mut counts: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        for (kind, waiting) in posts() {
            let mut seen: Vec<String> = Vec::new();
            let mut marked = String::new();
            for term in terms(waiting) {
                marked.clear();
                marked.push(kind_mark(kind));
                marked.push_str(term);
                if marked.chars().count() < chars {
                    continue;
                }
                let p = prefix(&marked, chars);
                if chars > 2 && !parents.contains(prefix(p, chars - 1)) {
                    continue;
                }
                if !seen.iter().any(|s| s == p) {
                    *counts.entry(p.to_string()).or_default() += 1;
                    seen.push(p.to_string());
                }
            }
        }
        let mut level: Vec<String> = counts
            .into_iter()
            .filter(|(_, n)| *n >= at_least)
            .map(|(p, _)| p)
            .collect();
        if level.is_empty() {
            break;
        }
        level.sort_unstable();
        parents = level.iter().cloned().collect();
        hot.extend(level);
    }
    hot
}

/// The first `chars` characters of `s`.
fn prefix(s: &str, chars: usize) -> &str {
    match s.char_indices().nth(chars) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

/// Whether the pair is offered: FNV-1a of the post's id and the term,
/// then a finalizer, so that one pair in [`OFFER_ONE_IN`] is (a hash fixed
/// by this code, not by a library's version: a post offers the same
/// prefixes on every build).
fn offered(post: &str, term: &str) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in post.bytes().chain([0]).chain(term.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h.is_multiple_of(OFFER_ONE_IN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(prefixes: &[&str]) -> HotSet {
        let mut page: Vec<(i64, String)> = prefixes
            .iter()
            .enumerate()
            .map(|(i, p)| (i as i64 + 1, p.to_string()))
            .collect();
        page.sort_by(|a, b| a.1.cmp(&b.1));
        let mut hot = HotSet::default();
        hot.extend(page);
        assert_eq!(hot.len(), prefixes.len());
        hot
    }

    #[test]
    fn a_word_reaches_its_deepest_hot_prefix() {
        let hot = set(&["\u{207f}g", "\u{207f}gp", "\u{207f}gpu", "\u{207f}t"]);
        assert_eq!(hot.depth("\u{207f}gpus"), 4);
        assert_eq!(hot.depth("\u{207f}gpu"), 4);
        assert_eq!(hot.depth("\u{207f}gx"), 2);
        assert_eq!(hot.depth("\u{207f}x"), 0);
        // The other kind's prefixes are not this kind's.
        assert_eq!(hot.depth("\u{2b0}gpu"), 0);
    }

    /// The one seek gives what the definition gives, prefix by prefix,
    /// on sets closed under prefixes over a small alphabet (so that words
    /// and prefixes meet often), both marks, and letters of one to four
    /// bytes.
    #[test]
    fn one_seek_finds_the_deepest_hot_prefix_of_every_word() {
        let letters = ['a', 'b', 'é', '中', '\u{10400}'];
        let marks = ['\u{207f}', '\u{2b0}'];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let word = |len: usize, next: &mut dyn FnMut(usize) -> usize| {
            let mut w = String::from(marks[next(2)]);
            (0..len).for_each(|_| w.push(letters[next(letters.len())]));
            w
        };
        for _ in 0..200 {
            // Closed under prefixes: a word's prefixes of two characters or
            // more, up to a random depth, for a few random words.
            let mut hot: Vec<String> = Vec::new();
            for _ in 0..next(12) {
                let w = word(DEEPEST, &mut next);
                let depth = 2 + next(DEEPEST - 1);
                hot.extend((2..=depth).map(|n| prefix(&w, n).to_string()));
            }
            hot.sort();
            hot.dedup();
            let refs: Vec<&str> = hot.iter().map(String::as_str).collect();
            let copy = set(&refs);
            for _ in 0..50 {
                let w = word(1 + next(11), &mut next);
                let defined = (2..=w.chars().count().min(DEEPEST))
                    .take_while(|&n| hot.iter().any(|p| p == prefix(&w, n)))
                    .last()
                    .unwrap_or(0);
                assert_eq!(copy.depth(&w), defined, "{w:?} in {hot:?}");
            }
        }
    }

    #[test]
    fn no_prefix_deeper_than_a_hundred_characters() {
        let word = format!("\u{207f}{}", "abcdefghijk".repeat(10));
        let prefixes: Vec<String> = (2..=110).map(|n| prefix(&word, n).to_string()).collect();
        let refs: Vec<&str> = prefixes.iter().map(String::as_str).collect();
        assert_eq!(set(&refs).depth(&word), DEEPEST);
        // Below that, the word's own length.
        assert_eq!(set(&refs).depth(prefix(&word, 40)), 40);
    }

    #[test]
    fn tokens_are_every_hot_prefix_of_the_words_once() {
        let hot = set(&["\u{207f}g", "\u{207f}gp", "\u{207f}gpu", "\u{207f}t"]);
        let t = hot.tokens(Kind::Need, "p", "\u{b7}need gpu gpus tonight xq");
        assert_eq!(
            t.text,
            "\u{207f}\u{b7}need \u{207f}g \u{207f}gp \u{207f}gpu \u{207f}t"
        );
        assert_eq!(t.version, 4);
        // Every term but gpu keeps a prefix that is not hot: no saving.
        assert_eq!(t.cold, None);
        let words = ["gpus", "bikes", "rack", "desk"];
        let prefixes: Vec<String> = words
            .iter()
            .flat_map(|w| {
                (2..=w.len() + 1).map(move |n| prefix(&format!("\u{207f}{w}"), n).to_string())
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let refs: Vec<&str> = prefixes.iter().map(String::as_str).collect();
        let whole = set(&refs);
        let t = whole.tokens(
            Kind::Need,
            "p",
            "\u{b7}need gpu gpus bike bikes rack desk gpusxyzabcd xq",
        );
        assert_eq!(
            t.cold.as_deref(),
            Some("\u{b7}need \u{207f}gpusxyzabcd \u{207f}xq")
        );
    }

    #[test]
    fn candidates_are_words_not_hot_to_their_end_about_one_in_sixteen() {
        let hot = set(&["\u{207f}g", "\u{207f}gp", "\u{207f}gpu"]);
        let long = "x".repeat(120);
        let mut offered = 0;
        for i in 0..1600 {
            let words = format!("\u{b7}need gpus x gpuxyz {long}");
            let t = hot.tokens(Kind::Need, &format!("{i:032x}"), &words);
            for c in &t.candidates {
                // The word whole, marked, to the deepest prefix the hot set
                // keeps: its first prefix that is not hot and all after it.
                assert!(
                    ["\u{207f}gpus", "\u{207f}x", "\u{207f}gpuxyz"].contains(&c.as_str())
                        || *c == format!("\u{207f}{}", &long[..DEEPEST - 1]),
                    "{c}"
                );
            }
            offered += t.candidates.len();
        }
        // 6,400 words, one in 16 expected: 400 (a binomial's 5 sigma: ±97).
        assert!((303..=497).contains(&offered), "{offered}");
        // A word all hot to its end offers nothing.
        let all = set(&["\u{207f}a", "\u{207f}ab"]);
        for i in 0..200 {
            assert!(all
                .tokens(Kind::Need, &i.to_string(), "\u{b7}need ab")
                .candidates
                .is_empty());
        }
    }

    #[test]
    fn an_upgrade_counts_the_prefixes_posts_share() {
        let posts = || {
            (0..20u32).map(|i| {
                // gpus in every post, gpux in 3, a word of its own in each;
                // have posts from the 10th.
                let kind = if i < 10 { Kind::Need } else { Kind::Have };
                let own = format!("z{i:03}");
                let rare = if i < 3 { " gpux" } else { "" };
                let term = kind_term(kind);
                (kind, format!("{term} gpus{rare} {own}"))
            })
        };
        let all: Vec<(Kind, String)> = posts().collect();
        let hot = counted(|| all.iter().map(|(k, w)| (*k, w.as_str())), PROMOTED_AT);
        let want: Vec<String> = [
            "\u{207f}g",
            "\u{207f}z",
            "\u{2b0}g",
            "\u{2b0}z",
            "\u{207f}gp",
            "\u{207f}z0",
            "\u{2b0}gp",
            "\u{2b0}z0",
            "\u{207f}gpu",
            "\u{207f}z00",
            "\u{2b0}gpu",
            "\u{2b0}z01",
            "\u{207f}gpus",
            "\u{2b0}gpus",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(hot.len(), want.len(), "{hot:?}");
        for p in &want {
            assert!(hot.contains(p), "{p} not in {hot:?}");
        }
        // Parents first: the set is closed under prefixes at every point.
        let refs: Vec<&str> = hot.iter().map(String::as_str).collect();
        let copy = set(&refs);
        for (i, p) in hot.iter().enumerate() {
            let parent = prefix(p, p.chars().count() - 1);
            assert!(
                p.chars().count() == 2 || hot[..i].iter().any(|q| q == parent),
                "{p} before {parent}"
            );
        }
        assert_eq!(copy.depth("\u{207f}gpux"), 4);
    }

    #[test]
    fn a_copy_takes_only_the_next_promotions() {
        let mut hot = set(&["\u{207f}a"]);
        // Not the next: skips one.
        hot.extend([(3, "\u{207f}c".to_string())]);
        assert_eq!((hot.version(), hot.len()), (1, 1));
        // Held already, with the next.
        hot.extend([(1, "\u{207f}a".to_string()), (2, "\u{207f}b".to_string())]);
        assert_eq!((hot.version(), hot.len()), (1, 1));
        // Out of the prefixes' order, as no catch-up reads them: left.
        hot.extend([(3, "\u{207f}c".to_string()), (2, "\u{207f}b".to_string())]);
        assert_eq!((hot.version(), hot.len()), (1, 1));
        hot.extend([(2, "\u{207f}b".to_string()), (3, "\u{207f}c".to_string())]);
        assert_eq!((hot.version(), hot.len()), (3, 3));
        assert_eq!(hot.depth("\u{207f}bx"), 2);
    }
}
