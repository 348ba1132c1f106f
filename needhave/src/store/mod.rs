//! The store interface handlers speak: shaped like D1 (prepare, bind, first,
//! all, run, batch), implemented by D1 on the Worker and by SQLite natively.
//!
//! Every call of the list makes one round trip: one statement, or one
//! `batch`, which both backends run as a single transaction. That is why the
//! trait's one required method is `batch`, and why the limits live in the
//! SQL: a check and the write it guards always travel together. (The one
//! exception makes none: a public list the store's [`Memo`] can vouch for.)
//!
//! Which copy of the database a call may read is a fact of its route in the
//! table ([`Consistency`]); the dispatcher hands each handler a `ctx.store`
//! that is a [`Store::session`] of that kind, so handlers never say it. A
//! store with one copy (SQLite) has no sessions and ignores it; D1 maps it
//! onto its Sessions API (`session.rs`).

#[cfg(target_arch = "wasm32")]
pub mod d1;
pub mod hot_cold;
pub mod index;
#[cfg(not(target_arch = "wasm32"))]
pub mod migrate;
pub mod session;
#[cfg(not(target_arch = "wasm32"))]
pub mod sqlite;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value as Json};

use crate::platform::{BoxFuture, MaybeSend};
use crate::rules::hot::HotSet;

/// A bound parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s)
    }
}
impl From<&String> for Value {
    fn from(s: &String) -> Self {
        Value::Text(s.clone())
    }
}
impl From<Option<&str>> for Value {
    fn from(s: Option<&str>) -> Self {
        s.map_or(Value::Null, Value::from)
    }
}
impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Int(n)
    }
}

/// A prepared statement with its parameters (`?1`, `?2` … in order).
#[derive(Clone, Debug)]
pub struct Statement {
    pub sql: &'static str,
    pub params: Vec<Value>,
}

impl Statement {
    pub fn bind(mut self, v: impl Into<Value>) -> Self {
        self.params.push(v.into());
        self
    }
}

/// Starts a statement, as D1's `db.prepare(sql)`.
pub fn prepare(sql: &'static str) -> Statement {
    Statement {
        sql,
        params: Vec::new(),
    }
}

/// How many posts' words wait in `words_new` before a create moves them
/// into the index of words: the rows a search reads beside the index
/// (fewer than this), against the segments FTS5 writes (one a move).
/// Written out in the `WHEN` of the move's trigger
/// ([`hot_cold::trigger`]), SQL having no constants; a test checks it
/// against this.
pub const PENDING_MAX: i64 = 64;

/// The bytes of a waiting post's words and tokens beyond which its row
/// keeps no hot terms, only what the cold part needs of its words, and
/// the move finds the hot terms (`hot_cold::BEHIND`, one seek a term):
/// SQLite keeps two rows in a 4 KiB page only while both fit, so a row of
/// more than about half a page fills one alone. Tokens written
/// out are every hot prefix of every term, several times the words of a
/// note of common words; a post of 500 Han letters, its words alone
/// 1.5 KiB, would otherwise cost the list a page of `words_new` beside
/// its own row (`docs/design/search-costs.md`, "The disk bound").
pub const WAITING_ROW_BYTES: usize = 1_900;

/// The statements that end a create's batch, after its insert (one
/// transaction, both stores): the post's words into `words_new` (`?1` the
/// post's id, `?2` its words, `?3` to `?6` what its writer's copy of the
/// hot set says of them; only a row the insert made), whose insert runs
/// the move ([`hot_cold::trigger`]) when it makes [`PENDING_MAX`]. A post
/// is found from its 201 either way: a search reads `words_new` beside
/// the index.
pub const NEW_WORDS: &str =
    "INSERT INTO words_new (post, words, tokens, candidates, version, cold) \
     SELECT rowid, ?2, ?3, ?4, ?5, ?6 FROM posts WHERE id = ?1";

/// Once the list holds [`WORDS_GROWN`] posts, its index writes leaves of
/// [`WORDS_LEAF`] bytes: set by the create of that post (its words are the
/// newest in `words_new`), once; the move that follows writes small
/// leaves already. A grown list whose setting is another size (the 64
/// bytes migrations 0009 and 0012 wrote) takes this one at its next
/// create, the same way; its segments keep their leaves until FTS5 merges
/// them. Two rows read a create (the newest waiting post, the setting),
/// none written after the first.
pub const SMALL_LEAVES: &str = "INSERT INTO post_words (post_words, rank) SELECT 'pgsz', 128 \
     WHERE (SELECT max(post) FROM words_new) >= 10000 \
     AND NOT EXISTS (SELECT 1 FROM post_words_config WHERE k = 'pgsz' AND v = 128)";

