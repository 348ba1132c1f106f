//! Where reads run, how long they may take, and how much of the readers
//! one client, and the slow reads together, may hold.
//!
//! **Off the async threads.** The runtime's worker threads are as many as
//! the cores and drive every connection: a statement run on one of them
//! stalls every request that thread would have served (the bare list from
//! the memo, `/healthz`) for as long as it runs. So a read's statements
//! run on tokio's blocking pool (`spawn_blocking`), and the request waits
//! for them asleep. The blocking pool rather than threads of our own: it is
//! a pool of threads made on demand and parked when idle, which is what
//! our own would be, and the hop costs the same two wake-ups either way.
//! That hop is what a cheap read pays: on a loaded two-core machine, bench
//! `stall` measured an idle p50 of 0.16 ms for `/healthz` and 0.19 ms for
//! `GET /posts/:id` against 0.13 and 0.15 ms with statements inline.
//! Running the statements in place with `block_in_place`, which hands the
//! thread's worker role to another instead, measured no better (each run
//! within the other's noise, and a worse p90 under attack). The bare list
//! the memo vouches for makes no statement and never hops
//! (`native::serve::kept_list`). The blocking pool's bound (512 threads)
//! and unbounded queue are never reached by reads: at most
//! [`Policy::readers`] run at once.
//!
//! **A place each.** A read takes a place before it hops and gives it
//! back when its statements end, even if its client has gone: at most
//! [`Policy::readers`] reads run at once (a reader connection each, so
//! their page caches are bounded too), of which at most
//! [`Policy::per_client`] are one client's (its IPv4 address or IPv6 /64,
//! `crate::client`, as the server names it in [`Caller`]). A read that
//! finds no place waits in line (tokio's semaphores: first come, first
//! served) for up to [`Policy::wait`], its client's line first, and is
//! then refused with [`StoreError::BUSY`] (503 `busy`, `Retry-After`).
//! So one address's slow searches queue behind each other while everyone
//! else's reads find places, and nothing waits unbounded: the lines are as
//! long as the requests in flight, which the connection caps bound. Places
//! rather than a queue per client served in turn: a client within its
//! share never waits for another's, and the per-address connection cap
//! already bounds what one address has in flight.
//!
//! **Lanes for slow reads.** Places bound how many reads run, not the
//! cores they take: four slow searches on two cores leave every other
//! request waiting for a core (bench `stall`: the cheap reads' p90 3.6 to
//! 9.8 times their idle one with places alone, 0.9 to 1.2 times with
//! lanes). A read that has run for [`SLOW_AFTER`] is slow, and goes on
//! only in one of [`Policy::lanes`] lanes (one core fewer than there are,
//! at least one; `--slow-lanes`); the others wait asleep, first come first
//! served, and a lane passes to the next in line after [`QUANTUM`] while
//! one waits. Ordinary reads, far shorter, never wait for a lane, and a
//! core is left for them, for the async threads and for the writer. The
//! wait is inside the read's budget: a crowd of slow reads is told `busy`
//! rather than queued without end.
//!
//! **A budget per read.** SQLite calls a progress handler every [`STEPS`]
//! virtual-machine instructions (a few microseconds apart); it reads the
//! clock, takes or passes on a lane, and stops the statement once the read
//! has run for [`Policy::budget`] (`--statement-budget-ms`). The read then
//! fails with [`StoreError::BUSY`] and the client is told `busy` with
//! `Retry-After`. A read writes nothing, so a stopped one leaves nothing
//! behind; its transaction is ended before its connection is used again.
//! Wall time rather than instructions: what a read costs the others is how
//! long it holds a place, whatever its statement does with it (a page not
//! yet in memory, a turn waited for a lane). FTS5 expands a query's
//! prefixes inside one instruction, so a statement may overrun its budget
//! by that much.
//!
//! **Writes have no budget.** They run one after another in the writer
//! thread (`group`), off the async threads already, and what they run is
//! the handlers' statements, not a client's query. A create whose batch
//! moves the waiting words into the index (`store::hot_cold`) takes the
//! longest: on a list of 12,000 posts, 200 creates one after another took
//! 3.4 ms at the median and 68 to 95 ms for the three that moved. A budget
//! that stopped a move would roll it back with its savepoint, and the next
//! create would run it again, and be stopped again: no create would pass
//! on a slow disk.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::store::{StoreError, StoreResult};

