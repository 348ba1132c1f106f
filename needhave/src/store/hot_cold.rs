//! The index of words in two parts, so that a word no other note holds
//! costs one term in a large leaf and nothing more
//! (docs/design/search-index.md, "Two parts: hot and cold"):
//!
//! - `post_cold`: every moved post's terms, each begun with its kind's
//!   mark, exactly; FTS5's own leaves and no prefix list. A query word
//!   that is not hot merges its terms here: few posts hold them.
//! - `post_words`: the hot part. Each post's kind's term and every hot
//!   prefix of its terms (`rules::hot`), each a term of its own. A hot
//!   query word reads exactly its list here, seeking to the cursor.
//! - `hot_prefixes`: the hot set, numbered in the order of promotion (the
//!   number a writer's copy is at).
//!
//! A create's batch hands its post's tokens and candidates over with its
//! words (`words_new`), when its writer keeps a copy of the hot set; the
//! insert that makes 64 runs the move ([`trigger`]), which completes the
//! waiting posts' tokens, writes both parts, promotes candidates that
//! enough moved posts hold, and writes a promoted prefix as a term of
//! every post that holds it in the same insert. A writer's batch ends by
//! reading the promotions its copy lacks ([`CATCH_UP`]).
//!
//! Both parts hold each post under its row number reversed
//! ([`WORDS_BASE`](crate::store::WORDS_BASE) − rowid), so that FTS5's own
//! order, rising row numbers, is the list's newest first: a page is a
//! forward walk from the cursor, where a walk against FTS5's order decodes
//! the whole leaf it starts on first (docs/design/search-index.md, "Newest
//! first: row numbers reversed"). Newest first is also the order FTS5 gathers a transaction's
//! rows in without flushing them, so a move writes its rows so.
//!
//! The statements run the same on D1 and SQLite, inside the trigger only:
//! its `WHEN` is the one place that writes out
//! [`PENDING_MAX`](crate::store::PENDING_MAX), as 64 (a test checks).

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

/// A JSON array of `$n` + 1 zeros, made from a zero blob's hex: what
/// `json_each` walks where SQL would count from 0 to `$n`.
macro_rules! zeros {
    ($n:expr) => {
        concat!(
            "'[' || replace(hex(zeroblob(",
            $n,
            ")), '00', '0,') || '0]'"
        )
    };
}

/// The characters of a marked term `v`'s deepest hot prefix, given `s`,
/// the greatest hot prefix not after it: their longest common prefix,
/// since the set is closed under prefixes; 0 below two characters (the
/// mark alone, or the other kind's mark). Up to eight characters written
/// out; a longer common prefix (`s` and `v` share nine, and `s` is not
/// `v`'s) counted a character at a time, which only a term that shares
/// nine characters with a deeper hot prefix pays.
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
            ", 1, 9) = substr(",
            $v,
            ", 1, 9) THEN (SELECT max(k.key) + 9 FROM json_each(",
            zeros!(concat!("min(length(", $s, "), length(", $v, ")) - 9")),
            ") k WHERE substr(",
            $s,
            ", 1, k.key + 9) = substr(",
            $v,
            ", 1, k.key + 9)) ",
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
/// it (one seek). Its `LIMIT` keeps SQLite from flattening it into the
/// query that reads it, which would seek again at each of the many
/// mentions of `s` in [`depth!`].
macro_rules! deepest {
    ($words:literal) => {
        concat!(
            "(SELECT w.v AS v, (SELECT h.p FROM hot_prefixes h WHERE h.p <= w.v \
             ORDER BY h.p DESC LIMIT 1) AS s FROM (SELECT ",
            mark!($words),
            " || j.value AS v FROM json_each('[\"' || replace(",
            rest!($words),
            ", ' ', '\",\"') || '\"]') j WHERE j.value <> '') w LIMIT -1) x"
        )
    };
}

/// Each marked term `v` of `$words` with `d`, the characters of its
/// deepest hot prefix ([`depth!`] once a term).
macro_rules! depths {
    ($words:literal) => {
        concat!(
            "(SELECT x.v AS v, ",
            depth!("x.s", "x.v"),
            " AS d FROM ",
            deepest!($words),
            " LIMIT -1) y"
        )
    };
}

