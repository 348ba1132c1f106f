//! Group commit: the one writer thread, and how it turns the write batches
//! that arrive while it is busy into one durable transaction.
//!
//! A write is acknowledged only once its transaction is on disk, and an fsync
//! costs from 0.1 ms on a quiet disk to several ms beside other I/O: one per
//! write would cap the list at a few hundred writes a second. So writes queue
//! for one thread, which takes everything queued, runs each batch inside a
//! `SAVEPOINT` of one `BEGIN IMMEDIATE` transaction, commits once (one WAL
//! fsync, `synchronous=FULL`), and only then answers each batch. A batch that
//! fails rolls back to its savepoint and leaves the others' work alone; the
//! limits are in the statements, which run one after another on the one
//! connection and see every earlier batch of the group, so they hold exactly
//! as they do one transaction at a time.
//!
//! Where the group closes: at [`MAX_GROUP`] batches, or once the queue is
//! empty ([`WAIT`] is zero: no window); both are `needhave serve` flags
//! (`--group-max`, `--group-wait-us`), since what they trade depends on the
//! operator's disk. The defaults come from the sweep (`bash
//! bench/group-sweep.sh`; the tables and the load they were measured under
//! are in docs/design/group-commit.md, "Where a group closes"):
//!
//! - **The cap must not bind below the writes in flight.** Every cap under
//!   the connection count lost: at 64 connections a cap of 16 gave 0.23 to
//!   0.34 fsyncs per acknowledged write and 1 264 to 1 432 writes/s (medians
//!   of two runs) against 0.15 to 0.30 and 1 663 to 1 998 for any cap of 64
//!   or more; at 256 connections a cap of 16 had a p99 of 663 ms against
//!   261 to 320 ms for 64, 256 and 1 024, which were even (mean groups of
//!   11 and 6).
//! - **Why 256 and not more:** a write in a full group costs its own run,
//!   `t`, plus its share of the fsync, `f / G`. The writer measured `t` at
//!   about 55 µs (42 to 127 µs on a loaded machine) and one-row FULL
//!   transactions took 1.4 to 8.1 ms; at 256 the share is at most 32 µs,
//!   under `t`, so a bigger group saves little (at most 24 µs a write at
//!   1 024) while its first batch waits behind all the others (256 × 55 µs
//!   ≈ 14 ms before the COMMIT starts; 1 024: ≈ 56 ms). At 64 the share
//!   would reach 127 µs, more than two batches, on the slowest fsync seen.
//! - **No window.** At one connection a window is pure wait: 301, 167,
//!   143, 124 writes/s and a p50 of 1.6, 2.2, 3.0, 4.7 ms for 0, 100, 500,
//!   2 000 µs (in the other run the p50 rose the same, 1.9 to 4.7 ms, and
//!   the rate fell only at 2 000 µs). At 8 connections a 2 ms window lost in both runs (547 against
//!   1 364 writes/s, p50 14 against 4.9 ms). At 64 a window cut fsyncs
//!   (0.30 to 0.06 at 2 ms) without a throughput gain that stood out of the
//!   noise. Under load the queue refills during each fsync by itself (what
//!   arrives while a commit is on disk is the next group), which is the
//!   window for free; PostgreSQL's `commit_delay` and MySQL's
//!   `binlog_group_commit_sync_delay` default to zero for the same reason.
//!   An operator whose fsyncs are slow and who would rather spend latency
//!   than fsyncs can set one.
//!
//! The index of words costs a group commit nothing of its own: a create
//! leaves its words in `words_new`, and the create that gathers 64 there
//! moves them into the index in its batch (`store::hot_cold::trigger`).
//! FTS5 writes the words of a transaction as a segment when the next
//! savepoint opens (one per batch), so a move is one segment, whichever
//! group it falls in.
//!
//! When its queue has stayed empty for [`QUIET`] after a commit, the thread
//! merges the index of words in bounded steps, looking at the queue
//! between them (`segments.rs`): a write that arrives waits for one step
//! at most.
//!
//! The thread runs on its own, not on the async runtime: an fsync blocks,
//! and while it does the runtime must go on reading requests, or there
//! would be no next group to gather.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::files::Identity;
use super::run::{run_one, unavailable};
use crate::store::{Memo, Row, Statement, StoreError, StoreResult};

