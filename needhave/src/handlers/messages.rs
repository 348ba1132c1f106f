//! First messages on a post: write one (hidden), the author's waiting list,
//! and the author's acceptance, which opens a thread.

use needhave_macros::{schema, FromBody, ToJson};

use super::guard::{guarded, Guarded};
use super::life::{
    self, message_removed, open_at, removed, PostSecret, Status, CLOSE_AFTER_ACCEPT, ENDS,
};
use crate::api::Ctx;
use crate::error::{ApiError, Code};
use crate::http::Id;
use crate::platform::rfc3339;
use crate::rules;
use crate::secrets::{new_id, new_secret, sha256_hex};
use crate::store::{prepare, Row, RowExt, StoreExt};

#[schema]
#[derive(FromBody)]
pub struct FirstReply {
    /// The first message: 1 to 500 characters after trimming. Hidden until
    /// the post's author accepts it.
    pub text: String,
}

#[schema(serialize)]
#[derive(ToJson)]
pub struct FirstCreated {
    pub id: String,
    pub post_id: String,
    /// Always true: nobody but the post's author sees it until accepted.
    pub hidden: bool,
    /// The reply secret. Shown only in this answer: keep it, with `id`, to
    /// learn the thread key once the author accepts.
    pub secret: String,
}

#[schema(serialize)]
#[derive(ToJson)]
pub struct NoMessages {
    /// Always empty: first messages stay hidden from the public.
    pub messages: Vec<MessageView>,
}

#[schema(serialize)]
#[derive(ToJson)]
pub struct MessageView {
    pub id: String,
    pub text: String,
}

impl MessageView {
    /// The messages of `rows` (columns `id`, `text`): the rows that have
    /// both, so a left join's row without a message is left out.
    pub(crate) fn rows(rows: &[Row]) -> Vec<MessageView> {
        rows.iter()
            .filter_map(|r| {
                Some(MessageView {
                    id: r.str("id")?.to_string(),
                    text: r.str("text")?.to_string(),
                })
            })
            .collect()
    }
}

#[schema(serialize)]
#[derive(ToJson)]
pub struct Waiting {
    /// The first messages not yet accepted, oldest first.
    pub messages: Vec<MessageView>,
}

#[schema]
#[derive(FromBody)]
pub struct Accept {
    /// The post secret from the create answer.
    pub secret: String,
    /// The id of the waiting first message to accept.
    pub message_id: String,
    /// `true`: close the post too, in the same round trip (when it is
    /// still open; an ended post stays as it ended).
    pub close: Option<bool>,
}

#[schema(serialize)]
#[derive(ToJson)]
pub struct ThreadKey {
    /// The thread's key: whoever holds it reads and writes the thread.
    pub thread_key: String,
    /// When `close` was asked: the post's status after this call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Status", default)]
    pub status: Option<Status>,
    /// When `close` was asked and the post has ended: when (RFC 3339, UTC,
    /// milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", default)]
    pub ended_at: Option<String>,
}

/// How many first messages on post `?1` wait: neither accepted nor
/// removed (one seek of `messages_parent` for both). A macro so that both
/// of the first reply's waiting guards share the literal.
macro_rules! waiting {
    () => {
        "SELECT count(*) FROM messages f WHERE f.post_id = ?1 AND f.role = 'first' \
         AND NOT EXISTS (SELECT 1 FROM messages a WHERE a.parent_id = f.id AND a.role IN ('accept', 'remove'))"
    };
}

/// A first reply: the post exists, was not removed and is open, its
/// waiting cap and the client's share of it hold, then the client's and
/// its site's hourly rates, in the order docs/life.md gives. Guard parameters: ?1
/// post id, ?2 ip hash, ?3 site hash, ?4 window start, ?5 the cap, ?6 the
/// share, ?7 and ?8 the rates, ?9 now; then the values.
static FIRST: Guarded = guarded! {
    insert "INSERT INTO messages (id, post_id, role, text, secret_hash, ip_hash, site_hash, created_at) \
            SELECT ?10, ?1, 'first', ?11, ?12, ?2, ?3, ?9";
    made "messages" "?10";
    "post" => NotFound if holds("EXISTS (SELECT 1 FROM posts WHERE id = ?1)");
    "kept" => Removed if holds(concat!("NOT ", removed!("?1")));
    "open" => Ended if holds(open_at!("?1", "?9"));
    "waiting" => TooMany if holds(concat!("(", waiting!(), ") < ?5")), wait rules::WAITING_RETRY_SECS;
    // `+f.ip_hash`: walk the post's first replies (as the cap does), never
    // every first reply the client ever wrote.
    "share" => TooMany if holds(concat!("(", waiting!(), " AND +f.ip_hash = ?2) < ?6")),
        wait rules::WAITING_RETRY_SECS;
    "recent" => RateLimited if rate("?7", "messages", "ip_hash = ?2 AND role = 'first' AND created_at > ?4");
    "site" => RateLimited if rate("?8", "messages", "site_hash = ?3 AND role = 'first' AND created_at > ?4");
    returning "id"
};

