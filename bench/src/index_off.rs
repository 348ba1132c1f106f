//! The index of words made a no-op, for the comparisons that measure what
//! writing it costs a create: `before_after` (a server's file) and
//! `search` (the create batch on a seeded file). Below both, so that
//! neither imports the other for it.

/// The index of words' hot part as a plain table that drops every insert,
/// with the columns the create batch writes (a post's words, and FTS5's
/// setting command of `store::SMALL_LEAVES`) and the settings table it
/// reads. Empty, it never reaches the `MATCH` of a move's statements.
const INDEX_OFF: &str = "DROP TABLE post_words; \
     CREATE TABLE post_words (words TEXT, post_words TEXT, rank); \
     CREATE TABLE post_words_config (k PRIMARY KEY, v) WITHOUT ROWID; \
     CREATE TRIGGER post_words_off BEFORE INSERT ON post_words \
     BEGIN SELECT RAISE(IGNORE); END;";

/// [`INDEX_OFF`]'s cold part, for a build whose index has one.
const COLD_OFF: &str = "DROP TABLE post_cold; \
     CREATE TABLE post_cold (words TEXT, post_cold TEXT, rank); \
     CREATE TRIGGER post_cold_off BEFORE INSERT ON post_cold \
     BEGIN SELECT RAISE(IGNORE); END;";

/// Makes the file's index of words a no-op: its hot part, and its cold
/// part when the build that made the file has one.
pub fn turn_off(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    let cold: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'post_cold'",
        [],
        |r| r.get(0),
    )?;
    conn.execute_batch(INDEX_OFF)?;
    if cold {
        conn.execute_batch(COLD_OFF)?;
    }
    Ok(())
}
