//! Finding posts by their words: what a query asks, and the cursor of a
//! page. What a note is indexed as is `rules::words`, which the store's
//! migrations use too.
//!
//! Words are what the duplicate key compares (`rules::fold`: default
//! ignorables out, NFKC, lower case; every run of characters that are not
//! letters or digits a separator). A query word matches a note word that
//! begins with it. In scripts written without spaces (Han, kana, Thai, Lao,
//! Khmer, Myanmar) a "word" can be a whole sentence, so such runs are indexed
//! as their pairs of adjacent characters (bigrams), and a query run of two or
//! more of those characters asks for each of its pairs.
//!
//! The tokenizing is done here, in Rust, on every target: D1 offers SQLite's
//! full-text index (FTS5) only with its built-in tokenizers, none of which
//! knows NFKC or bigrams. The index is an FTS5 table over the text this
//! module writes (terms separated by spaces, read by the `ascii` tokenizer,
//! which splits at ASCII punctuation and spaces only and so takes every term
//! as written); see docs/design/search-index.md, "Why FTS5, and not a
//! table", for why FTS5, and docs/finding.md, "Exporting a D1 database",
//! for how it is exported.

use crate::rules::words::{bigrams, kind_mark, kind_term, pieces, words, Piece};
use crate::rules::Kind;

/// Whether the waiting words `$words` hold every needle of the JSON array
/// `$needles` ([`Words::needles`]): by `instr` on the words with spaces
/// around them, and a single unspaced character, the one needle of one
/// character, by pattern where another follows it (a pair it begins) or
/// as a run of its own. `handlers::posts::WORDS_SQL` reads it, and the
/// test that holds it against FTS5.
macro_rules! holds_needles {
    ($words:literal, $needles:literal) => {
        concat!(
            "NOT EXISTS (SELECT 1 FROM json_each(",
            $needles,
            ") WHERE NOT CASE WHEN length(value) = 1 THEN ' ' || ",
            $words,
            " GLOB '*' || value || '[^ ]*' OR instr(' ' || ",
            $words,
            " || ' ', ' ' || value || ' ') ELSE instr(' ' || ",
            $words,
            " || ' ', value) END)"
        )
    };
}
pub(crate) use holds_needles;

/// Characters a query may have.
pub const MAX_QUERY_CHARS: usize = 100;
/// Words a query may have.
pub const MAX_QUERY_WORDS: usize = 8;
/// The terms a query asks the index for at most: as many as its words
/// may be. Each is a list the index walks (and, on D1, rows of JSON and of
/// the hot set read), so a query of more (a long run of a script written
/// without spaces, whose every pair is a term, or words that mix scripts)
/// asks its first eight. An answer a little wider, never one that misses
/// a note holding every word.
pub const MAX_TERMS: usize = MAX_QUERY_WORDS;
/// The characters of the longest term a query asks the index for: a word
/// as long as a query may be. The hot set keeps lists of prefixes this
/// deep (`rules::hot::DEEPEST`, which counts the kind's mark too), and the
/// page's statement asks a longer term (only a word that NFKC makes longer
/// than a query can be) as its first characters that many
/// (`handlers::posts::WORDS_SQL`, which writes the number out).
pub const LONGEST_TERM: usize = MAX_QUERY_CHARS;

/// The words of a `q`, checked against its bounds: at most 100 characters
/// and 8 words. A query of no word at all is no filter (`None` from
/// [`Words::expression`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Words(Vec<String>);

impl Words {
    pub fn parse(q: &str) -> Option<Words> {
        if q.chars().count() > MAX_QUERY_CHARS {
            return None;
        }
        let words = words(q);
        if words.len() > MAX_QUERY_WORDS {
            return None;
        }
        Some(Words(words))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The words as a query that parses back to them: what a link to the
    /// same search says (the feed's own address).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for w in &self.0 {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
        out
    }

