//! Read replicas through D1's Sessions API, as the store interface carries
//! them: shared code, so that the mapping from the table's consistency to a
//! session, and the bookmark a request carries from call to call, are the
//! same on the Worker and in the native tests that check them with a fake
//! database.
//!
//! Every call of the store is still one round trip: a session is a start
//! point given with the batch (`withSession(start).batch(…)`), not a query
//! of its own. A route marked `replica` starts at the bookmark the client
//! sent (so a client reads its own writes) or, without one, anywhere
//! (`first-unconstrained`: the nearest replica). Every other route starts at
//! the primary (`first-primary`), which is at least as fresh as any
//! bookmark: an author who has just accepted never reads a stale 404.
//!
//! The request's bookmark only moves forward: a session that starts at a
//! bookmark answers one at least as fresh, and a `first-primary` one answers
//! the primary's, the freshest there is. So the bookmark after a call is the
//! newest the request has seen, and an MCP plan's next step (a read after a
//! write) starts there.

use std::sync::{Arc, Mutex};

use super::{Consistency, Memo, Row, Statement, Store, StoreResult};
use crate::platform::{BoxFuture, MaybeSend};

/// The request header that carries a bookmark in, and the response header
/// that carries the newest one out (the name Cloudflare's examples use).
pub const BOOKMARK_HEADER: &str = "x-d1-bookmark";

/// Where a session of `consistency` starts, given the request's bookmark.
pub fn start(consistency: Consistency, bookmark: Option<&str>) -> &str {
    match (consistency, bookmark) {
        (Consistency::Primary, _) => "first-primary",
        (Consistency::Replica, Some(b)) => b,
        (Consistency::Replica, None) => "first-unconstrained",
    }
}

/// Whether a client's bookmark may be handed to the database. D1's are short
/// strings of hex groups joined by `-`; anything else (or a constraint name
/// smuggled in as a bookmark) is dropped, and the request reads as if it had
/// sent none, rather than failing in the database.
pub fn valid_bookmark(b: &str) -> bool {
    (1..=256).contains(&b.len())
        && b.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
        && !b.starts_with("first-")
}

/// A batch's rows, and the bookmark of its session after it.
pub type SessionAnswer = (Vec<Vec<Row>>, Option<String>);

/// A database with sessions: D1 on the Worker, a fake in the tests.
pub trait SessionDb: MaybeSend {
    /// Runs `statements` as one batch in a new session started at `start`
    /// (`first-primary`, `first-unconstrained` or a bookmark), and returns
    /// each statement's rows and the session's bookmark after the batch.
    fn batch_from<'a>(
        &'a self,
        start: &'a str,
        statements: Vec<Statement>,
    ) -> BoxFuture<'a, StoreResult<SessionAnswer>>;

    fn memo(&self) -> Option<&Memo> {
        None
    }
}

/// One request's view of a [`SessionDb`]: its calls start sessions of this
/// view's consistency, and all views of one request share its bookmark.
pub struct Sessions<D> {
    shared: Arc<Shared<D>>,
    consistency: Consistency,
}

struct Shared<D> {
    db: D,
    bookmark: Mutex<Option<String>>,
}

impl<D: SessionDb + 'static> Sessions<D> {
    /// A request's store, reading the primary until the dispatcher gives
    /// a route its own view.
    pub fn new(db: D) -> Self {
        Sessions {
            shared: Arc::new(Shared {
                db,
                bookmark: Mutex::new(None),
            }),
            consistency: Consistency::Primary,
        }
    }

    fn bookmark_slot(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.shared
            .bookmark
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}

impl<D: SessionDb + 'static> Store for Sessions<D> {
    fn batch(&self, statements: Vec<Statement>) -> BoxFuture<'_, StoreResult<Vec<Vec<Row>>>> {
        Box::pin(async move {
            let from = self.bookmark_slot().clone();
            let start = start(self.consistency, from.as_deref()).to_string();
            let (rows, after) = self.shared.db.batch_from(&start, statements).await?;
            if let Some(after) = after {
                *self.bookmark_slot() = Some(after);
            }
            Ok(rows)
        })
    }

    fn memo(&self) -> Option<&Memo> {
        self.shared.db.memo()
    }

    fn session(&self, consistency: Consistency) -> Option<Arc<dyn Store>> {
        Some(Arc::new(Sessions {
            shared: self.shared.clone(),
            consistency,
        }))
    }

    fn bookmark(&self) -> Option<String> {
        self.bookmark_slot().clone()
    }

    fn resume(&self, bookmark: &str) {
        let bookmark = bookmark.trim();
        if valid_bookmark(bookmark) {
            *self.bookmark_slot() = Some(bookmark.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts() {
        use Consistency::*;
        assert_eq!(start(Primary, None), "first-primary");
        assert_eq!(start(Primary, Some("00000001-0000")), "first-primary");
        assert_eq!(start(Replica, None), "first-unconstrained");
        assert_eq!(start(Replica, Some("00000001-0000")), "00000001-0000");
    }

    #[test]
    fn bookmarks() {
        assert!(valid_bookmark(
            "0000000a-00000003-00004f9c-4e2a1b7f0c3d5e6f7a8b9c0d1e2f3a4b"
        ));
        for bad in [
            "",
            "first-primary",
            "first-unconstrained",
            "a b",
            "a\nb",
            "ö",
            &"a".repeat(257),
        ] {
            assert!(!valid_bookmark(bad), "{bad:?}");
        }
    }
}
