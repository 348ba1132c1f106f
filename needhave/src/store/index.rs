//! The index of words as a create writes it: the one door between a
//! handler and the index's write side.
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

use super::{hot_cold, prepare, Memo, Row, RowExt, Statement, Store, Value};
use super::{NEW_WORDS, SMALL_LEAVES, WAITING_ROW_BYTES};
use crate::rules::hot::Tokens;
use crate::rules::words::waiting_text;
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
