//! Schema migrations of a native database file, run once by
//! [`SqliteStore::open`](super::sqlite::SqliteStore::open), and the key
//! back-fill that D1 needs done outside SQL.
//!
//! `schema.sql` is the fresh schema and stays idempotent; a file made by an
//! earlier release is brought up to it here, in one transaction, so a failed
//! upgrade leaves the file as it was. The file's `PRAGMA user_version` says
//! how far it is: 0 is the first release (which never set it), [`VERSION`]
//! the schema this build writes. Each step is the same SQL file D1 applies
//! with `wrangler d1 migrations apply` (`migrations/`), so the two cannot
//! drift; what SQL cannot do (NFKC, for the duplicate key) is done in Rust.
//!
//! Old rows keep everything they show. Rows written before the key's digest
//! get it computed here (and lose the full key some of them kept, which
//! can be 18 times their note); when two old notes share a key (an older
//! rule only refused exact copies), the oldest row gets it and the later
//! ones keep NULL, which the unique index allows: deleting a row would
//! break insert-only, and failing the upgrade would lock the operator out
//! of their own list. The key stays held, so no new copy of either gets in.

use rusqlite::{params, Connection, OptionalExtension};

use crate::rules::note_key;
use crate::rules::words::{index_text, ANY_INDEXED};
use crate::rules::Kind;

/// The schema version this build writes: the number of files in
/// `migrations/` (a first-release file says 0, though it holds 0001).
/// Steps without Rust work (an index: 0003) are schema.sql's, applied on
/// every open; 0006's index of words is schema.sql's too, and its words for
/// old posts are computed here ([`fill_words`]); 0007 makes that index
/// again, its words under reversed row numbers, and [`fill_words`] fills it;
/// 0008 adds the table where a new post's words wait for the index; 0009
/// sets the index's leaf size ([`LEAVES`]), fresh files included; 0010
/// makes the index again with each term begun with its kind's mark
/// ([`WORDS_BY_KIND`]), and [`fill_words`] fills it; 0011 gives a list of
/// fewer than [`WORDS_GROWN`](crate::store::WORDS_GROWN) posts FTS5's own
/// leaves again ([`YOUNG_LEAVES`]); 0012 makes the index two parts
/// ([`HOT_COLD`]): the cold part is filled here with every moved post's
/// words ([`fill_cold`]).
pub const VERSION: i64 = 12;

/// The fresh schema, shared with D1: what every open applies last.
pub const SCHEMA: &str = include_str!("../../../schema.sql");

/// migrations/0002: the `note_key` column and its unique index.
const NOTE_KEY: &str = include_str!("../../../migrations/0002_note_key.sql");
/// The site hashes, and the key's digest with its unique index.
const SITES: &str = include_str!("../../../migrations/0005_sites_and_key_digest.sql");
/// migrations/0007: the index of words made again, for reversed row numbers.
const WORDS_REVERSED: &str = include_str!("../../../migrations/0007_words_newest_first.sql");

/// migrations/0009: the index of words written in leaves of
/// [`WORDS_LEAF`](crate::store::WORDS_LEAF) bytes. A setting, not schema:
/// applied once, by the upgrade (a fresh file's too), so that an open of a
/// current file writes nothing.
pub const LEAVES: &str = include_str!("../../../migrations/0009_words_leaves.sql");

/// migrations/0011: a list of fewer than
/// [`WORDS_GROWN`](crate::store::WORDS_GROWN) posts writes leaves of
/// [`WORDS_LEAF_YOUNG`](crate::store::WORDS_LEAF_YOUNG) bytes; a setting,
/// applied once as [`LEAVES`] is.
pub const YOUNG_LEAVES: &str = include_str!("../../../migrations/0011_young_leaves.sql");

/// migrations/0010: the index of words made again, its terms begun with
/// their post's kind's mark (`rules::words::index_text`).
const WORDS_BY_KIND: &str = include_str!("../../../migrations/0010_words_by_kind.sql");