    /// The FTS5 query of these words over a post's whole marked words (the
    /// cold part's text, `rules::words::index_text`), each required: a
    /// spaced piece as a prefix (`"ⁿbike"*`), an unspaced run as each of
    /// its pairs (a single character as a prefix of the pairs it starts),
    /// each begun with the kind's mark. The list asks its index through
    /// `handlers::posts::WORDS_SQL`; this is what the needles are tested
    /// against, and what the bench asks a file of version 6.
    /// With a kind, that kind's terms; without, either kind's, all of one
    /// (`(... AND ...) OR (... AND ...)`: a post's terms all carry its
    /// kind). `None` when there is nothing to match.
    pub fn expression(&self, kind: Option<Kind>) -> Option<String> {
        if self.0.is_empty() {
            return None;
        }
        let of_kind = |k: Kind| {
            let mark = kind_mark(k);
            let mut out = String::new();
            self.each_term(None, |term, prefix, _| {
                if !out.is_empty() {
                    out.push_str(" AND ");
                }
                // Terms hold only letters and digits: no `"` to double.
                out.push('"');
                out.push(mark);
                out.push_str(term);
                out.push('"');
                if prefix {
                    out.push('*');
                }
            });
            out
        };
        Some(match kind {
            Some(k) => of_kind(k),
            None => format!("({}) OR ({})", of_kind(Kind::Need), of_kind(Kind::Have)),
        })
    }

    /// The terms as a JSON array of what a post's words, spaces around them
    /// (`' ' || words || ' '`, the text `rules::words::waiting_text` makes),
    /// must each contain to match as FTS5 matches
    /// [`expression`](Self::expression) on its terms: `" bike"` for a
    /// prefix (a term that begins with it), `" ·need "` for a whole term.
    /// A pair of unspaced characters is anywhere (`"自行"`): a run waits
    /// whole, and two such characters side by side are of one run. A single
    /// one (`"车"`, the one needle of one character) begins a pair when
    /// another follows it, or is a run of its own, which the statement
    /// tests by pattern. For the few posts newer than the index, which a
    /// search reads beside it (`handlers::posts::WORDS_SQL`).
    pub fn needles(&self, kind: Option<Kind>) -> String {
        self.json_array(kind, |prefix, unspaced| match (unspaced, prefix) {
            (true, _) => ("", ""),
            (false, true) => (" ", ""),
            (false, false) => (" ", " "),
        })
    }

    /// The terms as a JSON array, without marks, for the hot and cold
    /// parts of the index (`store::hot_cold`), where every term is asked
    /// as a prefix: a pair of unspaced characters begins no term but
    /// itself, since the index holds such runs as their pairs.
    pub fn terms(&self) -> String {
        self.json_array(None, |_, _| ("", ""))
    }

    /// The terms ([`each_term`](Self::each_term)) as a JSON array of
    /// strings, each between what `around` gives for it (from whether it
    /// is a prefix, and whether it is of unspaced characters). Terms hold
    /// only letters and digits: nothing to escape.
    fn json_array(
        &self,
        kind: Option<Kind>,
        around: fn(bool, bool) -> (&'static str, &'static str),
    ) -> String {
        let mut out = String::from("[");
        self.each_term(kind, |term, prefix, unspaced| {
            if out.len() > 1 {
                out.push(',');
            }
            let (before, after) = around(prefix, unspaced);
            out.push('"');
            out.push_str(before);
            out.push_str(term);
            out.push_str(after);
            out.push('"');
        });
        out.push(']');
        out
    }

    /// Calls `f` with each term of the query, whether it is a prefix, and
    /// whether it is of unspaced characters (a pair, or one alone); first
    /// the kind's term, when given. The first [`MAX_TERMS`] terms of the
    /// words that no other word implies, in the query's order.
    fn each_term(&self, kind: Option<Kind>, mut f: impl FnMut(&str, bool, bool)) {
        if let Some(k) = kind {
            f(kind_term(k), false, false);
        }
        let mut asked = 0;
        let mut ask = |term: &str, prefix: bool, unspaced: bool| {
            if asked < MAX_TERMS {
                f(term, prefix, unspaced);
                asked += 1;
            }
        };
        for (i, word) in self.0.iter().enumerate() {
            // A word that another begins with (`com` beside `commonword`,
            // or the same word again) asks nothing more: a post with a word
            // that begins with `commonword` has one that begins with `com`,
            // and each pair or piece of the shorter is one of the longer's,
            // or begins one. Each term asked is a list the index walks.
            let implied = self.0.iter().enumerate().any(|(j, u)| {
                j != i && u.starts_with(word.as_str()) && (u.len() > word.len() || j < i)
            });
            if implied {
                continue;
            }
            for p in pieces(word) {
                match p {
                    Piece::Spaced(s) => ask(s, true, false),
                    Piece::Unspaced(run) => {
                        let pairs = bigrams(run);
                        let single = pairs.len() == 1 && pairs[0].chars().count() == 1;
                        for pair in pairs {
                            ask(pair, single, true);
                        }
                    }
                }
            }
        }
    }
}

