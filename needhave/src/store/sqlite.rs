//! The store on an embedded SQLite file (rusqlite, bundled): `needhave serve`
//! and the tests.
//!
//! An ordinary SQLite file in WAL mode, with the default VFS and locking:
//! while the server runs, other processes may read it (`sqlite3`,
//! `sqlite3 .backup`, Litestream, `needhave backup`) and even write it.
//!
//! Writes are durable before they are answered (`synchronous=FULL`: the WAL
//! is fsynced at every commit, before the commit is published to readers)
//! and go through one writer thread that commits concurrent batches
//! together (`group`). `NORMAL` plus an fsync of our own after each commit
//! would make the same one fsync per group, but the commit would be visible
//! to readers, this server's and others', before it is on disk: a list could
//! show a post that a power cut then takes back. `FULL` also fsyncs the WAL
//! header once each time the WAL restarts, which is rare.
//!
//! Each batch of a group runs in a savepoint, and SQLite keeps a page's
//! content from before the savepoint in a journal of its own until the
//! batch ends, so that a failed batch can be taken back. By default that
//! journal goes to a temporary file past 64 KiB, and a create that moves
//! the waiting words into the index passes it: a system call for every
//! page it changes (docs/design/search-costs.md, "What the index costs a
//! create"). The writer keeps it in memory (`temp_store=MEMORY`):
//! at most the pages one batch changes, and never needed after a crash,
//! since the WAL holds only committed transactions.
//!
//! Reads use a pool of their own connections, which WAL lets run beside
//! the writer, on tokio's blocking pool rather than the async threads, each
//! read under a budget of time and within its client's share of the
//! readers (`reads`): a slow statement holds one reader, never a thread
//! that every other request needs. The public list reads the WAL index
//! header to know whether it changed (`walclock`), so it needs no lock at
//! all, nor a statement while nothing changed; that is why
//! the exclusive-locking VFS (`unix-excl`), which once saved the list its
//! `fcntl` pair per read, is gone rather than kept behind a flag: the other
//! reads are a handful of statements beside a fsync-bound write path.

mod admit;
pub mod beside;
mod files;
mod group;
pub mod reads;
mod run;
pub mod segments;
mod walclock;

use run::{run_one, unavailable};

pub use group::{on_commit, Policy as GroupPolicy, Stats as GroupStats};
pub use reads::{Caller, Policy as ReadPolicy};

use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OpenFlags};
use tokio::sync::oneshot;

use super::{Clock, Memo, Row, Statement, Store, StoreError, StoreResult};
use crate::platform::BoxFuture;

/// Prepared statements kept per connection; the tests check that every
/// statement the list runs fits.
pub const STATEMENT_CACHE: usize = 64;

/// The synchronous mode the power-loss test may weaken, to show that the
/// test can fail (`NEEDHAVE_TEST_SYNCHRONOUS=NORMAL`); never for serving.
const SYNCHRONOUS_FOR_TESTS: &str = "NEEDHAVE_TEST_SYNCHRONOUS";

