//! The index of words in two parts, so that a word no other note holds
//! costs one term in a large leaf and nothing more (docs/finding.md, "An
//! index that fits the bound"):
//!
//! - `post_cold`: every moved post's terms, each begun with its kind's
//!   mark, exactly; FTS5's own leaves and no prefix list. A query word
//!   that is not hot merges its terms here: few posts hold them.
//! - `post_words`: the hot part. Each post's kind's term and, for each of
//!   its terms, the deepest hot prefix (`rules::hot`); FTS5's prefix lists
//!   of one to eight characters make the shorter ones. A hot query word
//!   reads its prefix list here, seeking to the cursor in small leaves.
//! - `hot_prefixes`: the hot set, numbered in the order of promotion (the
//!   number a writer's copy is at).
//!
//! A create's batch hands its post's tokens and candidates over with its
//! words (`words_new`); the move of 64 posts writes both parts, promotes
//! candidates that enough moved posts hold, and writes a promoted
//! prefix's token for each moved post that holds it in the same insert.
//! Each batch ends by reading the promotions its writer's copy lacks.
//!
//! Both parts hold each post under its row number reversed
//! ([`WORDS_BASE`](crate::store::WORDS_BASE) − rowid), so that FTS5's own
//! order, rising row numbers, is the list's newest first: a page is a
//! forward walk from the cursor, where a walk against FTS5's order decodes
//! the whole leaf it starts on first (docs/finding.md, "Instructions per
//! query"). Newest first is also the order FTS5 gathers a transaction's
//! rows in without flushing them, so a move writes its rows so.
//!
//! The statements run the same on D1 and SQLite; each reads the `?64`
//! of `words_new` ([`crate::store::PENDING_MAX`]) the way the move before
//! them did.

/// A move happens in this batch: `words_new` holds 64 posts.
macro_rules! full {
    () => {
        "(SELECT count(*) FROM words_new) >= 64"
    };
}

/// The mark of a `words_new` row's kind, from its kind's term.
macro_rules! mark {
    ($words:literal) => {
        concat!(
            "CASE substr(",
            $words,
            ", 2, 1) WHEN 'n' THEN '\u{207f}' ELSE '\u{2b0}' END"
        )
    };
}

/// A `words_new` row's terms after its kind's term.
macro_rules! rest {
    ($words:literal) => {
        concat!("substr(", $words, ", instr(", $words, " || ' ', ' ') + 1)")
    };
}

/// The characters of a marked term `v`'s deepest hot prefix, given `s`,
/// the greatest hot prefix not after it: their longest common prefix,
/// since the set is closed under prefixes; 0 below two characters (the
/// mark alone, or the other kind's mark).
macro_rules! depth {
    ($s:literal, $v:literal) => {
        concat!(
            "CASE WHEN ",
            $s,
            " IS NULL THEN 0 ",
            "WHEN substr(",
            $v,
            ", 1, length(",
            $s,
            ")) = ",
            $s,
            " THEN length(",
            $s,
            ") ",
            "WHEN substr(",
            $s,
            ", 1, 8) = substr(",
            $v,
            ", 1, 8) THEN 8 ",
            "WHEN substr(",
            $s,
            ", 1, 7) = substr(",
            $v,
            ", 1, 7) THEN 7 ",
            "WHEN substr(",
            $s,
            ", 1, 6) = substr(",
            $v,
            ", 1, 6) THEN 6 ",
            "WHEN substr(",
            $s,
            ", 1, 5) = substr(",
            $v,
            ", 1, 5) THEN 5 ",
            "WHEN substr(",
            $s,
            ", 1, 4) = substr(",
            $v,
            ", 1, 4) THEN 4 ",
            "WHEN substr(",
            $s,
            ", 1, 3) = substr(",
            $v,
            ", 1, 3) THEN 3 ",
            "WHEN substr(",
            $s,
            ", 1, 2) = substr(",
            $v,
            ", 1, 2) THEN 2 ",
            "ELSE 0 END"
        )
    };
}

/// Each marked term of `$words` (a post's waiting words,
/// `rules::words::waiting_text`) with the greatest hot prefix not after
/// it (one seek).
macro_rules! deepest {
    ($words:literal) => {
        concat!(
            "(SELECT w.v AS v, (SELECT h.p FROM hot_prefixes h WHERE h.p <= w.v \
             ORDER BY h.p DESC LIMIT 1) AS s FROM (SELECT ",
            mark!($words),
            " || j.value AS v FROM json_each('[\"' || replace(",
            rest!($words),
            ", ' ', '\",\"') || '\"]') j WHERE j.value <> '') w) x"
        )
    };
}

