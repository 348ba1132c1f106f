//! The store on an embedded SQLite file (rusqlite, bundled): `needhave serve`
//! and the tests.
//!
//! Writes go through one connection under a mutex, each batch in a
//! `BEGIN IMMEDIATE` transaction: SQLite has one writer anyway, and holding
//! the lock for the whole batch makes a batch as atomic as a D1 batch. Reads
//! use a small pool of their own connections, which WAL lets run beside the
//! writer. Statements are short, so they run inline on the async thread; a
//! hop to a blocking pool would cost more than the query.

use std::sync::Mutex;

use rusqlite::types::ValueRef;
use rusqlite::{params_from_iter, Connection, OpenFlags};
use serde_json::Value as Json;

use super::{Memo, Row, Statement, Store, StoreError, StoreResult, Value};
use crate::platform::BoxFuture;

/// Prepared statements kept per connection; the tests check that every
/// statement the list runs fits.
pub const STATEMENT_CACHE: usize = 64;

/// The VFS of database files. `unix-excl` takes the file's lock once and
/// holds it while the server has the file open, and keeps the WAL index in
/// the process's memory, shared by its connections. A statement then begins
/// its read transaction without a system call: the default VFS locked and
/// unlocked a byte of the `-shm` file with `fcntl` around every statement
/// (two calls per `GET /posts`, counted with `strace -c`), which was the
/// larger part of what a read cost the store. The price, which this server
/// wants anyway: while it runs, no other process can open the file (a second
/// server on it fails to start rather than sharing it; stop the server to
/// open the file with `sqlite3`).
pub const VFS: &str = if cfg!(unix) { "unix-excl" } else { "win32" };

/// The one schema, shared with D1.
pub const SCHEMA: &str = include_str!("../../../schema.sql");

pub struct SqliteStore {
    writer: Mutex<Connection>,
    /// Empty for `:memory:`, where every connection would be its own database.
    readers: Mutex<Vec<Connection>>,
    path: Option<String>,
    memo: Memo,
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError(e.to_string())
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`, or a private
    /// in-memory one for `:memory:`, and applies the schema.
    pub fn open(path: &str) -> StoreResult<Self> {
        let memory = path == ":memory:";
        let writer = if memory {
            Connection::open_in_memory()?
        } else {
            Connection::open_with_flags_and_vfs(path, OpenFlags::default(), VFS)?
        };
        configure(&writer, !memory)
            .and_then(|()| super::migrate::apply(&writer).map(drop))
            .map_err(|e| match e.sqlite_error_code() {
                // The file is held by another process (see `VFS`).
                Some(rusqlite::ErrorCode::DatabaseBusy) => StoreError(format!(
                    "{e} (another process has the file open: one needhave serve per database)"
                )),
                _ => e.into(),
            })?;
        Ok(SqliteStore {
            writer: Mutex::new(writer),
            readers: Mutex::new(Vec::new()),
            path: (!memory).then(|| path.to_string()),
            // This process holds the file (see `VFS`), or the database is
            // its own (`:memory:`): every write goes through here.
            memo: Memo::sole_writer(),
        })
    }

    /// Direct access for tests and the benchmark seeder, never handlers.
    pub fn with_connection<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let out = f(&conn);
        // It may have written.
        self.memo.wrote();
        out
    }

    fn reader(&self) -> StoreResult<Option<Connection>> {
        let Some(path) = &self.path else {
            return Ok(None);
        };
        if let Some(c) = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop() {
            return Ok(Some(c));
        }
        let c = Connection::open_with_flags_and_vfs(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            VFS,
        )?;
        configure(&c, false)?;
        Ok(Some(c))
    }

    fn run_batch(&self, statements: &[Statement]) -> StoreResult<Vec<Vec<Row>>> {
        let writes = statements.iter().any(|s| is_write(s.sql));
        if !writes {
            if let Some(conn) = self.reader()? {
                let out = in_transaction(&conn, "BEGIN", statements);
                self.readers
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(conn);
                return out;
            }
        }
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let out = in_transaction(
            &conn,
            if writes { "BEGIN IMMEDIATE" } else { "BEGIN" },
            statements,
        );
        if writes {
            // After the commit (or rollback), before the caller hears of it.
            self.memo.wrote();
        }
        out
    }
}

fn configure(conn: &Connection, file: bool) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // Every statement the list runs stays prepared: rusqlite keeps 16 by
    // default, fewer than the list's statements, and an evicted one is
    // parsed and planned again on its next call.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    if file {
        // WAL + NORMAL: a commit survives the process being killed (the
        // WAL is in the OS's hands); readers never block the writer.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
    }
    Ok(())
}

fn is_write(sql: &str) -> bool {
    let head = sql.trim_start().get(..6).unwrap_or("").to_ascii_uppercase();
    head != "SELECT" && !head.starts_with("WITH")
}

fn in_transaction(
    conn: &Connection,
    begin: &str,
    statements: &[Statement],
) -> StoreResult<Vec<Vec<Row>>> {
    // One statement that only reads is atomic on its own; and the
    // transaction statements are cached rather than parsed on every call.
    if begin == "BEGIN" && statements.len() == 1 {
        return Ok(vec![run_one(conn, &statements[0])?]);
    }
    conn.prepare_cached(begin)?.execute([])?;
    let result = statements.iter().map(|s| run_one(conn, s)).collect();
    match &result {
        Ok(_) => {
            conn.prepare_cached("COMMIT")?.execute([])?;
        }
        Err(_) => {
            let _ = conn.execute_batch("ROLLBACK");
        }
    }
    result
}

fn run_one(conn: &Connection, s: &Statement) -> StoreResult<Vec<Row>> {
    let mut stmt = conn.prepare_cached(s.sql)?;
    // Named only when there is a row to name: an unchanged public list
    // returns none.
    let mut names: Vec<String> = Vec::new();
    let params = s.params.iter().map(|v| match v {
        Value::Null => rusqlite::types::Value::Null,
        Value::Int(n) => rusqlite::types::Value::Integer(*n),
        Value::Text(t) => rusqlite::types::Value::Text(t.clone()),
    });
    let mut rows = stmt.query(params_from_iter(params))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        if names.is_empty() {
            names = row
                .as_ref()
                .column_names()
                .iter()
                .map(|n| n.to_string())
                .collect();
        }
        let mut map = Row::new();
        for (i, name) in names.iter().enumerate() {
            let v = match row.get_ref(i)? {
                ValueRef::Null => Json::Null,
                ValueRef::Integer(n) => Json::from(n),
                ValueRef::Real(f) => Json::from(f),
                ValueRef::Text(t) => Json::from(match std::str::from_utf8(t) {
                    Ok(s) => s.to_string(),
                    Err(_) => String::from_utf8_lossy(t).into_owned(),
                }),
                ValueRef::Blob(b) => Json::from(hex::encode(b)),
            };
            map.insert(name.clone(), v);
        }
        out.push(map);
    }
    Ok(out)
}

impl Store for SqliteStore {
    fn batch(&self, statements: Vec<Statement>) -> BoxFuture<'_, StoreResult<Vec<Vec<Row>>>> {
        let result = self.run_batch(&statements);
        Box::pin(async move { result })
    }

    fn memo(&self) -> Option<&Memo> {
        Some(&self.memo)
    }
}