pub struct SqliteStore {
    // Dropped in this order (see `Drop`).
    /// The writer thread's queue and the thread; `None` once dropping.
    jobs: Mutex<Option<Sender<group::Job>>>,
    thread: Option<std::thread::JoinHandle<()>>,
    memo: Arc<Memo>,
    writer: Arc<Mutex<Connection>>,
    /// Where reads run, shared with the threads that run them.
    reads: Arc<Readers>,
    path: Option<String>,
    /// The file and the identity it had when opened (`None` for `:memory:`).
    file: Option<(String, files::Identity)>,
    /// The lock that keeps a second server off the file (`files::hold`).
    _held: Option<std::fs::File>,
    stats: Arc<GroupStats>,
    /// This open made the file (it did not exist before).
    created: bool,
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError(e.to_string())
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`, or a private
    /// in-memory one for `:memory:`, and applies the schema; writes are
    /// grouped by the default [`GroupPolicy`].
    pub fn open(path: &str) -> StoreResult<Self> {
        Self::open_with(path, GroupPolicy::default())
    }

    /// [`open`](Self::open), with writes grouped by `policy`.
    ///
    /// A file this user cannot write (or whose directory it cannot write,
    /// where SQLite makes its side files) is refused. A file that was there
    /// is first checked (`admit`): one that is not a database, is damaged,
    /// is of a newer release or of another application is refused,
    /// untouched. A file this open created is
    /// removed again, with its side files, if the open fails. Every error
    /// names the path.
    pub fn open_with(path: &str, policy: GroupPolicy) -> StoreResult<Self> {
        if path.is_empty() {
            // SQLite would open a private temporary database, and the salt
            // would be kept in a file named `.salt`.
            return Err(StoreError(
                "the database path is empty: name a file, or :memory:".into(),
            ));
        }
        let existed = path == ":memory:" || std::fs::symlink_metadata(path).is_ok();
        let opened = Self::open_checked(path, policy, existed);
        if opened.is_err() && !existed {
            files::remove_created(path);
        }
        opened
    }

    fn open_checked(path: &str, policy: GroupPolicy, existed: bool) -> StoreResult<Self> {
        let memory = path == ":memory:";
        let cannot = |e: &dyn std::fmt::Display| StoreError(format!("cannot open {path}: {e}"));
        let held = if memory {
            None
        } else {
            files::create_private(path)
                .map_err(|e| StoreError(format!("cannot create {path}: {e}")))?;
            Some(files::hold(path).map_err(|e| cannot(&e))?)
        };
        if !memory {
            files::writable(path).map_err(|e| StoreError(format!("cannot write {path}: {e}")))?;
        }
        let writer = if memory {
            Connection::open_in_memory()?
        } else {
            Connection::open(path).map_err(|e| cannot(&e))?
        };
        // SQLite's own word, after the kernel's: a file it could only open
        // read-only would answer every write with an error.
        if writer.is_readonly(rusqlite::MAIN_DB).unwrap_or(true) {
            return Err(StoreError(format!(
                "cannot write {path}: SQLite opened it read-only"
            )));
        }
        // Without the journal yet: nothing is written before the file is
        // admitted.
        configure(&writer, false).map_err(|e| cannot(&e))?;
        if existed && !memory {
            admit::check(&writer, path).map_err(StoreError)?;
        }
        // The upgrade runs in its own transaction, before the switch to
        // WAL: a file it cannot bring to the schema (another application's
        // that happens to have a `posts` table) is rolled back to exactly
        // what it was, in the journal mode it had.
        let upgrade = super::migrate::apply(&writer).map_err(|e| {
            StoreError(format!("cannot bring {path} to this release's schema: {e}"))
        })?;
        // Now the journal too: WAL stays with the file. Then a read, which
        // opens the WAL index the memo's clock maps (below).
        configure(&writer, !memory).map_err(|e| cannot(&e))?;
        writer
            .query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
            .map_err(|e| cannot(&e))?;
        // After the upgrade, whose sorts may be as large as the list: from
        // here the writer's temporary data is a batch's savepoint journal.
        writer
            .pragma_update(None, "temp_store", "MEMORY")
            .map_err(|e| cannot(&e))?;
        tracing::debug!(
            target: "needhave::store",
            path,
            created = !existed,
            upgraded_from = upgrade.as_ref().map(|u| u.from),
            "database opened"
        );
        let memo = Arc::new(if memory {
            // Its own database: every write goes through here.
            Memo::sole_writer()
        } else {
            // Others may write the file: ask the WAL index.
            // SAFETY: the writer connection stays open while the memo can be
            // read: only the store hands the memo out, and its drop closes
            // the writer last (see `Drop`).
            match unsafe { walclock::WalClock::of(&writer) } {
                Some(clock) => Memo::with_clock(Clock::Reading(Box::new(move || clock.read()))),
                None => Memo::new(),
            }
        });
        let file = if memory {
            None
        } else {
            let identity = files::Identity::of(path)
                .ok_or_else(|| StoreError(format!("{path} vanished while opening")))?;
            Some((path.to_string(), identity))
        };
        let writer = Arc::new(Mutex::new(writer));
        let stats = Arc::new(GroupStats::default());
        let (jobs, thread) = group::start(group::Writer {
            conn: writer.clone(),
            memo: memo.clone(),
            file: file.clone(),
            policy,
            stats: stats.clone(),
        })
        .map_err(|e| StoreError(format!("cannot start the writer thread: {e}")))?;
        Ok(SqliteStore {
            jobs: Mutex::new(Some(jobs)),
            thread: Some(thread),
            memo,
            reads: Readers::new(path, &writer, &file, ReadPolicy::default()),
            writer,
            path: (!memory).then(|| path.to_string()),
            file,
            _held: held,
            stats,
            created: !existed,
        })
    }

    /// Closes the store and, if its open created the file, removes it and
    /// its side files: a start-up that fails after the open (the IP salt
    /// cannot be kept) leaves nothing behind either.
    pub fn discard(self) {
        let created = self.path.clone().filter(|_| self.created);
        drop(self);
        if let Some(path) = created {
            files::remove_created(&path);
        }
    }

    /// What group commit has done so far (for the log at stop, and tests).
    pub fn group_stats(&self) -> &GroupStats {
        &self.stats
    }

    /// This store with its reads run by `policy` (`reads`) rather than the
    /// default.
    pub fn with_reads(mut self, policy: ReadPolicy) -> Self {
        self.reads = Readers::new(
            self.path.as_deref().unwrap_or(":memory:"),
            &self.writer,
            &self.file,
            policy,
        );
        self
    }

    /// Direct access for tests and the benchmark seeder, never handlers.
    pub fn with_connection<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let out = f(&conn);
        // It may have written.
        self.memo.wrote();
        out
    }

    /// Moves everything in the WAL into the database file and empties the
    /// WAL, so that the `.db` alone holds every write (a clean stop).
    pub fn checkpoint(&self) -> StoreResult<()> {
        if self.path.is_none() {
            return Ok(());
        }
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let (busy, log, done): (i64, i64, i64) =
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?;
        if busy != 0 {
            return Err(StoreError(format!(
                "checkpoint incomplete: {done} of {log} WAL frames copied (another process is reading)"
            )));
        }
        Ok(())
    }

    /// Writes a consistent copy of the database at `db` to `out` (a new
    /// file, created `0600`), while a server may be writing it: `VACUUM
    /// INTO` reads one snapshot (a read transaction, which in WAL never
    /// blocks the writer nor waits for it) and writes it compacted.
    ///
    /// The copy is written under a temporary name beside `out`
    /// (`OUT.partial-PID`), fsynced, and only then linked to `out`, so a copy
    /// killed half-way never sits at the name of a backup. While the
    /// snapshot is read, no checkpoint can pass it and a busy server's WAL
    /// grows; it is truncated after (`truncate_wal`), so the WAL is left no
    /// larger than it was found. The copy is a plain rollback-journal file,
    /// whole without any `-wal`.
    pub fn backup(db: &str, out: &str) -> StoreResult<()> {
        let io = |what: &str, e: std::io::Error| StoreError(format!("{what}: {e}"));
        if std::fs::symlink_metadata(out).is_ok() {
            return Err(StoreError(format!(
                "{out} exists; a backup never overwrites"
            )));
        }
        let source = Connection::open_with_flags(
            db,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError(format!("cannot open {db}: {e}")))?;
        source.busy_timeout(std::time::Duration::from_secs(5))?;
        let partial = format!("{out}.partial-{}", std::process::id());
        let _ = std::fs::remove_file(&partial);
        files::create_private(&partial).map_err(|e| io(&partial, e))?;
        let copied = source
            .execute("VACUUM INTO ?1", [&partial])
            .map_err(StoreError::from)
            .and_then(|_| {
                std::fs::File::open(&partial)
                    .and_then(|f| f.sync_all())
                    .map_err(|e| io(&partial, e))
            })
            // A link, not a rename: it fails rather than replace a file
            // that appeared at `out` meanwhile.
            .and_then(|()| std::fs::hard_link(&partial, out).map_err(|e| io(out, e)));
        let _ = std::fs::remove_file(&partial);
        copied?;
        files::sync_parent(out).map_err(|e| io(out, e))?;
        truncate_wal(&source, std::time::Duration::from_secs(10));
        Ok(())
    }

