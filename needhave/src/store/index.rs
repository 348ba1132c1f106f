//! The index of words as a create writes it and as the sweep takes ended
//! posts out of it: the one door between the rest of the list and the
//! index's write side.
//!
//! A create hands its post to [`Index::statements`] and puts the
//! statements it gets back in its batch, after the insert (one
//! transaction, one round trip); once the batch has run, it hands the
//! rows of the batch's last statement back to [`Index::committed`]. What
//! happens between is the index's: the post's words as they wait
//! (`rules::words::waiting_text`), its hot terms from this process's copy
//! of the hot set (`rules::hot`, kept in the store's [`Memo`]), how long a
//! waiting row may be, the small leaves, and the catch-up of the copy with
//! the promotions the batch reads back. A handler changes none of it, and
//! reads none of it to change.
//!
//! A post that ends (closed, removed, expired) leaves every answer at once
//! by the `live` table; [`sweep`] then takes it out of the index, so that a
//! page of a common word does not walk the ended posts' entries. The index
//! is contentless, so a post leaves it by FTS5's `'delete'` with the terms
//! it was written under, which depend on the hot set when it moved and on
//! the promotions since. [`superset`] gives every term the index can hold
//! for a post, from its note as [`Index::statements`] takes its words (so
//! that the two change together); the sweep's SQL keeps of it what the
//! index holds now: nothing of a post that is not in a part, and of one
//! that is, the prefixes the hot set holds (the hot part) and the terms the
//! part holds (the cold part). Exactly, not a superset: FTS5 takes a
//! delete's terms off its totals, held or not, and refuses a table whose
//! totals would go below zero as malformed.

use super::{hot_cold, prepare, Memo, Row, RowExt, Statement, Store, StoreExt, Value};
use super::{StoreResult, NEW_WORDS, SMALL_LEAVES, WAITING_ROW_BYTES};
use crate::rules::hot::{Tokens, DEEPEST};
use crate::rules::words::{kind_mark, kind_term, terms, waiting_text};
use crate::rules::Kind;

/// The index of one store, as its creates write it.
#[derive(Clone, Copy)]
pub struct Index<'a> {
    /// The store's memo, which keeps the copy of the hot set; `None` for a
    /// store without one (the copy is then never there).
    memo: Option<&'a Memo>,
}

impl<'a> Index<'a> {
    /// The index of `store`.
    pub fn of(store: &'a dyn Store) -> Self {
        Index { memo: store.memo() }
    }

    /// An index without a copy of the hot set, as the Worker writes it:
    /// the statements of a post whose hot terms the move finds (for tools
    /// and tests that write rows as a create does).
    pub const fn without_copy() -> Self {
        Index { memo: None }
    }

    /// The statements that put post `id` (of `kind`, its note `note`) into
    /// the index, for the end of its create's batch. Only a row the insert
    /// made gets words: they are searchable the moment the 201 is sent,
    /// and moved into the index with 63 others.
    pub fn statements(&self, kind: Kind, id: &str, note: &str) -> Vec<Statement> {
        let words = waiting_text(kind, note);
        // Its hot prefixes from this process's copy of the hot set, which
        // the batch's last statement brings up to date (`committed`).
        let tokens = self
            .memo
            .and_then(|m| Some(m.hot()?.tokens(kind, id, &words)));
        index_words(id, words, tokens)
    }

    /// The rows the last statement of a batch that ended with
    /// [`statements`](Self::statements) answered: the promotions the copy
    /// had not seen, which it takes.
    pub fn committed(&self, rows: &[Row]) {
        if let Some(mut hot) = self.memo.and_then(|m| m.hot()) {
            hot.extend(
                rows.iter()
                    .filter_map(|r| Some((r.int("n")?, r.str("p")?.to_string()))),
            );
        }
    }
}

