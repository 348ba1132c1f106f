//! The index of words kept in few segments, both its parts (the hot
//! `post_words`, then the cold `post_cold`): what the writer thread does
//! when no write waits.
//!
//! FTS5 writes the words of each transaction as a segment of their own, and
//! a query reads every segment: for each of its terms, a lookup in the
//! segment's part of `post_words_idx` (or `post_cold_idx`), a read of a
//! leaf, and one more cursor in the merge of the segments' row numbers. A
//! query word that is not hot is a prefix query of the cold part, which
//! reads a leaf in every segment even when no term matches.
//! FTS5 merges as it writes (`automerge`: four segments of a level into
//! one of the next), so a list written a group commit at a time keeps a
//! dozen segments or more, and a query of a common word pays for each of
//! them a term (docs/design/search-index.md, "Segments, and the writer's
//! merging").
//!
//! So the writer, once its queue has stayed empty for a moment after a
//! commit (`group::QUIET`), merges in [`step`]s of at most [`STEP_BYTES`]
//! of leaves, each its own transaction, and looks at its queue between steps:
//! a write that arrives waits for one step at most. The steps do, in this
//! order:
//!
//! - a merge already under way is carried on;
//! - a level holding two segments or more is merged (`usermerge` is 2:
//!   FTS5's default, 4, would leave up to three a level), so the small
//!   segments of the latest writes end up one per level;
//! - then, when the segments besides the largest hold a [`REST`]th of its
//!   pages or more, all are merged into one (`'merge'` with a negative
//!   count: what `'optimize'` does, in steps). So a list gets back to one
//!   segment after each quarter of growth, and every post's words are
//!   rewritten a bounded number of times (a few, plus one per level),
//!   never once per idle moment.
//!
//! The steps do not need durability: a merge changes no answer, and one
//! that a power cut takes back leaves the index as it was before it,
//! whole. So a step commits with `synchronous=NORMAL` (WAL: consistent,
//! no fsync of its own; the next write's fsync covers it) and the writer
//! goes back to `FULL` before any write.

use rusqlite::{Connection, OptionalExtension};

/// The most bytes of leaves one step writes, which bounds how long a write
/// that arrives during a step waits (measured in
/// docs/design/search-index.md, "Segments, and the writer's merging").
pub const STEP_BYTES: i64 = 16 * 1024;

/// [`STEP_BYTES`] in leaves, the unit FTS5's `'merge'` counts in, for
/// leaves of `leaf` bytes (a young list's are larger: store::WORDS_LEAF_YOUNG).
pub fn step_pages(leaf: i64) -> i64 {
    (STEP_BYTES / leaf.max(1)).max(1)
}

/// All segments are merged into one once the others hold this fraction
/// (1 / REST) of the largest's pages.
pub const REST: u64 = 4;

/// One level of the index: its segments' sizes in leaf pages, oldest
/// first, and how many of them a merge under way is reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level {
    pub merging: u32,
    pub segments: Vec<u64>,
}

/// The parts of the index the writer merges, in the order it merges them.
pub const TABLES: [&str; 2] = ["post_words", "post_cold"];

/// The levels of `post_words`, the hot part ([`levels_of`]).
pub fn levels(conn: &Connection) -> rusqlite::Result<Vec<Level>> {
    levels_of(conn, TABLES[0])
}

/// The levels of `table` (one of [`TABLES`]), from FTS5's structure record
/// (row 10 of its `_data` table); empty when it holds no segment.
pub fn levels_of(conn: &Connection, table: &str) -> rusqlite::Result<Vec<Level>> {
    let record: Option<Vec<u8>> = conn
        .prepare_cached(&format!("SELECT block FROM {table}_data WHERE id = 10"))?
        .query_row([], |r| r.get(0))
        .optional()?;
    Ok(record.as_deref().and_then(decode).unwrap_or_default())
}

