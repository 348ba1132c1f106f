//! After a load: the database against what the clients were told.
//!
//! - `PRAGMA integrity_check` is `ok`;
//! - every id answered 201 is a row (and, for an exact check, every row of
//!   the run was answered 201: the rows equal the 201s);
//! - no limit was exceeded: at most 10 posts and 20 first messages per
//!   client-IP hash in any 60-minute window, never a first message written
//!   while 20 were waiting on its post, at most one accept per first
//!   message, accepts and later messages hang on the right rows, notes are
//!   unique.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OpenFlags};

use crate::load::Ledger;
use needhave::rules::{CREATES_PER_HOUR, HOUR_MS, REPLIES_PER_HOUR, WAITING_CAP};

#[derive(Debug, Default)]
pub struct Outcome {
    pub rows: [usize; 4],
    pub failures: Vec<String>,
}

impl Outcome {
    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }
}

/// `exact`: the database holds the run's rows only, so they must equal the
/// ledger. Otherwise (a crash cut answers off) the ledger must be a subset,
/// with at most `slack` rows more than it.
pub fn check(db: &str, ledger: &Ledger, exact: bool, slack: usize) -> Outcome {
    let mut out = Outcome::default();
    let conn = match Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY) {
        Ok(c) => c,
        Err(e) => {
            out.failures.push(format!("open {db}: {e}"));
            return out;
        }
    };
    if let Err(e) = check_conn(&conn, ledger, exact, slack, &mut out) {
        out.failures.push(format!("sqlite: {e}"));
    }
    out
}

fn ids(conn: &Connection, sql: &str) -> rusqlite::Result<HashSet<String>> {
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    rows.collect()
}

fn compare(
    out: &mut Outcome,
    what: &str,
    rows: &HashSet<String>,
    said: &[String],
    exact: bool,
    slack: usize,
) {
    let said: HashSet<&String> = said.iter().collect();
    let missing = said.iter().filter(|id| !rows.contains(**id)).count();
    let extra = rows.iter().filter(|id| !said.contains(id)).count();
    if missing > 0 {
        out.failures.push(format!(
            "{what}: {missing} answered 201 but not in the database"
        ));
    }
    if exact && extra > 0 {
        out.failures
            .push(format!("{what}: {extra} rows never answered 201"));
    }
    if !exact && extra > slack {
        out.failures.push(format!(
            "{what}: {extra} rows never answered 201 (more than the {slack} requests in flight)"
        ));
    }
}

fn check_conn(
    conn: &Connection,
    ledger: &Ledger,
    exact: bool,
    slack: usize,
    out: &mut Outcome,
) -> rusqlite::Result<()> {
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if integrity != "ok" {
        out.failures.push(format!("integrity_check: {integrity}"));
    }
    let posts = ids(conn, "SELECT id FROM posts")?;
    let firsts = ids(conn, "SELECT id FROM messages WHERE role = 'first'")?;
    let accepts = ids(conn, "SELECT parent_id FROM messages WHERE role = 'accept'")?;
    let laters = ids(conn, "SELECT id FROM messages WHERE role = 'later'")?;
    out.rows = [posts.len(), firsts.len(), accepts.len(), laters.len()];
    let post_ids: Vec<String> = ledger.posts.iter().map(|(id, _)| id.clone()).collect();
    compare(out, "posts", &posts, &post_ids, exact, slack);
    compare(out, "first messages", &firsts, &ledger.firsts, exact, slack);
    compare(out, "accepts", &accepts, &ledger.accepts, exact, slack);
    compare(out, "later messages", &laters, &ledger.laters, exact, slack);
    let accept_rows: i64 = conn.query_row(
        "SELECT count(*) FROM messages WHERE role = 'accept'",
        [],
        |r| r.get(0),
    )?;
    if accept_rows as usize != accepts.len() {
        out.failures.push("a first message has two accepts".into());
    }
    let dup_notes: i64 = conn.query_row(
        "SELECT count(*) FROM (SELECT note FROM posts GROUP BY note HAVING count(*) > 1)",
        [],
        |r| r.get(0),
    )?;
    if dup_notes > 0 {
        out.failures.push(format!("{dup_notes} duplicate notes"));
    }
    let orphans: i64 = conn.query_row(
        "SELECT count(*) FROM messages a WHERE a.role = 'accept' AND NOT EXISTS \
         (SELECT 1 FROM messages f WHERE f.id = a.parent_id AND f.role = 'first' AND f.post_id = a.post_id)",
        [],
        |r| r.get(0),
    )?;
    if orphans > 0 {
        out.failures.push(format!(
            "{orphans} accepts of no first message of their post"
        ));
    }
    let stray: i64 = conn.query_row(
        "SELECT count(*) FROM messages l WHERE l.role = 'later' AND NOT EXISTS \
         (SELECT 1 FROM messages a WHERE a.role = 'accept' AND a.thread_key_hash = l.thread_key_hash \
          AND a.post_id = l.post_id)",
        [],
        |r| r.get(0),
    )?;
    if stray > 0 {
        out.failures
            .push(format!("{stray} later messages in no thread"));
    }
    window(
        conn,
        out,
        "SELECT ip_hash, created_at FROM posts ORDER BY ip_hash, created_at",
        CREATES_PER_HOUR,
        "posts",
    )?;
    window(
        conn,
        out,
        "SELECT ip_hash, created_at FROM messages WHERE role = 'first' ORDER BY ip_hash, created_at",
        REPLIES_PER_HOUR,
        "first replies",
    )?;
    waiting_cap(conn, out)?;
    Ok(())
}

/// At most `cap` rows per IP hash in any 60-minute window.
fn window(
    conn: &Connection,
    out: &mut Outcome,
    sql: &str,
    cap: i64,
    what: &str,
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(sql)?;
    let rows: Vec<(String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut start = 0;
    let mut worst = 0;
    for i in 0..rows.len() {
        if i == 0 || rows[i].0 != rows[i - 1].0 {
            start = i;
        }
        while rows[start].1 <= rows[i].1 - HOUR_MS {
            start += 1;
        }
        worst = worst.max(i - start + 1);
    }
    if worst as i64 > cap {
        out.failures.push(format!(
            "{what}: {worst} from one IP within an hour (limit {cap})"
        ));
    }
    Ok(())
}

/// Replays the messages in commit order (rowid: one writer) and checks that
/// no first message was written while its post already had 20 waiting.
fn waiting_cap(conn: &Connection, out: &mut Outcome) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(
        "SELECT role, post_id, coalesce(parent_id, '') FROM messages \
         WHERE role IN ('first', 'accept') ORDER BY rowid",
    )?;
    let rows: Vec<(String, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut waiting: HashMap<String, i64> = HashMap::new();
    let mut over = 0;
    for (role, post, _) in rows {
        let w = waiting.entry(post).or_default();
        if role == "first" {
            if *w >= WAITING_CAP {
                over += 1;
            }
            *w += 1;
        } else {
            *w -= 1;
        }
    }
    if over > 0 {
        out.failures.push(format!(
            "{over} first messages written while 20 were waiting"
        ));
    }
    Ok(())
}