    /// Queues a write batch for the writer thread (`group`).
    fn write(&self, statements: Vec<Statement>) -> oneshot::Receiver<group::Answer> {
        let (reply, answer) = oneshot::channel();
        let job = group::Job { statements, reply };
        // If the writer is gone, the dropped reply answers as an error.
        if let Some(jobs) = &*self.jobs.lock().unwrap_or_else(|p| p.into_inner()) {
            let _ = jobs.send(job);
        }
        answer
    }
}

/// The read path: the readers' connections, and the places and budget
/// of `reads`. Shared with the blocking threads reads run on.
struct Readers {
    /// `None` for `:memory:`, where every connection would be its own
    /// database and reads take the writer's.
    path: Option<String>,
    /// Reader connections not in use: at most one a place.
    idle: Mutex<Vec<Connection>>,
    writer: Arc<Mutex<Connection>>,
    file: Option<(String, files::Identity)>,
    gate: Arc<reads::Gate>,
    /// [`reads::SLOW_READS_FOR_TESTS`]: reads with a statement holding this
    /// text are slowed.
    slow_for_tests: Option<String>,
}

impl Readers {
    fn new(
        path: &str,
        writer: &Arc<Mutex<Connection>>,
        file: &Option<(String, files::Identity)>,
        policy: ReadPolicy,
    ) -> Arc<Readers> {
        Arc::new(Readers {
            path: (path != ":memory:").then(|| path.to_string()),
            idle: Mutex::new(Vec::new()),
            writer: writer.clone(),
            file: file.clone(),
            gate: reads::Gate::new(policy),
            slow_for_tests: std::env::var(reads::SLOW_READS_FOR_TESTS)
                .ok()
                .filter(|s| !s.is_empty()),
        })
    }