/// The hot part's terms of a post whose waiting words are `$words`, as
/// `rules::hot::HotSet::tokens` writes them from a current copy: its
/// kind's term and every hot prefix of its terms, each once, found with
/// one seek a term.
macro_rules! hot_tokens {
    ($words:literal) => {
        concat!(
            mark!($words),
            " || substr(",
            $words,
            ", 1, instr(",
            $words,
            " || ' ', ' ') - 1) || coalesce((SELECT group_concat(' ' || t, '') \
             FROM (SELECT DISTINCT substr(x.v, 1, k.value) AS t FROM ",
            deepest!($words),
            ", json_each('[2,3,4,5,6,7,8,9]') k WHERE k.value <= ",
            depth!("x.s", "x.v"),
            ")), '')"
        )
    };
}

/// The promotions a post's writer had not seen, when they are few (64 at
/// most): each one whose prefix begins a term of the post is added to
/// its tokens.
pub const NEAR: &str = concat!(
    "UPDATE words_new SET tokens = tokens || coalesce((SELECT group_concat(' ' || h.p, '') \
     FROM hot_prefixes h WHERE h.rowid > words_new.version \
     AND instr(' ' || ",
    mark!("words"),
    " || replace(words, ' ', ' ' || ",
    mark!("words"),
    "), ' ' || h.p) > 0), ''), version = (SELECT max(rowid) FROM hot_prefixes) WHERE ",
    full!(),
    " AND tokens IS NOT NULL AND version < (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) \
     AND version >= (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) - 64"
);

/// Tokens and candidates found by the move for the posts whose writer's
/// copy of the hot set was far behind (or who had none, as on the
/// Worker): one seek a term.
pub const BEHIND: &str = concat!(
    "UPDATE words_new SET tokens = ",
    hot_tokens!("words_new.words"),
    ", candidates = (SELECT json_group_array(c) FROM (SELECT substr(x.v, 1, max(",
    depth!("x.s", "x.v"),
    ", 1) + 1) AS c, length(x.v) AS n, ",
    depth!("x.s", "x.v"),
    " AS d FROM ",
    deepest!("words_new.words"),
    ") WHERE max(d, 1) + 1 <= min(n, 9) AND abs(random()) % 16 = 0), \
     version = (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) \
     WHERE ",
    full!(),
    " AND (tokens IS NULL OR version < (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) - 64)"
);

/// The hot part's terms of the post `x0.words` holds the waiting words of
/// (`needhave d1-words` binds it), as [`BEHIND`] finds them.
pub const TOKENS_OF_X0: &str = hot_tokens!("x0.words");

/// Every moved post's terms, marked, into the cold part, its kind's term
/// included (`rules::words::index_text`: what `needhave d1-words` asks
/// of a post to know it is there), or what its writer said the cold part
/// needs of them (`rules::hot::Tokens::cold`: the terms the hot part does
/// not hold whole).
pub const COLD: &str = concat!(
    "INSERT INTO post_cold (rowid, words) SELECT 268435456 - post, coalesce(cold, ",
    mark!("words"),
    " || replace(words, ' ', ' ' || ",
    mark!("words"),
    ")) FROM words_new WHERE ",
    full!(),
    " ORDER BY post DESC"
);

/// The candidates to promote: at most 64 a move, not hot, whose parent is
/// (the set stays closed whatever a writer offers), that at least 8 moved
/// posts hold (a prefix query of the cold part: a prefix that is not hot
/// has a short list there).
pub const PROMOTE: &str = concat!(
    "INSERT OR IGNORE INTO hot_fresh (p) SELECT c.p FROM \
     (SELECT DISTINCT j.value AS p FROM words_new n, json_each(n.candidates) j WHERE ",
    full!(),
    " AND length(j.value) BETWEEN 2 AND 9 \
     AND NOT EXISTS (SELECT 1 FROM hot_prefixes h WHERE h.p = j.value) \
     AND (length(j.value) = 2 OR EXISTS (SELECT 1 FROM hot_prefixes h \
       WHERE h.p = substr(j.value, 1, length(j.value) - 1))) LIMIT 64) c \
     WHERE (SELECT count(*) FROM post_cold WHERE post_cold MATCH '\"' || c.p || '\"*') >= 8"
);

/// The moved posts' tokens into the hot part, and each promoted prefix as
/// a term of every post that holds it (the cold part has its terms: none
/// of them was hot to its end): one insert, in rising row numbers, so
/// FTS5 writes it as one segment.
pub const HOT: &str = concat!(
    "INSERT INTO post_words (rowid, words) SELECT r, group_concat(t, ' ') FROM (\
     SELECT 268435456 - post AS r, tokens AS t FROM words_new WHERE ",
    full!(),
    " UNION ALL SELECT c.rowid, fresh.p FROM hot_fresh fresh, post_cold c \
     WHERE c.post_cold MATCH ('\"' || fresh.p || '\"*')) GROUP BY r ORDER BY r"
);