/// The statements that end a create's batch for post `id`, its `words`
/// (`rules::words::waiting_text`) waiting for the index, with its
/// `tokens` from the writer's copy of the hot set (none, or too long for
/// the row, [`WAITING_ROW_BYTES`]: the move finds them): [`NEW_WORDS`]
/// (whose insert runs the move when it makes 64,
/// [`hot_cold::trigger`]), [`SMALL_LEAVES`], and last
/// [`hot_cold::CATCH_UP`] from the copy's version, whose rows the copy
/// takes (`HotSet::extend`, [`Index::committed`]), when there is a copy.
#[inline(always)]
fn index_words(id: &str, words: String, tokens: Option<Tokens>) -> Vec<Statement> {
    let words_bytes = words.len();
    let new = prepare(NEW_WORDS).bind(id).bind(words);
    let Some(t) = tokens else {
        return vec![
            new.bind(Value::Null)
                .bind(Value::Null)
                .bind(Value::Null)
                .bind(Value::Null),
            prepare(SMALL_LEAVES),
        ];
    };
    let cold_bytes = t.cold.as_ref().map_or(0, String::len);
    let row_bytes = words_bytes + t.text.len() + cold_bytes;
    let cold = t.cold.map_or(Value::Null, Value::Text);
    // Too long to share a page: no hot terms, and only what the cold part
    // needs is handed.
    let new = if row_bytes > WAITING_ROW_BYTES {
        new.bind(Value::Null).bind(Value::Null).bind(Value::Null)
    } else {
        let candidates = serde_json::to_string(&t.candidates).unwrap_or_default();
        new.bind(t.text).bind(candidates).bind(t.version)
    };
    vec![
        new.bind(cold),
        prepare(SMALL_LEAVES),
        prepare(hot_cold::CATCH_UP).bind(t.version),
    ]
}

/// Every term the index can hold for a post, in each part: what the
/// sweep deletes it with, once its SQL has kept only what the index holds
/// ([`SWEEP_HOT`], [`SWEEP_COLD`]), each term once (a prefix two terms
/// share, or a pair two runs share, comes twice here).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Superset {
    /// The hot part's: its kind's term with the mark, then every prefix of
    /// two to [`DEEPEST`] characters (the mark counted) of each of its
    /// marked terms. What a writer's copy hands over, what the move finds
    /// (`hot_cold::NEAR`, `BEHIND`) and what a promotion adds
    /// (`hot_cold::HOT`) are all hot prefixes of its terms, at most that
    /// deep.
    pub hot: String,
    /// The cold part's: its kind's term (unmarked), then its terms, marked
    /// (`words::marked`), what the move writes when the writer hands no
    /// `cold`; a writer's `cold` is some of them
    /// (`rules::hot::Tokens::cold`).
    pub cold: String,
}

/// The terms the index can hold for a post of `kind` whose note is `note`
/// ([`Superset`]), in one pass over its terms (`words::terms`): the cold
/// part's is `words::marked(kind, &words::expanded(…))` written as it goes
/// (a test holds the two equal). Without a sort, a set or a second pass:
/// the Worker sweeps too, and what it links, every cold start loads.
pub fn superset(kind: Kind, note: &str) -> Superset {
    let waiting = waiting_text(kind, note);
    let mark = kind_mark(kind);
    let mut hot = String::new();
    hot.push(mark);
    hot.push_str(kind_term(kind));
    let mut cold = String::from(kind_term(kind));
    for term in terms(&waiting) {
        cold.push(' ');
        cold.push(mark);
        cold.push_str(term);
        // The mark and the term's first 1, 2 … characters: where its
        // second, third … character begins, then the whole term.
        let ends = term
            .char_indices()
            .map(|(at, _)| at)
            .skip(1)
            .chain(std::iter::once(term.len()))
            .take(DEEPEST - 1);
        for end in ends {
            hot.push(' ');
            hot.push(mark);
            hot.push_str(&term[..end]);
        }
    }
    Superset { hot, cold }
}

/// Posts one round of the sweep takes at most, of each of its two kinds
/// (ends by a row, ends by time), natively. A round is one write batch in
/// the writer, so creates queued behind it wait for it whole (a round of
/// 256 holds the writer most of a second on a loaded two-core machine,
/// `needhave-bench ended`): a round is the size of a move of the waiting
/// words, and the writes queued meanwhile go between rounds.
pub const SWEEP_ROUND: usize = 64;

