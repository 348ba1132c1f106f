//! What a file must be before the list serves it, checked before anything
//! is written to it: an SQLite database, whole (`PRAGMA quick_check`), of a
//! schema this build knows (`user_version` at most [`migrate::VERSION`]),
//! and the list's own (no tables the schema does not make). A file that
//! fails is refused with its own message and left exactly as it was: the
//! checks only read, and any upgrade and then the switch to WAL come after
//! them. An upgrade that fails (a file of another application with a
//! `posts` table of its own passes these checks) rolls back in the
//! file's own journal, so that file too is left byte for byte.

use std::collections::HashSet;
use std::sync::OnceLock;

use rusqlite::Connection;

use crate::store::migrate::{self, SCHEMA};

/// Refuses `conn` (a file at `path` that was there before this start) unless
/// the list may serve it; `Err` is the operator's message, naming the path.
pub fn check(conn: &Connection, path: &str) -> Result<(), String> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| format!("{path} is not a database the list can open: {e}"))?;
    quick_check(conn, path)?;
    if version > migrate::VERSION {
        return Err(format!(
            "{path} was written by a newer release of needhave (schema version {version}; this build knows up to {}): run that release, or restore a backup this one made",
            migrate::VERSION
        ));
    }
    let foreign = foreign_tables(conn).map_err(|e| format!("{path}: {e}"))?;
    if !foreign.is_empty() {
        return Err(format!(
            "{path} is an SQLite file of another application (tables {}, which the list does not have); the list opens only its own, or a new file",
            foreign.join(", ")
        ));
    }
    Ok(())
}

/// SQLite's own consistency check, without the index-to-table comparison of
/// `integrity_check` (linear in the file; its cost on a large file is in
/// docs/operating.md). A damaged page would otherwise answer 500 on every
/// call that reads it.
fn quick_check(conn: &Connection, path: &str) -> Result<(), String> {
    let damaged = |detail: String| {
        format!("{path} fails PRAGMA quick_check (the file is damaged: {detail}); restore a backup")
    };
    let mut stmt = conn
        .prepare("PRAGMA quick_check")
        .map_err(|e| damaged(e.to_string()))?;
    let rows: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| damaged(e.to_string()))?;
    match rows.as_slice() {
        [ok] if ok == "ok" => Ok(()),
        problems => Err(damaged(
            problems
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
        )),
    }
}

/// Tables of `conn` that the list's schema does not make (SQLite's own
/// `sqlite_*` tables aside). The list's are read off the schema itself,
/// applied to an empty database, so a table a later schema adds (and the
/// shadow tables of a full-text index) count as the list's.
fn foreign_tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let ours = own_tables();
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
    )?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
    let mut foreign = Vec::new();
    for name in names {
        let name = name?;
        if !ours.contains(name.as_str()) {
            foreign.push(name);
        }
    }
    Ok(foreign)
}

fn own_tables() -> &'static HashSet<String> {
    static OWN: OnceLock<HashSet<String>> = OnceLock::new();
    OWN.get_or_init(|| {
        let names = || -> rusqlite::Result<HashSet<String>> {
            let conn = Connection::open_in_memory()?;
            conn.execute_batch(SCHEMA)?;
            let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
            let names = stmt.query_map([], |r| r.get(0))?.collect();
            names
        };
        // The schema is compiled in and applied by every test: it parses.
        names().unwrap_or_default()
    })
}