/// The most batches one commit carries, by default: the smallest power of
/// two at which a write's share of the slowest fsync measured is under the
/// time it takes to run (module doc).
pub const MAX_GROUP: usize = 256;

/// How long a group stays open for more batches after its first, by
/// default: not at all (module doc: a window only ever cost latency, and
/// the queue refills during each fsync without one).
pub const WAIT: Duration = Duration::ZERO;

/// How long the queue stays empty after a commit before the writer merges
/// the index of words: a client that writes one post after another (a gap
/// of a few milliseconds) never waits for a merge step between its writes,
/// and a list that gets a post now and then merges right after each.
pub const QUIET: Duration = Duration::from_millis(50);

/// Where a group closes: at `max` batches, or `wait` after its first batch
/// was taken (zero: as soon as the queue is empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub max: usize,
    pub wait: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            max: MAX_GROUP,
            wait: WAIT,
        }
    }
}

/// What the writer has committed so far: its groups, the batches in them,
/// the largest group, and its time (µs) running batches and committing
/// them (the `COMMIT`, which is the fsync): what a group's size trades.
#[derive(Debug, Default)]
pub struct Stats {
    pub commits: AtomicU64,
    pub batches: AtomicU64,
    pub largest: AtomicU64,
    pub running_us: AtomicU64,
    pub committing_us: AtomicU64,
    /// Steps of merging the index of words, done while no write waited.
    pub merges: AtomicU64,
}

/// Told each group's size and the time of its COMMIT (the fsync), when
/// something asked ([`on_commit`]): the metrics listener, natively.
static ON_COMMIT: OnceLock<fn(usize, Duration)> = OnceLock::new();

/// Has `observe` told of every group commit from now on (the first caller
/// wins; the process has one metrics registry).
pub fn on_commit(observe: fn(usize, Duration)) {
    let _ = ON_COMMIT.set(observe);
}

pub type Answer = StoreResult<Vec<Vec<Row>>>;

pub struct Job {
    pub statements: Vec<Statement>,
    pub reply: oneshot::Sender<Answer>,
}

pub struct Writer {
    pub conn: Arc<Mutex<Connection>>,
    pub memo: Arc<Memo>,
    /// The database file and the identity it had when opened (`None` for
    /// `:memory:`).
    pub file: Option<(String, Identity)>,
    pub policy: Policy,
    pub stats: Arc<Stats>,
}

/// Starts the writer thread; it ends when the sender is gone.
pub fn start(writer: Writer) -> std::io::Result<(Sender<Job>, JoinHandle<()>)> {
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("needhave-writer".into())
        .spawn(move || writer.run(rx))?;
    Ok((tx, thread))
}