impl crate::query::FromQuery for Words {
    fn from_query(text: &str) -> Option<Words> {
        Words::parse(text)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl schemars::JsonSchema for Words {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Words".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "maxLength": MAX_QUERY_CHARS})
    }
}

/// The position of a page: the posts older than the last one shown. Opaque
/// to clients: the post's row number in hex after a check of 8 hex digits,
/// so that a cursor the list did not make (typed, cut, altered) is refused
/// rather than read as some other place in the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cursor(pub i64);

impl Cursor {
    fn check(row: &str) -> String {
        let digest = crate::secrets::sha256_hex(&["needhave cursor ", row].concat());
        digest[..8].to_string()
    }

    pub fn encode(self) -> String {
        let row = format!("{:x}", self.0);
        let mut out = Self::check(&row);
        out.push_str(&row);
        out
    }

    pub fn parse(s: &str) -> Option<Cursor> {
        if !(9..=24).contains(&s.len())
            || !s
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return None;
        }
        let (check, row) = s.split_at(8);
        if row.starts_with('0') || Self::check(row) != check {
            return None;
        }
        // Hex digits only (checked above), at most 16 of them: summed by
        // hand, so that no radix parser is linked for one use.
        row.bytes()
            .try_fold(0i64, |n, b| {
                let digit = (b as char).to_digit(16)?;
                n.checked_mul(16)?.checked_add(i64::from(digit))
            })
            .filter(|n| *n > 0)
            .map(Cursor)
    }
}