/// How long a read may run, by default: more than a hundred times the
/// slowest ordinary search measured natively on a list of a million posts
/// (7.8 ms), so that only a search of the pathological kind meets it (eight
/// words, seven of them single letters, on 12,000 posts: 0.4 to 1 s on a
/// loaded two-core machine). An operator whose list or disk is slower may
/// give more (`--statement-budget-ms`).
pub const BUDGET: Duration = Duration::from_millis(1000);

/// One client's reads that run at once, by default: two, so that an
/// agent's few reads in parallel rarely wait, and one address's slow
/// searches hold at most two places.
pub const PER_CLIENT: usize = 2;

/// How long a read waits for a place before it is told `busy`: as long as
/// an answer waits for room in the answer budget (`native::budget`).
pub const WAIT: Duration = Duration::from_millis(500);

/// VM instructions between two looks at the clock: about 20 µs of a
/// statement (a count of five million rows made 95,000 calls in 1.5 to
/// 2 s), so a budget is overrun by that much, and the looks cost nothing
/// measurable (the same count took as long with them as without, medians
/// of 15 runs each).
pub const STEPS: i32 = 1000;

/// Places for reads, all clients together, by default: four a core and
/// at least 8 (a slow search of a few clients leaves room for everyone
/// else's reads) and at most 64 (a reader connection each).
pub fn default_readers() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    (cores * 4).clamp(8, 64)
}

/// How long a read runs before it counts as slow and takes turns in a
/// lane: more than ten times what a cheap read takes on a loaded machine
/// (a kind page of 100 posts: 0.5 ms at the median, 2 ms at p90), and
/// about what the slowest ordinary search takes, so that only slow
/// searches ever wait for one.
pub const SLOW_AFTER: Duration = Duration::from_millis(10);

/// How long a slow read keeps its lane while others wait for one.
pub const QUANTUM: Duration = Duration::from_millis(10);

/// Lanes for slow reads, by default: one core fewer than there are, and at
/// least one, so that slow reads never take every core.
pub fn default_lanes() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| usize::from(n) - 1)
        .max(1)
}

/// How reads are run ([module doc](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// How long a read's statements may run before they are stopped.
    pub budget: Duration,
    /// Reads of one client at once; `0`: no per-client share.
    pub per_client: usize,
    /// Reads at once, all clients together.
    pub readers: usize,
    /// How long a read waits for a place.
    pub wait: Duration,
    /// Slow reads that run at once.
    pub lanes: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            budget: BUDGET,
            per_client: PER_CLIENT,
            readers: default_readers(),
            wait: WAIT,
            lanes: default_lanes(),
        }
    }
}

/// Who is reading, as the server knows it: the client's key for its share,
/// and what became of its reads, for the server's metrics. Set around a
/// request's handling with [`Caller::scope`]; a read made outside any
/// (a test, the benchmark's seeder) has no client and no share.
#[derive(Clone, Default)]
pub struct Caller {
    client: Option<Arc<str>>,
    seen: Arc<Seen>,
}

#[derive(Default)]
struct Seen {
    interrupted: AtomicU32,
    refused: AtomicU32,
}

tokio::task_local! {
    static CALLER: Caller;
}

impl Caller {
    /// A caller counted as `client` (`crate::client::client_key`).
    pub fn new(client: &str) -> Caller {
        Caller {
            client: Some(client.into()),
            seen: Arc::default(),
        }
    }

    /// Runs `f` with its reads made as this caller.
    pub async fn scope<F: Future>(self, f: F) -> F::Output {
        CALLER.scope(self, f).await
    }

    /// Reads of this caller stopped at their budget so far.
    pub fn interrupted(&self) -> u32 {
        self.seen.interrupted.load(Ordering::Relaxed)
    }

    /// Reads of this caller refused for want of a place so far.
    pub fn refused(&self) -> u32 {
        self.seen.refused.load(Ordering::Relaxed)
    }
}

/// The places ([module doc](self)).
pub struct Gate {
    policy: Policy,
    places: Arc<Semaphore>,
    lanes: Arc<Lanes>,
    /// The share of each client with a read running or waiting; an entry
    /// goes when its last read does.
    clients: Mutex<HashMap<Arc<str>, Arc<Semaphore>>>,
}