impl Writer {
    fn run(self, rx: Receiver<Job>) {
        let max = self.policy.max.max(1);
        // Whether the index may have segments to merge: after every commit
        // (a file opened with many is merged after its first write).
        let mut merge = false;
        // Whether nothing came for `QUIET` since the last commit.
        let mut quiet = false;
        loop {
            let first = match rx.try_recv() {
                Ok(job) => job,
                Err(TryRecvError::Disconnected) => break,
                Err(TryRecvError::Empty) if merge && quiet => {
                    // Nothing waits: one bounded step, then the queue again.
                    merge = self.merge_step();
                    continue;
                }
                Err(TryRecvError::Empty) if merge => match rx.recv_timeout(QUIET) {
                    Ok(job) => job,
                    Err(RecvTimeoutError::Timeout) => {
                        quiet = true;
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                Err(TryRecvError::Empty) => match rx.recv() {
                    Ok(job) => job,
                    Err(_) => break,
                },
            };
            let closes = Instant::now() + self.policy.wait;
            let mut group = vec![first];
            while group.len() < max {
                let job = match rx.try_recv() {
                    Ok(job) => job,
                    Err(TryRecvError::Empty) if !self.policy.wait.is_zero() => {
                        match rx.recv_timeout(closes.saturating_duration_since(Instant::now())) {
                            Ok(job) => job,
                            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                                break
                            }
                        }
                    }
                    Err(_) => break,
                };
                group.push(job);
            }
            let answers = self.commit(&group);
            self.stats.commits.fetch_add(1, Ordering::Relaxed);
            self.stats
                .batches
                .fetch_add(group.len() as u64, Ordering::Relaxed);
            self.stats
                .largest
                .fetch_max(group.len() as u64, Ordering::Relaxed);
            for (job, answer) in group.into_iter().zip(answers) {
                // The caller may have gone (its connection closed); its
                // write stands either way.
                let _ = job.reply.send(answer);
            }
            merge = true;
            quiet = false;
        }
    }

    /// One step of merging the index's segments (`segments::step`);
    /// whether there may be more. An error (another process holding the
    /// file's write lock, a full disk) ends merging until the next commit:
    /// it is the writes' to report.
    fn merge_step(&self) -> bool {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        match super::segments::step(&conn) {
            Ok(worked) => {
                if worked {
                    self.stats.merges.fetch_add(1, Ordering::Relaxed);
                }
                worked
            }
            Err(e) => {
                tracing::debug!(target: "needhave::store", error = %e, "merging the index of words");
                false
            }
        }
    }

    /// Runs the group in one transaction and returns each batch's answer,
    /// which is success only if the commit (and its fsync) succeeded and the
    /// file is still the one at the path.
    fn commit(&self, group: &[Job]) -> Vec<Answer> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let started = Instant::now();
        let mut answers: Vec<Answer> = Vec::with_capacity(group.len());
        // Batches whose work is in the open transaction.
        let mut open = Vec::new();
        let mut began = false;
        for (i, job) in group.iter().enumerate() {
            if !began {
                if let Err(e) = conn
                    .prepare_cached("BEGIN IMMEDIATE")
                    .and_then(|mut s| s.execute([]))
                {
                    // Another process holds the write lock past the busy
                    // timeout, or the file is unusable: the rest of the
                    // group would wait as long again.
                    let message = e.to_string();
                    answers.extend((i..group.len()).map(|_| Err(StoreError(message.clone()))));
                    break;
                }
                began = true;
            }
            let answer = one_batch(&conn, &job.statements);
            if answer.is_ok() {
                open.push(i);
            } else if conn.is_autocommit() {
                // The error (a full disk, say) ended the whole transaction:
                // the group's earlier batches went with it.
                for &j in &open {
                    answers[j] = Err(StoreError(
                        "rolled back with the rest of its commit group".into(),
                    ));
                }
                open.clear();
                began = false;
            }
            answers.push(answer);
        }
        let ran = Instant::now();
        let micros = |d: Duration| d.as_micros().min(u128::from(u64::MAX)) as u64;
        self.stats
            .running_us
            .fetch_add(micros(ran - started), Ordering::Relaxed);
        if began {
            if let Err(e) = conn
                .prepare_cached("COMMIT")
                .and_then(|mut s| s.execute([]))
            {
                let _ = conn.execute_batch("ROLLBACK");
                let message = e.to_string();
                for &j in &open {
                    answers[j] = Err(StoreError(message.clone()));
                }
            }
        }
        let committing = ran.elapsed();
        self.stats
            .committing_us
            .fetch_add(micros(committing), Ordering::Relaxed);
        if began {
            if let Some(observe) = ON_COMMIT.get() {
                observe(group.len(), committing);
            }
        }
        tracing::debug!(
            target: "needhave::store",
            batches = group.len(),
            running_us = micros(ran - started),
            committing_us = micros(committing),
            "group committed"
        );
        self.memo.wrote();
        // After the fsync: if the path no longer names the file written, the
        // writes are in a file nobody will open again (or SQLite refused
        // them, having noticed: SQLITE_READONLY_DBMOVED); say so, never 201.
        if let Some((path, identity)) = &self.file {
            if Identity::of(path) != Some(*identity) {
                answers.iter_mut().for_each(|a| *a = Err(unavailable(path)));
            }
        }
        answers
    }
}