/// What a post's row number is taken from to make its row number in the
/// index of words (2^28, written out in every statement that reads or
/// writes the index). Any constant reverses the order; this one keeps the
/// number small, since FTS5 writes the first row number of a list on each
/// leaf whole, as a varint: 4 bytes below 2^28 posts, where a negated
/// number is 9 (docs/design/search-index.md, "Newest first: row numbers
/// reversed"). Past 2^28 posts the
/// numbers go below zero and still fall as posts are added: the order
/// holds, only the bytes grow.
pub const WORDS_BASE: i64 = 1 << 28;

/// The bytes of a leaf of the index of words (FTS5's `pgsz`) in a list
/// of [`WORDS_GROWN`] posts or more, set by [`SMALL_LEAVES`]. FTS5 seeks a
/// word's list to a cursor only through a doclist index, which it writes
/// for a list that fills four leaves or more; any shorter list, in any
/// segment, is stepped a row number at a time. Small leaves give the list
/// of a common word a doclist index in all but the smallest segments, so a
/// deep page costs about what its first does. But FTS5 walks a doclist
/// index from its start, one entry a leaf, in pages of the same size, so
/// its walk to a row number grows with the list over the square of the
/// leaf: a rare word beside a common one seeks the common word's list once
/// a post. Leaves of 128 bytes keep both near their cost at 1 k posts
/// (docs/design/search-index.md, "Leaves, and deep pages").
pub const WORDS_LEAF: i64 = 128;

/// The bytes of a leaf of the index of words in a list of fewer than
/// [`WORDS_GROWN`] posts: FTS5's own (migrations/0011 on both stores, a
/// fresh file's included). A leaf is a row of `post_words_data`, and most
/// small leaves begin a term that `post_words_idx` keeps a row for, so a
/// word no other note holds costs small leaves about twice what it costs
/// in these; most words are new to a young list
/// (docs/design/search-costs.md, "The disk bound").
pub const WORDS_LEAF_YOUNG: i64 = 4050;

/// The posts from which the index writes [`WORDS_LEAF`]: a page deeper
/// than the 99th needs 9,901 posts that match, so a list of fewer has no
/// deep page to seek to.
pub const WORDS_GROWN: i64 = 10_000;

/// A result row, by column name, as D1 returns it.
pub type Row = Map<String, Json>;

pub trait RowExt {
    fn str(&self, col: &str) -> Option<&str>;
    fn int(&self, col: &str) -> Option<i64>;
    /// A SQL boolean (`0`/`1`) column: false when absent.
    fn flag(&self, col: &str) -> bool {
        self.int(col).unwrap_or(0) != 0
    }
}

impl RowExt for Row {
    fn str(&self, col: &str) -> Option<&str> {
        self.get(col).and_then(Json::as_str)
    }
    fn int(&self, col: &str) -> Option<i64> {
        self.get(col).and_then(Json::as_i64)
    }
}

#[derive(Debug)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl StoreError {
    /// How a store's message begins when the database itself is gone (its
    /// file deleted or replaced under the server): the client hears 503
    /// `unavailable`, not 500, since retrying elsewhere or later can help.
    pub const UNAVAILABLE: &'static str = "database unavailable: ";

    pub fn is_unavailable(&self) -> bool {
        self.0.starts_with(Self::UNAVAILABLE)
    }

    /// How a store's message begins when it declined to go on with a read
    /// now (native: no reader was free, or the read ran past its budget):
    /// the client hears 503 `busy` with `Retry-After`, since the same call
    /// may pass in a moment.
    pub const BUSY: &'static str = "busy: ";

    pub fn is_busy(&self) -> bool {
        self.0.starts_with(Self::BUSY)
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// What `Retry-After` says to a read declined `busy`, in seconds: a reader
/// is free again within a read's budget.
pub const BUSY_RETRY_SECS: u32 = 1;

/// Where a route's reads may come from, as the table says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Consistency {
    /// Any copy at least as fresh as the request's bookmark, or, without
    /// one, any copy at all: public reads, where a copy a moment old is as
    /// good as the primary and much nearer.
    Replica,
    /// The primary: every write, and every read behind a secret or a thread
    /// key, which must see what was just written.
    Primary,
}

pub trait Store: MaybeSend {
    /// Runs the statements in order, in one transaction, in one round trip,
    /// and returns each one's rows (a write's rows are its `RETURNING`).
    fn batch(&self, statements: Vec<Statement>) -> BoxFuture<'_, StoreResult<Vec<Vec<Row>>>>;

    /// Results this store's handlers may keep between calls, or `None`.
    fn memo(&self) -> Option<&Memo> {
        None
    }