    /// A read batch, as a place among the readers allows and on a blocking
    /// thread (`reads`).
    async fn read(self: Arc<Self>, statements: Vec<Statement>) -> StoreResult<Vec<Vec<Row>>> {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // Polled outside tokio: nothing to hop from, nobody to share with.
            return self.run(&statements);
        };
        let caller = Caller::current();
        let place = match self
            .gate
            .enter(caller.as_ref().and_then(Caller::client))
            .await
        {
            Ok(place) => place,
            Err(why) => {
                if let Some(c) = &caller {
                    c.count_busy(false);
                }
                return Err(reads::refused(why));
            }
        };
        let result = runtime
            .spawn_blocking(move || {
                let out = self.run(&statements);
                // Held until the statements end, even if the request is gone.
                drop(place);
                out
            })
            .await
            .unwrap_or_else(|e| Err(StoreError(format!("a read's thread failed: {e}"))));
        if let (Some(c), Err(e)) = (&caller, &result) {
            if e.is_busy() {
                c.count_busy(true);
            }
        }
        result
    }

    fn run(&self, statements: &[Statement]) -> StoreResult<Vec<Vec<Row>>> {
        self.run_pooled(statements).map_err(|e| match &self.file {
            // A read that fails because the file is gone says so.
            Some((path, identity)) if files::Identity::of(path) != Some(*identity) => {
                unavailable(path)
            }
            _ => e,
        })
    }

    fn run_pooled(&self, statements: &[Statement]) -> StoreResult<Vec<Vec<Row>>> {
        if let Some(conn) = self.reader()? {
            let out = self.within_budget(&conn, statements);
            self.idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(conn);
            return out;
        }
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        self.within_budget(&conn, statements)
    }

    fn within_budget(
        &self,
        conn: &Connection,
        statements: &[Statement],
    ) -> StoreResult<Vec<Vec<Row>>> {
        self.gate.run(conn, |conn| {
            if let Some(text) = &self.slow_for_tests {
                if statements.iter().any(|s| s.sql.contains(text.as_str())) {
                    conn.prepare_cached(reads::SPIN)?
                        .query_row([], |_| Ok(()))?;
                }
            }
            read_transaction(conn, statements)
        })
    }

    fn reader(&self) -> StoreResult<Option<Connection>> {
        let Some(path) = &self.path else {
            return Ok(None);
        };
        if let Some(c) = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop() {
            return Ok(Some(c));
        }
        let c = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        configure(&c, false)?;
        Ok(Some(c))
    }
}