/// One batch as its own unit inside the group's transaction: a savepoint,
/// rolled back to if the batch fails.
fn one_batch(conn: &Connection, statements: &[Statement]) -> Answer {
    conn.prepare_cached("SAVEPOINT batch")?.execute([])?;
    let result: Answer = statements.iter().map(|s| run_one(conn, s)).collect();
    if result.is_err() && !conn.is_autocommit() {
        let _ = conn
            .prepare_cached("ROLLBACK TO batch")
            .and_then(|mut s| s.execute([]));
    }
    if !conn.is_autocommit() {
        conn.prepare_cached("RELEASE batch")?.execute([])?;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Kind;
    use crate::store::index::Index;
    use crate::store::prepare;

    fn job(statements: Vec<Statement>) -> Job {
        let (reply, _) = oneshot::channel();
        Job { statements, reply }
    }

    /// A create's batch as the handler makes it, without its guards: the
    /// post with its words, then the move of the words into the index.
    fn create(id: &str, note: &str) -> Vec<Statement> {
        let post = prepare(
            "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
             VALUES (?1, 'need', ?1, 's', 'i', 1)",
        )
        .bind(id);
        std::iter::once(post)
            .chain(Index::without_copy().statements(Kind::Need, id, note))
            .collect()
    }

    /// Creates in one group, past the 64 that make a move: the batch that
    /// makes the 64th post moves them, and a batch that fails after its
    /// move takes the move back with it, so the next batch moves instead.
    /// Every post the group kept is in the index or in `words_new`, once.
    #[test]
    fn a_move_belongs_to_the_batch_that_makes_it() {
        let conn = Connection::open_in_memory().unwrap();
        crate::store::migrate::apply(&conn).unwrap();
        let conn = Arc::new(Mutex::new(conn));
        let writer = Writer {
            conn: conn.clone(),
            memo: Arc::new(Memo::sole_writer()),
            file: None,
            policy: Policy::default(),
            stats: Arc::new(Stats::default()),
        };
        let mut group: Vec<Job> = (0..70)
            .map(|i| job(create(&format!("p{i}"), &format!("alpha w{i}"))))
            .collect();
        // The 64th post's batch fails after its move.
        group[63].statements.push(prepare("SELECT * FROM nowhere"));
        let answers = writer.commit(&group);
        let failed: Vec<usize> = (0..70).filter(|&i| answers[i].is_err()).collect();
        assert_eq!(failed, [63]);
        let conn = conn.lock().unwrap();
        let ids = |sql: &str| -> Vec<String> {
            conn.prepare(sql)
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        let indexed = ids(
            "SELECT p.id FROM post_cold JOIN posts p ON p.rowid = 268435456 - post_cold.rowid \
             WHERE post_cold MATCH '\"\u{207f}alpha\" OR \"\u{2b0}alpha\"' ORDER BY p.rowid",
        );
        let waiting =
            ids("SELECT id FROM words_new JOIN posts ON posts.rowid = post ORDER BY post");
        let name = |i: usize| format!("p{i}");
        // p64 made the 64th post kept: it moved p0..p62 and itself.
        let expected: Vec<String> = (0..65).filter(|&i| i != 63).map(name).collect();
        assert_eq!(indexed, expected);
        assert_eq!(waiting, (65..70).map(name).collect::<Vec<_>>());
        assert!(conn.is_autocommit());
        // One move, one segment.
        let segments: Vec<u64> = super::super::segments::levels(&conn)
            .unwrap()
            .iter()
            .flat_map(|l| l.segments.clone())
            .collect();
        assert_eq!(segments.len(), 1, "{segments:?}");
    }
}
