//! A store on a database file that a server may be serving: one plain
//! connection, no lock of the list's own, each batch one transaction. What
//! the operator's commands use (a removal while `needhave serve` runs on
//! the file), and the tests that play the operator beside a server.
//!
//! The server sees what such a batch commits at once: its kept list
//! follows the WAL index, which every writer moves.

use std::sync::Mutex;

use rusqlite::{Connection, OpenFlags};

use super::run::run_one;
use crate::platform::BoxFuture;
use crate::store::migrate::VERSION;
use crate::store::{Row, Statement, Store, StoreError, StoreResult};

/// A connection to the list's file at `path`, beside whatever else has it
/// open.
pub struct Beside {
    conn: Mutex<Connection>,
}

impl Beside {
    /// Opens the list's file at `path`, which must exist and be of this
    /// build's schema: a file of another release is upgraded by
    /// `needhave serve`, which may be serving an older one right now.
    pub fn open(path: &str) -> StoreResult<Self> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError(format!("{path}: {e}")))?;
        // A server's group commit holds the write lock for a moment.
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version != VERSION {
            return Err(StoreError(format!(
                "{path} is at schema version {version}, this build writes {VERSION}: \
                 open it once with this build's needhave serve"
            )));
        }
        Ok(Beside {
            conn: Mutex::new(conn),
        })
    }
}

impl Store for Beside {
    fn batch(&self, statements: Vec<Statement>) -> BoxFuture<'_, StoreResult<Vec<Vec<Row>>>> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let result = (|| {
            // Immediate: the write lock first, so that the batch's checks
            // and its writes see one state of the file.
            let tx = rusqlite::Transaction::new_unchecked(
                &conn,
                rusqlite::TransactionBehavior::Immediate,
            )?;
            let mut out = Vec::with_capacity(statements.len());
            for s in &statements {
                out.push(run_one(&tx, s)?);
            }
            tx.commit()?;
            Ok(out)
        })();
        Box::pin(async move { result })
    }
}
