//! Schema migrations: a database made by the previous release opens, keeps
//! its rows and gets the normalized keys (natively, through `needhave
//! serve`); the migrations D1 applies make exactly schema.sql; and the D1
//! key back-fill (`needhave d1-keys`) does what the native upgrade does.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::*;
use needhave::store::migrate::{self, note_key_hash};
use rusqlite::Connection;
use serde_json::{json, Value};

fn migrations() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../migrations");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(p).unwrap())
        })
        .collect()
}

/// The previous release's schema: the first migration, which is schema.sql
/// as that release shipped it.
fn first_release_schema() -> String {
    let (name, sql) = migrations().into_iter().next().unwrap();
    assert_eq!(name, "0001_initial.sql");
    sql
}

/// Old rows as the previous release could write them: two notes that are
/// copies only under the new key, notes the new rules refuse (a control
/// character, an e-mail address), and a thread.
const OLD_NOTES: &[&str] = &[
    "Need a bike!",
    "need  a BIKE",
    "cafe\u{301} crème",
    "old \u{1} control",
    "write bob@example.com",
    "it's a 'quoted' note",
    "need a bi\u{200b}ke",
];

fn write_old_rows(conn: &Connection) {
    for (i, note) in OLD_NOTES.iter().enumerate() {
        conn.execute(
            "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
             VALUES (?1, 'need', ?2, 'h', 'ip', ?3)",
            rusqlite::params![format!("{i:032x}"), note, 1_000 + i as i64],
        )
        .unwrap();
    }
    conn.execute_batch(
        "INSERT INTO messages (id, post_id, role, text, secret_hash, ip_hash, created_at) \
         VALUES ('f0000000000000000000000000000000', '00000000000000000000000000000000', 'first', 'hi', 'h', 'ip', 2000); \
         INSERT INTO messages (id, post_id, role, parent_id, thread_key, thread_key_hash, ip_hash, created_at) \
         VALUES ('a0000000000000000000000000000000', '00000000000000000000000000000000', 'accept', \
         'f0000000000000000000000000000000', 'k', 'kh', 'ip', 2001); \
         INSERT INTO messages (id, post_id, role, text, thread_key_hash, ip_hash, created_at) \
         VALUES ('b0000000000000000000000000000000', '00000000000000000000000000000000', 'later', 'later', 'kh', 'ip', 2002);",
    )
    .unwrap();
}

