//! Posts: create a need or a have, list them, read one.

use std::sync::Arc;

use needhave_macros::{schema, FromBody, ToJson};

use super::guard::{guarded, Guarded};
use super::life::{self, closed_at, removed, Status};
use crate::api::Ctx;
use crate::conditional::{self, Version};
use crate::error::{ApiError, Code};
use crate::http::{Id, Request, Response};
use crate::json::ToJson;
use crate::platform::rfc3339;
use crate::rules;
use crate::search::{Cursor, Words};
use crate::secrets::{new_id, new_secret, sha256_hex};
use crate::store::index::Index;
use crate::store::{prepare, RowExt, StoreExt};

pub use crate::rules::Kind;

#[schema]
#[derive(FromBody)]
pub struct CreatePost {
    /// `need` or `have`.
    // A string rather than `Kind`, so that a missing or unknown kind is
    // `bad_kind` while a kind of the wrong JSON type stays `bad_request`.
    // (An absent or null `Option` field reads as `None`.)
    #[schemars(with = "Kind", required)]
    pub kind: Option<String>,
    /// The public note: 1 to 500 characters after trimming, unique on the
    /// list, with no e-mail address or phone number.
    pub note: String,
    /// Seconds until the post ends by itself: a whole number from 300 to
    /// 7776000 (five minutes to ninety days). Without it the post stays
    /// until its author closes it.
    // Any JSON value, so that one that does not fit is `bad_expiry`.
    #[schemars(with = "Option<ExpiresIn>")]
    pub expires_in: Option<serde_json::Value>,
}

/// The schema of `expires_in` (a create's, `create_need`'s and
/// `create_have`'s): whole seconds, five minutes to ninety days
/// (`rules::EXPIRES_IN_MIN`, `rules::EXPIRES_IN_MAX`).
#[schema]
#[schemars(inline)]
pub struct ExpiresIn(#[schemars(range(min = 300, max = 7_776_000))] pub u32);

// The answers' fields of a post's life are optional in their schemas, also
// where every answer carries them (`created_at`, `status`): a client (the
// stdio server) built from these schemas then still reads a list that has
// no such fields. Each is left out when `None`, never `null`.

#[schema(serialize)]
#[derive(ToJson)]
pub struct PostCreated {
    pub id: String,
    pub kind: Kind,
    pub note: String,
    /// The post secret. Shown only in this answer and never again: keep it.
    pub secret: String,
    /// When it was posted: RFC 3339, UTC, milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", default)]
    pub created_at: Option<String>,
    /// When it ends by itself (RFC 3339, UTC, milliseconds): there only
    /// when `expires_in` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", default)]
    pub expires_at: Option<String>,
}

#[schema(serialize)]
#[derive(ToJson)]
pub struct PostView {
    pub id: String,
    pub kind: Kind,
    pub note: String,
    /// When it was posted: RFC 3339, UTC, milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", default)]
    pub created_at: Option<String>,
    /// `open` (it takes first replies), `closed` (by its author) or
    /// `expired`. The list shows open posts only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Status", default)]
    pub status: Option<Status>,
    /// When it ends, or ended, by itself (RFC 3339, UTC, milliseconds):
    /// there only when its author gave it an expiry.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", default)]
    pub expires_at: Option<String>,
    /// When it ended (RFC 3339, UTC, milliseconds): there once it is
    /// closed or expired.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", default)]
    pub ended_at: Option<String>,
}

// The answer of `GET /posts`, written once as JSON text (`page_json`),
// which is what the store's memo keeps for the bare list.
#[schema(serialize)]
#[derive(ToJson)]
pub struct PostList {
    /// The matching posts, newest first: at most `limit` (100 unless asked).
    pub posts: Vec<PostView>,
    /// There only when older posts match too: pass it as `before` (MCP: `cursor`) for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    // Left out when there is no next page, never `null`.
    #[schemars(with = "String", default)]
    pub next: Option<String>,
}

/// A page as the answer's JSON text.
fn page_json(page: Page) -> Arc<str> {
    let list = PostList {
        posts: page.posts,
        next: page.next.map(Cursor::encode),
    };
    // Valid UTF-8: JSON written from strings.
    String::from_utf8(list.to_json()).unwrap_or_default().into()
}

/// One page of the list: its posts, newest first, and the cursor of the
/// next page when older posts match too.
pub struct Page {
    pub posts: Vec<PostView>,
    pub next: Option<Cursor>,
}

/// A create: no copy of the note (by its key's digest, by the exact note,
/// and by the full key an older row may still keep, see migrations/),
/// then the client's and its site's hourly rates, in the order docs/life.md gives.
/// Guard parameters: ?1 key digest, ?2 note, ?3 key, ?4 ip hash, ?5 site
/// hash, ?6 window start, ?7 and ?8 the rates; then the values. The
/// schema's trigger makes the post open (`live`) in the same statement.
static CREATE: Guarded = guarded! {
    insert "INSERT INTO posts (id, kind, note, note_key_hash, secret_hash, ip_hash, site_hash, created_at, expires_at) \
            SELECT ?9, ?10, ?2, ?1, ?11, ?4, ?5, ?12, ?13";
    made "posts" "?9";
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
    let expires_at = rules::expires_in(body.expires_in.as_ref())?.map(|ms| ctx.now_ms + ms);
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
        expires_at.map_or(crate::store::Value::Null, Into::into),
    ];
    // Its words, in the same batch (one transaction); the index takes the
    // batch's answer back.
    let index = Index::of(&*ctx.store);
    let words = index.statements(kind, &id, note);
    let (_, answer) = CREATE.run_then(ctx, guards, values, words).await?;
    index.committed(&answer);
    Ok(PostCreated {
        id,
        kind,
        note: note.to_string(),
        secret,
        created_at: Some(rfc3339(ctx.now_ms)),
        expires_at: expires_at.map(rfc3339),
    })
}

