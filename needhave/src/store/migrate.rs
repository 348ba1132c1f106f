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

use crate::rules::hot::{self, HotSet};
use crate::rules::note_key;
use crate::rules::words::{waiting_text, ANY_COLD};
use crate::rules::Kind;
use crate::rules::REFOLDED;

/// The schema version this build writes: the number of files in
/// `migrations/` (a first-release file says 0, though it holds 0001).
/// Steps without Rust work (an index: 0003) are schema.sql's, applied on
/// every open. The index of words (0006, made again by 0007, 0010 and
/// 0012) is derived data: an upgrade drops any older shape of it, and
/// [`fill_index`] writes it anew for every post, in its two parts
/// (`store::hot_cold`). 0008 adds the table where a new post's words wait
/// for the index; 0009 and 0011 set the index's leaf size ([`LEAVES`],
/// [`YOUNG_LEAVES`]), fresh files included. 0013 changes what a post's
/// words are while they wait, and the move that writes them. 0014 gives a
/// post its life ([`LIFE`]); 0015 writes the move again, for prefixes of
/// up to a hundred characters. An upgrade from 12 or later keeps the
/// index, and gives the posts whose notes the current fold reads otherwise
/// ([`REFOLDED`]) their new key's digest ([`refold_keys`]) and their new
/// words beside the old ([`refold_words`]).
pub const VERSION: i64 = 15;

/// The fresh schema, shared with D1: what every open applies last.
pub const SCHEMA: &str = include_str!("../../../schema.sql");

/// migrations/0002: the `note_key` column and its unique index.
const NOTE_KEY: &str = include_str!("../../../migrations/0002_note_key.sql");
/// The site hashes, and the key's digest with its unique index.
const SITES: &str = include_str!("../../../migrations/0005_sites_and_key_digest.sql");

/// migrations/0009: the index of words written in small leaves (64 bytes;
/// a grown list's next create takes it to
/// [`WORDS_LEAF`](crate::store::WORDS_LEAF), `store::SMALL_LEAVES`). A
/// setting, not schema: applied once, by the upgrade (a fresh file's too),
/// so that an open of a current file writes nothing.
pub const LEAVES: &str = include_str!("../../../migrations/0009_words_leaves.sql");

/// migrations/0011: a list of fewer than
/// [`WORDS_GROWN`](crate::store::WORDS_GROWN) posts writes leaves of
/// [`WORDS_LEAF_YOUNG`](crate::store::WORDS_LEAF_YOUNG) bytes; a setting,
/// applied once as [`LEAVES`] is.
pub const YOUNG_LEAVES: &str = include_str!("../../../migrations/0011_young_leaves.sql");

/// migrations/0012: the index of words in two parts (`store::hot_cold`).
const HOT_COLD: &str = include_str!("../../../migrations/0012_hot_cold.sql");

/// migrations/0013: waiting words in about their note's bytes (runs
/// whole), and the move that writes them out.
const WAITING_RUNS: &str = include_str!("../../../migrations/0013_waiting_runs.sql");

/// migrations/0014: a post's expiry, the decision rows that end it
/// (`close`, `remove`) and report it (`report`), the table of open posts
/// (`live`, every old post in it: open, never expiring) and the record of
/// the ends (`post_ends`). The messages table is made again (its role
/// CHECK changes), every row kept under its row number.
const LIFE: &str = include_str!("../../../migrations/0014_life.sql");

