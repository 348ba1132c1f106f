//! Posts: create a need or a have, list them, read one.

use serde::{Deserialize, Serialize};

use super::flag;
use crate::error::{ApiError, Code};
use crate::http::Id;
use crate::rules;
use crate::secrets::{new_id, new_secret, sha256_hex};
use crate::store::{prepare, RowExt, StoreExt};
use crate::Ctx;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Need,
    Have,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Need => "need",
            Kind::Have => "have",
        }
    }
}

#[derive(Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct CreatePost {
    /// `need` or `have`.
    // A string rather than `Kind`, so that a missing or unknown kind is
    // `bad_kind` while a kind of the wrong JSON type stays `bad_request`.
    // (serde reads a missing `Option` field as `None`.)
    #[cfg_attr(not(target_arch = "wasm32"), schemars(with = "Kind", required))]
    pub kind: Option<String>,
    /// The public note: 1 to 500 characters after trimming, unique on the list.
    pub note: String,
}

#[derive(Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PostCreated {
    pub id: String,
    pub kind: Kind,
    pub note: String,
    /// The post secret. Shown only in this answer and never again: keep it.
    pub secret: String,
}

#[derive(Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PostView {
    pub id: String,
    pub kind: Kind,
    pub note: String,
}

#[derive(Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PostList {
    /// The 100 newest posts, newest first.
    pub posts: Vec<PostView>,
}

pub async fn create(ctx: &Ctx, body: CreatePost) -> Result<PostCreated, ApiError> {
    let kind = match body.kind.as_deref() {
        Some("need") => Kind::Need,
        Some("have") => Kind::Have,
        _ => return Err(Code::BadKind.into()),
    };
    let note = rules::text(&body.note)?;
    let id = new_id();
    let secret = new_secret();
    let since = ctx.now_ms - rules::HOUR_MS;
    let results = ctx
        .store
        .batch(vec![
            prepare(
                "SELECT EXISTS (SELECT 1 FROM posts WHERE note = ?1) AS dup, \
                 (SELECT count(*) FROM posts WHERE ip_hash = ?2 AND created_at > ?3) AS recent",
            )
            .bind(note)
            .bind(&ctx.ip_hash)
            .bind(since),
            prepare(
                "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6 \
                 WHERE NOT EXISTS (SELECT 1 FROM posts WHERE note = ?3) \
                 AND (SELECT count(*) FROM posts WHERE ip_hash = ?5 AND created_at > ?7) < ?8 \
                 RETURNING id",
            )
            .bind(&id)
            .bind(kind.as_str())
            .bind(note)
            .bind(sha256_hex(&secret))
            .bind(&ctx.ip_hash)
            .bind(ctx.now_ms)
            .bind(since)
            .bind(rules::CREATES_PER_HOUR),
        ])
        .await?;
    if results.get(1).is_some_and(|rows| !rows.is_empty()) {
        return Ok(PostCreated {
            id,
            kind,
            note: note.to_string(),
            secret,
        });
    }
    let checks = results.first().and_then(|rows| rows.first());
    Err(match checks {
        Some(row) if flag(row, "dup") => Code::DuplicateNote,
        Some(row) if row.int("recent").unwrap_or(0) >= rules::CREATES_PER_HOUR => Code::RateLimited,
        _ => Code::Internal,
    }
    .into())
}

fn view(row: &crate::store::Row) -> Option<PostView> {
    serde_json::from_value(serde_json::Value::Object(row.clone())).ok()
}

pub async fn list(ctx: &Ctx) -> Result<PostList, ApiError> {
    let rows = ctx
        .store
        .all(
            prepare(
                "SELECT id, kind, note FROM posts ORDER BY created_at DESC, rowid DESC LIMIT ?1",
            )
            .bind(rules::LIST_SIZE),
        )
        .await?;
    Ok(PostList {
        posts: rows.iter().filter_map(view).collect(),
    })
}

pub async fn read(ctx: &Ctx, id: Id) -> Result<PostView, ApiError> {
    let row = ctx
        .store
        .first(prepare("SELECT id, kind, note FROM posts WHERE id = ?1").bind(id.as_str()))
        .await?;
    row.as_ref().and_then(view).ok_or(Code::NotFound.into())
}