/// The promotions, numbered.
pub const PROMOTED: &str = "INSERT INTO hot_prefixes (p) SELECT p FROM hot_fresh ORDER BY p";

pub const FORGET: &str = "DELETE FROM hot_fresh";

/// What every create's batch ends with: the promotions after `?1`, the
/// version of its writer's copy, a page of them, in the prefixes' order
/// (`rules::hot::HotSet::extend` merges them in).
pub const CATCH_UP: &str = "SELECT n, p FROM (SELECT rowid AS n, p FROM hot_prefixes \
     WHERE rowid > ?1 ORDER BY rowid LIMIT 1000) ORDER BY p";

/// Empties `words_new` after a move (the last statement of it).
pub const CLEAR_WORDS: &str = "DELETE FROM words_new WHERE (SELECT count(*) FROM words_new) >= 64";

/// The statements of a move, in order, after the post's own words are in
/// `words_new`, the last emptying it.
pub const MOVE: [&str; 8] = [
    NEAR,
    BEHIND,
    COLD,
    PROMOTE,
    HOT,
    PROMOTED,
    FORGET,
    CLEAR_WORDS,
];

/// The move as a trigger on `words_new`, so that only the insert that
/// makes 64 runs it: a create's batch is its post, its words and the
/// catch-up, whatever the move does. It waits while `words_filling` says
/// that older posts wait to be indexed (`needhave d1-words`): a prefix
/// that fill counts hot must reach every post moved before it. `schema.sql` and `migrations/0012`
/// hold this text (a test checks).
pub fn trigger() -> String {
    let mut sql = String::from(
        "CREATE TRIGGER IF NOT EXISTS words_move AFTER INSERT ON words_new\n\
         WHEN (SELECT count(*) FROM words_new) >= 64 \
         AND NOT EXISTS (SELECT 1 FROM words_filling) BEGIN\n",
    );
    for statement in MOVE {
        sql.push_str(statement);
        sql.push_str(";\n");
    }
    sql.push_str("END;");
    sql
}

