//! The life of a post: what it is at a given time (open, closed, expired),
//! its author's close, anyone's report, and the operator's removal of a
//! post or a message.
//!
//! Each end is a row or a time, never a change: a close and a removal are
//! `messages` rows of their own role, an expiry is `posts.expires_at`
//! passing. What the list walks is kept beside them by the schema's
//! triggers (`live`, `post_ends`), so every writer of a decision, these
//! handlers or the operator's SQL, ends the post the same way.

use needhave_macros::{schema, FromBody, ToJson};

use super::guard::{guarded, Guarded};
use crate::api::Ctx;
use crate::error::{ApiError, Code};
use crate::http::Id;
use crate::platform::rfc3339;
use crate::rules::{self, Reason};
use crate::secrets::{new_id, sha256_hex};
use crate::store::{prepare, RowExt, Statement, Store, StoreError};

/// Whether post `$post` (a SQL expression of its id) was removed by the
/// operator: one seek of `messages_one_removal`.
macro_rules! removed {
    ($post:literal) => {
        concat!(
            "EXISTS (SELECT 1 FROM messages WHERE post_id = ",
            $post,
            " AND role = 'remove' AND parent_id IS NULL)"
        )
    };
}
pub(crate) use removed;

/// When post `$post` was closed by its author (NULL: it was not): one
/// seek of `messages_post`, which holds the time.
macro_rules! closed_at {
    ($post:literal) => {
        concat!(
            "(SELECT created_at FROM messages WHERE post_id = ",
            $post,
            " AND role = 'close')"
        )
    };
}
pub(crate) use closed_at;

/// Whether post `$post` is open at `$now` (SQL expressions): not closed,
/// and not past its expiry. Its removal is a guard of its own (410 before
/// 409).
macro_rules! open_at {
    ($post:literal, $now:literal) => {
        concat!(
            "NOT EXISTS (SELECT 1 FROM messages WHERE post_id = ",
            $post,
            " AND role = 'close') AND EXISTS (SELECT 1 FROM posts WHERE id = ",
            $post,
            " AND (expires_at IS NULL OR expires_at > ",
            $now,
            "))"
        )
    };
}
pub(crate) use open_at;

/// Whether message `$message` (a SQL expression of its id) was removed by
/// the operator: one seek of `messages_parent`.
macro_rules! message_removed {
    ($message:literal) => {
        concat!(
            "EXISTS (SELECT 1 FROM messages WHERE parent_id = ",
            $message,
            " AND role = 'remove')"
        )
    };
}
pub(crate) use message_removed;

/// Where a post is in its life: `open` (on the list, taking first
/// replies), `closed` (by its author) or `expired` (its `expires_at` has
/// passed).
#[schema(serialize)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Status {
    Open,
    Closed,
    Expired,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Closed => "closed",
            Status::Expired => "expired",
        }
    }
}

impl crate::json::ToJson for Status {
    fn write_json(&self, out: &mut Vec<u8>) {
        self.as_str().write_json(out)
    }
}

/// A post's status at `now_ms` and when it ended (Unix ms), from when it
/// was closed and when it expires, if ever: whichever came first ends it
/// (a close is taken only while the post is open, so a close after the
/// expiry is no row a handler writes).
pub fn status(
    closed_at: Option<i64>,
    expires_at: Option<i64>,
    now_ms: i64,
) -> (Status, Option<i64>) {
    let expired = expires_at.filter(|&e| e <= now_ms);
    match (closed_at, expired) {
        (Some(c), Some(e)) if e < c => (Status::Expired, Some(e)),
        (Some(c), _) => (Status::Closed, Some(c)),
        (None, Some(e)) => (Status::Expired, Some(e)),
        (None, None) => (Status::Open, None),
    }
}

/// A body of the post secret alone: the author's waiting list, a close.
#[schema]
#[derive(FromBody)]
pub struct PostSecret {
    /// The post secret from the create answer.
    pub secret: String,
}

/// The answer of a close.
#[schema(serialize)]
#[derive(ToJson)]
pub struct Closed {
    pub id: String,
    /// Always `closed`.
    pub status: Status,
    /// When it was closed: RFC 3339, UTC, milliseconds.
    pub ended_at: String,
}

/// A close: the post exists, was not removed, the secret is its author's,
/// and it is still open (not closed, not expired). Guard parameters: ?1
/// post id, ?2 secret hash, ?3 now; then the values. The unique index on
/// a post's close is what concurrent closes run into; the schema's
/// trigger takes the post out of `live` in the same statement.
static CLOSE: Guarded = guarded! {
    insert "INSERT INTO messages (id, post_id, role, ip_hash, created_at) SELECT ?4, ?1, 'close', ?5, ?3";
    made "messages" "?4";
    "post" => NotFound if holds("EXISTS (SELECT 1 FROM posts WHERE id = ?1)");
    "kept" => Removed if holds(concat!("NOT ", removed!("?1")));
    "secret" => BadSecret if holds("EXISTS (SELECT 1 FROM posts WHERE id = ?1 AND secret_hash = ?2)");
    "open" => Ended if holds(open_at!("?1", "?3"));
    returning "created_at"
};