/// A read's place; given back when dropped.
pub struct Place {
    _place: OwnedSemaphorePermit,
    // Dropped after the place: the client's share goes last.
    _share: Option<Share>,
}

/// A client's part of a [`Place`], or its wait for one.
struct Share {
    permit: Option<OwnedSemaphorePermit>,
    gate: Arc<Gate>,
    client: Arc<str>,
}

impl Drop for Share {
    fn drop(&mut self) {
        self.permit.take();
        let mut clients = self.gate.clients();
        // Only the map holds it: nobody of this client reads or waits.
        if clients
            .get(&self.client)
            .is_some_and(|s| Arc::strong_count(s) == 1)
        {
            clients.remove(&self.client);
        }
    }
}

/// Why a read found no place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Its client's share was full for the whole wait.
    Client,
    /// Every place was taken for the whole wait.
    Full,
}

impl Gate {
    pub fn new(policy: Policy) -> Arc<Gate> {
        Arc::new(Gate {
            places: Arc::new(Semaphore::new(policy.readers.max(1))),
            lanes: Lanes::new(policy.lanes),
            clients: Mutex::new(HashMap::new()),
            policy,
        })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    fn clients(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Arc<Semaphore>>> {
        // A map of counters: a panic cannot leave it half-changed.
        self.clients.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for a read of `client`, its share first, waiting up to the
    /// policy's `wait` in all.
    pub async fn enter(self: &Arc<Self>, client: Option<&Arc<str>>) -> Result<Place, Refused> {
        let deadline = tokio::time::Instant::now() + self.policy.wait;
        let share = match client.filter(|_| self.policy.per_client > 0) {
            None => None,
            Some(client) => {
                let line = self
                    .clients()
                    .entry(client.clone())
                    .or_insert_with(|| Arc::new(Semaphore::new(self.policy.per_client)))
                    .clone();
                let mut share = Share {
                    permit: None,
                    gate: self.clone(),
                    client: client.clone(),
                };
                share.permit = Some(take(line, deadline).await.ok_or(Refused::Client)?);
                Some(share)
            }
        };
        let place = take(self.places.clone(), deadline)
            .await
            .ok_or(Refused::Full)?;
        Ok(Place {
            _place: place,
            _share: share,
        })
    }
}

/// A permit of `line` now, or in line until `deadline`.
async fn take(
    line: Arc<Semaphore>,
    deadline: tokio::time::Instant,
) -> Option<OwnedSemaphorePermit> {
    match line.clone().try_acquire_owned() {
        Ok(p) => Some(p),
        Err(_) => tokio::time::timeout_at(deadline, line.acquire_owned())
            .await
            .ok()?
            .ok(),
    }
}

impl Gate {
    /// Runs `f` on `conn` under the policy's budget and lanes: the
    /// statements it runs are stopped once it has run that long, waiting
    /// for a lane included, and the error then says `busy`. Any
    /// transaction left open is ended before the connection is handed
    /// back.
    pub fn run<T>(
        &self,
        conn: &Connection,
        f: impl FnOnce(&Connection) -> StoreResult<T>,
    ) -> StoreResult<T> {
        let budget = self.policy.budget;
        let started = Instant::now();
        let deadline = started + budget;
        let fired = Arc::new(AtomicBool::new(false));
        let flag = fired.clone();
        let lanes = self.lanes.clone();
        // The lane this read holds, and since when.
        let mut lane: Option<(Lane, Instant)> = None;
        conn.progress_handler(
            STEPS,
            Some(move || {
                let now = Instant::now();
                let turn = match &lane {
                    None => now >= started + SLOW_AFTER,
                    Some((_, since)) => now >= *since + QUANTUM && lanes.waited_for(),
                };
                if turn {
                    // Its turn ends (a lane held for a quantum goes to the
                    // next in line) or begins: to the back of the line.
                    drop(lane.take());
                    lane = lanes.enter(deadline).map(|l| (l, Instant::now()));
                }
                let stop = now >= deadline || (turn && lane.is_none());
                if stop {
                    flag.store(true, Ordering::Relaxed);
                }
                stop
            }),
        );
        // The handler (and the lane it may hold) goes however `f` ends.
        let _cleared = Cleared(conn);
        let out = f(conn);
        drop(_cleared);
        if fired.load(Ordering::Relaxed) {
            return Err(interrupted(budget));
        }
        out
    }
}

/// Takes the progress handler off a connection, and ends any transaction
/// left open on it, when dropped.
struct Cleared<'a>(&'a Connection);

impl Drop for Cleared<'_> {
    fn drop(&mut self) {
        self.0.progress_handler(0, None::<fn() -> bool>);
        if !self.0.is_autocommit() {
            let _ = self.0.execute_batch("ROLLBACK");
        }
    }
}

/// The lanes slow reads take turns in ([module doc](self)): at most
/// [`Policy::lanes`] run at once; the others wait, first come first
/// served, asleep.
pub struct Lanes {
    line: Mutex<Line>,
    turn: Condvar,
}

struct Line {
    free: usize,
    /// Tickets of the reads waiting, in order.
    waiting: VecDeque<u64>,
    next: u64,
}

/// A lane held; given back when dropped.
pub struct Lane(Arc<Lanes>);

impl Lanes {
    fn new(lanes: usize) -> Arc<Lanes> {
        Arc::new(Lanes {
            line: Mutex::new(Line {
                free: lanes.max(1),
                waiting: VecDeque::new(),
                next: 0,
            }),
            turn: Condvar::new(),
        })
    }