/// migrations/0012: the index of words in two parts (`store::hot_cold`).
const HOT_COLD: &str = include_str!("../../../migrations/0012_hot_cold.sql");

/// What an upgrade did, for the log.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Upgrade {
    pub from: i64,
    /// Old posts that got their key's digest.
    pub keyed: usize,
    /// Old posts whose key an older post already holds: left NULL.
    pub shared: usize,
    /// Old posts whose words were indexed.
    pub indexed: usize,
}

/// Brings the database to [`VERSION`] and applies the schema. Returns what
/// it upgraded, or `None` when the file was current. (A file of a later
/// release never gets here: the open refuses it first, `sqlite/admit.rs`.)
pub fn apply(conn: &Connection) -> rusqlite::Result<Option<Upgrade>> {
    let from: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if from >= VERSION {
        conn.execute_batch(SCHEMA)?;
        return Ok(None);
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    match upgrade(conn, from) {
        Ok(done) => {
            conn.execute_batch("COMMIT")?;
            if done.keyed + done.shared + done.indexed > 0 {
                tracing::info!(
                    from = done.from,
                    to = VERSION,
                    keyed = done.keyed,
                    left_without_key = done.shared,
                    indexed = done.indexed,
                    "database upgraded"
                );
            }
            Ok(Some(done))
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn upgrade(conn: &Connection, from: i64) -> rusqlite::Result<Upgrade> {
    let mut done = Upgrade {
        from,
        ..Upgrade::default()
    };
    // A fresh file has no posts table: schema.sql makes it whole.
    if has_table(conn, "posts")? && !has_column(conn, "posts", "note_key")? {
        conn.execute_batch(NOTE_KEY)?;
    }
    if has_table(conn, "posts")? && !has_column(conn, "posts", "note_key_hash")? {
        conn.execute_batch(SITES)?;
    }
    // An index of words of a file before 7 holds row numbers as they are:
    // dropped and made again, then filled below with every post's words.
    if from < 7 && has_table(conn, "post_words")? {
        conn.execute_batch(WORDS_REVERSED)?;
    }
    // An index of a file before 10 holds its terms without the kind's
    // mark: made again too, and filled below.
    if from < 10 && has_table(conn, "post_words")? {
        conn.execute_batch(WORDS_BY_KIND)?;
    }
    // Before the schema, which would give a file without it a bound of 0.
    if from < 12 && has_table(conn, "words_new")? && !has_column(conn, "words_new", "tokens")? {
        conn.execute_batch(HOT_COLD)?;
    }
    conn.execute_batch(SCHEMA)?;
    if from < 9 {
        conn.execute_batch(LEAVES)?;
    }
    // Before the index is filled, so that a young list's is written in
    // the leaves it keeps.
    if from < 11 {
        conn.execute_batch(YOUNG_LEAVES)?;
    }
    let (keyed, shared) = fill_keys(conn)?;
    done.keyed = keyed;
    done.shared = shared;
    done.indexed = fill_words(conn)?;
    if from < 12 {
        fill_cold(conn)?;
    }
    conn.pragma_update(None, "user_version", VERSION)?;
    Ok(done)
}

fn has_table(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [table],
        |_| Ok(()),
    )
    .optional()
    .map(|r| r.is_some())
}

fn has_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2",
        [table, column],
        |_| Ok(()),
    )
    .optional()
    .map(|r| r.is_some())
}

/// The digest the duplicate rule compares: SHA-256 hex of the note's
/// normalized key.
pub fn note_key_hash(note: &str) -> String {
    crate::secrets::sha256_hex(&note_key(note))
}

/// Gives every post without a digest its key's digest, oldest first (a
/// digest already held stays with its holder), then drops the full keys
/// old rows kept. Returns (keyed, left NULL).
fn fill_keys(conn: &Connection) -> rusqlite::Result<(usize, usize)> {
    let old: Vec<(i64, String)> = conn
        .prepare("SELECT rowid, note FROM posts WHERE note_key_hash IS NULL ORDER BY rowid")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut set = conn.prepare(
        "UPDATE posts SET note_key_hash = ?1 WHERE rowid = ?2 \
         AND NOT EXISTS (SELECT 1 FROM posts WHERE note_key_hash = ?1)",
    )?;
    let mut keyed = 0;
    for (rowid, note) in &old {
        keyed += set.execute(params![note_key_hash(note), rowid])?;
    }
    conn.execute(
        "UPDATE posts SET note_key = NULL WHERE note_key IS NOT NULL",
        [],
    )?;
    Ok((keyed, old.len() - keyed))
}

/// Indexes the words of every post that the index does not hold yet and
/// whose words do not wait in `words_new` (all of them, on the upgrade
/// that makes the index). Returns how many.
fn fill_words(conn: &Connection) -> rusqlite::Result<usize> {
    let indexed: std::collections::HashSet<i64> = conn
        .prepare("SELECT 268435456 - rowid FROM post_words WHERE post_words MATCH ?1")?
        .query_map([ANY_INDEXED], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    fill(conn, "post_words", |rowid| !indexed.contains(&rowid))
}

/// Writes the cold part of the index for every post moved before it had
/// one (every post not waiting in `words_new`), as
/// [`hot_cold::COLD`](crate::store::hot_cold::COLD) writes it.
fn fill_cold(conn: &Connection) -> rusqlite::Result<usize> {
    fill(conn, "post_cold", |_| true)
}

/// Writes `index_text` of each post not waiting in `words_new` that
/// `wanted` takes into `table`, under its row number reversed as the move
/// writes it, newest first: the reversed numbers then ascend, and FTS5
/// gathers the rows of a transaction into one segment only while they do.
/// Returns how many.
fn fill(conn: &Connection, table: &str, wanted: impl Fn(i64) -> bool) -> rusqlite::Result<usize> {
    let mut read = conn.prepare(
        "SELECT rowid, kind, note FROM posts WHERE rowid NOT IN (SELECT post FROM words_new) \
         ORDER BY rowid DESC",
    )?;
    let mut add = conn.prepare(&format!(
        "INSERT INTO {table} (rowid, words) VALUES (268435456 - ?1, ?2)"
    ))?;
    let mut done = 0;
    let mut rows = read.query([])?;
    while let Some(row) = rows.next()? {
        let rowid: i64 = row.get(0)?;
        let kind: String = row.get(1)?;
        let note: String = row.get(2)?;
        let Some(kind) = Kind::parse(&kind) else {
            continue;
        };
        if wanted(rowid) {
            add.execute(params![rowid, index_text(kind, &note)])?;
            done += 1;
        }
    }
    Ok(done)
}

/// For D1, where SQL cannot compute the words: reads what
/// `wrangler d1 execute DB --json --command` prints for [`D1_UNINDEXED`]
/// (the posts the index does not hold, newest first) and returns the
/// INSERTs that index them, each under its row number reversed as
/// [`MOVE_WORDS`](crate::store::MOVE_WORDS) writes it, for `wrangler d1
/// execute DB --file`. Each one guards itself (a post indexed since is left
/// alone), so the file may be run again, or while the Worker serves. Words
/// are written as hex blobs cast to text, as the keys are.
pub fn d1_word_inserts(wrangler_json: &str) -> Result<String, String> {
    let mut sql = String::from(
        "-- Generated by `needhave d1-words`: the words of posts older than migrations/0010 and 0012.\n",
    );
    for row in &wrangler_rows(wrangler_json)? {
        let id = post_id(row)?;
        let note = row["note"].as_str().ok_or("a row without a text note")?;
        let kind = row["kind"]
            .as_str()
            .and_then(Kind::parse)
            .ok_or("a row without a kind (need or have)")?;
        let words = hex::encode(index_text(kind, note).as_bytes());
        for table in ["post_words", "post_cold"] {
            sql.push_str(&format!(
                "INSERT INTO {table} (rowid, words) SELECT 268435456 - rowid, CAST(X'{words}' AS TEXT) \
                 FROM posts WHERE id = '{id}' AND rowid NOT IN (SELECT post FROM words_new) \
                 AND NOT EXISTS (SELECT 1 FROM {table} \
                 WHERE {table} MATCH '{ANY_INDEXED}' AND {table}.rowid = 268435456 - posts.rowid);\n"
            ));
        }
    }
    Ok(sql)
}

/// The query whose `--json` output [`d1_word_inserts`] reads: the posts
/// the index does not hold and whose words do not wait in `words_new`,
/// newest first (so that the reversed row numbers the INSERTs write
/// ascend).
pub const D1_UNINDEXED: &str = "SELECT id, kind, note FROM posts \
     WHERE rowid NOT IN (SELECT post FROM words_new) AND (268435456 - rowid NOT IN \
     (SELECT rowid FROM post_words WHERE post_words MATCH '\"\u{207f}\u{b7}need\" OR \"\u{2b0}\u{b7}have\"') \
     OR 268435456 - rowid NOT IN \
     (SELECT rowid FROM post_cold WHERE post_cold MATCH '\"\u{207f}\u{b7}need\" OR \"\u{2b0}\u{b7}have\"')) \
     ORDER BY rowid DESC";

/// The rows of wrangler's `--json` output: one result object per statement,
/// each with `results`; a bare array of rows is taken as well.
fn wrangler_rows(wrangler_json: &str) -> Result<Vec<serde_json::Value>, String> {
    let value: serde_json::Value =
        serde_json::from_str(wrangler_json).map_err(|e| format!("not JSON: {e}"))?;
    match value {
        serde_json::Value::Array(items) if items.iter().all(|i| i.get("results").is_some()) => {
            Ok(items
                .into_iter()
                .filter_map(|mut i| i["results"].as_array_mut().map(std::mem::take))
                .flatten()
                .collect())
        }
        serde_json::Value::Array(rows) => Ok(rows),
        _ => Err("expected wrangler's --json output (an array)".into()),
    }
}

/// A row's post id, checked: it is written into SQL.
fn post_id(row: &serde_json::Value) -> Result<&str, String> {
    let id = row["id"].as_str().ok_or("a row without a text id")?;
    if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("not a post id: {id:?}"));
    }
    Ok(id)
}