/// `POST /posts/:id/close`: the author ends the post.
pub async fn close(ctx: &Ctx, id: Id, body: PostSecret) -> Result<Closed, ApiError> {
    let ip = ctx.ip_hash()?;
    let guards = vec![
        id.as_str().into(),
        sha256_hex(&body.secret).into(),
        ctx.now_ms.into(),
    ];
    let values = vec![new_id().into(), ip.into()];
    CLOSE.run(ctx, guards, values).await?;
    Ok(Closed {
        id: id.as_str().to_string(),
        status: Status::Closed,
        ended_at: rfc3339(ctx.now_ms),
    })
}

/// The statement that closes post `?1` in an accept's batch, when the
/// accept (its id `?2`) was written and the post is open at `?4`: `?3` the
/// close's id, `?5` the client's hash. Writes nothing otherwise: an
/// accept on an ended post stays an accept.
pub(crate) const CLOSE_AFTER_ACCEPT: &str = concat!(
    "INSERT INTO messages (id, post_id, role, ip_hash, created_at) SELECT ?3, ?1, 'close', ?5, ?4 \
     WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?2) AND ",
    open_at!("?1", "?4")
);

/// A post's decisions as the last statement of a batch: when it was
/// closed, when it expires (`?1` its id).
pub(crate) const ENDS: &str = concat!(
    "SELECT ",
    closed_at!("?1"),
    " AS closed_at, expires_at FROM posts WHERE id = ?1"
);

/// A report's body.
#[schema]
#[derive(FromBody)]
pub struct Report {
    /// Why: `spam`, `scam`, `illegal`, `prompt_injection`,
    /// `contact_details` or `other`.
    // A string rather than `Reason`, so that a missing or unknown reason
    // is `bad_reason` while a reason of the wrong JSON type stays
    // `bad_request`.
    #[schemars(with = "Reason", required)]
    pub reason: Option<String>,
    /// What the operator should know, 1 to 500 characters. Optional.
    pub text: Option<String>,
}

/// A report's answer: taken (whether new or a client's report again).
#[schema(serialize)]
#[derive(ToJson)]
pub struct Reported {}

/// A report: the post exists and was not removed; a client that reported
/// it already is answered as before, without a second row; then the
/// client's and its site's hourly rates. Guard parameters: ?1 post id, ?2
/// ip hash, ?3 site hash, ?4 window start, ?5 and ?6 the rates; then the
/// values.
static REPORT: Guarded = guarded! {
    insert "INSERT INTO messages (id, post_id, role, text, reason, ip_hash, site_hash, created_at) \
            SELECT ?7, ?1, 'report', ?8, ?9, ?2, ?3, ?10";
    made "messages" "?7";
    "post" => NotFound if holds("EXISTS (SELECT 1 FROM posts WHERE id = ?1)");
    "kept" => Removed if holds(concat!("NOT ", removed!("?1")));
    "again" => pass if holds("NOT EXISTS (SELECT 1 FROM messages WHERE post_id = ?1 AND ip_hash = ?2 AND role = 'report')");
    "recent" => RateLimited if rate("?5", "messages", "ip_hash = ?2 AND role = 'report' AND created_at > ?4");
    "site" => RateLimited if rate("?6", "messages", "site_hash = ?3 AND role = 'report' AND created_at > ?4");
    returning "id"
};

/// `POST /posts/:id/report`: anyone tells the operator about a post. It
/// hides nothing; only the operator removes.
pub async fn report(ctx: &Ctx, id: Id, body: Report) -> Result<Reported, ApiError> {
    let reason = body
        .reason
        .as_deref()
        .and_then(Reason::parse)
        .ok_or(ApiError::from(Code::BadReason))?;
    let text = body.text.as_deref().map(rules::text).transpose()?;
    let (ip, site) = ctx.client_hashes()?;
    let guards = vec![
        id.as_str().into(),
        ip.into(),
        site.into(),
        (ctx.now_ms - rules::HOUR_MS).into(),
        rules::REPORTS_PER_HOUR.into(),
        rules::SITE_REPORTS_PER_HOUR.into(),
    ];
    let values = vec![
        new_id().into(),
        text.into(),
        reason.as_str().into(),
        ctx.now_ms.into(),
    ];
    REPORT.run(ctx, guards, values).await?;
    Ok(Reported {})
}

/// What the operator removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removed {
    /// A post: every call that names it answers 410 `removed`.
    Post,
    /// A first reply or a thread message: left out of the waiting list and
    /// of its thread.
    Message,
}