/// ` ` and the first `$n` characters of `y.v` when its deepest hot prefix
/// is that long or longer.
macro_rules! token {
    ($n:literal) => {
        concat!(
            "CASE WHEN y.d >= ",
            $n,
            " THEN ' ' || substr(y.v, 1, ",
            $n,
            ") ELSE '' END"
        )
    };
}

/// ` ` and each prefix of `y.v` of ten characters or more, up to its
/// deepest hot prefix: a row of `json_each` a character, for the terms
/// whose hot prefixes go that deep.
macro_rules! deep_tokens {
    () => {
        concat!(
            "CASE WHEN y.d >= 10 THEN (SELECT group_concat(' ' || substr(y.v, 1, k.key + 10), '') \
             FROM json_each(",
            zeros!("y.d - 10"),
            ") k) ELSE '' END"
        )
    };
}

/// The hot part's terms of a post whose waiting words are `$words`, as
/// `rules::hot::HotSet::tokens` writes them from a current copy: its
/// kind's term and every hot prefix of its terms, found with one seek a
/// term (a prefix that two terms share is written twice: FTS5 holds a
/// term once a post).
macro_rules! hot_tokens {
    ($words:literal) => {
        concat!(
            mark!($words),
            " || substr(",
            $words,
            ", 1, instr(",
            $words,
            " || ' ', ' ') - 1) || coalesce((SELECT group_concat(",
            token!("2"),
            " || ",
            token!("3"),
            " || ",
            token!("4"),
            " || ",
            token!("5"),
            " || ",
            token!("6"),
            " || ",
            token!("7"),
            " || ",
            token!("8"),
            " || ",
            token!("9"),
            " || ",
            deep_tokens!(),
            ", '') FROM ",
            depths!($words),
            "), '')"
        )
    };
}

/// Each waiting post's runs (`rules::words::RUN`) written out as their
/// pairs, as `rules::words::terms` does: the statements after it read
/// terms. The pairs of a run of `n` characters come from a JSON array of
/// `n - 1` zeros (`zeros!`).
pub const EXPAND: &str = concat!(
    "UPDATE words_new SET words = (SELECT group_concat(CASE \
     WHEN substr(j.value, 1, 1) = '~' THEN substr(j.value, k.key + 2, 2) ELSE j.value END, ' ') \
     FROM json_each('[\"' || replace(words, ' ', '\",\"') || '\"]') j, json_each(",
    zeros!("CASE WHEN substr(j.value, 1, 1) = '~' THEN length(j.value) - 3 ELSE 0 END"),
    ") k) WHERE instr(words, '~') > 0"
);

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
    "), ' ' || h.p) > 0), ''), version = (SELECT max(rowid) FROM hot_prefixes) \
     WHERE tokens IS NOT NULL AND version < (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) \
     AND version >= (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) - 64"
);

/// Tokens and candidates found by the move for the posts whose writer's
/// copy of the hot set was far behind (or who had none, as on the
/// Worker): one seek a term.
pub const BEHIND: &str = concat!(
    "UPDATE words_new SET tokens = ",
    hot_tokens!("words_new.words"),
    ", candidates = (SELECT json_group_array(substr(y.v, 1, 101)) FROM ",
    depths!("words_new.words"),
    " WHERE max(y.d, 1) < min(length(y.v), 101) AND abs(random()) % 16 = 0), \
     version = (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) \
     WHERE tokens IS NULL OR version < (SELECT coalesce(max(rowid), 0) FROM hot_prefixes) - 64"
);

/// Every moved post's terms, marked, into the cold part, its kind's term
/// first and unmarked (`rules::words::marked`; what `needhave d1-words`
/// asks of a post to know it is there), or what its writer said the cold
/// part needs of them (`rules::hot::Tokens::cold`: the terms the hot part
/// does not hold whole).
pub const COLD: &str = concat!(
    "INSERT INTO post_cold (rowid, words) SELECT 268435456 - post, coalesce(cold, \
     replace(words, ' ', ' ' || ",
    mark!("words"),
    ")) FROM words_new ORDER BY post DESC"
);