/// migrations/0015: the move that finds and promotes prefixes of up to a
/// hundred characters.
const DEEP_PREFIXES: &str = include_str!("../../../migrations/0015_deep_prefixes.sql");

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
    /// Old posts whose notes the current fold reads otherwise: their key
    /// and words taken again (counted in `keyed` or `shared` too when
    /// their key's digest changed).
    pub refolded: usize,
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
            if done.keyed + done.shared + done.indexed + done.refolded > 0 {
                tracing::info!(
                    from = done.from,
                    to = VERSION,
                    keyed = done.keyed,
                    left_without_key = done.shared,
                    indexed = done.indexed,
                    refolded = done.refolded,
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
    // While every table its triggers name is there: the table it makes
    // again is renamed, and SQLite checks the whole schema then.
    if has_table(conn, "posts")? && !has_column(conn, "posts", "expires_at")? {
        conn.execute_batch(LIFE)?;
    }
    // An index of words of a file before 12 is one part, with prefix
    // lists: dropped, made again as the hot part, and filled below. From
    // 12 on, the two parts are kept.
    let rebuild = from < 12;
    if rebuild && has_table(conn, "post_words")? {
        conn.execute_batch("DROP TABLE post_words")?;
    }
    // Before the schema, which would give a file without it a bound of 0.
    if has_table(conn, "words_new")? && !has_column(conn, "words_new", "tokens")? {
        conn.execute_batch(HOT_COLD)?;
    }
    if from < 13 && has_table(conn, "words_new")? {
        conn.execute_batch(WAITING_RUNS)?;
    }
    if from < 15 && has_table(conn, "words_new")? {
        conn.execute_batch(DEEP_PREFIXES)?;
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
    let (refolded, rekeyed, reshared) = refold_keys(conn)?;
    done.keyed = keyed + rekeyed;
    done.shared = shared + reshared;
    done.refolded = refolded;
    if rebuild {
        done.indexed = fill_index(conn)?;
    } else {
        refold_words(conn)?;
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

/// A condition on a post's `note`: it holds a character of
/// [`REFOLDED`], so the current fold may read it otherwise than the fold
/// its key and words were taken with. One `instr` a character: D1 allows
/// a GLOB pattern of 50 bytes at most.
pub fn refolded_note() -> String {
    let tests: Vec<String> = REFOLDED
        .iter()
        .map(|c| format!("instr(note, char({})) > 0", u32::from(*c)))
        .collect();
    format!("({})", tests.join(" OR "))
}

/// Gives the posts that hold a digest and whose notes the current fold may
/// read otherwise ([`refolded_note`]) their key's digest as it is now,
/// oldest first. Where two old notes now have one key, the row that holds
/// it keeps it and the others keep NULL, as [`fill_keys`] does: every row
/// stays, and the unique index never meets two of one digest. Returns (the
/// posts looked at, re-keyed, left NULL).
fn refold_keys(conn: &Connection) -> rusqlite::Result<(usize, usize, usize)> {
    let old: Vec<(i64, String, String)> = conn
        .prepare(&format!(
            "SELECT rowid, note, note_key_hash FROM posts \
             WHERE note_key_hash IS NOT NULL AND {} ORDER BY rowid",
            refolded_note()
        ))?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut set = conn.prepare(
        "UPDATE posts SET note_key_hash = CASE WHEN NOT EXISTS \
         (SELECT 1 FROM posts WHERE note_key_hash = ?1) THEN ?1 END WHERE rowid = ?2",
    )?;
    let (mut keyed, mut shared) = (0, 0);
    for (rowid, note, held) in &old {
        let digest = note_key_hash(note);
        if digest == *held {
            continue;
        }
        set.execute(params![digest, rowid])?;
        let now: Option<String> = conn.query_row(
            "SELECT note_key_hash FROM posts WHERE rowid = ?1",
            [rowid],
            |r| r.get(0),
        )?;
        if now.is_some() {
            keyed += 1;
        } else {
            shared += 1;
        }
    }
    Ok((old.len(), keyed, shared))
}

/// Gives the posts whose notes the current fold may read otherwise
/// ([`refolded_note`]) their words as it reads them: a waiting post's
/// words in `words_new` are written again (the move finds their hot
/// terms), and a post the index holds gets its terms in both parts beside
/// the ones it has, as a writer with the file's hot set would write them
/// (the index keeps no text to delete the old ones by, and an old term no
/// query makes any more finds nothing it should not); a post the sweep
/// took out stays out. Newest first, so that the
/// reversed row numbers ascend. Returns how many.
fn refold_words(conn: &Connection) -> rusqlite::Result<usize> {
    let posts: Vec<(i64, String, String, String, bool)> = conn
        .prepare(&format!(
            "SELECT rowid, id, kind, note, rowid IN (SELECT post FROM words_new) \
             FROM posts WHERE {} AND (rowid IN (SELECT post FROM words_new) \
             OR 268435456 - rowid IN (SELECT rowid FROM post_cold WHERE post_cold MATCH '{ANY_COLD}')) \
             ORDER BY rowid DESC",
            refolded_note()
        ))?
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    if posts.is_empty() {
        return Ok(0);
    }
    let mut copy = HotSet::new();
    copy.extend_unsorted(
        conn.prepare("SELECT rowid, p FROM hot_prefixes")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?,
    );
    let mut waiting = conn.prepare(
        "UPDATE words_new SET words = ?2, tokens = NULL, candidates = NULL, version = NULL, \
         cold = NULL WHERE post = ?1",
    )?;
    let mut hot_part =
        conn.prepare("INSERT INTO post_words (rowid, words) VALUES (268435456 - ?1, ?2)")?;
    let mut cold_part =
        conn.prepare("INSERT INTO post_cold (rowid, words) VALUES (268435456 - ?1, ?2)")?;
    let mut done = 0;
    for (rowid, id, kind, note, is_waiting) in &posts {
        let Some(kind) = Kind::parse(kind) else {
            continue;
        };
        let words = waiting_text(kind, note);
        if *is_waiting {
            waiting.execute(params![rowid, words])?;
        } else {
            let (hot, cold) = copy.parts(kind, id, &words);
            hot_part.execute(params![rowid, hot])?;
            cold_part.execute(params![rowid, cold])?;
        }
        done += 1;
    }
    Ok(done)
}

/// Indexes the words of every open post (in `live`) not waiting in
/// `words_new` (all of them: the upgrade makes the index anew; a seed of
/// posts written directly), in both parts, as the move writes them; an
/// ended post stays out, as the sweep leaves it. The hot set is
/// counted first ([`hot::counted`], each prefix that [`hot::PROMOTED_AT`]
/// posts share), then each post gets what a writer with that copy gives
/// it ([`HotSet::parts`]), under its row number reversed, newest first
/// (the reversed numbers then ascend, and FTS5 gathers the rows of a
/// transaction into one segment only while they do). Returns how many.
pub fn fill_index(conn: &Connection) -> rusqlite::Result<usize> {
    let posts: Vec<(i64, String, Kind, String)> = conn
        .prepare(
            "SELECT rowid, id, kind, note FROM posts WHERE rowid NOT IN (SELECT post FROM words_new) \
             AND rowid IN (SELECT post FROM live) ORDER BY rowid DESC",
        )?
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?
        .filter_map(|row| match row {
            Ok((rowid, id, kind, note)) => {
                let kind = Kind::parse(&kind)?;
                Some(Ok((rowid, id, kind, waiting_text(kind, &note))))
            }
            Err(e) => Some(Err(e)),
        })
        .collect::<rusqlite::Result<_>>()?;
    let promoted = hot::counted(
        || {
            posts
                .iter()
                .map(|(_, _, kind, words)| (*kind, words.as_str()))
        },
        hot::PROMOTED_AT,
    );
    let mut add = conn.prepare("INSERT INTO hot_prefixes (p) VALUES (?1)")?;
    let mut numbered = Vec::with_capacity(promoted.len());
    for p in promoted {
        add.execute([&p])?;
        numbered.push((conn.last_insert_rowid(), p));
    }
    let mut copy = HotSet::new();
    copy.extend_unsorted(numbered);
    let mut hot_part =
        conn.prepare("INSERT INTO post_words (rowid, words) VALUES (268435456 - ?1, ?2)")?;
    let mut cold_part =
        conn.prepare("INSERT INTO post_cold (rowid, words) VALUES (268435456 - ?1, ?2)")?;
    for (rowid, id, kind, words) in &posts {
        let (hot, cold) = copy.parts(*kind, id, words);
        hot_part.execute(params![rowid, hot])?;
        cold_part.execute(params![rowid, cold])?;
    }
    conn.execute("DELETE FROM words_filling", [])?;
    Ok(posts.len())
}

/// For D1, where SQL cannot compute the words: reads what `wrangler d1
/// execute DB --json --command` prints for [`d1_unindexed`] (the hot set,
/// the open posts the index does not hold, newest first, and the posts whose
/// notes the current fold may read otherwise) and returns the SQL that
/// indexes them, for `wrangler d1 execute DB --file`, as the native
/// upgrade does ([`fill_index`], [`refold_words`]): the prefixes the
/// posts the index does not hold make hot (counted as [`hot::counted`]
/// counts them), then each of those posts' terms in both parts under its
/// row number reversed, then each refolded post's words (written again
/// while they wait, its new terms beside its old ones once moved), then
/// the end of `words_filling`, which lets the move go on. Each statement
/// guards itself (a post indexed since is left alone; a refolded post's
/// terms go where its words are when the statement runs, and a term
/// written twice for a post is one), so the file may be run again, or
/// while the Worker serves. Words are written as hex blobs cast to text,
/// as the keys are.
pub fn d1_word_inserts(wrangler_json: &str) -> Result<String, String> {
    let mut sql = String::from(
        "-- Generated by `needhave d1-words`: the words of posts older than migrations/0012.\n",
    );
    let mut known = Vec::new();
    let mut posts = Vec::new();
    let mut refolded = Vec::new();
    for row in wrangler_rows(wrangler_json)? {
        if let (Some(n), Some(p)) = (row["n"].as_i64(), row["p"].as_str()) {
            known.push((n, p.to_string()));
            continue;
        }
        let id = post_id(&row)?.to_string();
        let note = row["note"].as_str().ok_or("a row without a text note")?;
        let kind = row["kind"]
            .as_str()
            .and_then(Kind::parse)
            .ok_or("a row without a kind (need or have)")?;
        let words = waiting_text(kind, note);
        if row["refold"].as_i64() == Some(1) {
            refolded.push((id, kind, words));
        } else {
            posts.push((id, kind, words));
        }
    }
    // A post the index does not hold gets all its words below, as the
    // current fold reads them.
    refolded.retain(|(id, _, _)| !posts.iter().any(|(unindexed, _, _)| unindexed == id));
    let mut copy = HotSet::new();
    let next = known.iter().map(|(n, _)| *n).max().unwrap_or(0);
    copy.extend_unsorted(known);
    if copy.version() != next {
        return Err("the hot set read is not every promotion up to its newest".into());
    }
    let counted = hot::counted(
        || posts.iter().map(|(_, kind, words)| (*kind, words.as_str())),
        hot::PROMOTED_AT,
    );
    let mut added = Vec::new();
    for p in counted {
        if copy.depth(&p) < p.chars().count() {
            sql.push_str(&format!(
                "INSERT OR IGNORE INTO hot_prefixes (p) VALUES (CAST(X'{}' AS TEXT));\n",
                hex::encode(p.as_bytes())
            ));
            added.push(p);
        }
    }
    // The copy as it is once those are in: numbered after the newest read.
    copy.extend_unsorted((next + 1..).zip(added).collect());
    for (id, kind, words) in &posts {
        let (hot, cold) = copy.parts(*kind, id, words);
        // Both guarded by the cold part, the hot part's first: a post that
        // a Worker of an earlier release moved into the hot part alone gets
        // its terms in both (a term written twice for a post is one). And
        // by `live`: a post that ended since the query stays out, as the
        // sweep leaves it.
        for (table, text) in [("post_words", &hot), ("post_cold", &cold)] {
            let text = hex::encode(text.as_bytes());
            sql.push_str(&format!(
                "INSERT INTO {table} (rowid, words) SELECT 268435456 - rowid, CAST(X'{text}' AS TEXT) \
                 FROM posts WHERE id = '{id}' AND rowid NOT IN (SELECT post FROM words_new) \
                 AND rowid IN (SELECT post FROM live) \
                 AND NOT EXISTS (SELECT 1 FROM post_cold \
                 WHERE post_cold MATCH '{ANY_COLD}' AND post_cold.rowid = 268435456 - posts.rowid);\n"
            ));
        }
    }
    for (id, kind, words) in &refolded {
        let (hot, cold) = copy.parts(*kind, id, words);
        sql.push_str(&format!(
            "UPDATE words_new SET words = CAST(X'{}' AS TEXT), tokens = NULL, candidates = NULL, \
             version = NULL, cold = NULL WHERE post = (SELECT rowid FROM posts WHERE id = '{id}');\n",
            hex::encode(words.as_bytes())
        ));
        for (table, text) in [("post_words", &hot), ("post_cold", &cold)] {
            let text = hex::encode(text.as_bytes());
            sql.push_str(&format!(
                "INSERT INTO {table} (rowid, words) SELECT 268435456 - rowid, CAST(X'{text}' AS TEXT) \
                 FROM posts WHERE id = '{id}' AND rowid NOT IN (SELECT post FROM words_new) \
                 AND EXISTS (SELECT 1 FROM post_cold \
                 WHERE post_cold MATCH '{ANY_COLD}' AND post_cold.rowid = 268435456 - posts.rowid);\n"
            ));
        }
    }
    sql.push_str("DELETE FROM words_filling;\n");
    Ok(sql)
}

/// The query whose `--json` output [`d1_word_inserts`] reads (`needhave
/// d1-words --query`): the hot set (each prefix with its number), then
/// the open posts the index does not hold and whose words do not wait in
/// `words_new` (an ended post is not asked for: the sweep took it out of
/// the index), then the posts whose notes the current fold may read
/// otherwise ([`refolded_note`]), each newest first (so that the reversed
/// row numbers the INSERTs write ascend).
pub fn d1_unindexed() -> String {
    format!(
        "SELECT rowid AS n, p FROM hot_prefixes ORDER BY rowid; \
         SELECT id, kind, note FROM posts \
         WHERE rowid NOT IN (SELECT post FROM words_new) AND rowid IN (SELECT post FROM live) \
         AND (268435456 - rowid NOT IN \
         (SELECT rowid FROM post_words WHERE post_words MATCH '\"\u{207f}\u{b7}need\" OR \"\u{2b0}\u{b7}have\"') \
         OR 268435456 - rowid NOT IN \
         (SELECT rowid FROM post_cold WHERE post_cold MATCH '\"\u{b7}need\" OR \"\u{b7}have\"')) \
         ORDER BY rowid DESC; \
         SELECT id, kind, note, 1 AS refold FROM posts WHERE {} ORDER BY rowid DESC",
        refolded_note()
    )
}

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

/// The query whose `wrangler d1 execute DB --json --command` output
/// [`d1_key_updates`] reads (`needhave d1-keys --query`): the posts
/// without a digest, and those whose notes the current fold may read
/// otherwise ([`refolded_note`]), with the digest they hold, oldest first.
pub fn d1_keys_query() -> String {
    format!(
        "SELECT id, note, note_key_hash FROM posts WHERE note_key_hash IS NULL OR {} ORDER BY rowid",
        refolded_note()
    )
}

/// For D1, where SQL cannot compute the key or its digest: reads what
/// `wrangler d1 execute DB --json --command` prints for [`d1_keys_query`]
/// (or for a query of `id` and `note` alone, of the posts without a
/// digest) and returns the UPDATE statements that give those rows their
/// key's digest as the current rule makes it and drop the full key they
/// may keep, for `wrangler d1 execute DB --file`; none for a row that
/// holds its digest already. Each statement guards itself as [`fill_keys`]
/// and [`refold_keys`] do (the oldest row keeps a shared key, later ones
/// keep NULL; a row keyed since is left alone), so the file may be run
/// again, or while the Worker serves. A digest is hex and an id is checked
/// hex: no quoting to get wrong, whatever an old note holds.
pub fn d1_key_updates(wrangler_json: &str) -> Result<String, String> {
    let mut sql = String::from(
        "-- Generated by `needhave d1-keys`: the key digests of posts older than the rule.\n",
    );
    for row in &wrangler_rows(wrangler_json)? {
        let id = post_id(row)?;
        let note = row["note"].as_str().ok_or("a row without a text note")?;
        let digest = note_key_hash(note);
        if row["note_key_hash"].as_str() == Some(digest.as_str()) {
            continue;
        }
        sql.push_str(&format!(
            "UPDATE posts SET note_key_hash = CASE WHEN NOT EXISTS \
             (SELECT 1 FROM posts WHERE note_key_hash = '{digest}') THEN '{digest}' END, \
             note_key = NULL WHERE id = '{id}' \
             AND (note_key_hash IS NULL OR note_key_hash <> '{digest}');\n"
        ));
    }
    Ok(sql)
}