/// What a removal did: the decision row was written, or the post or
/// message was removed already (a second removal changes nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    Done(Removed),
    Already(Removed),
}

/// Why a removal was not made.
#[derive(Debug)]
pub enum RemoveError {
    /// No post and no message (first reply or thread message) has this id.
    Unknown,
    /// The reason is empty, longer than 500 characters, or unreadable
    /// (the note rules: `empty_note`, `huge_note`, `bad_note`).
    Reason(Code),
    Store(StoreError),
}

impl std::fmt::Display for RemoveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoveError::Unknown => f.write_str("no post and no message has this id"),
            RemoveError::Reason(code) => write!(
                f,
                "the reason must be 1 to 500 visible characters, without control characters ({})",
                code.as_str()
            ),
            RemoveError::Store(e) => write!(f, "the database failed: {e}"),
        }
    }
}

/// The removal of a post, when `?2` is one not removed yet: `?1` the
/// decision's id, `?3` the reason, `?4` the time. The schema's trigger
/// ends the post in the same statement.
const REMOVE_POST: &str = concat!(
    "INSERT INTO messages (id, post_id, role, reason, ip_hash, created_at) \
     SELECT ?1, id, 'remove', ?3, 'operator', ?4 FROM posts WHERE id = ?2 AND NOT ",
    removed!("?2"),
    " RETURNING 'post' AS removed"
);

/// The removal of a first reply or a thread message `?2` not removed yet,
/// under its post; the parameters of [`REMOVE_POST`].
const REMOVE_MESSAGE: &str = concat!(
    "INSERT INTO messages (id, post_id, role, parent_id, reason, ip_hash, created_at) \
     SELECT ?1, post_id, 'remove', id, ?3, 'operator', ?4 FROM messages \
     WHERE id = ?2 AND role IN ('first', 'later') AND NOT ",
    message_removed!("?2"),
    " RETURNING 'message' AS removed"
);

/// What `?2` is, for a removal that wrote nothing: a post, a message.
const REMOVABLE: &str = "SELECT ?1 AS id, EXISTS (SELECT 1 FROM posts WHERE id = ?2) AS post, \
     EXISTS (SELECT 1 FROM messages WHERE id = ?2 AND role IN ('first', 'later')) AS message";

/// The batch of a removal of `id` (a post's or a message's) for `reason`
/// at `now_ms`, its decision row's id `row_id`: what [`remove`] runs, and
/// what an operator of D1 runs with `wrangler d1 execute` (one
/// transaction there too). At most one of its INSERTs writes.
pub fn remove_batch(id: &str, reason: &str, now_ms: i64, row_id: &str) -> Vec<Statement> {
    let bound = |sql| prepare(sql).bind(row_id).bind(id).bind(reason).bind(now_ms);
    vec![
        bound(REMOVE_POST),
        bound(REMOVE_MESSAGE),
        prepare(REMOVABLE).bind(row_id).bind(id),
    ]
}

/// The operator removes a post or a message, never a call of the list:
/// one decision row (the reason and the time; there are no accounts to
/// name), in one round trip. Removing what is removed changes nothing;
/// an id that is neither is an error that says so.
pub async fn remove(
    store: &dyn Store,
    id: &str,
    reason: &str,
    now_ms: i64,
) -> Result<Removal, RemoveError> {
    let reason = rules::text(reason).map_err(RemoveError::Reason)?;
    if Id::parse(id).is_none() {
        return Err(RemoveError::Unknown);
    }
    let results = store
        .batch(remove_batch(id, reason, now_ms, &new_id()))
        .await
        .map_err(RemoveError::Store)?;
    let wrote = |i: usize| results.get(i).is_some_and(|rows| !rows.is_empty());
    if wrote(0) {
        return Ok(Removal::Done(Removed::Post));
    }
    if wrote(1) {
        return Ok(Removal::Done(Removed::Message));
    }
    let what = results.get(2).and_then(|rows| rows.first());
    match what {
        Some(row) if row.flag("post") => Ok(Removal::Already(Removed::Post)),
        Some(row) if row.flag("message") => Ok(Removal::Already(Removed::Message)),
        _ => Err(RemoveError::Unknown),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earlier_end_is_the_status() {
        let s = |c, e, now| status(c, e, now);
        assert_eq!(s(None, None, 10), (Status::Open, None));
        assert_eq!(s(None, Some(11), 10), (Status::Open, None));
        assert_eq!(s(None, Some(10), 10), (Status::Expired, Some(10)));
        assert_eq!(s(Some(5), None, 10), (Status::Closed, Some(5)));
        assert_eq!(s(Some(5), Some(20), 30), (Status::Closed, Some(5)));
        assert_eq!(s(Some(25), Some(20), 30), (Status::Expired, Some(20)));
        assert_eq!(s(Some(5), Some(20), 10), (Status::Closed, Some(5)));
    }
}