/// A post row as its public view at `now_ms`, its texts moved out of the
/// row rather than copied (a page makes a hundred); `None` if the row is
/// not one. Its status from its `closed_at` (a page's rows have none:
/// they are open) and `expires_at`.
fn view(row: crate::store::Row, now_ms: i64) -> Option<PostView> {
    // A walk of the row by value rather than a removal by name: the walk
    // is the code the map's drop already links into the Worker, a removal
    // would link more (docs/design/worker-size.md, "Crates or hand-written
    // code").
    let (mut id, mut kind, mut note) = (None, None, None);
    let (mut created_at, mut expires_at, mut closed_at) = (None, None, None);
    for (col, value) in row {
        match value {
            serde_json::Value::String(s) => match col.as_str() {
                "id" => id = Some(s),
                "kind" => kind = Kind::parse(&s),
                "note" => note = Some(s),
                _ => {}
            },
            serde_json::Value::Number(n) => match col.as_str() {
                "created_at" => created_at = n.as_i64(),
                "expires_at" => expires_at = n.as_i64(),
                "closed_at" => closed_at = n.as_i64(),
                _ => {}
            },
            _ => {}
        }
    }
    let (status, ended_at) = life::status(closed_at, expires_at, now_ms);
    Some(PostView {
        id: id?,
        kind: kind?,
        note: note?,
        created_at: Some(rfc3339(created_at?)),
        status: Some(status),
        expires_at: expires_at.map(rfc3339),
        ended_at: ended_at.map(rfc3339),
    })
}

/// The memo key of the public list.
pub(crate) const LIST: &str = "posts";

/// What tells the list's version tags from the feed's.
pub(crate) const LIST_TAG: char = 'p';

