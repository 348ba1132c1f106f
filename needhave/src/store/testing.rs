//! Stores for tests and benchmarks: one that counts and keeps what it runs,
//! and one that always fails.
//!
//! The list's promise is one round trip per call, and both the tests and
//! the bench's table of round trips count them; they count them with the
//! same wrapper, so the two cannot drift apart in what a round trip is.
//! Each wrapper passes on every method of [`Store`] it does not measure,
//! so a test through it sees the store it wraps, and a new method of the
//! trait has one place here to be passed on. Native only: the Worker has
//! no use for them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::sqlite::SqliteStore;
use super::{Consistency, Memo, Row, Statement, Store, StoreError, StoreResult};
use crate::platform::BoxFuture;

/// A store that counts its round trips (calls of [`Store::batch`]) and the
/// rows they answered, and keeps every statement it was given; everything
/// else is the wrapped store's.
///
/// A round trip counts when it is asked for, failed or not; rows count when
/// they are answered. The sessions it hands out are counted into the same
/// totals, since a handler makes its calls through one.
pub struct Counting<S: ?Sized = SqliteStore> {
    log: Arc<Log>,
    /// A memo of its own, used instead of the wrapped store's.
    memo: Option<Arc<Memo>>,
    inner: Arc<S>,
}

#[derive(Default)]
struct Log {
    trips: AtomicUsize,
    rows: AtomicUsize,
    statements: Mutex<Vec<Statement>>,
}

impl<S> Counting<S> {
    /// Counts the calls of `inner`, keeping its memo, so a result it
    /// vouches for is answered without a round trip.
    pub fn new(inner: S) -> Self {
        Counting {
            log: Arc::default(),
            memo: None,
            inner: Arc::new(inner),
        }
    }

    /// Counts the calls of `inner` as D1 sees its database: written by
    /// others too, so with a memo of its own that has no clock and vouches
    /// for nothing. Every kept result is checked against its version, in
    /// one round trip.
    pub fn written_by_others(inner: S) -> Self {
        Counting {
            memo: Some(Arc::new(Memo::new())),
            ..Counting::new(inner)
        }
    }
}

impl<S: ?Sized> Counting<S> {
    /// The wrapped store, for what a test reads or writes behind the list's
    /// back.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Round trips asked for so far.
    pub fn trips(&self) -> usize {
        self.log.trips.load(Ordering::SeqCst)
    }

    /// Rows answered so far, over all the statements of all round trips.
    pub fn rows(&self) -> usize {
        self.log.rows.load(Ordering::SeqCst)
    }

