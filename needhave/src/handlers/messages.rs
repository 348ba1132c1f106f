//! First messages on a post: write one (hidden), the author's waiting list,
//! and the author's acceptance, which opens a thread.

use needhave_macros::{schema, FromBody, ToJson};

use super::guard::{guarded, Guarded};
use crate::api::Ctx;
use crate::error::{ApiError, Code};
use crate::http::Id;
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

#[schema]
#[derive(FromBody)]
pub struct PostSecret {
    /// The post secret from the create answer.
    pub secret: String,
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
}

#[schema(serialize)]
#[derive(ToJson)]
pub struct ThreadKey {
    /// The thread's key: whoever holds it reads and writes the thread.
    pub thread_key: String,
}

/// How many first messages on post `?1` wait: not yet answered by an
/// accept row. A macro so that both of the first reply's waiting guards
/// share the literal.
macro_rules! waiting {
    () => {
        "SELECT count(*) FROM messages f WHERE f.post_id = ?1 AND f.role = 'first' \
         AND NOT EXISTS (SELECT 1 FROM messages a WHERE a.parent_id = f.id AND a.role = 'accept')"
    };
}

/// A first reply: the post exists, its waiting cap and the client's share
/// of it hold, then the client's and its site's hourly rates, in the
/// contract's order. Guard parameters: ?1 post id, ?2 ip hash, ?3 site
/// hash, ?4 window start, ?5 the cap, ?6 the share, ?7 and ?8 the rates;
/// then the values.
static FIRST: Guarded = guarded! {
    insert "INSERT INTO messages (id, post_id, role, text, secret_hash, ip_hash, site_hash, created_at) \
            SELECT ?9, ?1, 'first', ?10, ?11, ?2, ?3, ?12";
    made "messages" "?9";
    "post" => NotFound if holds("EXISTS (SELECT 1 FROM posts WHERE id = ?1)");
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
    ];
    let values = vec![
        message_id.as_str().into(),
        text.into(),
        sha256_hex(&secret).into(),
        ctx.now_ms.into(),
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
    ctx.store
        .first(prepare("SELECT 1 AS found FROM posts WHERE id = ?1").bind(id.as_str()))
        .await?
        .ok_or(ApiError::from(Code::NotFound))?;
    Ok(NoMessages { messages: vec![] })
}

pub async fn waiting(ctx: &Ctx, id: Id, body: PostSecret) -> Result<Waiting, ApiError> {
    let rows = ctx
        .store
        .all(
            prepare(
                "SELECT p.secret_hash = ?2 AS ok, f.id AS id, f.text AS text \
                 FROM posts p LEFT JOIN messages f ON f.post_id = p.id AND f.role = 'first' \
                 AND NOT EXISTS (SELECT 1 FROM messages a WHERE a.parent_id = f.id AND a.role = 'accept') \
                 WHERE p.id = ?1 ORDER BY f.created_at, f.rowid LIMIT 20",
            )
            .bind(id.as_str())
            .bind(sha256_hex(&body.secret)),
        )
        .await?;
    let first = rows.first().ok_or(ApiError::from(Code::NotFound))?;
    if !first.flag("ok") {
        return Err(Code::BadSecret.into());
    }
    let messages = MessageView::rows(&rows);
    Ok(Waiting { messages })
}

/// An acceptance: the post exists, the secret is its author's, the message
/// is a first reply on it, and nobody accepted that reply yet. Guard
/// parameters: ?1 post id, ?2 secret hash, ?3 message id; then the values.
static ACCEPT: Guarded = guarded! {
    insert "INSERT INTO messages (id, post_id, role, parent_id, thread_key, thread_key_hash, ip_hash, created_at) \
            SELECT ?4, ?1, 'accept', ?3, ?5, ?6, ?7, ?8";
    made "messages" "?4";
    "post" => NotFound if holds("EXISTS (SELECT 1 FROM posts WHERE id = ?1)");
    "secret" => BadSecret if holds("EXISTS (SELECT 1 FROM posts WHERE id = ?1 AND secret_hash = ?2)");
    "found" => NotFound if holds("EXISTS (SELECT 1 FROM messages WHERE id = ?3 AND post_id = ?1 AND role = 'first')");
    "free" => AlreadyAccepted if holds("NOT EXISTS (SELECT 1 FROM messages WHERE parent_id = ?3 AND role = 'accept')");
    returning "id"
};

pub async fn accept(ctx: &Ctx, id: Id, body: Accept) -> Result<ThreadKey, ApiError> {
    let ip = ctx.ip_hash()?;
    let thread_key = new_secret();
    let guards = vec![
        id.as_str().into(),
        sha256_hex(&body.secret).into(),
        body.message_id.as_str().into(),
    ];
    let values = vec![
        new_id().into(),
        thread_key.as_str().into(),
        sha256_hex(&thread_key).into(),
        ip.into(),
        ctx.now_ms.into(),
    ];
    ACCEPT.run(ctx, guards, values).await?;
    Ok(ThreadKey { thread_key })
}
