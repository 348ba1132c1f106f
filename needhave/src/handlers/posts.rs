//! Posts: create a need or a have, list them, read one.

use std::sync::Arc;

use needhave_macros::{FromBody, ToJson};

use super::guard::{guarded, Guarded};
use crate::api::Ctx;
use crate::conditional::{self, LIST_CACHE};
use crate::error::{ApiError, Code};
use crate::http::{Id, Request, Response, ToJson};
use crate::rules;
use crate::secrets::{new_id, new_secret, sha256_hex};
use crate::store::{prepare, RowExt, StoreExt};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema),
    serde(rename_all = "lowercase")
)]
pub enum Kind {
    Need,
    Have,
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "need" => Some(Kind::Need),
            "have" => Some(Kind::Have),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Need => "need",
            Kind::Have => "have",
        }
    }
}

impl ToJson for Kind {
    fn write_json(&self, out: &mut Vec<u8>) {
        self.as_str().write_json(out)
    }
}

#[derive(FromBody)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct CreatePost {
    /// `need` or `have`.
    // A string rather than `Kind`, so that a missing or unknown kind is
    // `bad_kind` while a kind of the wrong JSON type stays `bad_request`.
    // (An absent or null `Option` field reads as `None`.)
    #[cfg_attr(not(target_arch = "wasm32"), schemars(with = "Kind", required))]
    pub kind: Option<String>,
    /// The public note: 1 to 500 characters after trimming, unique on the
    /// list, with no e-mail address or phone number.
    pub note: String,
}

#[derive(ToJson)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
pub struct PostCreated {
    pub id: String,
    pub kind: Kind,
    pub note: String,
    /// The post secret. Shown only in this answer and never again: keep it.
    pub secret: String,
}

#[derive(ToJson)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
pub struct PostView {
    pub id: String,
    pub kind: Kind,
    pub note: String,
}

// The answer of `GET /posts`, for the OpenAPI document: `list` writes it
// from the kept serialized list, not through this type.
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
pub struct PostList {
    /// The 100 newest posts, newest first.
    pub posts: Vec<PostView>,
}

/// A create: no copy of the note (by its key's digest, by the exact note,
/// and by the full key an older row may still keep, see migrations/),
/// then the client's and its site's hourly rates, in the contract's order.
/// Guard parameters: ?1 key digest, ?2 note, ?3 key, ?4 ip hash, ?5 site
/// hash, ?6 window start, ?7 and ?8 the rates; then the values.
static CREATE: Guarded = guarded! {
    insert "INSERT INTO posts (id, kind, note, note_key_hash, secret_hash, ip_hash, site_hash, created_at) \
            SELECT ?9, ?10, ?2, ?1, ?11, ?4, ?5, ?12";
    "dup" => DuplicateNote if holds("NOT EXISTS (SELECT 1 FROM posts WHERE note_key_hash = ?1) \
        AND NOT EXISTS (SELECT 1 FROM posts WHERE note_key_hash IS NULL AND note = ?2) \
        AND NOT EXISTS (SELECT 1 FROM posts WHERE note_key = ?3)");
    "recent" => RateLimited if rate("?7", "posts", "ip_hash = ?4 AND created_at > ?6");
    "site" => RateLimited if rate("?8", "posts", "site_hash = ?5 AND created_at > ?6");
    returning "id"
};

pub async fn create(ctx: &Ctx, body: CreatePost) -> Result<PostCreated, ApiError> {
    let kind = body
        .kind
        .as_deref()
        .and_then(Kind::parse)
        .ok_or(ApiError::from(Code::BadKind))?;
    let rules::Note { text: note, key } = rules::note(&body.note)?;
    let (ip, site) = ctx.client_hashes()?;
    let id = new_id();
    let secret = new_secret();
    // The key's digest is what is kept: a key can be many times its note
    // (NFKC expands some characters 18-fold), its digest never is.
    let key_hash = sha256_hex(&key);
    let guards = vec![
        key_hash.into(),
        note.into(),
        key.into(),
        ip.into(),
        site.into(),
        (ctx.now_ms - rules::HOUR_MS).into(),
        rules::CREATES_PER_HOUR.into(),
        rules::SITE_CREATES_PER_HOUR.into(),
    ];
    let values = vec![
        id.as_str().into(),
        kind.as_str().into(),
        sha256_hex(&secret).into(),
        ctx.now_ms.into(),
    ];
    CREATE.run(ctx, guards, values).await?;
    Ok(PostCreated {
        id,
        kind,
        note: note.to_string(),
        secret,
    })
}

/// A post row as its public view; `None` if the row is not one.
fn view(row: &crate::store::Row) -> Option<PostView> {
    Some(PostView {
        id: row.str("id")?.to_string(),
        kind: Kind::parse(row.str("kind")?)?,
        note: row.str("note")?.to_string(),
    })
}