/// For D1, where SQL cannot compute the key: reads what
/// `wrangler d1 execute DB --json --command "SELECT id, note FROM posts WHERE
/// note_key IS NULL ORDER BY rowid"` prints and returns the UPDATE
/// statements that give those rows their keys, for
/// The query whose `wrangler d1 execute DB --json --command` output
/// [`d1_key_updates`] reads: the posts without a digest, oldest first.
pub const D1_KEYS_QUERY: &str =
    "SELECT id, note FROM posts WHERE note_key_hash IS NULL ORDER BY rowid";

/// For D1, where SQL cannot compute the key or its digest: reads what
/// `wrangler d1 execute DB --json --command` prints for [`D1_KEYS_QUERY`]
/// and returns the UPDATE statements that give those rows their key's
/// digest and drop the full key they may keep, for
/// `wrangler d1 execute DB --file`. Each statement guards itself as
/// [`fill_keys`] does (the oldest row keeps a shared key; a row keyed since
/// is left alone), so the file may be run again, or while the Worker
/// serves. A digest is hex and an id is checked hex: no quoting to get
/// wrong, whatever an old note holds.
pub fn d1_key_updates(wrangler_json: &str) -> Result<String, String> {
    let mut sql = String::from(
        "-- Generated by `needhave d1-keys`: the key digests of posts older than the digest.\n",
    );
    for row in &wrangler_rows(wrangler_json)? {
        let id = post_id(row)?;
        let note = row["note"].as_str().ok_or("a row without a text note")?;
        let digest = note_key_hash(note);
        sql.push_str(&format!(
            "UPDATE posts SET note_key_hash = CASE WHEN NOT EXISTS \
             (SELECT 1 FROM posts WHERE note_key_hash = '{digest}') THEN '{digest}' END, \
             note_key = NULL WHERE id = '{id}' AND note_key_hash IS NULL;\n"
        ));
    }
    Ok(sql)
}