/// That at least 8 moved posts (`rules::hot::PROMOTED_AT`) hold a term
/// that begins with `$p`: a prefix query of the cold part, counted to 8 at
/// most (a prefix offered late can have a long list there).
macro_rules! held_by_eight {
    ($p:literal) => {
        concat!(
            "(SELECT count(*) FROM (SELECT 1 FROM post_cold WHERE post_cold MATCH '\"' || ",
            $p,
            " || '\"*' LIMIT 8)) >= 8"
        )
    };
}

/// The promotions of a move, from the words its posts offer (at most 64
/// of them): for each, its first prefix that is not hot, when 8 moved
/// posts hold it, and every longer prefix of it too when 8 hold the whole
/// word (then each of them does). Each prefix's parent is hot or promoted
/// with it, whatever a writer offers (the depth is read from the hot set
/// here), and at most 64 a move, the shortest first, so the set stays
/// closed under prefixes.
pub const PROMOTE: &str = concat!(
    "INSERT OR IGNORE INTO hot_fresh (p) SELECT p FROM (SELECT substr(c.v, 1, c.d + 1 + k.key) AS p \
     FROM (SELECT y.v AS v, max(y.d, 1) AS d, ",
    held_by_eight!("y.v"),
    " AS whole FROM (SELECT x.v AS v, ",
    depth!("x.s", "x.v"),
    " AS d FROM (SELECT o.v AS v, (SELECT h.p FROM hot_prefixes h WHERE h.p <= o.v \
     ORDER BY h.p DESC LIMIT 1) AS s FROM (SELECT DISTINCT j.value AS v \
     FROM words_new n, json_each(n.candidates) j WHERE length(j.value) BETWEEN 2 AND 101 LIMIT 64) o \
     LIMIT -1) x LIMIT -1) y WHERE max(y.d, 1) < length(y.v) AND ",
    held_by_eight!("substr(y.v, 1, max(y.d, 1) + 1)"),
    " LIMIT -1) c, json_each(",
    zeros!("CASE WHEN c.whole THEN length(c.v) - c.d - 1 ELSE 0 END"),
    ") k ORDER BY length(p), p LIMIT 64)"
);

/// The moved posts' tokens into the hot part, and each promoted prefix as
/// a term of every post that holds it (the cold part has its terms: none
/// of them was hot to its end): one insert, in rising row numbers, so
/// FTS5 writes it as one segment.
pub const HOT: &str = "INSERT INTO post_words (rowid, words) SELECT r, group_concat(t, ' ') FROM (\
     SELECT 268435456 - post AS r, tokens AS t FROM words_new \
     UNION ALL SELECT c.rowid, fresh.p FROM hot_fresh fresh, post_cold c \
     WHERE c.post_cold MATCH ('\"' || fresh.p || '\"*')) GROUP BY r ORDER BY r";

/// The promotions, numbered.
pub const PROMOTED: &str = "INSERT INTO hot_prefixes (p) SELECT p FROM hot_fresh ORDER BY p";

pub const FORGET: &str = "DELETE FROM hot_fresh";

/// What every create's batch ends with: the promotions after `?1`, the
/// version of its writer's copy, a page of them, in the prefixes' order
/// (`rules::hot::HotSet::extend` merges them in).
pub const CATCH_UP: &str = "SELECT n, p FROM (SELECT rowid AS n, p FROM hot_prefixes \
     WHERE rowid > ?1 ORDER BY rowid LIMIT 1000) ORDER BY p";

/// Empties `words_new` after a move (the last statement of it).
pub const CLEAR_WORDS: &str = "DELETE FROM words_new";

/// The statements of a move, in order, after the post's own words are in
/// `words_new`, the last emptying it.
pub const MOVE: [&str; 9] = [
    EXPAND,
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
/// that fill counts hot must reach every post moved before it.
/// `schema.sql` and `migrations/0015` hold this text (a test checks).
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