/// The memo key of the public list.
const LIST: &str = "posts";

/// What tells the list's version tags from the feed's.
const LIST_TAG: char = 'p';

/// The public list's one statement. `?1` is the version of the list this
/// store keeps serialized (`max(rowid)` when it was read), `?2` the version
/// the client holds (from its `If-None-Match`), each -1 when there is none.
///
/// Posts are never changed or deleted, so the newest 100 change exactly when
/// `max(rowid)` does. The first row is always the version alone (`top`, no
/// post), so an empty answer says which version it vouches for. The version
/// test sits in the LIMIT, which SQLite evaluates once before the scan: a
/// list at either known version reads no rows at all and costs two index
/// lookups, however long the list. (In the WHERE clause the same test was
/// checked row by row, so an unchanged list walked the whole index: 2 ms at
/// 20 k posts.)
const LIST_SQL: &str =
    "SELECT (SELECT max(rowid) FROM posts) AS top, NULL AS id, NULL AS kind, NULL AS note \
     UNION ALL SELECT * FROM (SELECT NULL, id, kind, note \
     FROM posts ORDER BY created_at DESC, rowid DESC \
     LIMIT CASE WHEN (SELECT max(rowid) FROM posts) IN (?1, ?2) THEN 0 ELSE 100 END)";

/// The public list: at most one round trip; from the kept copy while it is
/// current; a 304 when the client's `If-None-Match` names the current
/// version (see [`crate::conditional`]).
///
/// A raw route: the answer is `{"posts": …}` around the kept JSON text,
/// written as bytes. (Serializing a kept text inside a typed answer would
/// take serde_json's `raw_value`, which costs the Worker about 4 KB gzip.)
pub async fn list(req: &Request, ctx: &Ctx) -> Response {
    let held = conditional::known_version(req, LIST_TAG, "");
    match kept_list(ctx, held).await {
        Ok((version, None)) => {
            conditional::not_modified(&conditional::version_tag(LIST_TAG, version, ""), LIST_CACHE)
        }
        Ok((version, Some(posts))) => {
            let mut body = Vec::with_capacity(posts.len() + 11);
            body.extend_from_slice(b"{\"posts\":");
            body.extend_from_slice(posts.as_bytes());
            body.push(b'}');
            let tag = conditional::version_tag(LIST_TAG, version, "");
            conditional::tagged(
                req,
                Response::new(200, crate::http::JSON, body),
                &tag,
                LIST_CACHE,
            )
        }
        Err(e) => Response::from_error(&e),
    }
}

/// The public list's version, and its posts as a JSON array unless `held`
/// (the version the client holds) is the current one: from the memo while
/// current, without asking the store when it vouches nothing was written
/// since (SQLite here), else after one statement that returns posts only
/// when the list is at neither the kept nor the held version (D1, or after
/// a write).
async fn kept_list(ctx: &Ctx, held: Option<i64>) -> Result<(i64, Option<Arc<str>>), ApiError> {
    let memo = ctx.store.memo();
    if let Some((version, posts)) = memo.and_then(|m| m.current(LIST)) {
        return Ok((version, (held != Some(version)).then_some(posts)));
    }
    // Read before the statement: a write after this makes the next call ask.
    let writes = memo.map_or(0, |m| m.writes());
    let kept = memo.and_then(|m| m.get(LIST));
    let known = kept.as_ref().map_or(-1, |(version, _)| *version);
    let rows = ctx
        .store
        .all(prepare(LIST_SQL).bind(known).bind(held.unwrap_or(-1)))
        .await?;
    // An empty list has no rowid: version 0, which no post has.
    let top = rows.first().and_then(|r| r.int("top")).unwrap_or(0);
    if held == Some(top) {
        return Ok((top, None));
    }
    if let (Some(m), Some((version, posts))) = (memo, kept) {
        if version == top {
            m.put(LIST, version, writes, posts.clone());
            return Ok((version, Some(posts)));
        }
    }
    let views: Vec<PostView> = rows.iter().filter_map(view).collect();
    let posts: Arc<str> = String::from_utf8(views.to_json())
        .map_err(|_| ApiError::from(Code::Internal))?
        .into();
    if let Some(m) = memo {
        m.put(LIST, top, writes, posts.clone());
    }
    Ok((top, Some(posts)))
}

pub async fn read(ctx: &Ctx, id: Id) -> Result<PostView, ApiError> {
    let row = ctx
        .store
        .first(prepare("SELECT id, kind, note FROM posts WHERE id = ?1").bind(id.as_str()))
        .await?;
    row.as_ref().and_then(view).ok_or(Code::NotFound.into())
}