/// The bytes of terms one round of the sweep hands the store at most (a
/// round ends early past them, at least one post taken): a post's terms
/// are a few kilobytes at worst (a note of long words, every prefix of
/// each), and D1 takes a bound text of at most 2 MB.
pub const SWEEP_BYTES: usize = 256 * 1024;

/// What the sweep has still to take out of the index, `?2` at most of
/// each kind: the ends of posts by a row (closes, removals) past the
/// sweep's mark, in order, each with its post's row number, kind and note
/// when the post was in the index then (`indexed`); then the open posts
/// whose expiry has passed by `?1`, with theirs. A few seeks of indexes
/// when there is nothing to do.
pub const SWEEP_FIND: &str = "SELECT * FROM (SELECT e.n AS n, p.rowid AS post, p.kind AS kind, \
     p.note AS note FROM (SELECT n, post, indexed FROM post_ends \
     WHERE n > coalesce((SELECT ends FROM sweep_mark WHERE one = 1), 0) ORDER BY n LIMIT ?2) e \
     LEFT JOIN posts p ON e.indexed = 1 AND p.rowid = e.post \
     UNION ALL SELECT NULL, p.rowid, p.kind, p.note \
     FROM (SELECT post FROM live WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2) l \
     JOIN posts p ON p.rowid = l.post) ORDER BY n IS NULL, n";

/// Takes posts out of the hot part. `?1` is a JSON array of `[row number,
/// kind's term, [prefixes…]]` ([`Superset::hot`]), taken newest first, so
/// that their reversed numbers rise and FTS5 writes the round's deletes as
/// one segment. A post the part does not hold (its words still wait, or a
/// sweep took it already) is left alone; of one it holds, its kind's term
/// and the prefixes the hot set holds are deleted, each once: the move
/// wrote each prefix that was hot then, a promotion each one since, and
/// the hot set only grows. (`group_concat` joins with commas, which the
/// index's tokenizer reads as spaces.)
///
/// Whether the part holds a post is asked of the cold part, by its kind's
/// term there (the kind's term unmarked, which the move writes into the
/// cold part for every post it writes into the hot one, and [`SWEEP_COLD`]
/// takes out after this statement, in the same batch). FTS5 seeks a row
/// number in a list by walking the list's doclist index from its start,
/// and the hot part's small leaves make that index long: a kind's term is
/// in half the posts, so each seek there grows with the list, where the
/// cold part's leaves of 4 KB keep its walk to a page or two.
pub const SWEEP_HOT: &str = "INSERT INTO post_words (post_words, rowid, words) \
     SELECT 'delete', e.r, e.k || coalesce((SELECT ',' || group_concat(DISTINCT t.value) \
     FROM json_each(e.s) t WHERE t.value IN (SELECT p FROM hot_prefixes)), '') \
     FROM (SELECT 268435456 - json_extract(j.value, '$[0]') AS r, json_extract(j.value, '$[1]') AS k, \
     json_extract(j.value, '$[2]') AS s FROM json_each(?1) j) e \
     WHERE EXISTS (SELECT 1 FROM post_cold c WHERE c.post_cold MATCH '\"' || substr(e.k, 2) || '\"' \
     AND c.rowid = e.r) ORDER BY e.r";

/// Takes posts out of the cold part, as [`SWEEP_HOT`] does the hot: `?1`
/// holds `[row number, kind's term, [terms…]]` ([`Superset::cold`]), and
/// of a post the part holds, its kind's term, each term the hot set does
/// not hold whole (the move wrote all of those), and each term it holds
/// whole that the part holds for the post (a writer whose copy knew the
/// term hot to its end left it out; one whose copy did not, or a move with
/// no `cold` from its writer, wrote it): a seek of that term's list, for
/// the common words of a note only.
pub const SWEEP_COLD: &str = "INSERT INTO post_cold (post_cold, rowid, words) \
     SELECT 'delete', e.r, e.k || coalesce((SELECT ',' || group_concat(DISTINCT t.value) \
     FROM json_each(e.s) t WHERE t.value NOT IN (SELECT p FROM hot_prefixes) \
     OR EXISTS (SELECT 1 FROM post_cold h WHERE h.post_cold MATCH '\"' || t.value || '\"' \
     AND h.rowid = e.r)), '') \
     FROM (SELECT 268435456 - json_extract(j.value, '$[0]') AS r, json_extract(j.value, '$[1]') AS k, \
     json_extract(j.value, '$[2]') AS s FROM json_each(?1) j) e \
     WHERE EXISTS (SELECT 1 FROM post_cold c WHERE c.post_cold MATCH '\"' || e.k || '\"' \
     AND c.rowid = e.r) ORDER BY e.r";

