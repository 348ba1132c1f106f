//! Threads: the respondent's callback, reading a thread by its key, and
//! writing the next message in it. The key travels only in JSON bodies.

use needhave_macros::{schema, FromBody, ToJson};

use super::guard::{guarded, Guarded};
use crate::api::Ctx;
use crate::error::{ApiError, Code};
use crate::handlers::life::message_removed;
use crate::handlers::messages::MessageView;
use crate::http::Id;
use crate::rules;
use crate::secrets::{new_id, sha256_hex};
use crate::store::{prepare, RowExt, StoreExt};

#[schema]
#[derive(FromBody)]
pub struct ReplySecret {
    /// The reply secret from the first-reply answer.
    pub secret: String,
}

#[schema(serialize)]
#[derive(ToJson)]
pub struct Callback {
    /// Whether the post's author accepted this first message.
    pub accepted: bool,
    /// Present only once accepted: the thread's key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_key: Option<String>,
}

#[schema]
#[derive(FromBody)]
pub struct ThreadKeyBody {
    /// The thread key.
    pub thread_key: String,
}

#[schema(serialize)]
#[derive(ToJson)]
pub struct Thread {
    pub post_id: String,
    /// The first message, then the 100 most recent later ones, oldest first.
    pub messages: Vec<MessageView>,
}

#[schema]
#[derive(FromBody)]
pub struct ThreadMessage {
    /// The thread key.
    pub thread_key: String,
    /// The message: 1 to 500 characters after trimming.
    pub text: String,
}

#[schema(serialize)]
#[derive(ToJson)]
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
        .ok_or(ApiError::from(Code::NotFound))?;
    if !row.flag("ok") {
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
            // A message the operator removed is left out; the thread goes
            // on (its first row still names the post when the first
            // message is the one removed).
            prepare(concat!(
                "SELECT 0 AS part, a.post_id AS post_id, \
                 CASE WHEN NOT ",
                message_removed!("f.id"),
                " THEN f.id END AS id, f.text AS text, f.created_at AS t, f.rowid AS r \
                 FROM messages a JOIN messages f ON f.id = a.parent_id \
                 WHERE a.role = 'accept' AND a.thread_key_hash = ?1 \
                 UNION ALL \
                 SELECT * FROM (SELECT 1, l.post_id, l.id, l.text, l.created_at, l.rowid FROM messages l \
                 WHERE l.role = 'later' AND l.thread_key_hash = ?1 AND NOT ",
                message_removed!("l.id"),
                " ORDER BY l.created_at DESC, l.rowid DESC LIMIT 100) \
                 ORDER BY part, t, r"
            ))
            .bind(sha256_hex(&body.thread_key)),
        )
        .await?;
    let post_id = rows
        .first()
        .and_then(|r| r.str("post_id"))
        .ok_or(ApiError::from(Code::NotFound))?
        .to_string();
    let messages = MessageView::rows(&rows);
    Ok(Thread { post_id, messages })
}

/// A later message: the thread exists, then the client's and its site's
/// hourly rates. Guard parameters: ?1 thread key hash, ?2 ip hash, ?3 site
/// hash, ?4 window start, ?5 and ?6 the rates; then the values.
static WRITE: Guarded = guarded! {
    insert "INSERT INTO messages (id, post_id, role, text, thread_key_hash, ip_hash, site_hash, created_at) \
            SELECT ?7, (SELECT post_id FROM messages WHERE role = 'accept' AND thread_key_hash = ?1), \
            'later', ?8, ?1, ?2, ?3, ?9";
    made "messages" "?7";
    "thread" => NotFound if holds("EXISTS (SELECT 1 FROM messages WHERE role = 'accept' AND thread_key_hash = ?1)");
    "recent" => RateLimited if rate("?5", "messages", "ip_hash = ?2 AND role = 'later' AND created_at > ?4");
    "site" => RateLimited if rate("?6", "messages", "site_hash = ?3 AND role = 'later' AND created_at > ?4");
    returning "post_id"
};

pub async fn write(ctx: &Ctx, body: ThreadMessage) -> Result<LaterCreated, ApiError> {
    let text = rules::text(&body.text)?;
    let (ip, site) = ctx.client_hashes()?;
    let id = new_id();
    let guards = vec![
        sha256_hex(&body.thread_key).into(),
        ip.into(),
        site.into(),
        (ctx.now_ms - rules::HOUR_MS).into(),
        rules::THREAD_MESSAGES_PER_HOUR.into(),
        rules::SITE_THREAD_MESSAGES_PER_HOUR.into(),
    ];
    let values = vec![id.as_str().into(), text.into(), ctx.now_ms.into()];
    let row = WRITE.run(ctx, guards, values).await?;
    Ok(LaterCreated {
        id,
        post_id: row.str("post_id").unwrap_or_default().to_string(),
    })
}
