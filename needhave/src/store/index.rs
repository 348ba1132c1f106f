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