/// The statement of a page of the list, from its row selections `$rows`
/// (`r, id, kind, note, created_at, expires_at`, newest first, after
/// `?4`, the row number below which the page starts), each with how many
/// rows it may give (`?3` unless said: `page_sql!(now; first => "-1",
/// then)` takes all of `first`, then at most `?3` of `then`); `$now` is
/// the parameter of the time.
///
/// Its first row is the list's version alone ([`Version`], as text in
/// `top`), so even an empty answer says which version it vouches for, and
/// in its `expires_at` the next expiry to come (until when an answer of
/// this version may be kept). The posts follow only when the version is
/// neither `?1` (the one the client holds, from its `If-None-Match`) nor
/// `?2` (the one this store keeps serialized), each empty when there is
/// none; `?3` is how many. The version test sits in the LIMIT, which
/// SQLite evaluates once before the scan: a page at a known version reads
/// no post at all, a few index lookups however long the list. (In the
/// WHERE clause SQLite checks the same test row by row, and an unchanged
/// list walks the whole index.)
macro_rules! page_sql {
    // The version: the newest post, the newest end by a row, the latest
    // expiry passed, each one seek.
    (@version $now:literal) => {
        concat!(
            "coalesce((SELECT max(rowid) FROM posts), 0) || '-' || \
             coalesce((SELECT max(n) FROM post_ends), 0) || '-' || \
             coalesce((SELECT expires_at FROM posts WHERE expires_at <= ",
            $now,
            " ORDER BY expires_at DESC LIMIT 1), 0)"
        )
    };
    (@head $now:literal) => {
        concat!(
            "SELECT ",
            page_sql!(@version $now),
            " AS top, NULL AS r, NULL AS id, NULL AS kind, NULL AS note, NULL AS created_at, \
             (SELECT expires_at FROM posts WHERE expires_at > ",
            $now,
            " ORDER BY expires_at LIMIT 1) AS expires_at"
        )
    };
    (@known $now:literal) => {
        concat!("CASE WHEN ", page_sql!(@version $now), " IN (?1, ?2) THEN 0 ELSE ")
    };
    (@rows $now:literal, $rows:expr, $limit:literal) => {
        concat!(
            " UNION ALL SELECT * FROM (SELECT NULL, ",
            $rows,
            " LIMIT ",
            page_sql!(@known $now),
            $limit,
            " END)"
        )
    };
    ($now:literal; $rows:literal) => {
        concat!(page_sql!(@head $now), page_sql!(@rows $now, $rows, "?3"))
    };
    // Then two walks merged as they go: each arm's first column is its
    // index's row number, which FTS5 yields in order, so SQLite merges the
    // two without a sort and stops both at the page's end.
    ($now:literal; $first:expr => $all:literal, $a:literal | $b:literal) => {
        concat!(
            page_sql!(@head $now),
            page_sql!(@rows $now, $first, $all),
            " UNION ALL SELECT * FROM (SELECT ",
            $a,
            " UNION ALL SELECT ",
            $b,
            " ORDER BY 1 LIMIT ",
            page_sql!(@known $now),
            "?3 END)"
        )
    };
}

/// A page of the open posts: `live` walked down its row numbers (a post's
/// own, so newest first) from the cursor, each joined to its row; an
/// expired post the sweep has not taken out yet is passed over by its
/// expiry in `live`. (`CROSS JOIN`: SQLite keeps `live` the outer loop.)
const PAGE_SQL: &str = page_sql!(
    "?5";
    "posts.rowid, posts.id, posts.kind, posts.note, posts.created_at, posts.expires_at \
     FROM live CROSS JOIN posts ON posts.rowid = live.post \
     WHERE live.post < ?4 AND (live.expires_at IS NULL OR live.expires_at > ?5) \
     ORDER BY live.post DESC"
);

/// A page of the open posts of one kind (`?5`), down `live_kind` (kind,
/// then row number, then the expiry it is filtered on).
const KIND_SQL: &str = page_sql!(
    "?6";
    "posts.rowid, posts.id, posts.kind, posts.note, posts.created_at, posts.expires_at \
     FROM live CROSS JOIN posts ON posts.rowid = live.post \
     WHERE live.kind = ?5 AND live.post < ?4 AND (live.expires_at IS NULL OR live.expires_at > ?6) \
     ORDER BY live.post DESC"
);