/// (id, note, key digest) of every post, by rowid; asserts that no full
/// key is left.
fn posts(conn: &Connection) -> Vec<(String, String, Option<String>)> {
    let full: i64 = conn
        .query_row(
            "SELECT count(*) FROM posts WHERE note_key IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(full, 0, "no full key is left after the upgrade");
    conn.prepare("SELECT id, note, note_key_hash FROM posts ORDER BY rowid")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// What the upgrade must leave: every row, each old note with its key but
/// the later copies of an older key, which keep NULL.
fn check_keys(conn: &Connection) {
    let rows = posts(conn);
    assert_eq!(rows.len(), OLD_NOTES.len(), "no row lost");
    let mut held = std::collections::HashSet::new();
    for (i, (id, note, key)) in rows.iter().enumerate() {
        assert_eq!(
            (id.as_str(), note.as_str()),
            (format!("{i:032x}").as_str(), OLD_NOTES[i])
        );
        let want = note_key_hash(note);
        if held.insert(want.clone()) {
            assert_eq!(key.as_deref(), Some(want.as_str()), "{note:?}");
        } else {
            assert_eq!(key.as_deref(), None, "{note:?}: a later copy keeps NULL");
        }
    }
    assert_eq!(
        rows[1].2, None,
        "\"need  a BIKE\" came after \"Need a bike!\""
    );
    let messages: i64 = conn
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(messages, 3);
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("needhave-migrate-{name}-{}", fresh_ip()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stop(mut child: std::process::Child) {
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_release_file_upgrades_in_place() {
    let dir = scratch("native");
    let db = dir.join("old.db");
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(&first_release_schema()).unwrap();
        write_old_rows(&conn);
    }
    let (child, url) = spawn_serve("127.0.0.1:0", db.to_str().unwrap(), &[]);
    let server = Server::at(&url);
    let server = &server;
    let post = |note: &str| {
        let body = json!({"kind": "have", "note": note})
            .to_string()
            .into_bytes();
        async move { send_to(server, Client::new().ip, "POST", "/posts", Some(body), &[]).await }
    };
    // Old rows are served, and their keys refuse new copies: of the keyed
    // row, and of the row left without a key (its key is held).
    let list = Client::new();
    let r = send_to(server, list.ip, "GET", "/posts", None, &[]).await;
    assert_eq!(r.json()["posts"].as_array().unwrap().len(), OLD_NOTES.len());
    post("NEED A BIKE")
        .await
        .expect_error(409, "duplicate_note");
    post("need  a BIKE")
        .await
        .expect_error(409, "duplicate_note");
    post("CAFÉ CRÈME").await.expect_error(409, "duplicate_note");
    let r = post(&fresh_note("a new note")).await;
    assert_eq!(r.status, 201, "{}", r.text());
    stop(child);

    let conn = Connection::open(&db).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, migrate::VERSION);
    conn.execute(
        "DELETE FROM posts WHERE rowid > ?1",
        [OLD_NOTES.len() as i64],
    )
    .unwrap();
    check_keys(&conn);
    // Once: a current file is not upgraded again.
    assert_eq!(migrate::apply(&conn).unwrap(), None);
    drop(conn);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn the_upgrade_reports_and_is_atomic() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(&first_release_schema()).unwrap();
    write_old_rows(&conn);
    let done = migrate::apply(&conn).unwrap().unwrap();
    assert_eq!((done.from, done.keyed, done.shared), (0, 5, 2));
    check_keys(&conn);

    // A step that fails leaves the file as it was: no column, version 0.
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(&first_release_schema()).unwrap();
    conn.execute_batch("CREATE TABLE posts_note_key (x)")
        .unwrap();
    assert!(migrate::apply(&conn).is_err());
    let columns: i64 = conn
        .query_row(
            "SELECT count(*) FROM pragma_table_info('posts') WHERE name = 'note_key'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!((columns, version), (0, 0));
}

/// Every table's columns and every index, as SQLite describes them.
fn shape(conn: &Connection) -> Vec<String> {
    let mut out: Vec<String> = conn
        .prepare(
            "SELECT m.type || ' ' || m.name || ': ' || \
             CASE m.type WHEN 'table' THEN \
               (SELECT group_concat(c.name || ' ' || c.type || ' ' || c.\"notnull\" || ' ' || \
                coalesce(c.dflt_value, '') || ' ' || c.pk, ', ') FROM pragma_table_info(m.name) c) \
             ELSE m.tbl_name || ' ' || \
               (SELECT group_concat(i.name, ', ') FROM pragma_index_info(m.name) i) || ' ' || \
               (SELECT l.\"unique\" || ' ' || l.partial FROM pragma_index_list(m.tbl_name) l WHERE l.name = m.name) || ' ' || \
               coalesce(substr(m.sql, instr(m.sql, ' WHERE ')), '') \
             END \
             FROM sqlite_master m WHERE m.name NOT LIKE 'sqlite_%' ORDER BY m.type, m.name",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // CHECK constraints live in the table's SQL only: compare them too.
    let mut checks: Vec<String> = conn
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .flat_map(|sql| checks_of(&sql.unwrap()))
        .collect();
    out.append(&mut checks);
    out
}

/// The `CHECK (…)` expressions of a CREATE TABLE, comments and spacing
/// aside.
fn checks_of(sql: &str) -> Vec<String> {
    let code: String = sql
        .lines()
        .map(|l| l.split("--").next().unwrap())
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = Vec::new();
    for part in code.split("CHECK").skip(1) {
        let mut depth = 0;
        let mut expr = String::new();
        for c in part.trim_start().chars() {
            depth += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            expr.push(c);
            if depth == 0 {
                break;
            }
        }
        out.push(expr.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    out
}

#[test]
fn the_migrations_make_schema_sql() {
    let fresh = Connection::open_in_memory().unwrap();
    fresh
        .execute_batch(needhave::store::sqlite::SCHEMA)
        .unwrap();
    let migrated = Connection::open_in_memory().unwrap();
    let files = migrations();
    let last: i64 = files.last().unwrap().0[..4].parse().unwrap();
    assert_eq!(
        last,
        migrate::VERSION,
        "VERSION is the last migration's number"
    );
    for (name, sql) in &files {
        migrated
            .execute_batch(sql)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert_eq!(shape(&migrated), shape(&fresh));
    assert!(shape(&fresh).iter().any(|s| s.contains("posts_note_key")));
}

/// D1's path, on SQLite: the first release's schema with rows, the
/// migrations as `wrangler d1 migrations apply` runs them, then the rows
/// without a key through `needhave d1-keys` as wrangler's `--json` prints
/// them, and the UPDATEs it writes.
#[test]
fn d1_keys_fills_old_rows_like_the_native_upgrade() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(&first_release_schema()).unwrap();
    write_old_rows(&conn);
    for (_, sql) in migrations() {
        conn.execute_batch(&sql).unwrap();
    }
    let wrangler_json = |conn: &Connection| {
        let rows: Vec<Value> = conn
            .prepare(migrate::D1_KEYS_QUERY)
            .unwrap()
            .query_map([], |r| {
                Ok(json!({"id": r.get::<_, String>(0)?, "note": r.get::<_, String>(1)?}))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        json!([{"results": rows, "success": true, "meta": {"served_by": "test"}}]).to_string()
    };
    let sql = d1_keys(&wrangler_json(&conn));
    conn.execute_batch(&sql).unwrap();
    check_keys(&conn);
    // Again: the rows left NULL stay so, nothing else moves.
    let before = posts(&conn);
    conn.execute_batch(&d1_keys(&wrangler_json(&conn))).unwrap();
    assert_eq!(posts(&conn), before);
    // Refused: anything but rows of a post id and a note.
    for bad in [
        "{}",
        "[{\"results\": [{\"id\": \"x'; DROP TABLE posts; --\", \"note\": \"n\"}]}]",
        "nope",
    ] {
        assert!(migrate::d1_key_updates(bad).is_err(), "{bad}");
    }
}

/// `needhave d1-keys`, the command the README names.
fn d1_keys(input: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_needhave"))
        .arg("d1-keys")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let sql = String::from_utf8(out.stdout).unwrap();
    assert_eq!(sql, migrate::d1_key_updates(input).unwrap());
    sql
}

/// A database of the previous release: the first release's rows, then the
/// migrations before the key's digest, with every old note's full key as
/// that release stored it (the oldest copy holds it), at its version.
fn previous_release(conn: &Connection) {
    conn.execute_batch(&first_release_schema()).unwrap();
    write_old_rows(conn);
    for (name, sql) in migrations() {
        if name.as_str() > "0001" && name.as_str() < "0005" {
            conn.execute_batch(&sql).unwrap();
        }
    }
    let notes: Vec<(i64, String)> = conn
        .prepare("SELECT rowid, note FROM posts ORDER BY rowid")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (rowid, note) in notes {
        conn.execute(
            "UPDATE posts SET note_key = ?1 WHERE rowid = ?2 \
             AND NOT EXISTS (SELECT 1 FROM posts WHERE note_key = ?1)",
            rusqlite::params![needhave::rules::note_key(&note), rowid],
        )
        .unwrap();
    }
    conn.pragma_update(None, "user_version", 3).unwrap();
}

#[test]
fn a_previous_release_file_keeps_digests_not_keys() {
    let conn = Connection::open_in_memory().unwrap();
    previous_release(&conn);
    let held: i64 = conn
        .query_row(
            "SELECT count(*) FROM posts WHERE note_key IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(held, 5, "the previous release kept full keys");
    let done = migrate::apply(&conn).unwrap().unwrap();
    assert_eq!((done.from, done.keyed, done.shared), (3, 5, 2));
    check_keys(&conn);
    let sites: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM posts WHERE site_hash IS NOT NULL) + \
             (SELECT count(*) FROM messages WHERE site_hash IS NOT NULL)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sites, 0, "old rows have no site");
    assert_eq!(migrate::apply(&conn).unwrap(), None);
}

/// D1's path from the previous release: `migrations apply` adds the
/// digest, `needhave d1-keys` fills it and drops the full keys.
#[test]
fn d1_keys_turns_full_keys_into_digests() {
    let conn = Connection::open_in_memory().unwrap();
    previous_release(&conn);
    for (name, sql) in migrations() {
        if name.as_str() >= "0005" {
            conn.execute_batch(&sql).unwrap();
        }
    }
    let rows: Vec<Value> = conn
        .prepare(migrate::D1_KEYS_QUERY)
        .unwrap()
        .query_map([], |r| {
            Ok(json!({"id": r.get::<_, String>(0)?, "note": r.get::<_, String>(1)?}))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), OLD_NOTES.len());
    conn.execute_batch(&d1_keys(&json!([{"results": rows}]).to_string()))
        .unwrap();
    check_keys(&conn);
}