/// A page of the moved posts holding every term of `?2` (a JSON array,
/// unmarked) of the kinds whose marks are `?1` (a JSON array), after the
/// reversed row number `?3`, at most `?4` from each part: for each kind,
/// when every term is hot, its prefix lists in the hot part; otherwise
/// the merge of its cold terms in the cold part, each post of it checked
/// for the hot terms by a seek. The caller merges the two parts.
pub const PAGE: &str = "WITH q AS (\
    SELECT k.value AS m, w.value AS w, (length(w.value) <= 8 AND EXISTS \
      (SELECT 1 FROM hot_prefixes h WHERE h.p = k.value || w.value)) AS hot \
    FROM json_each(?1) k, json_each(?2) w), \
  kinds AS (SELECT m, min(hot) AS all_hot, \
      '(' || group_concat(CASE WHEN hot THEN '\"' || m || w || '\"' END, ' AND ') || ')' AS hot_e, \
      '(' || group_concat(CASE WHEN NOT hot THEN '\"' || m || w || '\"*' END, ' AND ') || ')' AS cold_e \
    FROM q GROUP BY m) \
SELECT * FROM (SELECT rowid FROM post_words \
  WHERE post_words MATCH coalesce((SELECT group_concat(hot_e, ' OR ') FROM kinds WHERE all_hot), '\"\u{b7}none\"') \
  AND rowid > ?3 ORDER BY rowid \
  LIMIT CASE WHEN EXISTS (SELECT 1 FROM kinds WHERE all_hot) THEN ?4 ELSE 0 END) \
UNION ALL \
SELECT * FROM (SELECT c.rowid FROM post_cold c JOIN posts p ON p.rowid = 268435456 - c.rowid \
  WHERE c.post_cold MATCH coalesce((SELECT group_concat(cold_e, ' OR ') FROM kinds WHERE NOT all_hot), '\"\u{b7}none\"') \
  AND c.rowid > ?3 \
  AND NOT EXISTS (SELECT 1 FROM q WHERE q.hot \
    AND q.m = CASE p.kind WHEN 'need' THEN '\u{207f}' ELSE '\u{2b0}' END \
    AND NOT EXISTS (SELECT 1 FROM post_words h WHERE h.post_words MATCH '\"' || q.m || q.w || '\"' \
      AND h.rowid = c.rowid)) \
  ORDER BY c.rowid LIMIT CASE WHEN EXISTS (SELECT 1 FROM kinds WHERE NOT all_hot) THEN ?4 ELSE 0 END)";

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::rules::hot::HotSet;
    use crate::rules::words::waiting_text;
    use crate::rules::Kind;
    use rusqlite::{params, Connection};

    const BASE: i64 = 1 << 28;

    fn list() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        crate::store::migrate::apply(&conn).unwrap();
        conn
    }

    /// Creates a post as a create's batch would, moving when 64 wait; the
    /// writer's copy takes what the batch's catch-up hands back.
    /// `catch_up`: whether the copy takes the batch's promotions (a copy
    /// that does not is a writer behind).
    fn create(
        conn: &Connection,
        copy: Option<&mut HotSet>,
        catch_up: bool,
        n: i64,
        kind: Kind,
        note: &str,
    ) {
        let id = format!("{n:032x}");
        conn.execute(
            "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
             VALUES (?1, ?2, ?3, '', '', 0)",
            params![id, kind.as_str(), note],
        )
        .unwrap();
        let words = waiting_text(kind, note);
        let (tokens, candidates, version, cold) = match &copy {
            Some(hot) => {
                let t = hot.tokens(kind, &id, &words);
                (
                    Some(t.text),
                    Some(serde_json::to_string(&t.candidates).unwrap()),
                    Some(t.version),
                    t.cold,
                )
            }
            None => (None, None, None, None),
        };
        conn.execute(
            "INSERT INTO words_new (post, words, tokens, candidates, version, cold) \
             SELECT rowid, ?2, ?3, ?4, ?5, ?6 FROM posts WHERE id = ?1",
            params![id, words, tokens, candidates, version, cold],
        )
        .unwrap();
        if let Some(hot) = copy.filter(|_| catch_up) {
            let mut s = conn.prepare(CATCH_UP).unwrap();
            let rows: Vec<(i64, String)> = s
                .query_map([hot.version()], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            hot.extend(rows);
        }
    }

    /// The page as the list would ask it, the parts merged.
    fn page(conn: &Connection, kinds: &[Kind], terms: &[&str], limit: i64) -> Vec<i64> {
        let marks: Vec<String> = kinds
            .iter()
            .map(|k| crate::rules::words::kind_mark(*k).to_string())
            .collect();
        let mut s = conn.prepare(PAGE).unwrap();
        let mut rows: Vec<i64> = s
            .query_map(
                params![
                    serde_json::to_string(&marks).unwrap(),
                    serde_json::to_string(terms).unwrap(),
                    i64::MIN,
                    limit
                ],
                |r| r.get(0),
            )
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows.sort_unstable();
        rows.dedup();
        rows.truncate(limit as usize);
        rows.into_iter().map(|r| BASE - r).collect()
    }

    /// The posts a page must hold: every moved post of those kinds whose
    /// words hold a word beginning with each term, newest first.
    fn expected(conn: &Connection, kinds: &[Kind], terms: &[&str], limit: usize) -> Vec<i64> {
        let moved: i64 = conn
            .query_row(
                "SELECT coalesce(min(post), 1 << 62) FROM words_new",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let mut s = conn
            .prepare("SELECT rowid, kind, note FROM posts WHERE rowid < ?1 ORDER BY rowid DESC")
            .unwrap();
        s.query_map([moved], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .filter(|(_, kind, note)| {
            let kind = if kind == "need" {
                Kind::Need
            } else {
                Kind::Have
            };
            kinds.contains(&kind) && {
                let words = waiting_text(kind, note);
                terms
                    .iter()
                    .all(|t| words.split(' ').skip(1).any(|w| w.starts_with(t)))
            }
        })
        .map(|(rowid, _, _)| rowid)
        .take(limit)
        .collect()
    }

    fn note(i: i64) -> String {
        // Common words, a word of the post's own, and now and then a rarer one.
        let common = [
            "gpu",
            "gpus",
            "tonight",
            "bike",
            "bikes",
            "mountainbike",
            "desk",
        ];
        let a = common[(i % 7) as usize];
        let b = common[((i / 7) % 7) as usize];
        let rare = if i % 23 == 0 { " zephyr" } else { "" };
        format!("{a} {b} item q{i:x}z{rare}")
    }

    fn kind(i: i64) -> Kind {
        if i % 3 == 0 {
            Kind::Have
        } else {
            Kind::Need
        }
    }

    #[test]
    fn print_trigger() {
        if let Some(path) = std::env::var_os("PRINT_TRIGGER") {
            std::fs::write(path, trigger()).unwrap();
        }
    }

    #[test]
    fn the_schema_moves_as_the_statements_say() {
        let trigger = trigger();
        assert!(include_str!("../../../schema.sql").contains(&trigger));
        assert!(include_str!("../../../migrations/0012_hot_cold.sql").contains(&trigger));
    }

    #[test]
    fn pages_are_what_the_notes_hold_whether_a_word_is_hot_or_cold() {
        // A writer with a copy it keeps current, one whose copy catches up
        // every 50th post only (the move adds what it missed), and one
        // without a copy (the move finds every token).
        for (with_copy, every) in [(true, 1), (true, 50), (false, 1)] {
            let conn = list();
            let mut hot = HotSet::default();
            for i in 1..=1000 {
                let copy = with_copy.then_some(&mut hot);
                create(&conn, copy, i % every == 0, i, kind(i), &note(i));
            }
            let promoted: i64 = conn
                .query_row("SELECT count(*) FROM hot_prefixes", [], |r| r.get(0))
                .unwrap();
            assert!(promoted > 10, "{promoted} promoted");
            let both = [Kind::Need, Kind::Have];
            for terms in [
                &["gpu"][..],
                &["gpus"],
                &["g"],
                &["bike", "tonight"],
                &["zephyr"],
                &["zephyr", "gpu"],
                &["q3e"],
                &["q3e8z"],
                &["mountainb"],
                &["mountainbike", "gpu"],
                &["nothing"],
            ] {
                for kinds in [&both[..], &[Kind::Need], &[Kind::Have]] {
                    assert_eq!(
                        page(&conn, kinds, terms, 101),
                        expected(&conn, kinds, terms, 101),
                        "{terms:?} {kinds:?} copy {with_copy}, caught up every {every}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_move_finds_the_tokens_a_writer_would() {
        let conn = list();
        let mut hot = HotSet::default();
        for i in 1..=640 {
            create(&conn, Some(&mut hot), true, i, kind(i), &note(i));
        }
        assert!(hot.len() > 10);
        assert_eq!(
            hot.version(),
            conn.query_row("SELECT max(rowid) FROM hot_prefixes", [], |r| r
                .get::<_, i64>(0))
                .unwrap()
        );
        // A post whose writer had no copy: the move's tokens are the copy's
        // (the move run by hand, to read what it wrote before it moves).
        conn.execute_batch("DROP TRIGGER words_move").unwrap();
        for i in 641..=700 {
            let words = waiting_text(kind(i), &note(i));
            conn.execute(
                "INSERT INTO words_new (post, words) VALUES (?1, ?2)",
                params![i + 10_000, words],
            )
            .unwrap();
        }
        // Fill to 64 so that BEHIND runs, then read what it wrote.
        let waiting: i64 = conn
            .query_row("SELECT count(*) FROM words_new", [], |r| r.get(0))
            .unwrap();
        for k in waiting..64 {
            conn.execute(
                "INSERT INTO words_new (post, words) VALUES (?1, '\u{b7}need x')",
                [20_000 + k],
            )
            .unwrap();
        }
        conn.execute_batch(BEHIND).unwrap();
        let mut s = conn
            .prepare(
                "SELECT post, words, tokens FROM words_new WHERE post > 10000 AND post < 20000",
            )
            .unwrap();
        let rows: Vec<(i64, String, String)> = s
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows.len(), 60);
        for (post, words, tokens) in rows {
            let i = post - 10_000;
            let mut got: Vec<&str> = tokens.split(' ').collect();
            let want_text = hot.tokens(kind(i), "any", &words).text;
            let mut want: Vec<&str> = want_text.split(' ').collect();
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "{words}");
        }
    }

    #[test]
    fn notes_of_words_no_other_note_holds_promote_nothing() {
        let conn = list();
        let mut hot = HotSet::default();
        for i in 1..=640 {
            // Ten words of eight letters, each post's own: the digits of a
            // number as letters, the last digit first, so that a prefix of
            // k letters is shared by about 6,400 / 10^k words.
            let note: String = (0..10)
                .map(|k| {
                    format!("{:08}", i * 10 + k)
                        .chars()
                        .rev()
                        .map(|c| char::from(b'a' + c.to_digit(10).unwrap() as u8))
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join(" ");
            create(&conn, Some(&mut hot), true, i, Kind::Need, &note);
        }
        // Only prefixes many posts share: letters and pairs (640 and 64
        // words each), some of three letters (6.4); none of four (0.64).
        let deepest: i64 = conn
            .query_row(
                "SELECT coalesce(max(length(p)), 0) FROM hot_prefixes",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!((3..=4).contains(&deepest), "{deepest}");
    }
}