impl Drop for SqliteStore {
    /// Ends the writer thread first, so that the writer connection closes
    /// with the store's last reference to it, before the memo's clock (which
    /// reads the connection's map) could outlive it, and before the file's
    /// lock (`files::hold`), whose descriptor's close drops this process's
    /// SQLite locks on the file too.
    fn drop(&mut self) {
        self.jobs.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn configure(conn: &Connection, file: bool) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // Every statement the list runs stays prepared: rusqlite keeps 16 by
    // default, fewer than the list's statements, and an evicted one is
    // parsed and planned again on its next call.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    if file {
        // WAL: readers never block the writer, nor the writer them. FULL:
        // see the module doc.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        let synchronous = match std::env::var(SYNCHRONOUS_FOR_TESTS).as_deref() {
            Ok("NORMAL") => "NORMAL",
            _ => "FULL",
        };
        conn.pragma_update(None, "synchronous", synchronous)?;
    }
    Ok(())
}

/// Empties the WAL of `conn`'s database into it and truncates the file to
/// nothing, trying again until `within` has passed. A `TRUNCATE`
/// checkpoint waits (the busy timeout) for the writer's lock and for every
/// reader to reach the newest snapshot, then holds off writers for the
/// copy; under a server's steady writes it can still give up, which SQLite
/// reports in the answer's first column, not as an error, so each try reads
/// it. Returns whether the WAL was truncated.
fn truncate_wal(conn: &Connection, within: std::time::Duration) -> bool {
    let started = std::time::Instant::now();
    loop {
        let busy = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            r.get::<_, i64>(0)
        });
        match busy {
            Ok(0) => return true,
            _ if started.elapsed() >= within => {
                tracing::warn!(
                    target: "needhave::store",
                    "the WAL could not be truncated after the backup: writers kept it busy"
                );
                return false;
            }
            _ => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
}

fn is_write(sql: &str) -> bool {
    let head = sql.trim_start().get(..6).unwrap_or("").to_ascii_uppercase();
    head != "SELECT" && !head.starts_with("WITH")
}

/// A read-only batch: one statement is atomic on its own; more share one
/// read transaction (the transaction statements are cached, not parsed on
/// every call).
fn read_transaction(conn: &Connection, statements: &[Statement]) -> StoreResult<Vec<Vec<Row>>> {
    if statements.len() == 1 {
        return Ok(vec![run_one(conn, &statements[0])?]);
    }
    conn.prepare_cached("BEGIN")?.execute([])?;
    let result = statements.iter().map(|s| run_one(conn, s)).collect();
    let _ = conn
        .prepare_cached("COMMIT")
        .and_then(|mut s| s.execute([]));
    result
}

impl Store for SqliteStore {
    fn batch(&self, statements: Vec<Statement>) -> BoxFuture<'_, StoreResult<Vec<Vec<Row>>>> {
        if !statements.iter().any(|s| is_write(s.sql)) {
            return Box::pin(self.reads.clone().read(statements));
        }
        let answer = self.write(statements);
        Box::pin(async move {
            answer
                .await
                .unwrap_or_else(|_| Err(StoreError("the writer thread is gone".into())))
        })
    }

    fn memo(&self) -> Option<&Memo> {
        Some(&self.memo)
    }

    fn gone(&self) -> Option<StoreError> {
        match &self.file {
            Some((path, identity)) if files::Identity::of(path) != Some(*identity) => {
                Some(unavailable(path))
            }
            _ => None,
        }
    }
}