/// A page of the open posts whose words hold every term of `?7` (a JSON
/// array, unmarked) of the kinds whose marks are `?5` (a JSON array), in three
/// parts after the version row: the posts whose words wait in `words_new`
/// (fewer than [`PENDING_MAX`](crate::store::PENDING_MAX)) and hold every
/// needle of `?6` ([`Words::needles`]: the same terms, matched by
/// `instr`); then the moved posts of the kinds whose every term is hot, by
/// those terms' lists in the hot part of the index; then those of the
/// kinds with a term that is not, by the merge of their cold terms in the
/// cold part, each checked for the hot terms by a seek
/// ([`store::hot_cold`](crate::store::hot_cold)). Every post in
/// `words_new` is newer than every moved post (a move takes them all);
/// the two index parts are walked together and merged as they go (each
/// row's first column, NULL in the others, is its index's row number).
///
/// The index yields row numbers newest first from the cursor down, and
/// stops at the page's end. It holds each post under its row number
/// reversed (2^28 − rowid: [`WORDS_BASE`](crate::store::WORDS_BASE)), so
/// newest first is the index's own rising order, the one FTS5 walks
/// without decoding a whole leaf first: "below the cursor" is "above the
/// cursor reversed".
///
/// The cursor is cast: D1 binds every number as a REAL, and FTS5 starts
/// its walk at a rowid bound only when the bound is an INTEGER. Given a
/// REAL, it walks the word's list from the newest post and SQLite drops
/// the rows above the cursor one by one: the same page, but the 100th page
/// of a word then reads the 9,900 rows before it (D1 bills each).
pub const WORDS_SQL: &str = concat!(
    "WITH q AS (SELECT k.value AS m, substr(w.value, 1, 100) AS w, EXISTS \
       (SELECT 1 FROM hot_prefixes h WHERE h.p = k.value || substr(w.value, 1, 100)) AS hot \
       FROM json_each(?5) k, json_each(?7) w), \
     kinds AS (SELECT m, min(hot) AS all_hot, \
       '(' || group_concat(CASE WHEN hot THEN '\"' || m || w || '\"' END, ' AND ') || ')' AS hot_e, \
       '(' || group_concat(CASE WHEN NOT hot THEN '\"' || m || w || '\"*' END, ' AND ') || ')' AS cold_e \
       FROM q GROUP BY m) ",
    page_sql!(
        "?8";
        concat!(
            "posts.rowid, posts.id, posts.kind, posts.note, posts.created_at, posts.expires_at \
             FROM words_new JOIN posts ON posts.rowid = words_new.post \
             CROSS JOIN live ON live.post = posts.rowid \
             AND (live.expires_at IS NULL OR live.expires_at > ?8) \
             WHERE words_new.post < ?4 AND ",
            crate::search::holds_needles!("words_new.words", "?6"),
            " ORDER BY words_new.post DESC"
        ) => "-1",
        "post_words.rowid, posts.rowid, posts.id, posts.kind, posts.note, posts.created_at, \
         posts.expires_at FROM post_words JOIN posts ON posts.rowid = 268435456 - post_words.rowid \
         CROSS JOIN live ON live.post = posts.rowid \
         AND (live.expires_at IS NULL OR live.expires_at > ?8) \
         WHERE post_words MATCH coalesce((SELECT group_concat(hot_e, ' OR ') FROM kinds \
         WHERE all_hot), '\"\u{b7}none\"') \
         AND post_words.rowid > 268435456 - CAST(?4 AS INTEGER)" |
        "post_cold.rowid, posts.rowid, posts.id, posts.kind, posts.note, posts.created_at, \
         posts.expires_at FROM post_cold JOIN posts ON posts.rowid = 268435456 - post_cold.rowid \
         CROSS JOIN live ON live.post = posts.rowid \
         AND (live.expires_at IS NULL OR live.expires_at > ?8) \
         WHERE post_cold MATCH coalesce((SELECT group_concat(cold_e, ' OR ') FROM kinds \
         WHERE NOT all_hot), '\"\u{b7}none\"') \
         AND post_cold.rowid > 268435456 - CAST(?4 AS INTEGER) \
         AND NOT EXISTS (SELECT 1 FROM q WHERE q.hot \
         AND q.m = CASE posts.kind WHEN 'need' THEN '\u{207f}' ELSE '\u{2b0}' END \
         AND NOT EXISTS (SELECT 1 FROM post_words h \
         WHERE h.post_words MATCH '\"' || q.m || q.w || '\"' AND h.rowid = post_cold.rowid))"
    )
);

/// The marks (`rules::words::kind_mark`) of the kinds a page asks for, as
/// a JSON array.
fn marks(kind: Option<Kind>) -> &'static str {
    match kind {
        Some(Kind::Need) => "[\"\u{207f}\"]",
        Some(Kind::Have) => "[\"\u{2b0}\"]",
        None => "[\"\u{207f}\",\"\u{2b0}\"]",
    }
}