/// The words of the posts of `?1` (a JSON array of row numbers) that
/// still wait for the move: they never reach the index.
pub const SWEEP_WAITING: &str =
    "DELETE FROM words_new WHERE post IN (SELECT value FROM json_each(?1))";

/// The expired posts of `?1` (a JSON array of row numbers) out of `live`,
/// each only if its expiry has passed by `?2`.
pub const SWEEP_LIVE: &str =
    "DELETE FROM live WHERE post IN (SELECT value FROM json_each(?1)) AND expires_at <= ?2";

/// The sweep's mark moved to `?1`, the last end it took (never back: two
/// sweeps may run at once).
pub const SWEEP_MARK: &str = "INSERT INTO sweep_mark (one, ends) VALUES (1, ?1) \
     ON CONFLICT (one) DO UPDATE SET ends = max(ends, excluded.ends)";

/// The statement that finds a round of the sweep's work ([`SWEEP_FIND`]),
/// at `now_ms`, `max` of each kind.
pub fn to_sweep(now_ms: i64, max: usize) -> Statement {
    prepare(SWEEP_FIND)
        .bind(now_ms)
        .bind(i64::try_from(max).unwrap_or(i64::MAX))
}

/// `[row number, first term, [the other terms…]]` for each post of
/// `posts`, as [`SWEEP_HOT`] and [`SWEEP_COLD`] take them, from the part
/// `part` picks of its [`Superset`] (a text of terms separated by spaces);
/// JSON written here, a term being a JSON string like any other. One
/// function for both parts, by a function pointer rather than a closure,
/// so that the Worker links one copy of it.
fn sweep_json(posts: &[(i64, Superset)], part: fn(&Superset) -> &str) -> String {
    let mut out = Vec::from(&b"["[..]);
    for (i, (post, superset)) in posts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'[');
        out.extend_from_slice(post.to_string().as_bytes());
        let mut terms = part(superset).split(' ');
        out.push(b',');
        // Writing to a Vec cannot fail, and a str always serializes.
        let _ = serde_json::to_writer(&mut out, terms.next().unwrap_or_default());
        out.extend_from_slice(b",[");
        for (j, term) in terms.enumerate() {
            if j > 0 {
                out.push(b',');
            }
            let _ = serde_json::to_writer(&mut out, term);
        }
        out.extend_from_slice(b"]]");
    }
    out.push(b']');
    String::from_utf8(out).unwrap_or_default()
}

/// A JSON array of row numbers.
fn json_list(posts: &[i64]) -> String {
    let mut out = String::from("[");
    for (i, post) in posts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&post.to_string());
    }
    out.push(']');
    out
}