/// Decodes a structure record (`fts5StructureDecode` in SQLite's FTS5): a
/// 4-byte cookie, an optional 4-byte version-2 mark, the counts of levels
/// and segments, the write counter, then per level the segments in merge
/// and the segments, each as segment id, first and last leaf page (and
/// five more numbers in version 2).
fn decode(record: &[u8]) -> Option<Vec<Level>> {
    let mut at = 4;
    let v2 = record.get(4..8) == Some(&[0xff, 0, 0, 1]);
    if v2 {
        at += 4;
    }
    let mut next = || -> Option<u64> {
        let (value, used) = varint(record.get(at..)?)?;
        at += used;
        Some(value)
    };
    let levels = next()?;
    let _segments = next()?;
    let _write_counter = next()?;
    let mut out = Vec::new();
    for _ in 0..levels {
        let merging = next()? as u32;
        let n = next()?;
        let mut segments = Vec::new();
        for _ in 0..n {
            let _id = next()?;
            let first = next()?;
            let last = next()?;
            if v2 {
                for _ in 0..5 {
                    next()?;
                }
            }
            segments.push(last.checked_sub(first)? + 1);
        }
        out.push(Level { merging, segments });
    }
    Some(out)
}

/// SQLite's varint: big-endian groups of 7 bits, the ninth byte whole.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(9) {
        if i == 8 {
            return Some(((value << 8) | u64::from(b), 9));
        }
        value = (value << 7) | u64::from(b & 0x7f);
        if b < 0x80 {
            return Some((value, i + 1));
        }
    }
    None
}

/// What the next step should ask FTS5 for, if anything: `1` carries on a
/// merge or merges a level of two or more; `-1` merges everything. [`step`]
/// makes it a count of leaves ([`step_pages`]).
fn plan(levels: &[Level]) -> Option<i64> {
    let sizes: Vec<u64> = levels.iter().flat_map(|l| l.segments.clone()).collect();
    if sizes.len() < 2 {
        return None;
    }
    if levels
        .iter()
        .any(|l| l.merging > 0 || l.segments.len() >= 2)
    {
        return Some(1);
    }
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let rest: u64 = sizes.iter().sum::<u64>() - largest;
    (rest * REST >= largest).then_some(-1)
}