/// Above every row number: the bound of a first page. (2^53: D1 binds
/// numbers as JavaScript doubles.)
const TOP: i64 = 1 << 53;

/// What a reader of the list asks for: posts of `kind` when given, whose
/// notes hold `words` when given (see `search`), older than `before`, at
/// most `limit`, newest first.
pub struct Filter {
    pub kind: Option<Kind>,
    pub words: Option<Words>,
    pub limit: u32,
    pub before: Option<Cursor>,
}

impl Filter {
    /// `words` without a word is no filter.
    pub fn new(kind: Option<Kind>, q: Option<Words>, limit: u32, before: Option<Cursor>) -> Self {
        Filter {
            kind,
            words: q.filter(|w| !w.is_empty()),
            limit,
            before,
        }
    }

    /// The bare list: the first page of 100 of every post, which the store
    /// keeps serialized.
    fn is_bare(&self) -> bool {
        self.kind.is_none()
            && self.words.is_none()
            && self.before.is_none()
            && i64::from(self.limit) == rules::LIST_SIZE
    }

    /// What tells this filter's version tags from another's (empty for the
    /// bare list): a digest of what it asks, as the index reads it (the
    /// terms determine the query: a term's script says whether it is a
    /// word's beginning or a pair of characters).
    pub fn variant(&self) -> String {
        if self.is_bare() {
            return String::new();
        }
        let terms = self.words.as_ref().map(Words::terms).unwrap_or_default();
        conditional::digest(&[
            self.kind.map_or("", Kind::as_str).as_bytes(),
            terms.as_bytes(),
            self.limit.to_string().as_bytes(),
            self.before.map_or(String::new(), |c| c.encode()).as_bytes(),
        ])
    }

    fn needles(&self) -> Option<String> {
        self.words.as_ref().map(|w| w.needles(self.kind))
    }
}

/// A page as the store answered it: the list's version, the next expiry
/// to come (Unix ms: until when an answer of this version holds), and the
/// rows of the page (`r, id, kind, note, created_at, expires_at`), none
/// when the version is one the caller knows.
pub struct Found {
    pub version: Version,
    pub next_expiry: Option<i64>,
    pub rows: Vec<crate::store::Row>,
}

/// One page of the list's open posts, filtered, in one statement, unless
/// the list is at `held` or `kept` (then no rows). For every reader of the
/// list: the JSON list, MCP through it, the feed.
pub async fn find(
    ctx: &Ctx,
    filter: &Filter,
    held: Option<Version>,
    kept: Option<Version>,
) -> Result<Found, ApiError> {
    let below = filter.before.map_or(TOP, |c| c.0);
    // One more than the page: whether older posts match is `next`.
    let fetch = i64::from(filter.limit) + 1;
    // No version is the empty text, which the statement never writes.
    let text = |v: Option<Version>| v.map_or(String::new(), |v| v.text());
    let known = |sql| {
        prepare(sql)
            .bind(text(held))
            .bind(text(kept))
            .bind(fetch)
            .bind(below)
    };
    let statement = match (&filter.words, filter.kind) {
        (Some(words), kind) => known(WORDS_SQL)
            .bind(marks(kind))
            .bind(filter.needles().unwrap_or_default())
            .bind(words.terms()),
        (None, Some(k)) => known(KIND_SQL).bind(k.as_str()),
        (None, None) => known(PAGE_SQL),
    }
    // The time, last: what has expired is left out, and is the version's.
    .bind(ctx.now_ms);
    let mut rows = ctx.store.all(statement).await?;
    let head = rows.first();
    let version = head
        .and_then(|r| r.str("top"))
        .and_then(Version::parse)
        .unwrap_or_default();
    let next_expiry = head.and_then(|r| r.int("expires_at"));
    if !rows.is_empty() {
        rows.remove(0);
    }
    Ok(Found {
        version,
        next_expiry,
        rows,
    })
}

/// Rows (one more than a page when older posts match) as a page at
/// `now_ms`.
pub fn page(mut rows: Vec<crate::store::Row>, limit: usize, now_ms: i64) -> Page {
    let next = if rows.len() > limit {
        rows.get(limit - 1).and_then(|r| r.int("r")).map(Cursor)
    } else {
        None
    };
    rows.truncate(limit);
    let posts = rows.into_iter().filter_map(|r| view(r, now_ms)).collect();
    Page { posts, next }
}