/// The write batch of one round of the sweep, from the rows
/// [`to_sweep`] read (in their order: the ends by a row, then the expired
/// posts), and how many ends it takes (none: nothing to do, and no
/// statement): each post that was open out of both parts of the index
/// ([`SWEEP_HOT`], [`SWEEP_COLD`]) and out of `words_new`, each expired
/// post out of `live`, and the mark to the last end taken. A round stops
/// early past [`SWEEP_BYTES`] of terms; what it leaves, the next reads
/// again.
///
/// What runs between the read and this write changes nothing: a move
/// that took a post's words out of `words_new` meanwhile put them in the
/// index, where the write finds them; a post taken twice (two sweeps at
/// once) is found in neither part the second time.
pub fn sweep_statements(rows: &[Row], now_ms: i64) -> (Vec<Statement>, usize) {
    let (mut taken, mut bytes, mut mark) = (0, 0, None);
    let (mut open, mut posts, mut gone): (Vec<(i64, Superset)>, Vec<i64>, Vec<i64>) =
        (Vec::new(), Vec::new(), Vec::new());
    for row in rows {
        let post = row.int("post");
        let terms = match (post, row.str("kind").and_then(Kind::parse), row.str("note")) {
            (Some(_), Some(kind), Some(note)) => Some(superset(kind, note)),
            _ => None,
        };
        let size = terms.as_ref().map_or(0, |t| t.hot.len() + t.cold.len());
        if taken > 0 && bytes + size > SWEEP_BYTES {
            break;
        }
        bytes += size;
        taken += 1;
        match row.int("n") {
            Some(n) => mark = Some(n),
            None => gone.extend(post),
        }
        if let (Some(post), Some(terms)) = (post, terms) {
            open.push((post, terms));
            posts.push(post);
        }
    }
    let mut statements = Vec::new();
    if !open.is_empty() {
        let hot = sweep_json(&open, |t| &t.hot);
        let cold = sweep_json(&open, |t| &t.cold);
        statements.push(prepare(SWEEP_HOT).bind(hot));
        statements.push(prepare(SWEEP_COLD).bind(cold));
        statements.push(prepare(SWEEP_WAITING).bind(json_list(&posts)));
    }
    if !gone.is_empty() {
        statements.push(prepare(SWEEP_LIVE).bind(json_list(&gone)).bind(now_ms));
    }
    if let Some(n) = mark {
        statements.push(prepare(SWEEP_MARK).bind(n));
    }
    (statements, taken)
}

/// One round of the sweep, at `now_ms`: reads up to `max` ends by a row
/// and `max` expired posts ([`to_sweep`]), takes them out of the index in
/// one write batch ([`sweep_statements`]), and returns how many ends it
/// took; 0 when nothing was left. Two round trips; it deletes no row of
/// `posts` or `messages`, only what the index and `live` hold of them.
pub async fn sweep(store: &dyn Store, now_ms: i64, max: usize) -> StoreResult<usize> {
    let rows = store.all(to_sweep(now_ms, max)).await?;
    let (statements, taken) = sweep_statements(&rows, now_ms);
    if !statements.is_empty() {
        store.batch(statements).await?;
    }
    Ok(taken)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use serde_json::json;

    use super::*;

    fn promotion(n: i64, prefix: &str) -> Row {
        match json!({"n": n, "p": prefix}) {
            serde_json::Value::Object(row) => row,
            _ => unreachable!(),
        }
    }

    /// The copy moves only through the door: a post's statements end with
    /// the catch-up from the copy's version, the rows handed back to
    /// `committed` bring it up, and the next post's statements carry the
    /// new version and the hot terms it now knows. Without a copy there is
    /// no catch-up and no hot term.
    #[test]
    fn the_copy_catches_up_through_the_door() {
        let memo = Memo::new();
        let index = Index { memo: Some(&memo) };
        let first = index.statements(Kind::Need, "p1", "a gpu");
        let catch_up = first.last().unwrap();
        assert_eq!(
            (catch_up.sql, &catch_up.params[..]),
            (hot_cold::CATCH_UP, &[Value::Int(0)][..])
        );
        index.committed(&[promotion(1, "ⁿg"), promotion(2, "ⁿgp")]);
        let second = index.statements(Kind::Need, "p2", "a gpu");
        let catch_up = second.last().unwrap();
        assert_eq!(catch_up.params, [Value::Int(2)]);
        let words = &second[0];
        assert_eq!(words.sql, NEW_WORDS);
        assert_eq!(words.params[2], Value::Text("ⁿ·need ⁿg ⁿgp".into()));
        assert_eq!(words.params[4], Value::Int(2));

        let cold = Index::without_copy().statements(Kind::Need, "p3", "a gpu");
        assert_eq!(
            cold.iter().map(|s| s.sql).collect::<Vec<_>>(),
            [NEW_WORDS, SMALL_LEAVES]
        );
        assert_eq!(cold[0].params[2], Value::Null);
    }
}