pub async fn first(ctx: &Ctx, id: Id, body: FirstReply) -> Result<FirstCreated, ApiError> {
    let text = rules::text(&body.text)?;
    let (ip, site) = ctx.client_hashes()?;
    let message_id = new_id();
    let secret = new_secret();
    let guards = vec![
        id.as_str().into(),
        ip.into(),
        site.into(),
        (ctx.now_ms - rules::HOUR_MS).into(),
        rules::WAITING_CAP.into(),
        rules::WAITING_PER_CLIENT.into(),
        rules::REPLIES_PER_HOUR.into(),
        rules::SITE_REPLIES_PER_HOUR.into(),
        ctx.now_ms.into(),
    ];
    let values = vec![
        message_id.as_str().into(),
        text.into(),
        sha256_hex(&secret).into(),
    ];
    FIRST.run(ctx, guards, values).await?;
    Ok(FirstCreated {
        id: message_id,
        post_id: id.as_str().to_string(),
        hidden: true,
        secret,
    })
}

pub async fn hidden(ctx: &Ctx, id: Id) -> Result<NoMessages, ApiError> {
    let post = ctx
        .store
        .first(
            prepare(concat!(
                "SELECT ",
                removed!("?1"),
                " AS removed FROM posts WHERE id = ?1"
            ))
            .bind(id.as_str()),
        )
        .await?
        .ok_or(ApiError::from(Code::NotFound))?;
    if post.flag("removed") {
        return Err(Code::Removed.into());
    }
    Ok(NoMessages { messages: vec![] })
}

pub async fn waiting(ctx: &Ctx, id: Id, body: PostSecret) -> Result<Waiting, ApiError> {
    let rows = ctx
        .store
        .all(
            prepare(concat!(
                "SELECT p.secret_hash = ?2 AS ok, ",
                removed!("?1"),
                " AS removed, f.id AS id, f.text AS text \
                 FROM posts p LEFT JOIN messages f ON f.post_id = p.id AND f.role = 'first' \
                 AND NOT EXISTS (SELECT 1 FROM messages a WHERE a.parent_id = f.id AND a.role IN ('accept', 'remove')) \
                 WHERE p.id = ?1 ORDER BY f.created_at, f.rowid LIMIT 20"
            ))
            .bind(id.as_str())
            .bind(sha256_hex(&body.secret)),
        )
        .await?;
    let first = rows.first().ok_or(ApiError::from(Code::NotFound))?;
    // Removed before the secret: every call that names the post.
    if first.flag("removed") {
        return Err(Code::Removed.into());
    }
    if !first.flag("ok") {
        return Err(Code::BadSecret.into());
    }
    let messages = MessageView::rows(&rows);
    Ok(Waiting { messages })
}

/// An acceptance: the post exists and was not removed, the secret is its
/// author's, the message is a first reply on it that the operator did not
/// remove, and nobody accepted that reply yet. An ended post's replies
/// may still be accepted: a decision on a conversation already asked.
/// Guard parameters: ?1 post id, ?2 secret hash, ?3 message id; then the
/// values.
static ACCEPT: Guarded = guarded! {
    insert "INSERT INTO messages (id, post_id, role, parent_id, thread_key, thread_key_hash, ip_hash, created_at) \
            SELECT ?4, ?1, 'accept', ?3, ?5, ?6, ?7, ?8";
    made "messages" "?4";
    "post" => NotFound if holds("EXISTS (SELECT 1 FROM posts WHERE id = ?1)");
    "kept" => Removed if holds(concat!("NOT ", removed!("?1")));
    "secret" => BadSecret if holds("EXISTS (SELECT 1 FROM posts WHERE id = ?1 AND secret_hash = ?2)");
    "found" => NotFound if holds(concat!(
        "EXISTS (SELECT 1 FROM messages WHERE id = ?3 AND post_id = ?1 AND role = 'first') AND NOT ",
        message_removed!("?3")
    ));
    "free" => AlreadyAccepted if holds("NOT EXISTS (SELECT 1 FROM messages WHERE parent_id = ?3 AND role = 'accept')");
    returning "id"
};

/// `POST /posts/:id/accept`: with `close: true`, the same batch closes the
/// post once the accept is written, if it is still open, and reads back
/// how the post stands.
pub async fn accept(ctx: &Ctx, id: Id, body: Accept) -> Result<ThreadKey, ApiError> {
    let ip = ctx.ip_hash()?;
    let thread_key = new_secret();
    let accept_id = new_id();
    let guards = vec![
        id.as_str().into(),
        sha256_hex(&body.secret).into(),
        body.message_id.as_str().into(),
    ];
    let values = vec![
        accept_id.as_str().into(),
        thread_key.as_str().into(),
        sha256_hex(&thread_key).into(),
        ip.into(),
        ctx.now_ms.into(),
    ];
    if body.close != Some(true) {
        ACCEPT.run(ctx, guards, values).await?;
        return Ok(ThreadKey {
            thread_key,
            status: None,
            ended_at: None,
        });
    }
    let close = prepare(CLOSE_AFTER_ACCEPT)
        .bind(id.as_str())
        .bind(accept_id.as_str())
        .bind(new_id())
        .bind(ctx.now_ms)
        .bind(ip);
    let ends = prepare(ENDS).bind(id.as_str());
    let (_, post) = ACCEPT
        .run_then(ctx, guards, values, vec![close, ends])
        .await?;
    let post = post.first();
    let (status, ended_at) = life::status(
        post.and_then(|p| p.int("closed_at")),
        post.and_then(|p| p.int("expires_at")),
        ctx.now_ms,
    );
    Ok(ThreadKey {
        thread_key,
        status: Some(status),
        ended_at: ended_at.map(rfc3339),
    })
}