/// `GET /posts`: the parameters come checked from the table's declaration.
/// Every page is one round trip at most; the bare list comes from the kept
/// copy while it is current; a 304 when the client's `If-None-Match` names
/// the current version (see [`crate::conditional`]). A raw route, for the
/// request's `If-None-Match` and the answer's tag. A page is kept (its
/// `Cache-Control`) no longer than until the next expiry.
pub async fn list(
    req: &Request,
    ctx: &Ctx,
    kind: Option<Kind>,
    q: Option<Words>,
    limit: u32,
    before: Option<Cursor>,
) -> Response {
    let filter = Filter::new(kind, q, limit, before);
    let variant = filter.variant();
    let held = conditional::known_version(req, LIST_TAG, &variant);
    let answer = if filter.is_bare() {
        kept_list(ctx, held).await
    } else {
        find(ctx, &filter, held, None).await.map(|found| {
            let json = (held != Some(found.version))
                .then(|| page_json(page(found.rows, filter.limit as usize, ctx.now_ms)));
            (found.version, json, found.next_expiry)
        })
    };
    match answer {
        Ok((version, json, next_expiry)) => {
            let tag = conditional::version_tag(LIST_TAG, version, &variant);
            let cache = conditional::until(conditional::LIST_MAX_AGE, next_expiry, ctx.now_ms);
            match json {
                None => conditional::not_modified(&tag, &cache),
                Some(json) => conditional::tagged(
                    req,
                    Response::new(200, crate::http::JSON, crate::http::Body::Kept(json)),
                    &tag,
                    &cache,
                ),
            }
        }
        Err(e) => Response::from_error(&e),
    }
}

/// The bare list: its version, its answer, the next expiry.
type KeptList = (Version, Option<Arc<str>>, Option<i64>);

/// The bare list's version, and its answer unless `held` (the version the
/// client holds) is the current one, and the next expiry: from the memo
/// while current (before that expiry), without asking the store when it
/// vouches nothing was written since (SQLite here), else after one
/// statement that returns posts only when the list is at neither the kept
/// nor the held version (D1, or after a write, or once a post expired).
async fn kept_list(ctx: &Ctx, held: Option<Version>) -> Result<KeptList, ApiError> {
    let memo = ctx.store.memo();
    let now = ctx.now_ms;
    if let Some((version, json, until)) = memo.and_then(|m| m.current(LIST, now)) {
        let next = (until != i64::MAX).then_some(until);
        return Ok((version, (held != Some(version)).then_some(json), next));
    }
    // Read before the statement: a write after this makes the next call ask.
    let writes = memo.map_or(0, |m| m.writes());
    let kept = memo.and_then(|m| m.get(LIST));
    // An empty memo is filled even for a client that holds the current
    // list: else, while every client holds it, each 304 runs the statement
    // and keeps nothing.
    let fill = memo.is_some() && kept.is_none();
    let bare = Filter::new(None, None, rules::LIST_SIZE as u32, None);
    let asked = if fill { None } else { held };
    let found = find(ctx, &bare, asked, kept.as_ref().map(|(v, _)| *v)).await?;
    let (top, next) = (found.version, found.next_expiry);
    let until = next.unwrap_or(i64::MAX);
    if held == Some(top) && !fill {
        return Ok((top, None, next));
    }
    if let (Some(m), Some((version, json))) = (memo, kept) {
        if version == top {
            m.put(LIST, version, writes, until, json.clone());
            return Ok((version, Some(json), next));
        }
    }
    let json = page_json(page(found.rows, rules::LIST_SIZE as usize, now));
    if let Some(m) = memo {
        m.put(LIST, top, writes, until, json.clone());
    }
    Ok((top, (held != Some(top)).then_some(json), next))
}

/// A post, its ends and whether it was removed (`?1` its id).
const READ_SQL: &str = concat!(
    "SELECT id, kind, note, created_at, expires_at, ",
    closed_at!("?1"),
    " AS closed_at, ",
    removed!("?1"),
    " AS removed FROM posts WHERE id = ?1"
);

