//! Threads: the respondent's callback, reading a thread by its key, and
//! writing the next message in it. The key travels only in JSON bodies.

use needhave_macros::{FromBody, ToJson};

use super::{checks, flag, wrote};
use crate::api::Ctx;
use crate::error::{ApiError, Code};
use crate::handlers::messages::MessageView;
use crate::http::Id;
use crate::rules;
use crate::secrets::{new_id, sha256_hex};
use crate::store::{prepare, RowExt, StoreExt};

#[derive(FromBody)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ReplySecret {
    /// The reply secret from the first-reply answer.
    pub secret: String,
}

#[derive(ToJson)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
pub struct Callback {
    /// Whether the post's author accepted this first message.
    pub accepted: bool,
    /// Present only once accepted: the thread's key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_key: Option<String>,
}

#[derive(FromBody)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ThreadKeyBody {
    /// The thread key.
    pub thread_key: String,
}

#[derive(ToJson)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
pub struct Thread {
    pub post_id: String,
    /// The first message, then the 100 most recent later ones, oldest first.
    pub messages: Vec<MessageView>,
}

#[derive(FromBody)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct ThreadMessage {
    /// The thread key.
    pub thread_key: String,
    /// The message: 1 to 500 characters after trimming.
    pub text: String,
}

#[derive(ToJson)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
pub struct LaterCreated {
    pub id: String,
    pub post_id: String,
}

pub async fn callback(ctx: &Ctx, id: Id, body: ReplySecret) -> Result<Callback, ApiError> {
    let row = ctx
        .store
        .first(
            prepare(
                "SELECT f.secret_hash = ?2 AS ok, a.thread_key AS thread_key \
                 FROM messages f LEFT JOIN messages a ON a.parent_id = f.id AND a.role = 'accept' \
                 WHERE f.id = ?1 AND f.role = 'first'",
            )
            .bind(id.as_str())
            .bind(sha256_hex(&body.secret)),
        )
        .await?
        .ok_or(ApiError(Code::NotFound))?;
    if !flag(&row, "ok") {
        return Err(Code::BadSecret.into());
    }
    let thread_key = row.str("thread_key").map(str::to_string);
    Ok(Callback {
        accepted: thread_key.is_some(),
        thread_key,
    })
}

pub async fn read(ctx: &Ctx, body: ThreadKeyBody) -> Result<Thread, ApiError> {
    let rows = ctx
        .store
        .all(
            prepare(
                "SELECT 0 AS part, a.post_id AS post_id, f.id AS id, f.text AS text, \
                 f.created_at AS t, f.rowid AS r \
                 FROM messages a JOIN messages f ON f.id = a.parent_id \
                 WHERE a.role = 'accept' AND a.thread_key_hash = ?1 \
                 UNION ALL \
                 SELECT * FROM (SELECT 1, post_id, id, text, created_at, rowid FROM messages \
                 WHERE role = 'later' AND thread_key_hash = ?1 \
                 ORDER BY created_at DESC, rowid DESC LIMIT 100) \
                 ORDER BY part, t, r",
            )
            .bind(sha256_hex(&body.thread_key)),
        )
        .await?;
    let post_id = rows
        .first()
        .and_then(|r| r.str("post_id"))
        .ok_or(ApiError(Code::NotFound))?
        .to_string();
    let messages = MessageView::rows(&rows);
    Ok(Thread { post_id, messages })
}

/// How many later messages the client's IP (`?2`) wrote since `?3`. A
/// macro so that both statements share the literal.
macro_rules! recent_later {
    () => {
        "(SELECT count(*) FROM messages WHERE ip_hash = ?2 AND role = 'later' AND created_at > ?3)"
    };
}

pub async fn write(ctx: &Ctx, body: ThreadMessage) -> Result<LaterCreated, ApiError> {
    let text = rules::text(&body.text)?;
    let ip = ctx.ip_hash()?;
    let id = new_id();
    let key_hash = sha256_hex(&body.thread_key);
    let since = ctx.now_ms - rules::HOUR_MS;
    let results = ctx
        .store
        .batch(vec![
            prepare(concat!(
                "SELECT EXISTS (SELECT 1 FROM messages WHERE role = 'accept' AND thread_key_hash = ?1) \
                 AS thread, ",
                recent_later!(),
                " AS recent",
            ))
            .bind(&key_hash)
            .bind(ip)
            .bind(since),
            prepare(concat!(
                "INSERT INTO messages (id, post_id, role, text, thread_key_hash, ip_hash, created_at) \
                 SELECT ?4, post_id, 'later', ?5, ?1, ?2, ?6 FROM messages \
                 WHERE role = 'accept' AND thread_key_hash = ?1 AND ",
                recent_later!(),
                " < ?7 RETURNING post_id",
            ))
            .bind(&key_hash)
            .bind(ip)
            .bind(since)
            .bind(&id)
            .bind(text)
            .bind(ctx.now_ms)
            .bind(rules::THREAD_MESSAGES_PER_HOUR),
        ])
        .await?;
    if let Some(row) = wrote(&results) {
        return Ok(LaterCreated {
            id,
            post_id: row.str("post_id").unwrap_or_default().to_string(),
        });
    }
    Err(match checks(&results) {
        Some(row) if !flag(row, "thread") => Code::NotFound,
        Some(row) if row.int("recent").unwrap_or(0) >= rules::THREAD_MESSAGES_PER_HOUR => {
            Code::RateLimited
        }
        _ => Code::Internal,
    }
    .into())
}
