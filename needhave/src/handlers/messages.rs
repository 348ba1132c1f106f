//! First messages on a post: write one (hidden), the author's waiting list,
//! and the author's acceptance, which opens a thread.

use needhave_macros::{FromBody, ToJson};

use super::{checks, flag, wrote};
use crate::api::Ctx;
use crate::error::{ApiError, Code};
use crate::http::Id;
use crate::rules;
use crate::secrets::{new_id, new_secret, sha256_hex};
use crate::store::{prepare, Row, RowExt, StoreExt};

#[derive(FromBody)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct FirstReply {
    /// The first message: 1 to 500 characters after trimming. Hidden until
    /// the post's author accepts it.
    pub text: String,
}

#[derive(ToJson)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
pub struct FirstCreated {
    pub id: String,
    pub post_id: String,
    /// Always true: nobody but the post's author sees it until accepted.
    pub hidden: bool,
    /// The reply secret. Shown only in this answer: keep it, with `id`, to
    /// learn the thread key once the author accepts.
    pub secret: String,
}

#[derive(ToJson)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
pub struct NoMessages {
    /// Always empty: first messages stay hidden from the public.
    pub messages: Vec<MessageView>,
}

#[derive(FromBody)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PostSecret {
    /// The post secret from the create answer.
    pub secret: String,
}

#[derive(ToJson)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
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

#[derive(ToJson)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
pub struct Waiting {
    /// The first messages not yet accepted, oldest first.
    pub messages: Vec<MessageView>,
}

#[derive(FromBody)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Accept {
    /// The post secret from the create answer.
    pub secret: String,
    /// The id of the waiting first message to accept.
    pub message_id: String,
}

#[derive(ToJson)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
pub struct ThreadKey {
    /// The thread's key: whoever holds it reads and writes the thread.
    pub thread_key: String,
}

/// How many first messages on post `?1` wait: not yet answered by an
/// accept row. A macro so that both statements share the literal.
macro_rules! waiting {
    () => {
        "SELECT count(*) FROM messages f WHERE f.post_id = ?1 AND f.role = 'first' \
         AND NOT EXISTS (SELECT 1 FROM messages a WHERE a.parent_id = f.id AND a.role = 'accept')"
    };
}

pub async fn first(ctx: &Ctx, id: Id, body: FirstReply) -> Result<FirstCreated, ApiError> {
    let text = rules::text(&body.text)?;
    let ip = ctx.ip_hash()?;
    let message_id = new_id();
    let secret = new_secret();
    let since = ctx.now_ms - rules::HOUR_MS;
    let results = ctx
        .store
        .batch(vec![
            prepare(concat!(
                "SELECT EXISTS (SELECT 1 FROM posts WHERE id = ?1) AS post, (",
                waiting!(),
                ") AS waiting, (SELECT count(*) FROM messages \
                 WHERE ip_hash = ?2 AND role = 'first' AND created_at > ?3) AS recent",
            ))
            .bind(id.as_str())
            .bind(ip)
            .bind(since),
            prepare(concat!(
                "INSERT INTO messages (id, post_id, role, text, secret_hash, ip_hash, created_at) \
                 SELECT ?4, ?1, 'first', ?5, ?6, ?2, ?7 \
                 WHERE EXISTS (SELECT 1 FROM posts WHERE id = ?1) AND (",
                waiting!(),
                ") < ?8 AND (SELECT count(*) FROM messages \
                 WHERE ip_hash = ?2 AND role = 'first' AND created_at > ?3) < ?9 \
                 RETURNING id",
            ))
            .bind(id.as_str())
            .bind(ip)
            .bind(since)
            .bind(&message_id)
            .bind(text)
            .bind(sha256_hex(&secret))
            .bind(ctx.now_ms)
            .bind(rules::WAITING_CAP)
            .bind(rules::REPLIES_PER_HOUR),
        ])
        .await?;
    if wrote(&results).is_some() {
        return Ok(FirstCreated {
            id: message_id,
            post_id: id.as_str().to_string(),
            hidden: true,
            secret,
        });
    }
    Err(match checks(&results) {
        Some(row) if !flag(row, "post") => Code::NotFound,
        Some(row) if row.int("waiting").unwrap_or(0) >= rules::WAITING_CAP => Code::TooMany,
        Some(row) if row.int("recent").unwrap_or(0) >= rules::REPLIES_PER_HOUR => Code::RateLimited,
        _ => Code::Internal,
    }
    .into())
}

pub async fn hidden(ctx: &Ctx, id: Id) -> Result<NoMessages, ApiError> {
    ctx.store
        .first(prepare("SELECT 1 AS found FROM posts WHERE id = ?1").bind(id.as_str()))
        .await?
        .ok_or(ApiError(Code::NotFound))?;
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
    let first = rows.first().ok_or(ApiError(Code::NotFound))?;
    if !flag(first, "ok") {
        return Err(Code::BadSecret.into());
    }
    let messages = MessageView::rows(&rows);
    Ok(Waiting { messages })
}

pub async fn accept(ctx: &Ctx, id: Id, body: Accept) -> Result<ThreadKey, ApiError> {
    let ip = ctx.ip_hash()?;
    let thread_key = new_secret();
    let secret_hash = sha256_hex(&body.secret);
    let results = ctx
        .store
        .batch(vec![
            prepare(
                "SELECT p.secret_hash = ?2 AS ok, \
                 EXISTS (SELECT 1 FROM messages WHERE id = ?3 AND post_id = ?1 AND role = 'first') AS found, \
                 EXISTS (SELECT 1 FROM messages WHERE parent_id = ?3 AND role = 'accept') AS taken \
                 FROM posts p WHERE p.id = ?1",
            )
            .bind(id.as_str())
            .bind(&secret_hash)
            .bind(&body.message_id),
            prepare(
                "INSERT INTO messages (id, post_id, role, parent_id, thread_key, thread_key_hash, ip_hash, created_at) \
                 SELECT ?4, ?1, 'accept', ?3, ?5, ?6, ?7, ?8 \
                 WHERE EXISTS (SELECT 1 FROM posts WHERE id = ?1 AND secret_hash = ?2) \
                 AND EXISTS (SELECT 1 FROM messages WHERE id = ?3 AND post_id = ?1 AND role = 'first') \
                 AND NOT EXISTS (SELECT 1 FROM messages WHERE parent_id = ?3 AND role = 'accept') \
                 RETURNING id",
            )
            .bind(id.as_str())
            .bind(&secret_hash)
            .bind(&body.message_id)
            .bind(new_id())
            .bind(&thread_key)
            .bind(sha256_hex(&thread_key))
            .bind(ip)
            .bind(ctx.now_ms),
        ])
        .await?;
    if wrote(&results).is_some() {
        return Ok(ThreadKey { thread_key });
    }
    Err(match checks(&results) {
        None => Code::NotFound,
        Some(row) if !flag(row, "ok") => Code::BadSecret,
        Some(row) if !flag(row, "found") => Code::NotFound,
        Some(row) if flag(row, "taken") => Code::AlreadyAccepted,
        Some(_) => Code::Internal,
    }
    .into())
}
