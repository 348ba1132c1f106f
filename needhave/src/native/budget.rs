//! One memory budget for the answers `needhave serve` holds for its
//! clients, shared by every connection.
//!
//! An answer is built whole (a `Vec` of its bytes) and then sits in the
//! connection's write queue until the client has taken it: a client that
//! does not read pins it until the write deadline. Each answer is bounded,
//! but their sum would not be: a crowd of addresses asking for the largest
//! answer and never reading holds gigabytes. So every answer in flight
//! takes its size from this budget until its last byte went into the
//! socket (or the connection closed), and a request that would go past it
//! waits briefly for room, then gets 503 `busy` with `Retry-After`.
//!
//! Streaming an answer from a smaller form would not help here: the rows
//! behind a list page are about as large as its JSON, and an MCP batch's
//! answers are built from many pages.
//!
//! Two rules keep it fair to ordinary requests:
//! - an answer that may be large (an MCP call, which may carry many pages)
//!   may fill the budget only to [`LARGE_SHARE`], so ordinary reads always
//!   find room;
//! - the answer of a write is never refused after the write ran (it holds
//!   a secret the client sees only once): it takes its size even past the
//!   budget. Writes answer a few KB.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

/// The default budget: 64 MiB.
pub const DEFAULT_BUDGET: usize = 64 << 20;

/// How long a request waits for room before it is told `busy`.
pub const WAIT: Duration = Duration::from_millis(500);

/// What `Retry-After` says to a `busy` client, in seconds: answers leave
/// the budget as their clients read them, or at the write deadline.
pub const RETRY_AFTER_SECS: u32 = 1;

/// The part of the budget (numerator, denominator) large answers may fill.
pub const LARGE_SHARE: (usize, usize) = (3, 4);

pub struct Budget {
    limit: usize,
    /// A counter taken and given back on every answer: an atomic rather
    /// than a lock.
    used: AtomicUsize,
    freed: Notify,
    /// Requests waiting for room: only then does a release wake anyone.
    waiting: AtomicUsize,
}

/// One request counted in [`Budget::waiting`] while it lives.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Bytes taken from the budget; given back when dropped.
pub struct Held {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Budget {
    pub fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            used: AtomicUsize::new(0),
            freed: Notify::new(),
            waiting: AtomicUsize::new(0),
        })
    }

    /// Wakes the requests waiting for room, if any. A waiter counts itself
    /// before it looks for room, and a release gives its bytes back before
    /// it looks for waiters (both sequentially consistent): either the
    /// waiter sees the room, or the release sees the waiter.
    fn freed(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.freed.notify_waiters();
        }
    }

    /// Bytes held now.
    pub fn in_use(&self) -> usize {
        self.used.load(Ordering::SeqCst)
    }

    fn cap(&self, large: bool) -> usize {
        if large {
            self.limit / LARGE_SHARE.1 * LARGE_SHARE.0
        } else {
            self.limit
        }
    }

    /// `bytes` if there is room now; `None` otherwise.
    pub fn try_take(self: &Arc<Self>, bytes: usize, large: bool) -> Option<Held> {
        let cap = self.cap(large);
        let mut used = self.used.load(Ordering::SeqCst);
        loop {
            // One answer alone may always be held, however small the
            // budget: otherwise an answer larger than the budget could
            // never be sent.
            if used + bytes > cap && used > 0 {
                return None;
            }
            match self.used.compare_exchange_weak(
                used,
                used + bytes,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => break,
                Err(now) => used = now,
            }
        }
        Some(Held {
            budget: self.clone(),
            bytes,
        })
    }

    /// `bytes`, waiting up to `wait` for room; `None` if none came.
    pub async fn take(self: &Arc<Self>, bytes: usize, large: bool, wait: Duration) -> Option<Held> {
        // Room, as nearly always: no waiter registered, no deadline read.
        if let Some(held) = self.try_take(bytes, large) {
            return Some(held);
        }
        let deadline = tokio::time::Instant::now() + wait;
        self.waiting.fetch_add(1, Ordering::SeqCst);
        // Uncounted when done, or when the request is dropped meanwhile.
        let _counted = Waiting(&self.waiting);
        self.wait_for(bytes, large, deadline).await
    }

    async fn wait_for(
        self: &Arc<Self>,
        bytes: usize,
        large: bool,
        deadline: tokio::time::Instant,
    ) -> Option<Held> {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before the check, so that a release between the
            // two is not missed.
            freed.as_mut().enable();
            if let Some(held) = self.try_take(bytes, large) {
                return Some(held);
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return None;
            }
        }
    }

    /// `bytes` now, past the budget if need be: for answers that must not
    /// be refused.
    pub fn force(self: &Arc<Self>, bytes: usize) -> Held {
        self.used.fetch_add(bytes, Ordering::SeqCst);
        Held {
            budget: self.clone(),
            bytes,
        }
    }
}

impl Held {
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Holds exactly `bytes` from now on: the rest given back, or more
    /// taken (past the budget if need be: the answer exists already).
    pub fn resize(&mut self, bytes: usize) {
        let shrunk = bytes < self.bytes;
        if shrunk {
            self.budget
                .used
                .fetch_sub(self.bytes - bytes, Ordering::SeqCst);
        } else {
            self.budget
                .used
                .fetch_add(bytes - self.bytes, Ordering::SeqCst);
        }
        self.bytes = bytes;
        if shrunk {
            self.budget.freed();
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.used.fetch_sub(self.bytes, Ordering::SeqCst);
            self.budget.freed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn past_the_budget_waits_then_gives_up() {
        let b = Budget::new(1000);
        let first = b.take(600, false, WAIT).await.unwrap();
        assert!(b
            .take(600, false, Duration::from_millis(20))
            .await
            .is_none());
        // Room made while it waits: it gets in.
        let waiter = {
            let b = b.clone();
            tokio::spawn(async move { b.take(600, false, Duration::from_secs(5)).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(first);
        let second = waiter.await.unwrap().unwrap();
        assert_eq!(b.in_use(), 600);
        // A waiter is uncounted when it is done, or dropped while waiting.
        let dropped = b.take(600, false, Duration::from_secs(5));
        assert!(tokio::time::timeout(Duration::from_millis(20), dropped)
            .await
            .is_err());
        assert_eq!(b.waiting.load(Ordering::SeqCst), 0);
        drop(second);
        assert_eq!(b.in_use(), 0);
    }

    #[tokio::test]
    async fn large_answers_leave_room_for_the_others() {
        let b = Budget::new(1000);
        let _large = b.take(700, true, WAIT).await.unwrap();
        assert!(b.take(100, true, Duration::from_millis(10)).await.is_none());
        let _small = b.take(250, false, WAIT).await.unwrap();
        assert_eq!(b.in_use(), 950);
    }

    #[tokio::test]
    async fn resize_and_force() {
        let b = Budget::new(1000);
        let mut h = b.take(900, false, WAIT).await.unwrap();
        h.resize(100);
        assert_eq!(b.in_use(), 100);
        let forced = b.force(5000);
        assert_eq!((b.in_use(), forced.bytes()), (5100, 5000));
        drop(forced);
        h.resize(300);
        assert_eq!(b.in_use(), 300);
        // Alone, an answer larger than the budget is still held.
        drop(h);
        assert!(b.take(2000, false, WAIT).await.is_some());
    }
}