/// Whether the index is as merged as the writer keeps it: no [`step`] has
/// work, in either part.
pub fn settled(conn: &Connection) -> rusqlite::Result<bool> {
    for table in TABLES {
        if plan(&levels_of(conn, table)?).is_some() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// One step of merging, in a transaction of its own, of the first part of
/// the index that has work for one (see the module doc). Returns whether
/// it merged anything: when it did not, the index is as merged as it is
/// kept, and there is no need to step again until the next write.
pub fn step(conn: &Connection) -> rusqlite::Result<bool> {
    for table in TABLES {
        if let Some(sign) = plan(&levels_of(conn, table)?) {
            return merge(conn, table, sign);
        }
    }
    Ok(false)
}

/// A step of `sign` (see [`plan`]) of `table`'s merge.
fn merge(conn: &Connection, table: &str, sign: i64) -> rusqlite::Result<bool> {
    let leaf: Option<i64> = conn
        .prepare_cached(&format!("SELECT v FROM {table}_config WHERE k = 'pgsz'"))?
        .query_row([], |r| r.get(0))
        .optional()?;
    let pages = sign * step_pages(leaf.unwrap_or(crate::store::WORDS_LEAF_YOUNG));
    let synchronous: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    let before = conn.total_changes();
    let merged = set_usermerge(conn, table).and_then(|()| {
        conn.prepare_cached(&format!(
            "INSERT INTO {table} ({table}, rank) VALUES ('merge', ?1)"
        ))
        .and_then(|mut s| s.execute([pages]))
    });
    // FTS5: a 'merge' that did no work changes fewer than two rows.
    let worked = conn.total_changes() - before >= 2;
    conn.pragma_update(None, "synchronous", synchronous)?;
    merged?;
    Ok(worked)
}

/// Sets FTS5's `usermerge` to 2 in `table` where it is not yet. FTS5
/// keeps its settings in the file (`{table}_config`), so this is one
/// write in a file's life; made here rather than by a migration, a file
/// stays one the previous release opens, which knows the setting as well.
fn set_usermerge(conn: &Connection, table: &str) -> rusqlite::Result<()> {
    let usermerge: Option<i64> = conn
        .prepare_cached(&format!(
            "SELECT v FROM {table}_config WHERE k = 'usermerge'"
        ))?
        .query_row([], |r| r.get(0))
        .optional()?;
    if usermerge != Some(2) {
        conn.execute_batch(&format!(
            "INSERT INTO {table} ({table}, rank) VALUES ('usermerge', 2)"
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(conn: &Connection) -> rusqlite::Result<usize> {
        Ok(levels(conn)?.iter().map(|l| l.segments.len()).sum())
    }

    fn level(merging: u32, segments: &[u64]) -> Level {
        Level {
            merging,
            segments: segments.to_vec(),
        }
    }

    #[test]
    fn the_plan_merges_levels_then_everything_at_a_quarter() {
        assert_eq!(plan(&[]), None);
        assert_eq!(plan(&[level(0, &[900])]), None);
        assert_eq!(plan(&[level(0, &[1, 1])]), Some(1));
        assert_eq!(plan(&[level(0, &[1]), level(1, &[5, 4])]), Some(1));
        assert_eq!(plan(&[level(2, &[5, 4]), level(0, &[3])]), Some(1));
        // One a level: together only when the rest is a quarter of the largest.
        assert_eq!(
            plan(&[level(0, &[1]), level(0, &[]), level(0, &[100])]),
            None
        );
        assert_eq!(plan(&[level(0, &[24]), level(0, &[100])]), None);
        assert_eq!(
            plan(&[level(0, &[5]), level(0, &[20]), level(0, &[100])]),
            Some(-1)
        );
    }

    #[test]
    fn a_step_is_the_same_bytes_in_either_leaves() {
        assert_eq!(step_pages(crate::store::WORDS_LEAF), 128);
        assert_eq!(step_pages(crate::store::WORDS_LEAF_YOUNG), 4);
        assert_eq!(step_pages(1 << 20), 1, "at least a leaf");
    }

    /// Both parts of the index are merged, the hot one first; a part that
    /// no step touches keeps the segments its writes left.
    #[test]
    fn steps_merge_both_parts() {
        let conn = Connection::open_in_memory().unwrap();
        for table in TABLES {
            conn.execute_batch(&format!(
                "CREATE VIRTUAL TABLE {table} USING fts5 (words, content = '', \
                 columnsize = 0, detail = none, tokenize = 'ascii');"
            ))
            .unwrap();
            for i in 0..6 {
                conn.execute(
                    &format!("INSERT INTO {table} (rowid, words) VALUES (?1, 'a b c')"),
                    [i + 1],
                )
                .unwrap();
            }
        }
        let segments = |table| -> usize {
            levels_of(&conn, table)
                .unwrap()
                .iter()
                .map(|l| l.segments.len())
                .sum()
        };
        assert_eq!((segments(TABLES[0]), segments(TABLES[1])), (6, 6));
        assert!(!settled(&conn).unwrap());
        assert!(step(&conn).unwrap());
        assert!(segments(TABLES[0]) < 6, "the hot part first");
        assert_eq!(segments(TABLES[1]), 6);
        let mut steps = 1;
        while step(&conn).unwrap() {
            steps += 1;
            assert!(steps < 100, "still merging");
        }
        assert!(settled(&conn).unwrap());
        assert_eq!((segments(TABLES[0]), segments(TABLES[1])), (1, 1));
    }

    #[test]
    fn decodes_what_fts5_writes() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE post_words USING fts5 (words, content = '', \
             columnsize = 0, detail = none, tokenize = 'ascii');",
        )
        .unwrap();
        assert_eq!(count(&conn).unwrap(), 0);
        for i in 0..3 {
            conn.execute(
                "INSERT INTO post_words (rowid, words) VALUES (?1, 'a b c')",
                [i + 1],
            )
            .unwrap();
        }
        assert_eq!(levels(&conn).unwrap(), [level(0, &[1, 1, 1])]);
        conn.execute_batch("INSERT INTO post_words (post_words) VALUES ('optimize')")
            .unwrap();
        assert_eq!(count(&conn).unwrap(), 1);
    }
}