/// `GET /posts/:id`: the post and where it is in its life, also once it
/// has ended; 410 once removed. A raw route, for its `Cache-Control`: an
/// open post that expires is kept no longer than until then (its tag is
/// its content's, which holds the status).
pub async fn read(_req: &Request, ctx: &Ctx, id: Id) -> Response {
    let row = match ctx.store.first(prepare(READ_SQL).bind(id.as_str())).await {
        Ok(Some(row)) => row,
        Ok(None) => return Response::error(Code::NotFound),
        Err(e) => return Response::from_error(&e.into()),
    };
    if row.flag("removed") {
        return Response::error(Code::Removed);
    }
    let expires_at = row.int("expires_at");
    let Some(post) = view(row, ctx.now_ms) else {
        return Response::error(Code::Internal);
    };
    // Until it expires, while it is open: then its status changes.
    let ends = expires_at.filter(|_| post.status == Some(Status::Open));
    let cache = conditional::until(conditional::READ_MAX_AGE, ends, ctx.now_ms);
    Response::new(200, crate::http::JSON, post.to_json()).with_header("cache-control", &cache)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::{marks, WORDS_SQL};
    use crate::rules::Kind;
    use crate::store::index::Index;
    use crate::store::Value;

    /// The marks a page binds are the kinds' own (`rules::words::kind_mark`),
    /// written out so that the Worker formats nothing.
    #[test]
    fn the_marks_bound_are_the_kinds_marks() {
        use crate::rules::words::kind_mark;
        for kind in [Kind::Need, Kind::Have] {
            assert_eq!(marks(Some(kind)), format!("[\"{}\"]", kind_mark(kind)));
        }
        assert_eq!(
            marks(None),
            format!(
                "[\"{}\",\"{}\"]",
                kind_mark(Kind::Need),
                kind_mark(Kind::Have)
            )
        );
    }

    /// A page whose kinds take different parts of the index (the word is
    /// hot for needs, which many posts hold, and not for haves, which a few
    /// do, between them) comes newest first, every match once.
    #[test]
    fn the_parts_of_a_page_merge_newest_first() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::store::migrate::apply(&conn).unwrap();
        let mut want = Vec::new();
        for n in 1..=300i64 {
            let (kind, note) = if n % 37 == 0 {
                (Kind::Have, format!("gpu spare h{n}x"))
            } else {
                (Kind::Need, format!("gpu wanted n{n}x"))
            };
            want.push(n);
            let id = format!("{n:032x}");
            conn.execute(
                "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
                 VALUES (?1, ?2, ?3, 'h', 'ip', ?4)",
                rusqlite::params![id, kind.as_str(), note, n],
            )
            .unwrap();
            for statement in Index::without_copy().statements(kind, &id, &note) {
                let params = statement.params.into_iter().map(|v| match v {
                    Value::Null => rusqlite::types::Value::Null,
                    Value::Int(n) => rusqlite::types::Value::Integer(n),
                    Value::Text(t) => rusqlite::types::Value::Text(t),
                });
                let mut s = conn.prepare(statement.sql).unwrap();
                let mut rows = s.query(rusqlite::params_from_iter(params)).unwrap();
                while rows.next().unwrap().is_some() {}
            }
        }
        let hot = |mark: &str| -> bool {
            conn.query_row(
                "SELECT count(*) FROM hot_prefixes WHERE p = ?1",
                [format!("{mark}gpu")],
                |r| r.get::<_, i64>(0),
            )
            .unwrap()
                > 0
        };
        assert!(hot("\u{207f}") && !hot("\u{2b0}"), "one kind hot, one cold");
        want.reverse();
        let mut seen = Vec::new();
        let mut before = 1i64 << 53;
        loop {
            let mut s = conn.prepare(WORDS_SQL).unwrap();
            let rows: Vec<i64> = s
                .query_map(
                    rusqlite::params![
                        "",
                        "",
                        41,
                        before,
                        marks(None),
                        "[\" gpu\"]",
                        "[\"gpu\"]",
                        0
                    ],
                    |r| r.get::<_, Option<i64>>(1),
                )
                .unwrap()
                .filter_map(|r| r.unwrap())
                .take(41)
                .collect();
            let page = &rows[..rows.len().min(40)];
            seen.extend_from_slice(page);
            if rows.len() <= 40 {
                break;
            }
            before = page[39];
        }
        assert_eq!(seen, want);
    }
}
