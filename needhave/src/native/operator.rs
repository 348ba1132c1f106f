//! The operator's commands: `needhave remove` (a post or a message, on the
//! list's file beside a running server, or as SQL for D1) and `needhave
//! reports` (what anyone reported, most reported first). Removal is never a
//! call of the list: these commands are how it happens.
//!
//! Both run what the list itself runs: [`life::remove`] and its batch, and
//! [`REPORTS`], the one query the docs give for D1 as it is here.

use serde_json::{json, Map, Value as Json};

use crate::handlers::life::{self, Removal, RemoveError, Removed};
use crate::http::Id;
use crate::platform::rfc3339;
use crate::store::sqlite::beside::Beside;
use crate::store::{prepare, Row, RowExt, Statement, Store, Value};

/// `needhave remove ID --reason TEXT --db FILE`: the removal, also while
/// `needhave serve` runs on the file; what it did, as a line to print.
pub fn remove(db: &str, id: &str, reason: &str) -> Result<String, String> {
    let store = Beside::open(db).map_err(|e| e.to_string())?;
    let now = crate::platform::now_ms();
    let done = block_on(life::remove(&store, id, reason, now))?;
    match done {
        Ok(Removal::Done(Removed::Post)) => Ok(format!(
            "removed the post {id}: every call that names it answers 410 removed"
        )),
        Ok(Removal::Done(Removed::Message)) => Ok(format!(
            "removed the message {id}: it is left out of the waiting list and of its thread"
        )),
        Ok(Removal::Already(what)) => Ok(format!(
            "the {} {id} was removed already: nothing changed",
            noun(what)
        )),
        Err(RemoveError::Unknown) => Err(format!("{id}: no post and no message has this id")),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs a store's future to its end: [`Beside`] answers at once, so a
/// runtime of the current thread is all it needs.
fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, String> {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .map(|rt| rt.block_on(f))
        .map_err(|e| e.to_string())
}

fn noun(what: Removed) -> &'static str {
    match what {
        Removed::Post => "post",
        Removed::Message => "message",
    }
}

/// `needhave remove --sql ID --reason TEXT`: the removal's batch with its
/// values written in, for `wrangler d1 execute DB --file`. The reason is
/// checked as [`life::remove`] checks it; whether the id names anything
/// only the database can say (the batch's last SELECT does).
pub fn remove_sql(id: &str, reason: &str) -> Result<String, String> {
    let reason = crate::rules::text(reason).map_err(|c| RemoveError::Reason(c).to_string())?;
    if !Id::valid(id) {
        return Err(format!("{id}: no post and no message has this id"));
    }
    let batch = life::remove_batch(
        id,
        reason,
        crate::platform::now_ms(),
        &crate::secrets::new_id(),
    );
    Ok(batch.iter().map(|s| inline(s) + ";\n").collect())
}

/// A statement with its parameters (`?N`) written in as SQL literals: a
/// text in single quotes with each quote doubled, which is the whole of
/// SQL's quoting (newlines, `;` and any other character stand as they are
/// inside the quotes). The statements it is given hold no `?` of their own
/// outside parameters.
pub fn inline(statement: &Statement) -> String {
    let sql = statement.sql;
    let mut out = String::with_capacity(sql.len() + 128);
    let mut rest = sql;
    while let Some(at) = rest.find('?') {
        out.push_str(&rest[..at]);
        let digits = rest[at + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let n: usize = rest[at + 1..at + 1 + digits].parse().unwrap_or(0);
        match n.checked_sub(1).and_then(|i| statement.params.get(i)) {
            Some(Value::Null) => out.push_str("NULL"),
            Some(Value::Int(i)) => out.push_str(&i.to_string()),
            Some(Value::Text(t)) => {
                out.push('\'');
                out.push_str(&t.replace('\'', "''"));
                out.push('\'');
            }
            // Not a parameter this statement was given: left as written,
            // so that SQLite refuses it rather than it meaning something.
            None => out.push_str(&rest[at..at + 1 + digits]),
        }
        rest = &rest[at + 1 + digits..];
    }
    out.push_str(rest);
    out
}

/// What anyone reported: a row per report, the posts ordered by how many
/// distinct clients reported them (most first, then the most recently
/// reported), each post's reports newest first, with what the operator
/// needs to decide (the post's note, its times, whether it is removed).
/// Times are Unix ms. No parameters: the same text runs natively and on
/// D1 (`wrangler d1 execute DB --remote --json --command "…"`), and reads
/// about one index entry a report.
pub const REPORTS: &str = "WITH reported AS (SELECT post_id, count(DISTINCT ip_hash) AS clients, \
max(created_at) AS latest FROM messages WHERE role = 'report' GROUP BY post_id) \
SELECT r.post_id, r.clients, p.kind, p.note, p.created_at, p.expires_at, \
(SELECT created_at FROM messages WHERE post_id = r.post_id AND role = 'close') AS closed_at, \
EXISTS (SELECT 1 FROM messages WHERE post_id = r.post_id AND role = 'remove' AND parent_id IS NULL) AS removed, \
m.reason, m.text, m.created_at AS reported_at \
FROM reported r JOIN posts p ON p.id = r.post_id \
JOIN messages m ON m.post_id = r.post_id AND m.role = 'report' \
ORDER BY r.clients DESC, r.latest DESC, r.post_id, m.created_at DESC, m.id";

/// `needhave reports --db FILE [--json]`: [`REPORTS`] on the file (also
/// beside a running server), one entry a post; as JSON, or as text for a
/// person.
pub fn reports(db: &str, as_json: bool) -> Result<String, String> {
    let store = Beside::open(db).map_err(|e| e.to_string())?;
    let rows = block_on(store.batch(vec![prepare(REPORTS)]))?
        .map_err(|e| format!("the database failed: {e}"))?
        .into_iter()
        .next()
        .unwrap_or_default();
    let posts = reported(&rows, crate::platform::now_ms());
    Ok(if as_json {
        serde_json::to_string_pretty(&posts).unwrap_or_default() + "\n"
    } else {
        text(&posts)
    })
}

/// The rows of [`REPORTS`] as one JSON object a post, in their order, its
/// status at `now_ms`.
pub fn reported(rows: &[Row], now_ms: i64) -> Vec<Json> {
    let mut posts: Vec<Json> = Vec::new();
    for row in rows {
        let post_id = row.str("post_id").unwrap_or_default();
        if posts.last().and_then(|p| p["post_id"].as_str()) != Some(post_id) {
            let expires_at = row.int("expires_at");
            let (status, ended_at) = life::status(row.int("closed_at"), expires_at, now_ms);
            let mut post = Map::new();
            post.insert("post_id".into(), json!(post_id));
            post.insert("clients".into(), json!(row.int("clients").unwrap_or(0)));
            post.insert("kind".into(), json!(row.str("kind")));
            post.insert("note".into(), json!(row.str("note")));
            post.insert(
                "created_at".into(),
                json!(rfc3339(row.int("created_at").unwrap_or(0))),
            );
            post.insert("status".into(), json!(status.as_str()));
            if let Some(e) = expires_at {
                post.insert("expires_at".into(), json!(rfc3339(e)));
            }
            if let Some(e) = ended_at {
                post.insert("ended_at".into(), json!(rfc3339(e)));
            }
            post.insert("removed".into(), json!(row.flag("removed")));
            post.insert("reports".into(), json!([]));
            posts.push(Json::Object(post));
        }
        let mut report = Map::new();
        report.insert("reason".into(), json!(row.str("reason")));
        if let Some(t) = row.str("text") {
            report.insert("text".into(), json!(t));
        }
        report.insert(
            "created_at".into(),
            json!(rfc3339(row.int("reported_at").unwrap_or(0))),
        );
        if let Some(Json::Array(reports)) = posts.last_mut().and_then(|p| p.get_mut("reports")) {
            reports.push(Json::Object(report));
        }
    }
    posts
}

/// The reported posts for a person to read: a block a post, its reports
/// indented under it.
fn text(posts: &[Json]) -> String {
    if posts.is_empty() {
        return "no reports\n".into();
    }
    let mut out = String::new();
    for p in posts {
        let s = |k: &str| p[k].as_str().unwrap_or_default();
        let clients = p["clients"].as_i64().unwrap_or(0);
        let mut state = s("status").to_string();
        if let Some(ended) = p["ended_at"].as_str() {
            state.push_str(&format!(" at {ended}"));
        } else if let Some(expires) = p["expires_at"].as_str() {
            state.push_str(&format!(", expires at {expires}"));
        }
        if p["removed"] == true {
            state.push_str(", removed");
        }
        out.push_str(&format!(
            "{} — reported by {clients} client{}\n  {} posted {}, {state}\n  note: {}\n",
            s("post_id"),
            if clients == 1 { "" } else { "s" },
            s("kind"),
            s("created_at"),
            one_line(s("note")),
        ));
        for r in p["reports"].as_array().into_iter().flatten() {
            let text = r["text"].as_str().map(one_line).unwrap_or_default();
            out.push_str(&format!(
                "  - {} {}{}{text}\n",
                r["created_at"].as_str().unwrap_or_default(),
                r["reason"].as_str().unwrap_or_default(),
                if text.is_empty() { "" } else { ": " },
            ));
        }
        out.push('\n');
    }
    out
}

/// A text on one line of a terminal: its line breaks and tabs as spaces.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r', '\t'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_written_in_as_literals() {
        let s = prepare("SELECT ?1, ?2, ?10, ?3, ?, ?4")
            .bind("it's; \n 'x'")
            .bind(-7_i64)
            .bind(Value::Null)
            .bind("")
            .bind("a")
            .bind("b")
            .bind("c")
            .bind("d")
            .bind("e")
            .bind("tenth");
        assert_eq!(
            inline(&s),
            "SELECT 'it''s; \n ''x''', -7, 'tenth', NULL, ?, ''"
        );
    }
}