    /// Why this store can no longer serve although its statements still
    /// run: a native file deleted or replaced under the server (its open
    /// connections keep reading the old one, and its writes would be lost).
    /// `None` when it can, and for stores without such a file.
    fn gone(&self) -> Option<StoreError> {
        None
    }

    /// This request's store as a route of `consistency` reads it, sharing
    /// the request's bookmark; `None` where every read sees every write
    /// (one copy of the database), and the store itself serves.
    fn session(&self, _consistency: Consistency) -> Option<Arc<dyn Store>> {
        None
    }

    /// The newest bookmark this request has seen (the client's, or one a
    /// call answered), for the answer's `x-d1-bookmark`; `None` without
    /// sessions.
    fn bookmark(&self) -> Option<String> {
        None
    }

    /// Starts this request at a client's bookmark: its replica reads are at
    /// least that fresh. A bookmark that cannot be one is ignored.
    fn resume(&self, _bookmark: &str) {}
}

/// The public list's version: what moves whenever a page of it may have
/// changed, read by the page's own statement. Three parts, each only
/// growing and each one seek: the newest post's row number (a new post),
/// the newest end by a row (`post_ends`: a close or a removal), and the
/// latest expiry that has passed (an expiry happens with time, not with a
/// write). Every part is computed from the database and the clock, so
/// every process (every Worker isolate) computes the same version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub posts: i64,
    pub ends: i64,
    pub expired: i64,
}

impl Version {
    /// As the statement of a page writes it (`posts-ends-expired`), and as
    /// a version tag carries it.
    pub fn text(&self) -> String {
        format!("{}-{}-{}", self.posts, self.ends, self.expired)
    }

    /// [`Version::text`] read back: three non-negative integers.
    pub fn parse(text: &str) -> Option<Version> {
        let mut parts = text.splitn(3, '-').map(|p| {
            (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse::<i64>().ok())
                .flatten()
        });
        Some(Version {
            posts: parts.next()??,
            ends: parts.next()??,
            expired: parts.next()??,
        })
    }
}

/// Serialized results (JSON text) kept under a version, one per key, for one
/// database.
///
/// A result of the list can be tied to a version the store reports cheaply
/// ([`Version`]): a handler asks for rows only when the version moved, in
/// the same single statement, and otherwise answers from here. It never
/// serves anything staler than that statement saw.
///
/// A store that can tell cheaply whether anything was committed since a
/// result was checked vouches for it through a [`Clock`]: while the clock has
/// not moved, and until the next expiry the statement saw (`until`: a post
/// ends then without a write), the result is current without asking the
/// database at all (an SQLite file reads the WAL index header other
/// processes write too, an in-memory database counts its own writes). D1 is
/// written by every isolate at once and has no such clock, so there the
/// version is always checked.
///
/// It also keeps this database's hot set as far as this process has seen
/// it (`rules::hot`), for the index of words alone: [`index::Index`] takes
/// a create's tokens from it and puts back the promotions each create's
/// batch reads.
pub struct Memo {
    entries: Mutex<Vec<Kept>>,
    clock: Clock,
    #[cfg(not(target_arch = "wasm32"))]
    hot: Mutex<HotSet>,
}

/// What moves whenever the database may have changed.
pub enum Clock {
    /// Nothing cheap: every use checks the version.
    None,
    /// The store is the only way the database changes and calls
    /// [`Memo::wrote`] after each write.
    Writes(AtomicU64),
    /// A reading that changes with every commit, by anyone, or `None` when
    /// it cannot tell (then nothing is vouched for).
    Reading(Box<dyn Fn() -> Option<u64> + Send + Sync>),
}

/// A clock reading that matches nothing kept: "cannot tell".
const UNKNOWN: u64 = u64::MAX;

struct Kept {
    key: &'static str,
    version: Version,
    /// The clock when the version was last read.
    writes: u64,
    /// Unix ms of the next expiry the version's statement saw: the kept
    /// result is current only before it.
    until: i64,
    json: Arc<str>,
}

impl Default for Memo {
    fn default() -> Self {
        Self::new()
    }
}

impl Memo {
    /// For a database others write too: every use checks the version.
    pub const fn new() -> Self {
        Memo::with_clock(Clock::None)
    }

    /// For a store every write goes through; it must call [`Memo::wrote`]
    /// after each one.
    pub const fn sole_writer() -> Self {
        Memo::with_clock(Clock::Writes(AtomicU64::new(0)))
    }

    pub const fn with_clock(clock: Clock) -> Self {
        Memo {
            entries: Mutex::new(Vec::new()),
            clock,
            #[cfg(not(target_arch = "wasm32"))]
            hot: Mutex::new(HotSet::new()),
        }
    }