    fn line(&self) -> std::sync::MutexGuard<'_, Line> {
        // Counters and a queue of numbers: never left half-changed.
        self.line.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a read waits for a lane.
    fn waited_for(&self) -> bool {
        !self.line().waiting.is_empty()
    }

    /// A lane, waiting in line until `deadline` at most.
    fn enter(self: &Arc<Self>, deadline: Instant) -> Option<Lane> {
        let mut line = self.line();
        let me = line.next;
        line.next += 1;
        line.waiting.push_back(me);
        loop {
            if line.free > 0 && line.waiting.front() == Some(&me) {
                line.waiting.pop_front();
                line.free -= 1;
                // The next in line may find a lane free too.
                self.turn.notify_all();
                return Some(Lane(self.clone()));
            }
            let now = Instant::now();
            if now >= deadline {
                line.waiting.retain(|&t| t != me);
                self.turn.notify_all();
                return None;
            }
            line = self
                .turn
                .wait_timeout(line, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Drop for Lane {
    fn drop(&mut self) {
        self.0.line().free += 1;
        self.0.turn.notify_all();
    }
}

fn interrupted(budget: Duration) -> StoreError {
    StoreError(format!(
        "{}a read ran past its budget of {} ms and was stopped",
        StoreError::BUSY,
        budget.as_millis()
    ))
}

/// The error of a read that found no place.
pub fn refused(why: Refused) -> StoreError {
    StoreError(format!(
        "{}{}",
        StoreError::BUSY,
        match why {
            Refused::Client => "the client's reads were at their share for the whole wait",
            Refused::Full => "every reader was taken for the whole wait",
        }
    ))
}

impl Caller {
    /// The caller of the task polling now, if the server set one.
    pub(super) fn current() -> Option<Caller> {
        CALLER.try_with(Caller::clone).ok()
    }

    pub(super) fn client(&self) -> Option<&Arc<str>> {
        self.client.as_ref()
    }

    /// Counts a read of this caller's that failed `busy`: refused a place
    /// (`ran` false) or stopped at its budget.
    pub(super) fn count_busy(&self, ran: bool) {
        let counter = if ran {
            &self.seen.interrupted
        } else {
            &self.seen.refused
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// The switch that makes reads slow, for the tests of this module's
/// promises: `NEEDHAVE_TEST_SLOW_READS=TEXT` makes every read batch with a
/// statement whose SQL holds `TEXT` first run a statement that counts for
/// minutes (a real statement, under the same budget), read once when the
/// store opens; never for serving.
pub const SLOW_READS_FOR_TESTS: &str = "NEEDHAVE_TEST_SLOW_READS";

/// The statement a slowed read runs first: about a billion steps of the
/// VM, so it ends only at its budget.
pub const SPIN: &str = "WITH RECURSIVE spin(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM spin \
     WHERE i < 1000000000) SELECT max(i) FROM spin";

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(per_client: usize, readers: usize) -> Policy {
        Policy {
            budget: BUDGET,
            per_client,
            readers,
            wait: Duration::from_millis(50),
            lanes: 1,
        }
    }

    #[tokio::test]
    async fn a_client_holds_its_share_and_no_more() {
        let gate = Gate::new(policy(2, 3));
        let a: Arc<str> = "192.0.2.1".into();
        let b: Arc<str> = "192.0.2.2".into();
        let first = gate.enter(Some(&a)).await.unwrap();
        let _second = gate.enter(Some(&a)).await.unwrap();
        assert_eq!(gate.enter(Some(&a)).await.err(), Some(Refused::Client));
        // Another client is let in beside it, up to the places.
        let _other = gate.enter(Some(&b)).await.unwrap();
        assert_eq!(gate.enter(None).await.err(), Some(Refused::Full));
        // A place given back is the next in line's.
        let waiter = {
            let gate = gate.clone();
            let a = a.clone();
            tokio::spawn(async move { gate.enter(Some(&a)).await.is_ok() })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(first);
        assert!(waiter.await.unwrap());
    }

    #[tokio::test]
    async fn a_client_is_forgotten_with_its_last_read() {
        let gate = Gate::new(policy(1, 4));
        let a: Arc<str> = "192.0.2.1".into();
        let place = gate.enter(Some(&a)).await.unwrap();
        assert_eq!(gate.clients().len(), 1);
        // Refused, and its wait leaves nothing behind.
        assert!(gate.enter(Some(&a)).await.is_err());
        assert_eq!(gate.clients().len(), 1);
        // A wait given up (its client gone) leaves nothing behind either.
        let gone = tokio::time::timeout(Duration::from_millis(10), gate.enter(Some(&a))).await;
        assert!(gone.is_err());
        drop(place);
        assert!(gate.clients().is_empty());
        // No share at all: nothing kept.
        let off = Gate::new(policy(0, 4));
        let _p = off.enter(Some(&a)).await.unwrap();
        let _q = off.enter(Some(&a)).await.unwrap();
        assert!(off.clients().is_empty());
    }

    /// One lane: the next in line gets it when it is given back, in the
    /// order they came, and one whose deadline passes first gives up.
    #[test]
    fn slow_reads_take_turns_in_order() {
        let lanes = Lanes::new(1);
        let far = || Instant::now() + Duration::from_secs(60);
        let first = lanes.enter(far()).unwrap();
        assert!(lanes
            .enter(Instant::now() + Duration::from_millis(20))
            .is_none());
        let (tx, rx) = std::sync::mpsc::channel();
        let mut waiters = Vec::new();
        for name in ["second", "third"] {
            let (mine, tx) = (lanes.clone(), tx.clone());
            waiters.push(std::thread::spawn(move || {
                let lane = mine.enter(far()).unwrap();
                tx.send(name).unwrap();
                std::thread::sleep(Duration::from_millis(20));
                drop(lane);
            }));
            // In line before the next comes.
            while lanes.line().waiting.len() < waiters.len() {
                std::thread::yield_now();
            }
        }
        assert!(lanes.waited_for());
        drop(first);
        let order: Vec<&str> = rx.iter().take(2).collect();
        assert_eq!(order, ["second", "third"]);
        waiters.into_iter().for_each(|w| w.join().unwrap());
        assert!(!lanes.waited_for());
        assert_eq!(lanes.line().free, 1);
    }

    #[test]
    fn a_statement_past_its_budget_is_stopped_and_says_busy() {
        let conn = Connection::open_in_memory().unwrap();
        let gate = |ms| {
            Gate::new(Policy {
                budget: Duration::from_millis(ms),
                ..policy(1, 1)
            })
        };
        let started = Instant::now();
        let out = gate(50).run(&conn, |c| {
            c.execute_batch("BEGIN")?;
            Ok(c.query_row(SPIN, [], |r| r.get::<_, i64>(0))?)
        });
        let e = out.unwrap_err();
        assert!(e.is_busy(), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
        // Its transaction is ended, and the next read has a budget of its own.
        assert!(conn.is_autocommit());
        let n: i64 = gate(60_000)
            .run(&conn, |c| {
                Ok(c.query_row("SELECT 41 + 1", [], |r| r.get(0))?)
            })
            .unwrap();
        assert_eq!(n, 42);
    }
}