impl crate::query::FromQuery for Cursor {
    fn from_query(text: &str) -> Option<Cursor> {
        Cursor::parse(text)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl schemars::JsonSchema for Cursor {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Cursor".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "pattern": "^[0-9a-f]{9,24}$"})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The few posts newer than the index are matched by their needles
    /// (as `WORDS_SQL` matches them), the others by FTS5 on the
    /// expression: the two must agree on every note and query, kinds
    /// included.
    #[test]
    fn needles_agree_with_the_index() {
        use crate::rules::words::{index_text, waiting_text};
        let notes = [
            "BIKES and ｇｐｕ to\u{200b}night at the cafe\u{301}, ÄRGER 4090",
            "bike pump",
            "a b c bi bik",
            "我有一辆自行车可以借",
            "今夜ノートパソコンを貸してください",
            "ﾉｰﾄﾊﾟｿｺﾝ",
            "ขายจักรยานมือสอง",
            "RTX4090显卡 gpu",
            "车",
            "need a need have",
        ];
        let queries = [
            "bike",
            "bikes",
            "b",
            "bikesx",
            "ikes",
            "gpu",
            "ＧＰＵ tonight",
            "to night",
            "café",
            "ärger",
            "409",
            "090",
            "自行车",
            "自行",
            "车自",
            "车",
            "一辆自行车可以借",
            "パソコン",
            "ﾊﾟｿｺﾝ",
            "จักรยาน",
            "ยานจัก",
            "显卡",
            "rtx",
            "need",
            "have",
            "a b",
            "pump bike",
            "4090 显卡",
        ];
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::store::migrate::apply(&conn).unwrap();
        let mut indexed = Vec::new();
        for (i, note) in notes.iter().enumerate() {
            let kind = if i % 2 == 0 { Kind::Need } else { Kind::Have };
            conn.execute(
                "INSERT INTO post_words (rowid, words) VALUES (?1, ?2)",
                rusqlite::params![i as i64 + 1, index_text(kind, note)],
            )
            .unwrap();
            indexed.push(waiting_text(kind, note));
        }
        let mut compared = 0;
        for q in queries {
            let words = Words::parse(q).unwrap();
            for kind in [None, Some(Kind::Need), Some(Kind::Have)] {
                let expression = words.expression(kind).unwrap();
                let by_index: Vec<i64> = conn
                    .prepare(
                        "SELECT rowid FROM post_words WHERE post_words MATCH ?1 ORDER BY rowid",
                    )
                    .unwrap()
                    .query_map([&expression], |r| r.get(0))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                let by_needles: Vec<i64> = conn
                    .prepare(concat!(
                        "SELECT w.key + 1 FROM json_each(?1) AS w WHERE ",
                        holds_needles!("w.value", "?2"),
                        " ORDER BY w.key"
                    ))
                    .unwrap()
                    .query_map(
                        [
                            serde_json::to_string(&indexed).unwrap(),
                            words.needles(kind),
                        ],
                        |r| r.get(0),
                    )
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                assert_eq!(by_needles, by_index, "{q:?} {kind:?}: {expression}");
                compared += by_index.len();
            }
        }
        // Not a comparison of empty answers.
        assert!(compared > 40, "{compared}");
    }

    /// The move out of `words_new` marks the words in SQL
    /// (`store::hot_cold::COLD`, run by the insert that makes 64) as
    /// `index_text` marks them in Rust: every term `index_text` writes for
    /// a post, and no other post's, finds it in the cold part once moved.
    #[test]
    fn the_move_marks_words_as_index_text_does() {
        use crate::rules::words::{index_text, waiting_text};
        use crate::store::PENDING_MAX;
        let notes = [
            "Need a BIKE, bike!",
            "我有自行车",
            "RTX4090显卡 gpu",
            "ﾉｰﾄﾊﾟｿｺﾝ",
            "x",
        ];
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::store::migrate::apply(&conn).unwrap();
        let post = |i: i64| {
            (
                Kind::parse(["need", "have"][i as usize % 2]).unwrap(),
                notes[i as usize % notes.len()],
            )
        };
        for i in 1..=PENDING_MAX {
            let (kind, note) = post(i);
            conn.execute(
                "INSERT INTO words_new (post, words) VALUES (?1, ?2)",
                rusqlite::params![i, waiting_text(kind, note)],
            )
            .unwrap();
        }
        let waiting: i64 = conn
            .query_row("SELECT count(*) FROM words_new", [], |r| r.get(0))
            .unwrap();
        assert_eq!(waiting, 0, "the 64th insert moves them all");
        for i in 1..=PENDING_MAX {
            let (kind, note) = post(i);
            for term in index_text(kind, note).split(' ') {
                let found: Vec<i64> = conn
                    .prepare("SELECT 268435456 - rowid FROM post_cold WHERE post_cold MATCH ?1")
                    .unwrap()
                    .query_map([format!("\"{term}\"")], |r| r.get(0))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                assert!(found.contains(&i), "{term} of post {i}: {found:?}");
                // Every post found holds the term as index_text writes it.
                for j in found {
                    let (other_kind, other_note) = post(j);
                    let terms = index_text(other_kind, other_note);
                    assert!(terms.split(' ').any(|t| t == term), "{term}: post {j}");
                }
            }
        }
    }

    #[test]
    fn queries() {
        let q = |s: &str| Words::parse(s).and_then(|w| w.expression(None));
        assert_eq!(
            q("Bike"),
            Some("(\"\u{207f}bike\"*) OR (\"\u{2b0}bike\"*)".into())
        );
        assert_eq!(q("  !!! "), None);
        assert_eq!(
            q("ｇｐｕ tonight"),
            Some(
                "(\"\u{207f}gpu\"* AND \"\u{207f}tonight\"*) OR \
                 (\"\u{2b0}gpu\"* AND \"\u{2b0}tonight\"*)"
                    .into()
            )
        );
        let have = |s: &str| Words::parse(s).and_then(|w| w.expression(Some(Kind::Have)));
        assert_eq!(
            have("自行车"),
            Some("\"\u{2b0}自行\" AND \"\u{2b0}行车\"".into())
        );
        assert_eq!(have("车"), Some("\"\u{2b0}车\"*".into()));
        assert_eq!(have("bike"), Some("\"\u{2b0}bike\"*".into()));
        assert_eq!(
            Words::parse("Bike 自行车")
                .unwrap()
                .needles(Some(Kind::Have)),
            "[\" \u{b7}have \",\" bike\",\"自行\",\"行车\"]"
        );
        assert_eq!(Words::parse("车").unwrap().needles(None), "[\"车\"]");
        assert!(Words::parse(&"a ".repeat(8)).is_some());
        assert!(Words::parse(&"a ".repeat(9)).is_none());
        assert!(Words::parse(&"x".repeat(100)).is_some());
        assert!(Words::parse(&"x".repeat(101)).is_none());
    }

    /// A word given twice, or one that begins another word of the query,
    /// is not asked: the expression, the needles and the terms (the page's
    /// version tag) are those of the query without it.
    #[test]
    fn a_term_another_implies_is_asked_once() {
        let same = |a: &str, b: &str| {
            let (a, b) = (Words::parse(a).unwrap(), Words::parse(b).unwrap());
            for kind in [None, Some(Kind::Need)] {
                assert_eq!(a.expression(kind), b.expression(kind), "{a:?}");
                assert_eq!(a.needles(kind), b.needles(kind), "{a:?}");
            }
            assert_eq!(a.terms(), b.terms(), "{a:?}");
        };
        same(&"commonword ".repeat(8), "commonword");
        same(
            "c co com comm commo common commonw commonword",
            "commonword",
        );
        same("commonword COMMON Com", "commonword");
        same("bike gpu bikes g", "gpu bikes");
        // A run that begins a longer one: its pairs are the longer's, and
        // a single character begins a pair of it.
        same("自行 自行车", "自行车");
        same("车 车站", "车站");
        // Not implied: a word inside another (not at its start), and a
        // single character that ends a pair.
        assert_eq!(
            Words::parse("ike bike").unwrap().terms(),
            "[\"ike\",\"bike\"]"
        );
        assert_eq!(
            Words::parse("站 车站").unwrap().terms(),
            "[\"站\",\"车站\"]"
        );
    }

    /// A query asks at most eight terms, whatever its words: past that,
    /// its first eight, each one the query asks without the bound (so no
    /// post that holds every word is missed).
    #[test]
    fn a_query_asks_at_most_eight_terms() {
        let terms = |q: &str| -> Vec<String> {
            serde_json::from_str(&Words::parse(q).unwrap().terms()).unwrap()
        };
        // A sentence of Han letters, 30 of them: 29 pairs, the first 8 asked.
        let run: String = (0..30u32)
            .map(|k| char::from_u32(0x4e00 + k * 7).unwrap())
            .collect();
        let chars: Vec<char> = run.chars().collect();
        let pairs: Vec<String> = chars.windows(2).map(|w| w.iter().collect()).collect();
        assert_eq!(terms(&run), pairs[..MAX_TERMS]);
        // Words that mix scripts: their first eight pieces.
        let mixed = "gpus 显卡 a自b行c车d站e人f口g山h水 tonight";
        assert_eq!(
            terms(mixed),
            ["gpus", "显卡", "a", "自", "b", "行", "c", "车"]
        );
        // Eight words of spaced scripts are all asked, and terms implied
        // by others are not counted.
        assert_eq!(terms("a b c d e f g h").len(), 8);
        assert_eq!(
            terms("c co com commonword a b d e"),
            ["commonword", "a", "b", "d", "e"]
        );
        // The needles are the same terms.
        let words = Words::parse(&run).unwrap();
        assert_eq!(
            words.needles(None).matches('"').count(),
            2 * MAX_TERMS,
            "{}",
            words.needles(None)
        );
    }

    /// The deepest prefix the hot set keeps is a term as long as a query
    /// may be.
    #[test]
    fn the_longest_term_is_the_hot_sets_deepest_prefix() {
        assert_eq!(crate::rules::hot::DEEPEST, LONGEST_TERM + 1);
    }

    #[test]
    fn cursors_round_trip_and_refuse_forgeries() {
        for n in [1, 255, 1 << 40] {
            let c = Cursor(n).encode();
            assert_eq!(Cursor::parse(&c), Some(Cursor(n)));
        }
        let good = Cursor(300).encode();
        let mut altered = good.clone().into_bytes();
        let last = altered.len() - 1;
        altered[last] = if altered[last] == b'1' { b'2' } else { b'1' };
        for bad in [
            "",
            "abc",
            "zzzzzzzzzz",
            &good.to_uppercase(),
            std::str::from_utf8(&altered).unwrap(),
            &format!("{good}0"),
            &good[..good.len() - 1],
        ] {
            assert_eq!(Cursor::parse(bad), None, "{bad:?}");
        }
    }
}