    /// This process's copy of the database's hot set. None in the Worker:
    /// an isolate lives too briefly for its copy to catch up, and every
    /// catch-up would read up to a thousand rows that D1 bills. Its creates
    /// hand no tokens over and the move finds them, one seek a term
    /// (`hot_cold::BEHIND`); the code that keeps a copy stays out of its
    /// build.
    fn hot(&self) -> Option<std::sync::MutexGuard<'_, HotSet>> {
        #[cfg(target_arch = "wasm32")]
        return None;
        #[cfg(not(target_arch = "wasm32"))]
        Some(self.hot.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Counts a write, committed or not, once it has ended.
    pub fn wrote(&self) {
        if let Clock::Writes(w) = &self.clock {
            w.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The clock, read before asking the database (for `put`).
    pub fn writes(&self) -> u64 {
        match &self.clock {
            Clock::None => UNKNOWN,
            Clock::Writes(w) => w.load(Ordering::SeqCst),
            Clock::Reading(read) => read().filter(|&r| r != UNKNOWN).unwrap_or(UNKNOWN),
        }
    }

    /// The kept result, its version and until when (Unix ms) it holds, if
    /// the clock vouches nothing was written since its version was read and
    /// no post has expired since (`now_ms` before that `until`).
    pub fn current(&self, key: &str, now_ms: i64) -> Option<(Version, Arc<str>, i64)> {
        let now = self.writes();
        if now == UNKNOWN {
            return None;
        }
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .iter()
            .find(|e| e.key == key && e.writes == now && now_ms < e.until)
            .map(|e| (e.version, e.json.clone(), e.until))
    }

    pub fn get(&self, key: &str) -> Option<(Version, Arc<str>)> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .iter()
            .find(|e| e.key == key)
            .map(|e| (e.version, e.json.clone()))
    }

    /// Keeps `json` as of `version`, read when the write count was `writes`,
    /// current until `until` (Unix ms: the next expiry, `i64::MAX` when
    /// none), unless something newer is already kept (requests race).
    pub fn put(
        &self,
        key: &'static str,
        version: Version,
        writes: u64,
        until: i64,
        json: Arc<str>,
    ) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let new = Kept {
            key,
            version,
            writes,
            until,
            json,
        };
        match entries.iter_mut().find(|e| e.key == key) {
            Some(e) if (e.version, e.writes) <= (version, writes) => *e = new,
            Some(_) => {}
            None => entries.push(new),
        }
    }
}

/// D1's single-statement calls, all one round trip through `batch`.
pub trait StoreExt: Store {
    fn all(&self, s: Statement) -> BoxFuture<'_, StoreResult<Vec<Row>>> {
        let fut = self.batch(vec![s]);
        Box::pin(async move { Ok(fut.await?.pop().unwrap_or_default()) })
    }

    fn first(&self, s: Statement) -> BoxFuture<'_, StoreResult<Option<Row>>> {
        let fut = self.all(s);
        Box::pin(async move { Ok(fut.await?.into_iter().next()) })
    }

    fn run(&self, s: Statement) -> BoxFuture<'_, StoreResult<()>> {
        let fut = self.batch(vec![s]);
        Box::pin(async move { fut.await.map(|_| ()) })
    }
}

impl<S: Store + ?Sized> StoreExt for S {}

/// A store that cannot serve: every round trip fails with its message, as
/// a disk gone bad would. What a Worker deployed without its `DB` binding
/// serves from, and the tests' failing store (`testing`).
pub struct Failing {
    message: String,
}

impl Failing {
    pub fn new(message: impl Into<String>) -> Self {
        Failing {
            message: message.into(),
        }
    }
}

impl Store for Failing {
    fn batch(&self, _: Vec<Statement>) -> BoxFuture<'_, StoreResult<Vec<Vec<Row>>>> {
        let e = StoreError(self.message.clone());
        Box::pin(async move { Err(e) })
    }
}

/// A store failure as handlers answer it: `unavailable` (503) when the
/// file is gone, `busy` (503, `Retry-After`) when a read was declined for
/// now, else `internal` (500); its detail goes to the operator's log, never
/// to the client (a declined read's to the metrics: there may be many).
/// Beside the store, so that the error codes name nothing of it.
impl From<StoreError> for crate::error::ApiError {
    fn from(e: StoreError) -> Self {
        if e.is_busy() {
            return crate::error::ApiError::retry_after(crate::error::Code::Busy, BUSY_RETRY_SECS);
        }
        let mut line = String::from("store: ");
        line.push_str(&e.0);
        crate::platform::log_error(&line);
        crate::error::ApiError::from(if e.is_unavailable() {
            crate::error::Code::Unavailable
        } else {
            crate::error::Code::Internal
        })
    }
}