    /// Every statement given so far, in order.
    pub fn statements(&self) -> Vec<Statement> {
        self.log
            .statements
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl<S: Store + ?Sized> Store for Counting<S> {
    fn batch(&self, statements: Vec<Statement>) -> BoxFuture<'_, StoreResult<Vec<Vec<Row>>>> {
        self.log.trips.fetch_add(1, Ordering::SeqCst);
        self.log
            .statements
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(statements.iter().cloned());
        let answer = self.inner.batch(statements);
        Box::pin(async move {
            let rows = answer.await?;
            let n: usize = rows.iter().map(Vec::len).sum();
            self.log.rows.fetch_add(n, Ordering::SeqCst);
            Ok(rows)
        })
    }

    fn memo(&self) -> Option<&Memo> {
        self.memo.as_deref().or_else(|| self.inner.memo())
    }

    fn gone(&self) -> Option<StoreError> {
        self.inner.gone()
    }

    fn session(&self, consistency: Consistency) -> Option<Arc<dyn Store>> {
        let inner = self.inner.session(consistency)?;
        Some(Arc::new(Counting {
            log: self.log.clone(),
            memo: self.memo.clone(),
            inner,
        }))
    }

    fn bookmark(&self) -> Option<String> {
        self.inner.bookmark()
    }

    fn resume(&self, bookmark: &str) {
        self.inner.resume(bookmark)
    }
}

/// The store that fails every round trip (see [`Failing`]), with the
/// message a test expects by default.
pub use super::Failing;

impl Failing {
    /// The default message: what a store's error may carry, and no answer
    /// may. It names a path, so that a test can check no store detail
    /// reaches a client.
    pub const DETAIL: &'static str = "disk I/O error at /secret/path";
}

impl Default for Failing {
    fn default() -> Self {
        Failing::new(Failing::DETAIL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::prepare;

    /// Answers every statement with one empty row, and has everything a
    /// wrapper should pass on: a bookmark it was resumed at, a file that
    /// is gone, and sessions.
    #[derive(Default)]
    struct Toy {
        resumed: Mutex<Option<String>>,
    }

    impl Store for Toy {
        fn batch(&self, s: Vec<Statement>) -> BoxFuture<'_, StoreResult<Vec<Vec<Row>>>> {
            let n = s.len();
            Box::pin(async move { Ok(vec![vec![Row::new()]; n]) })
        }
        fn gone(&self) -> Option<StoreError> {
            Some(StoreError("the toy's file is gone".into()))
        }
        fn session(&self, _: Consistency) -> Option<Arc<dyn Store>> {
            Some(Arc::new(Toy::default()))
        }
        fn bookmark(&self) -> Option<String> {
            self.resumed.lock().unwrap().clone()
        }
        fn resume(&self, bookmark: &str) {
            *self.resumed.lock().unwrap() = Some(bookmark.into());
        }
    }

    #[tokio::test]
    async fn counts_one_trip_per_batch_and_keeps_its_statements() {
        let store = Counting::new(SqliteStore::open(":memory:").unwrap());
        assert_eq!((store.trips(), store.rows()), (0, 0));
        let two = vec![prepare("SELECT 1 AS a"), prepare("SELECT 2 AS b")];
        let rows = store.batch(two).await.unwrap();
        assert_eq!(rows.len(), 2);
        store.batch(vec![prepare("SELECT 3 AS c")]).await.unwrap();
        assert_eq!((store.trips(), store.rows()), (2, 3));
        let sqls: Vec<&str> = store.statements().iter().map(|s| s.sql).collect();
        assert_eq!(sqls, ["SELECT 1 AS a", "SELECT 2 AS b", "SELECT 3 AS c"]);
    }

    #[tokio::test]
    async fn a_failed_round_trip_is_still_one() {
        let store = Counting::new(SqliteStore::open(":memory:").unwrap());
        assert!(store.batch(vec![prepare("SELEC nothing")]).await.is_err());
        assert_eq!((store.trips(), store.rows()), (1, 0));
    }

    #[test]
    fn keeps_the_inner_memo_or_one_of_its_own_that_vouches_for_nothing() {
        let kept = Counting::new(SqliteStore::open(":memory:").unwrap());
        let inner = kept.inner().memo().unwrap();
        assert!(std::ptr::eq(kept.memo().unwrap(), inner));

        let others = Counting::written_by_others(SqliteStore::open(":memory:").unwrap());
        let own = others.memo().unwrap();
        assert!(!std::ptr::eq(own, others.inner().memo().unwrap()));
        let version = crate::store::Version {
            posts: 1,
            ..Default::default()
        };
        own.put("posts", version, own.writes(), i64::MAX, "[]".into());
        assert!(own.current("posts", 0).is_none(), "no clock vouches for it");
        assert_eq!(own.get("posts").map(|(v, _)| v), Some(version));

        assert!(Counting::new(Toy::default()).memo().is_none());
    }

    #[tokio::test]
    async fn passes_on_the_rest_and_counts_its_sessions_too() {
        let store = Counting::new(Toy::default());
        assert!(store.gone().is_some());
        assert_eq!(store.bookmark(), None);
        store.resume("0000002a");
        assert_eq!(store.bookmark().as_deref(), Some("0000002a"));

        let others = Counting::written_by_others(Toy::default());
        let session = others.session(Consistency::Replica).unwrap();
        session.batch(vec![prepare("SELECT 1")]).await.unwrap();
        assert_eq!((others.trips(), others.rows()), (1, 1));
        assert_eq!(others.statements().len(), 1);
        assert!(std::ptr::eq(
            session.memo().unwrap(),
            others.memo().unwrap()
        ));
    }

    #[tokio::test]
    async fn failing_fails_every_call_with_its_message() {
        let store = Failing::default();
        for _ in 0..3 {
            let e = store.batch(vec![prepare("SELECT 1")]).await.unwrap_err();
            assert_eq!(e.0, Failing::DETAIL);
        }
        assert!(Failing::DETAIL.contains('/'), "names a path");
        let e = Failing::new("disk full").batch(vec![]).await.unwrap_err();
        assert_eq!(e.0, "disk full");
        assert!(store.memo().is_none() && store.gone().is_none());
    }
}
