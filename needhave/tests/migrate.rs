//! Schema migrations: a database made by the previous release opens, keeps
//! its rows and gets the normalized keys (natively, through `needhave
//! serve`); the migrations D1 applies make exactly schema.sql; and the D1
//! key back-fill (`needhave d1-keys`) does what the native upgrade does.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::*;
use needhave::rules::Kind;
use needhave::store::index::Index;
use needhave::store::migrate::{self, note_key_hash};
use rusqlite::{Connection, OptionalExtension};
use serde_json::{json, Value};

/// The files of `migrations/`, in order, each as D1 applies it: one
/// transaction, foreign keys checked (as SQLite checks them here: this
/// build's default).
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
            let sql = std::fs::read_to_string(p).unwrap();
            (name, format!("BEGIN;\n{sql}\nCOMMIT;\n"))
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

/// The first release's schema and rows, written into `conn`.
fn write_first_release(conn: &Connection) {
    conn.execute_batch(&first_release_schema()).unwrap();
    write_old_rows(conn);
}

/// An in-memory database as the first release wrote it, with its rows.
fn first_release_in_memory() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    write_first_release(&conn);
    conn
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
        write_first_release(&conn);
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
    // Old posts are found by their words, newest first, as new ones are.
    let found = |q: &'static str| found(server, q);
    let old = |i: usize| format!("{i:032x}");
    assert_eq!(found("BIKE").await, [old(6), old(1), old(0)]);
    assert_eq!(found("caf%C3%A9+cr%C3%A8me").await, [old(2)]);
    assert_eq!(found("quoted").await, [old(5)]);
    let r = post(&fresh_note("a new note")).await;
    assert_eq!(r.status, 201, "{}", r.text());
    stop(child);

    let conn = reopened_at_version(&db);
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
    let conn = first_release_in_memory();
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

/// The first column of each row `sql` gives, with `params` bound.
fn column<T: rusqlite::types::FromSql>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Vec<T> {
    conn.prepare(sql)
        .unwrap()
        .query_map(params, |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Every table's columns, every index and every trigger, as SQLite
/// describes them.
fn shape(conn: &Connection) -> Vec<String> {
    let mut out: Vec<String> = column(
        conn,
            "SELECT m.type || ' ' || m.name || ': ' || \
             CASE m.type WHEN 'table' THEN \
               (SELECT group_concat(c.name || ' ' || c.type || ' ' || c.\"notnull\" || ' ' || \
                coalesce(c.dflt_value, '') || ' ' || c.pk, ', ') FROM pragma_table_info(m.name) c) \
             WHEN 'trigger' THEN m.tbl_name || ' ' || m.sql \
             ELSE m.tbl_name || ' ' || \
               (SELECT group_concat(i.name, ', ') FROM pragma_index_info(m.name) i) || ' ' || \
               (SELECT l.\"unique\" || ' ' || l.partial FROM pragma_index_list(m.tbl_name) l WHERE l.name = m.name) || ' ' || \
               coalesce(substr(m.sql, instr(m.sql, ' WHERE ')), '') \
             END \
             FROM sqlite_master m WHERE m.name NOT LIKE 'sqlite_%' ORDER BY m.type, m.name",
        [],
    );
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
        .execute_batch(needhave::store::migrate::SCHEMA)
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
    // The leaf size is a setting, not schema: D1 gets it from 0009 and
    // 0011, a native file from its upgrade, a fresh one's included. An
    // empty list is a young one.
    assert_eq!(
        leaf_size(&migrated),
        Some(needhave::store::WORDS_LEAF_YOUNG)
    );
    let native = Connection::open_in_memory().unwrap();
    migrate::apply(&native).unwrap().unwrap();
    assert_eq!(leaf_size(&native), Some(needhave::store::WORDS_LEAF_YOUNG));
}

/// migrations/0011 gives FTS5's own leaves back to a list of fewer than
/// `WORDS_GROWN` posts only: a list past it keeps the small leaves (64
/// bytes, as 0009 wrote them; its next create takes it to `WORDS_LEAF`,
/// below) its deep pages seek in.
#[test]
fn migration_0011_leaves_a_grown_list_its_small_leaves() {
    let files = migrations();
    let at = files.iter().position(|f| f.0.starts_with("0011")).unwrap();
    let (old, young) = (&files[..at], &files[at]);
    for (newest, leaf) in [
        (
            needhave::store::WORDS_GROWN - 1,
            needhave::store::WORDS_LEAF_YOUNG,
        ),
        (needhave::store::WORDS_GROWN, 64),
    ] {
        let conn = Connection::open_in_memory().unwrap();
        for (name, sql) in old {
            conn.execute_batch(sql)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        conn.execute(
            "INSERT INTO posts (rowid, id, kind, note, secret_hash, ip_hash, created_at) \
             VALUES (?1, 'a', 'need', 'n', 'h', 'ip', 0)",
            [newest],
        )
        .unwrap();
        conn.execute_batch(young.1.as_str()).unwrap();
        assert_eq!(leaf_size(&conn), Some(leaf), "newest post {newest}");
    }
}

/// The create whose post is the `WORDS_GROWN`th sets the small leaves
/// (`store::SMALL_LEAVES`, in every create's batch), before the move that
/// may follow it; a create before it, or after, writes no setting.
#[test]
fn the_list_takes_small_leaves_at_its_grown_post() {
    let conn = Connection::open_in_memory().unwrap();
    migrate::apply(&conn).unwrap().unwrap();
    let grown = needhave::store::WORDS_GROWN;
    let batch = Index::without_copy().statements(Kind::Need, "x", "w");
    assert!(batch.iter().any(|s| s.sql == needhave::store::SMALL_LEAVES));
    let wait = |post: i64| {
        conn.execute(
            "INSERT INTO words_new (post, words) VALUES (?1, '\u{b7}need w')",
            [post],
        )
        .unwrap();
        let before = conn.total_changes();
        conn.execute(needhave::store::SMALL_LEAVES, []).unwrap();
        conn.total_changes() - before
    };
    assert!(wait(grown - 1) == 0);
    assert_eq!(leaf_size(&conn), Some(needhave::store::WORDS_LEAF_YOUNG));
    assert!(wait(grown) > 0);
    assert_eq!(leaf_size(&conn), Some(needhave::store::WORDS_LEAF));
    assert_eq!(wait(grown + 1), 0, "set once");
    assert_eq!(leaf_size(&conn), Some(needhave::store::WORDS_LEAF));
}

/// A grown list of the previous release writes leaves of 64 bytes (the
/// setting migrations 0009 and 0012 left it); its next create takes it to
/// `WORDS_LEAF`, once.
#[test]
fn a_grown_list_of_small_leaves_takes_the_current_size_at_its_next_create() {
    assert_ne!(
        needhave::store::WORDS_LEAF,
        64,
        "the size this test moves from"
    );
    let conn = Connection::open_in_memory().unwrap();
    migrate::apply(&conn).unwrap().unwrap();
    conn.execute(
        "INSERT INTO post_words (post_words, rank) VALUES ('pgsz', 64)",
        [],
    )
    .unwrap();
    let grown = needhave::store::WORDS_GROWN;
    conn.execute(
        "INSERT INTO words_new (post, words) VALUES (?1, '\u{b7}need w')",
        [grown + 500],
    )
    .unwrap();
    let before = conn.total_changes();
    conn.execute(needhave::store::SMALL_LEAVES, []).unwrap();
    assert!(conn.total_changes() > before);
    assert_eq!(leaf_size(&conn), Some(needhave::store::WORDS_LEAF));
    let before = conn.total_changes();
    conn.execute(needhave::store::SMALL_LEAVES, []).unwrap();
    assert_eq!(conn.total_changes(), before, "set once");
}

/// The leaf statements write out the numbers of `store` (SQL has no
/// constants).
#[test]
fn the_leaf_statements_write_out_the_stores_numbers() {
    let grown = needhave::store::WORDS_GROWN.to_string();
    let small = format!("'pgsz', {}", needhave::store::WORDS_LEAF);
    let young = format!("'pgsz', {}", needhave::store::WORDS_LEAF_YOUNG);
    let switch = needhave::store::SMALL_LEAVES;
    assert!(
        switch.contains(&format!(">= {grown}")) && switch.contains(&small),
        "{switch}"
    );
    assert!(
        switch.contains(&format!("v = {}", needhave::store::WORDS_LEAF)),
        "{switch}"
    );
    let file = migrate::YOUNG_LEAVES;
    assert!(
        file.contains(&format!("< {grown};")) && file.contains(&young),
        "{file}"
    );
}

/// The index of words' leaf size (FTS5's `pgsz`), when set.
fn leaf_size(conn: &Connection) -> Option<i64> {
    conn.query_row(
        "SELECT v FROM post_words_config WHERE k = 'pgsz'",
        [],
        |r| r.get(0),
    )
    .optional()
    .unwrap()
}

/// A file of the release before the leaf setting (version 8): the upgrade
/// sets the leaves of its size (a young list's) and indexes its posts
/// again with their kind's mark, its posts stay found, and an open of the
/// current file writes nothing.
#[test]
fn a_version_8_file_gets_its_leaves_and_keeps_its_index() {
    let dir = scratch("v8");
    let db = dir.join("v8.db");
    write_indexed_release(&db, 8);
    let conn = Connection::open(&db).unwrap();
    assert_eq!(leaf_size(&conn), None);
    let before = matching(&conn, "\"bike\"*");
    assert_eq!(before, [1, 2, 7]);
    let done = migrate::apply(&conn).unwrap().unwrap();
    // Version 10 makes the index again, its terms begun with their kind's
    // mark: every old post indexed again.
    assert_eq!((done.from, done.indexed), (8, OLD_NOTES.len()));
    assert_eq!(leaf_size(&conn), Some(needhave::store::WORDS_LEAF_YOUNG));
    assert_eq!(searched(&conn, "bike"), before);
    let changes = conn.total_changes();
    assert_eq!(migrate::apply(&conn).unwrap(), None);
    assert_eq!(
        conn.total_changes(),
        changes,
        "an open of a current file writes nothing"
    );
    drop(conn);
    std::fs::remove_dir_all(dir).ok();
}

/// D1's path, on SQLite: the first release's schema with rows, the
/// migrations as `wrangler d1 migrations apply` runs them, then the rows
/// without a key through `needhave d1-keys` as wrangler's `--json` prints
/// them, and the UPDATEs it writes.
#[test]
fn d1_keys_fills_old_rows_like_the_native_upgrade() {
    let conn = first_release_in_memory();
    for (_, sql) in migrations() {
        conn.execute_batch(&sql).unwrap();
    }
    let sql = d1_keys(&d1_keys_json(&conn));
    conn.execute_batch(&sql).unwrap();
    check_keys(&conn);
    // Again: the rows left NULL stay so, nothing else moves.
    let before = posts(&conn);
    conn.execute_batch(&d1_keys(&d1_keys_json(&conn))).unwrap();
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

/// The posts the index of words holds, by rowid (the index holds them
/// reversed: 2^28 − rowid).
fn indexed(conn: &Connection) -> Vec<i64> {
    matching(conn, needhave::rules::words::ANY_INDEXED)
}

/// The post rowids whose words the hot part of the index (`post_words`)
/// matches to an FTS5 query.
fn matching(conn: &Connection, query: &str) -> Vec<i64> {
    column(
        conn,
        "SELECT 268435456 - rowid FROM post_words WHERE post_words MATCH ?1 ORDER BY rowid DESC",
        [query],
    )
}

/// The posts a search of these words (of either kind) finds, by rowid:
/// the list's page statement.
fn searched(conn: &Connection, q: &str) -> Vec<i64> {
    let words = needhave::search::Words::parse(q).unwrap();
    let mut rows: Vec<i64> = conn
        .prepare(needhave::handlers::posts::WORDS_SQL)
        .unwrap()
        .query_map(
            rusqlite::params![
                "",
                "",
                1000,
                1i64 << 53,
                "[\"\u{207f}\",\"\u{2b0}\"]",
                words.needles(None),
                words.terms(),
                0
            ],
            |r| r.get::<_, Option<i64>>(1),
        )
        .unwrap()
        .filter_map(Result::unwrap)
        .collect();
    rows.sort_unstable();
    rows
}

/// A file of the release before the index (its three migrations, version
/// 3, keyed rows): the upgrade indexes every old post, once.
#[test]
fn a_previous_release_file_gets_its_posts_indexed() {
    let conn = first_release_in_memory();
    for (name, sql) in migrations().iter().skip(1).take(2) {
        conn.execute_batch(sql)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    conn.execute_batch(
        "UPDATE posts SET note_key = id; PRAGMA user_version = 3; \
         UPDATE posts SET kind = 'have' WHERE rowid = 3",
    )
    .unwrap();
    let done = migrate::apply(&conn).unwrap().unwrap();
    assert_eq!((done.from, done.indexed), (3, OLD_NOTES.len()));
    assert_eq!(
        indexed(&conn),
        (1..=OLD_NOTES.len() as i64).collect::<Vec<_>>()
    );
    assert_eq!(searched(&conn, "bike"), [1, 2, 7]);
    assert_eq!(matching(&conn, "\"\u{2b0}\u{b7}have\""), [3]);
    assert_eq!(searched(&conn, "caf\u{e9}"), [3]);
    // Once: a current file is not indexed again.
    assert_eq!(migrate::apply(&conn).unwrap(), None);
    assert_eq!(indexed(&conn).len(), OLD_NOTES.len());
}

/// The shadow rows of the index of words (FTS5's `post_words_data`): what
/// changes when anything in the index does.
fn index_blocks(conn: &Connection) -> Vec<(i64, Vec<u8>)> {
    conn.prepare("SELECT id, block FROM post_words_data ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A file of version 6 or 7 at `db`: the first release's rows, the
/// migrations up to that version, every post's key digest, and every
/// post's words in the index as that version wrote them (version 6: under
/// the row numbers as they are, oldest first; 7: reversed, newest first).
fn write_indexed_release(db: &std::path::Path, version: i64) {
    let conn = Connection::open(db).unwrap();
    write_first_release(&conn);
    let last = format!("{:04}", version + 1);
    for (name, sql) in migrations() {
        if name.as_str() > "0001" && name.as_str() < last.as_str() {
            conn.execute_batch(&sql)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    let (order, base) = if version >= 7 {
        ("DESC", needhave::store::WORDS_BASE)
    } else {
        ("", 0)
    };
    let notes: Vec<(i64, String)> = conn
        .prepare(&format!(
            "SELECT rowid, note FROM posts ORDER BY rowid {order}"
        ))
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (rowid, note) in &notes {
        conn.execute(
            "UPDATE posts SET note_key_hash = ?1 WHERE rowid = ?2 \
             AND NOT EXISTS (SELECT 1 FROM posts WHERE note_key_hash = ?1)",
            rusqlite::params![note_key_hash(note), rowid],
        )
        .unwrap();
        let number = if base > 0 { base - rowid } else { *rowid };
        conn.execute(
            "INSERT INTO post_words (rowid, words) VALUES (?1, ?2)",
            rusqlite::params![
                number,
                // The text the index held before version 10: no kind's mark.
                needhave::rules::words::waiting_text(needhave::rules::Kind::Need, note)
            ],
        )
        .unwrap();
    }
    conn.pragma_update(None, "user_version", version).unwrap();
}

/// The file again, once the server that upgraded it has stopped: at this
/// build's schema version.
fn reopened_at_version(db: &std::path::Path) -> Connection {
    let conn = Connection::open(db).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, migrate::VERSION);
    conn
}

/// The ids `GET /posts?q=` answers, newest first.
async fn found(server: &Server, q: &str) -> Vec<String> {
    let r = send_to(
        server,
        Client::new().ip,
        "GET",
        &format!("/posts?q={q}"),
        None,
        &[],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    listed(&r.json())
}

/// A file of the release before reversed row numbers (version 6): its
/// posts indexed under their row numbers as they are. The open makes the
/// index again, every old post under its reversed row number, finds them
/// by words newest first, and a second open changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_6_file_gets_its_words_indexed_again() {
    let dir = scratch("v6");
    let db = dir.join("v6.db");
    write_indexed_release(&db, 6);
    {
        let conn = Connection::open(&db).unwrap();
        let old: Vec<i64> = column(
            &conn,
            "SELECT rowid FROM post_words WHERE post_words MATCH '\"bike\"*'",
            [],
        );
        assert_eq!(old, [1, 2, 7], "the version 6 index, as it was");
    }
    let (child, url) = spawn_serve("127.0.0.1:0", db.to_str().unwrap(), &[]);
    let server = Server::at(&url);
    let list = Client::new();
    let found = |q: &'static str| found(&server, q);
    let old = |i: usize| format!("{i:032x}");
    assert_eq!(found("BIKE").await, [old(6), old(1), old(0)]);
    assert_eq!(found("quoted").await, [old(5)]);
    // Pages of one post: the cursor walks the reversed numbers.
    let r = send_to(&server, list.ip, "GET", "/posts?q=bike&limit=1", None, &[]).await;
    let next = r.json()["next"].as_str().unwrap().to_string();
    let r = send_to(
        &server,
        list.ip,
        "GET",
        &format!("/posts?q=bike&limit=1&before={next}"),
        None,
        &[],
    )
    .await;
    assert_eq!(r.json()["posts"][0]["id"], old(1));
    stop(child);

    let conn = reopened_at_version(&db);
    assert_eq!(
        indexed(&conn),
        (1..=OLD_NOTES.len() as i64).collect::<Vec<_>>()
    );
    // Every row number of the index is a post's reversed: none of version
    // 6's (1 to 7) is left.
    let rows: Vec<i64> = conn
        .prepare("SELECT rowid FROM post_words WHERE post_words MATCH ?1 ORDER BY rowid")
        .unwrap()
        .query_map([needhave::rules::words::ANY_INDEXED], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let base = needhave::store::WORDS_BASE;
    assert_eq!(
        rows,
        (1..=OLD_NOTES.len() as i64)
            .rev()
            .map(|r| base - r)
            .collect::<Vec<_>>(),
        "a row number of the version 6 index is left"
    );
    // Once: a second open changes nothing in the index.
    let blocks = index_blocks(&conn);
    assert_eq!(migrate::apply(&conn).unwrap(), None);
    assert_eq!(index_blocks(&conn), blocks);
    drop(conn);
    std::fs::remove_dir_all(dir).ok();
}

/// A file of the previous release (version 7: every post's words in the
/// index): the upgrade adds `words_new`. The old posts are found from the
/// index, a new post from its 201 (its words in `words_new`), and still
/// once the 64 posts after it have moved it into the index.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_7_file_keeps_its_index_and_finds_new_posts() {
    let dir = scratch("v7");
    let db = dir.join("v7.db");
    write_indexed_release(&db, 7);
    let (child, url) = spawn_serve("127.0.0.1:0", db.to_str().unwrap(), &[]);
    let server = Server::at(&url);
    let found = |q: &'static str| found(&server, q);
    let create = |ip, note: String| {
        let server = &server;
        async move {
            let body = json!({"kind": "have", "note": note})
                .to_string()
                .into_bytes();
            let r = send_to(server, ip, "POST", "/posts", Some(body), &[]).await;
            assert_eq!(r.status, 201, "{}", r.text());
            r.json()["id"].as_str().unwrap().to_string()
        }
    };
    let old = |i: usize| format!("{i:032x}");
    assert_eq!(found("BIKE").await, [old(6), old(1), old(0)]);
    let new = create(Client::new().ip, "a new bike".into()).await;
    assert_eq!(found("bike").await, [new.clone(), old(6), old(1), old(0)]);
    assert_eq!(found("new").await, vec![new.clone()]);
    // 64 more (ten a client, the create rate): the new bike moves in.
    let mut client = Client::new();
    for i in 0..needhave::store::PENDING_MAX {
        if i % 10 == 0 {
            client = Client::new();
        }
        create(client.ip, fresh_note("after")).await;
    }
    assert_eq!(found("bike").await, [new.clone(), old(6), old(1), old(0)]);
    assert_eq!(found("new").await, [new]);
    stop(child);

    let conn = reopened_at_version(&db);
    // The old posts and the 64 that made the move are in the index; the
    // last one's words wait in words_new.
    let posts = OLD_NOTES.len() as i64 + 1 + needhave::store::PENDING_MAX;
    let waiting: Vec<(i64, String)> = conn
        .prepare("SELECT post, words FROM words_new")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(leaf_size(&conn), Some(needhave::store::WORDS_LEAF_YOUNG));
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert_eq!(waiting[0].0, posts);
    assert!(waiting[0].1.starts_with("\u{b7}have after "), "{waiting:?}");
    assert_eq!(
        indexed(&conn),
        (1..posts).collect::<Vec<_>>(),
        "every other post in the index, once"
    );
    drop(conn);
    std::fs::remove_dir_all(dir).ok();
}

/// The upgrade from version 6 says how many posts it indexed again.
#[test]
fn the_upgrade_from_version_6_indexes_every_post_again() {
    let conn = first_release_in_memory();
    migrate::apply(&conn).unwrap().unwrap();
    // Back to version 6's index: every post under its row number.
    conn.execute_batch(
        "INSERT INTO post_words (post_words) VALUES ('delete-all'); PRAGMA user_version = 6; \
         INSERT INTO post_words (rowid, words) SELECT rowid, '\u{b7}need stale' FROM posts",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let done = migrate::apply(&conn).unwrap().unwrap();
    assert_eq!((done.from, done.indexed), (6, OLD_NOTES.len()));
    assert!(searched(&conn, "stale").is_empty());
    assert_eq!(searched(&conn, "bike"), [1, 2, 7]);
    assert_eq!(migrate::apply(&conn).unwrap(), None);
}

/// D1's path for the words: the migrations, then the posts the index lacks
/// as wrangler's `--json` prints them, through `needhave d1-words`, and
/// the INSERTs it writes. A second run adds nothing; a post indexed at its
/// insert is left alone.
#[test]
fn d1_words_indexes_old_posts_like_the_native_upgrade() {
    let conn = first_release_in_memory();
    for (_, sql) in migrations() {
        conn.execute_batch(&sql).unwrap();
    }
    // A post written by the release before this one, indexed at its
    // insert; then one of this release, whose words wait in words_new:
    // not the back-fill's; then one a Worker of the release before 0010
    // moved into the new index without marks: the back-fill's again.
    conn.execute_batch(
        "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
         VALUES ('ffffffffffffffffffffffffffffffff', 'have', 'a new bike', 'h', 'ip', 9); \
         INSERT INTO post_words (rowid, words) SELECT 268435456 - rowid, \
         '\u{2b0}\u{b7}have \u{2b0}a \u{2b0}new \u{2b0}bike' FROM posts \
         WHERE id = 'ffffffffffffffffffffffffffffffff'; \
         INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
         VALUES ('fffffffffffffffffffffffffffffffe', 'have', 'a newer bike', 'h', 'ip', 10); \
         INSERT INTO words_new (post, words) SELECT rowid, '\u{b7}have a newer bike' FROM posts \
         WHERE id = 'fffffffffffffffffffffffffffffffe'; \
         INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
         VALUES ('fffffffffffffffffffffffffffffffd', 'need', 'an old bike mover', 'h', 'ip', 11); \
         INSERT INTO post_words (rowid, words) SELECT 268435456 - rowid, \
         '\u{b7}need an old bike mover' FROM posts \
         WHERE id = 'fffffffffffffffffffffffffffffffd';",
    )
    .unwrap();
    let wrangler_json = d1_unindexed_json;
    // The query wrangler runs asks FTS5 what the native back-fill asks.
    assert!(migrate::d1_unindexed().contains(needhave::rules::words::ANY_INDEXED));
    assert!(migrate::d1_unindexed().contains(needhave::rules::words::ANY_COLD));
    // The old posts, the post the Worker moved without marks, and the one
    // indexed at its insert, which has no row in the cold part (0012).
    let first = wrangler_json(&conn);
    assert_eq!(first.matches("\"id\"").count(), OLD_NOTES.len() + 2);
    // Until d1-words has run, the posts it indexes are not found; the one
    // waiting in words_new is.
    assert_eq!(searched(&conn, "bike"), [9]);
    let sql = d1_words(&first);
    conn.execute_batch(&sql).unwrap();
    assert_eq!(indexed(&conn).len(), OLD_NOTES.len() + 2);
    let cold: i64 = conn
        .query_row(
            "SELECT count(*) FROM post_cold WHERE post_cold MATCH ?1",
            [needhave::rules::words::ANY_COLD],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(cold, OLD_NOTES.len() as i64 + 2);
    assert_eq!(searched(&conn, "bike"), [1, 2, 7, 8, 9, 10]);
    // Again, and the same file once more: nothing is added twice.
    assert_eq!(wrangler_json(&conn).matches("\"id\"").count(), 0);
    conn.execute_batch(&sql).unwrap();
    assert_eq!(searched(&conn, "bike"), [1, 2, 7, 8, 9, 10]);
    // A word's beginning, in capitals, finds them as the word does.
    assert_eq!(searched(&conn, "BIK"), [1, 2, 7, 8, 9, 10]);
    for bad in [
        "{}",
        "[{\"results\": [{\"id\": \"x'; DROP TABLE posts; --\", \"kind\": \"need\", \"note\": \"n\"}]}]",
        "[{\"results\": [{\"id\": \"00000000000000000000000000000000\", \"kind\": \"both\", \"note\": \"n\"}]}]",
        "nope",
    ] {
        assert!(migrate::d1_word_inserts(bad).is_err(), "{bad}");
    }
}

/// `needhave d1-words`, and its `--query`.
fn d1_words(input: &str) -> String {
    assert_eq!(printed_query("d1-words"), migrate::d1_unindexed());
    let sql = piped("d1-words", input);
    assert_eq!(sql, migrate::d1_word_inserts(input).unwrap());
    sql
}

/// `needhave d1-keys`, the command the README names, and its `--query`.
fn d1_keys(input: &str) -> String {
    assert_eq!(printed_query("d1-keys"), migrate::d1_keys_query());
    let sql = piped("d1-keys", input);
    assert_eq!(sql, migrate::d1_key_updates(input).unwrap());
    sql
}

/// What `needhave COMMAND --query` prints: the query whose output the
/// command reads.
fn printed_query(command: &str) -> String {
    let query = Command::new(env!("CARGO_BIN_EXE_needhave"))
        .args([command, "--query"])
        .output()
        .unwrap();
    String::from_utf8(query.stdout).unwrap().trim().to_string()
}

/// `needhave COMMAND` with `input` on its stdin: what it printed, once it
/// exited 0.
fn piped(command: &str, input: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_needhave"))
        .arg(command)
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
    assert!(out.status.success(), "needhave {command}");
    String::from_utf8(out.stdout).unwrap()
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
    let input = d1_keys_json(&conn);
    assert_eq!(input.matches("\"id\"").count(), OLD_NOTES.len());
    conn.execute_batch(&d1_keys(&input)).unwrap();
    check_keys(&conn);
}

/// The statements write the base out (SQL has no constants): each says
/// the number `WORDS_BASE` is.
#[test]
fn the_statements_of_the_index_reverse_by_words_base() {
    let base = needhave::store::WORDS_BASE.to_string();
    assert_eq!(base, "268435456");
    // Each statement's number of mentions of the index's row numbers: a
    // write or a filter, plus the join to posts where there is one.
    for (sql, mentions) in [
        (needhave::store::hot_cold::HOT, 1),
        (needhave::store::hot_cold::COLD, 1),
        (needhave::handlers::posts::WORDS_SQL, 4),
        (&migrate::d1_unindexed(), 2),
    ] {
        assert_eq!(sql.matches(&base).count(), mentions, "{sql}");
        assert_eq!(
            sql.matches(&format!("{base} - ")).count(),
            mentions,
            "{sql}"
        );
    }
    let d1 = migrate::d1_word_inserts(
        "[{\"id\": \"00000000000000000000000000000001\", \"kind\": \"need\", \"note\": \"n\"}]",
    )
    .unwrap();
    // A write and its guard in each part of the index.
    assert_eq!(d1.matches(&base).count(), 4, "{d1}");
    let refold = migrate::d1_word_inserts(
        "[{\"id\": \"00000000000000000000000000000001\", \"kind\": \"need\", \"note\": \"n\", \"refold\": 1}]",
    )
    .unwrap();
    assert_eq!(refold.matches(&base).count(), 4, "{refold}");
}

/// The move into the index writes out `PENDING_MAX`,
/// `rules::hot::PROMOTED_AT` and `rules::hot::DEEPEST` (SQL has no
/// constants): its statements compare with those numbers.
#[test]
fn the_move_into_the_index_waits_for_pending_max() {
    let threshold = format!(">= {}", needhave::store::PENDING_MAX);
    use needhave::store::hot_cold::{trigger, MOVE, PROMOTE};
    // The trigger's WHEN, once; its statements, which run only inside it,
    // count nothing again.
    let trigger = trigger();
    assert_eq!(trigger.matches(&threshold).count(), 1, "{trigger}");
    for sql in MOVE {
        assert!(!sql.contains("count(*) FROM words_new"), "{sql}");
    }
    let at = needhave::rules::hot::PROMOTED_AT;
    // A word's first prefix that is not hot, and the whole word.
    assert_eq!(
        PROMOTE.matches(&format!("LIMIT {at})) >= {at}")).count(),
        2,
        "{PROMOTE}"
    );
    // The deepest prefix the move offers and promotes is the hot set's.
    let deepest = needhave::rules::hot::DEEPEST;
    assert!(
        PROMOTE.contains(&format!("BETWEEN 2 AND {deepest} ")),
        "{PROMOTE}"
    );
    let behind = needhave::store::hot_cold::BEHIND;
    for offer in [
        format!("substr(y.v, 1, {deepest})"),
        format!("< min(length(y.v), {deepest}) "),
    ] {
        assert!(behind.contains(&offer), "{offer}: {behind}");
    }
}

/// Posts of the release before the index's two parts, enough that some
/// prefixes are shared: `shared` of them hold "gpu" and "gpus", each a
/// word of its own.
fn write_release_11(conn: &Connection, posts: i64, shared: i64) {
    for (name, sql) in migrations() {
        if name.as_str() < "0012" {
            conn.execute_batch(&sql)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    for i in 0..posts {
        let note = if i < shared {
            format!("gpu rig gpus own{i}x")
        } else {
            format!("desk own{i}x")
        };
        conn.execute(
            "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
             VALUES (printf('%032x', ?1), 'need', ?2, 'h', 'ip', ?1)",
            rusqlite::params![i + 1, note],
        )
        .unwrap();
    }
}

/// A create as the Worker's batch writes its words (no copy of the hot
/// set: the move finds its tokens).
fn create_as_worker(conn: &Connection, n: i64, note: &str) {
    conn.execute(
        "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
         VALUES (printf('%032x', ?1), 'need', ?2, 'h', 'ip', ?1)",
        rusqlite::params![n, note],
    )
    .unwrap();
    let id = format!("{n:032x}");
    for statement in Index::without_copy().statements(Kind::Need, &id, note) {
        let params: Vec<rusqlite::types::Value> = statement
            .params
            .into_iter()
            .map(|v| match v {
                needhave::store::Value::Null => rusqlite::types::Value::Null,
                needhave::store::Value::Int(n) => rusqlite::types::Value::Integer(n),
                needhave::store::Value::Text(t) => rusqlite::types::Value::Text(t),
            })
            .collect();
        conn.execute(statement.sql, rusqlite::params_from_iter(params))
            .unwrap();
    }
}

/// An upgrade counts the hot set of the old posts, on both stores: a
/// hot query word finds every old post that holds it, through the hot
/// part alone. On D1, the move waits until `needhave d1-words` has run
/// (new posts are found meanwhile, waiting), then takes up the posts that
/// waited with the hot set counted.
#[test]
fn an_upgrade_counts_the_hot_set_and_the_move_waits_for_it() {
    let gpu: Vec<i64> = (1..=40).collect();
    // Native: one open.
    let native = Connection::open_in_memory().unwrap();
    write_release_11(&native, 100, 40);
    native.execute_batch("PRAGMA user_version = 11").unwrap();
    let done = migrate::apply(&native).unwrap().unwrap();
    assert_eq!(done.indexed, 100);
    // D1: the migration, Worker creates, then d1-words.
    let d1 = Connection::open_in_memory().unwrap();
    write_release_11(&d1, 100, 40);
    for (name, sql) in migrations() {
        if name.as_str() >= "0012" {
            d1.execute_batch(&sql)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    for n in 101..=170 {
        create_as_worker(&d1, n, &format!("gpu rig new{n}x"));
    }
    let waiting: i64 = d1
        .query_row("SELECT count(*) FROM words_new", [], |r| r.get(0))
        .unwrap();
    assert_eq!(waiting, 70, "the move waits for d1-words");
    let json = d1_unindexed_json(&d1);
    d1.execute_batch(&migrate::d1_word_inserts(&json).unwrap())
        .unwrap();
    let mut waiting = gpu.clone();
    waiting.extend(101..=170);
    for (conn, found) in [(&native, &gpu), (&d1, &waiting)] {
        let hot: Vec<String> = column(conn, "SELECT p FROM hot_prefixes ORDER BY rowid", []);
        for p in [
            "\u{207f}g",
            "\u{207f}gp",
            "\u{207f}gpu",
            "\u{207f}gpus",
            "\u{207f}r",
        ] {
            assert!(hot.iter().any(|h| h == p), "{p} in {hot:?}");
        }
        // Words of their own are hot only as far as eight posts share them
        // ("own1" is the start of eleven; "own10" of one).
        assert!(hot.iter().any(|h| h == "\u{207f}own1"), "{hot:?}");
        assert!(
            !hot.iter().any(|h| h.starts_with("\u{207f}own10")),
            "{hot:?}"
        );
        assert_eq!(&searched(conn, "gpu"), found);
        assert_eq!(searched(conn, "gp"), searched(conn, "gpu"));
        assert_eq!(searched(conn, "own7x"), [8]);
        // The hot part alone holds a hot word's posts.
        assert_eq!(matching(conn, "\"\u{207f}gpu\""), gpu);
    }
    // The next create moves the 71 that wait, with the hot set counted.
    create_as_worker(&d1, 171, "gpu rig new171x");
    let waiting: i64 = d1
        .query_row("SELECT count(*) FROM words_new", [], |r| r.get(0))
        .unwrap();
    assert_eq!(waiting, 0);
    let mut want = gpu.clone();
    want.extend(101..=171);
    assert_eq!(searched(&d1, "gpu"), want);
    assert_eq!(matching(&d1, "\"\u{207f}gpu\""), want);
}

/// What `wrangler d1 execute DB --json --command` prints for
/// `migrate::d1_unindexed()`: a result object for each statement.
fn d1_unindexed_json(conn: &Connection) -> String {
    wrangler_json(conn, &migrate::d1_unindexed())
}

/// What `wrangler d1 execute DB --json --command` prints for
/// `migrate::d1_keys_query()`.
fn d1_keys_json(conn: &Connection) -> String {
    wrangler_json(conn, &migrate::d1_keys_query())
}

/// What `wrangler d1 execute DB --json --command SQL` prints: a result
/// object for each statement of `sql`, its rows by column name.
fn wrangler_json(conn: &Connection, sql: &str) -> String {
    let results: Vec<Value> = sql
        .split("; ")
        .map(|statement| {
            let mut s = conn.prepare(statement).unwrap();
            let names: Vec<String> = s.column_names().iter().map(|n| n.to_string()).collect();
            let rows: Vec<Value> = s
                .query_map([], |r| {
                    let mut row = serde_json::Map::new();
                    for (i, name) in names.iter().enumerate() {
                        let v = match r.get_ref(i)? {
                            rusqlite::types::ValueRef::Integer(n) => json!(n),
                            rusqlite::types::ValueRef::Text(t) => {
                                json!(String::from_utf8_lossy(t))
                            }
                            _ => Value::Null,
                        };
                        row.insert(name.clone(), v);
                    }
                    Ok(Value::Object(row))
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            json!({"results": rows, "success": true, "meta": {"served_by": "test"}})
        })
        .collect();
    Value::Array(results).to_string()
}

/// A file of release 12, with posts waiting in `words_new` as that
/// release wrote them (runs as pairs), on both stores: the native upgrade
/// and migrations/0013. The waiting posts are found before the move and
/// after it; new posts' runs wait whole.
#[test]
fn a_version_12_file_keeps_its_waiting_posts() {
    let note = |n: i64| format!("gpu rig own{n}x 我有自行车");
    let release_12 = || {
        let conn = Connection::open_in_memory().unwrap();
        for (name, sql) in migrations() {
            if name.as_str() < "0013" {
                conn.execute_batch(&sql)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
        for n in 1..=40i64 {
            conn.execute(
                "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
                 VALUES (printf('%032x', ?1), 'need', ?2, 'h', 'ip', ?1)",
                rusqlite::params![n, note(n)],
            )
            .unwrap();
            let kind = needhave::rules::Kind::Need;
            let pairs = needhave::rules::words::expanded(&needhave::rules::words::waiting_text(
                kind,
                &note(n),
            ));
            assert!(pairs.contains(" 我有 有自 自行 行车"), "{pairs}");
            // Every other one with a copy's tokens and what the cold part
            // needs, as release 12's writers handed them.
            let (tokens, cold) = if n % 2 == 0 {
                (
                    Some("\u{207f}\u{b7}need"),
                    Some(needhave::rules::words::marked(kind, &pairs)),
                )
            } else {
                (None, None)
            };
            conn.execute(
                "INSERT INTO words_new (post, words, tokens, candidates, version, cold) \
                 VALUES (?1, ?2, ?3, '[]', 0, ?4)",
                rusqlite::params![n, pairs, tokens, cold],
            )
            .unwrap();
        }
        conn
    };
    let native = release_12();
    native.execute_batch("PRAGMA user_version = 12").unwrap();
    migrate::apply(&native).unwrap().unwrap();
    let d1 = release_12();
    for (name, sql) in migrations() {
        if name.as_str() >= "0013" {
            d1.execute_batch(&sql)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    let old: Vec<i64> = (1..=40).collect();
    for conn in [&native, &d1] {
        assert_eq!(searched(conn, "自行车"), old);
        assert_eq!(searched(conn, "有"), old);
        assert_eq!(searched(conn, "own7x"), vec![7]);
        for n in 41..=70 {
            create_as_worker(conn, n, &note(n));
        }
        let waiting: Vec<String> = column(conn, "SELECT words FROM words_new ORDER BY post", []);
        assert_eq!(waiting.len(), 6, "the 64th moved them");
        assert!(waiting[0].ends_with(" ~我有自行车"), "{}", waiting[0]);
        let all: Vec<i64> = (1..=70).collect();
        assert_eq!(searched(conn, "自行车"), all);
        assert_eq!(searched(conn, "有自"), all);
        assert_eq!(searched(conn, "车"), Vec::<i64>::new());
        assert_eq!(searched(conn, "gpu rig"), all);
        assert_eq!(searched(conn, "own7x"), vec![7]);
        assert_eq!(searched(conn, "own66x"), vec![66]);
    }
}

/// A note of release 14, as that release keyed and indexed it: its key
/// (NFKC, lower case, no more), and its words moved into the index
/// (`moved`) or waiting in `words_new`.
struct Release14 {
    note: &'static str,
    old_key: &'static str,
    old_words: &'static str,
    moved: bool,
}

/// Notes the fold now reads otherwise, beside ones it does not: two that
/// the new key makes one (ΟΔΟΣ was οδος, and οδοσ was itself; İstanbul
/// was i̇stanbul, and istanbul was itself), one whose key keeps a final
/// sigma, one without any, and one of each waiting for the move.
const RELEASE_14: &[Release14] = &[
    Release14 {
        note: "ΟΔΟΣ 5 own1",
        old_key: "οδος 5 own1",
        old_words: "\u{b7}need οδος 5 own1",
        moved: true,
    },
    Release14 {
        note: "οδοσ 5 own1",
        old_key: "οδοσ 5 own1",
        old_words: "\u{b7}need οδοσ 5 own1",
        moved: true,
    },
    Release14 {
        note: "istanbul own2",
        old_key: "istanbul own2",
        old_words: "\u{b7}need istanbul own2",
        moved: true,
    },
    Release14 {
        note: "İstanbul own2",
        old_key: "i\u{307}stanbul own2",
        old_words: "\u{b7}need i stanbul own2",
        moved: true,
    },
    Release14 {
        note: "ΚΟΣ own3",
        old_key: "κος own3",
        old_words: "\u{b7}need κος own3",
        moved: true,
    },
    Release14 {
        note: "ΚΟΣΜΗΜΑΤΑ own4",
        old_key: "κοσμηματα own4",
        old_words: "\u{b7}need κοσμηματα own4",
        moved: true,
    },
    Release14 {
        note: "ΣΑΣ waiting own5",
        old_key: "σας waiting own5",
        old_words: "\u{b7}need σας waiting own5",
        moved: false,
    },
    Release14 {
        note: "İzmir waiting own6",
        old_key: "i\u{307}zmir waiting own6",
        old_words: "\u{b7}need i zmir waiting own6",
        moved: false,
    },
];

/// A file of release 14 holding [`RELEASE_14`]'s notes, on SQLite: its
/// migrations, and the rows as that release wrote them.
fn release_14() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    for (name, sql) in migrations() {
        if name.as_str() < "0015" {
            conn.execute_batch(&sql)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    let kind = needhave::rules::Kind::Need;
    // A hot set the upgrade keeps: the first letter of every `own`.
    conn.execute("INSERT INTO hot_prefixes (p) VALUES ('\u{207f}o')", [])
        .unwrap();
    for (i, post) in RELEASE_14.iter().enumerate() {
        let n = i as i64 + 1;
        conn.execute(
            "INSERT INTO posts (id, kind, note, note_key_hash, secret_hash, ip_hash, created_at) \
             VALUES (printf('%032x', ?1), 'need', ?2, ?3, 'h', 'ip', ?1)",
            rusqlite::params![n, post.note, needhave::secrets::sha256_hex(post.old_key)],
        )
        .unwrap();
        if post.moved {
            let cold = needhave::rules::words::marked(kind, post.old_words);
            conn.execute(
                "INSERT INTO post_cold (rowid, words) VALUES (268435456 - ?1, ?2)",
                rusqlite::params![n, cold],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO post_words (rowid, words) VALUES (268435456 - ?1, ?2)",
                rusqlite::params![n, "\u{207f}\u{b7}need \u{207f}o"],
            )
            .unwrap();
        } else {
            conn.execute(
                "INSERT INTO words_new (post, words) VALUES (?1, ?2)",
                rusqlite::params![n, post.old_words],
            )
            .unwrap();
        }
    }
    conn
}

/// A file of release 14 whose notes the fold now reads otherwise, on both
/// stores (natively on open; on D1, migrations/0015, then `needhave
/// d1-keys` and `needhave d1-words` as wrangler's `--json` hands them
/// their queries' rows): its index and hot set are kept, every row is kept, each gets its new key's digest
/// unless a row that shares the new key holds it (then NULL, and the
/// unique index never sees two), a copy of any of them under the new key
/// is refused, and each is found by its words as the new fold reads them,
/// moved or waiting, before and after the move; a second run of the D1
/// files changes nothing.
#[test]
fn a_version_14_file_refolds_its_keys_and_words() {
    let native = release_14();
    native.execute_batch("PRAGMA user_version = 14").unwrap();
    let done = migrate::apply(&native).unwrap().unwrap();
    // Six notes hold a character the fold now reads otherwise (ΚΟΣΜΗΜΑΤΑ
    // too, whose key is as it was): three take a new digest, two leave
    // theirs to the row that holds the new key.
    assert_eq!(
        (done.refolded, done.keyed, done.shared),
        (6, 3, 2),
        "{done:?}"
    );
    let d1 = release_14();
    let (_, last) = migrations().pop().unwrap();
    d1.execute_batch(&last).unwrap();
    let keys = d1_keys(&d1_keys_json(&d1));
    d1.execute_batch(&keys).unwrap();
    let words = d1_words(&d1_unindexed_json(&d1));
    d1.execute_batch(&words).unwrap();
    // Again: the six notes' rows read, no key moves (the two left NULL are
    // asked again, and stay so), and the words file again changes no
    // answer (below).
    assert_eq!(d1_keys_json(&d1).matches("\"id\"").count(), 6);
    let keys_of = |conn: &Connection| -> Vec<Option<String>> {
        column(conn, "SELECT note_key_hash FROM posts ORDER BY rowid", [])
    };
    let before = keys_of(&d1);
    d1.execute_batch(&d1_keys(&d1_keys_json(&d1))).unwrap();
    assert_eq!(keys_of(&d1), before);
    d1.execute_batch(&d1_words(&d1_unindexed_json(&d1)))
        .unwrap();
    for conn in [&native, &d1] {
        let held = keys_of(conn);
        assert_eq!(held.len(), RELEASE_14.len(), "no row lost");
        let digest = |key: &str| Some(needhave::secrets::sha256_hex(key));
        // Two old notes of one new key: the row that held it keeps it, the
        // other keeps NULL; the rest their new key's digest.
        assert_eq!(
            held,
            [
                None,
                digest("οδοσ 5 own1"),
                digest("istanbul own2"),
                None,
                digest("κοσ own3"),
                digest("κοσμηματα own4"),
                digest("σασ waiting own5"),
                digest("izmir waiting own6"),
            ]
        );
        // Each new key is held: a copy under it is refused.
        for post in RELEASE_14 {
            let key = needhave::rules::note_key(post.note);
            let holders: i64 = conn
                .query_row(
                    "SELECT count(*) FROM posts WHERE note_key_hash = ?1",
                    [needhave::secrets::sha256_hex(&key)],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(holders, 1, "{key}");
        }
        let found = |conn: &Connection| {
            assert_eq!(searched(conn, "οδοσ"), [1, 2]);
            assert_eq!(searched(conn, "ΟΔΟΣ 5"), [1, 2]);
            assert_eq!(searched(conn, "istanbul"), [3, 4]);
            assert_eq!(searched(conn, "ΚΟΣ"), [5, 6]);
            assert_eq!(searched(conn, "σασ"), [7]);
            assert_eq!(searched(conn, "izmir"), [8]);
            assert_eq!(searched(conn, "own4"), [6]);
            // The hot part kept: its list of a hot letter.
            assert_eq!(searched(conn, "o"), (1..=8).collect::<Vec<_>>());
        };
        found(conn);
        for n in 9..=76 {
            create_as_worker(conn, n, &format!("gpu rig new{n}x"));
        }
        let waiting: i64 = conn
            .query_row("SELECT count(*) FROM words_new", [], |r| r.get(0))
            .unwrap();
        assert_eq!(waiting, 6, "the 64th moved them");
        found(conn);
    }
}

/// A file of release 13 with posts in both parts of its index and a hot
/// set: the upgrade keeps them (the index is made again only for a file
/// before 12), and every post is found as before, through the hot part.
#[test]
fn a_version_13_file_keeps_its_index() {
    let conn = Connection::open_in_memory().unwrap();
    for (name, sql) in migrations() {
        if name.as_str() < "0014" {
            conn.execute_batch(&sql)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    for n in 1..=200 {
        create_as_worker(&conn, n, &format!("gpu rig own{n}x"));
    }
    let hot: Vec<String> = column(&conn, "SELECT p FROM hot_prefixes ORDER BY rowid", []);
    assert!(hot.contains(&"\u{207f}g".to_string()), "{hot:?}");
    let blocks = index_blocks(&conn);
    conn.execute_batch("PRAGMA user_version = 13").unwrap();
    let done = migrate::apply(&conn).unwrap().unwrap();
    assert_eq!((done.from, done.indexed), (13, 0));
    assert_eq!(
        column::<String>(&conn, "SELECT p FROM hot_prefixes ORDER BY rowid", []),
        hot
    );
    assert_eq!(index_blocks(&conn), blocks);
    assert_eq!(searched(&conn, "gpu rig"), (1..=200).collect::<Vec<_>>());
    assert_eq!(searched(&conn, "own7x"), [7]);
}

/// Every message row as it was written, by row number: what an upgrade
/// must keep whole (its columns of release 13, and the new `reason`).
fn message_rows(conn: &Connection) -> Vec<Vec<rusqlite::types::Value>> {
    conn.prepare(
        "SELECT rowid, id, post_id, role, parent_id, text, secret_hash, thread_key, \
         thread_key_hash, ip_hash, created_at, site_hash FROM messages ORDER BY rowid",
    )
    .unwrap()
    .query_map([], |r| (0..12).map(|i| r.get(i)).collect())
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// A file of release 13 with the first release's rows (a thread among
/// them) and a message of a later row number than its neighbours, on
/// both stores: the native upgrade and migrations/0014 on (then 0015) as
/// D1 applies them.
/// Every row is kept under its row number; every post is open, never
/// expiring, in `live`; the new decisions can be written, one close and
/// one removal a post, and they end the post.
#[test]
fn a_version_13_file_keeps_every_row_and_its_posts_open() {
    let release_13 = || {
        let conn = Connection::open_in_memory().unwrap();
        write_first_release(&conn);
        for (name, sql) in migrations() {
            if name.as_str() > "0001" && name.as_str() < "0014" {
                conn.execute_batch(&sql)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
        conn.execute_batch(
            "INSERT INTO messages (rowid, id, post_id, role, text, secret_hash, ip_hash, created_at, site_hash) \
             VALUES (40, 'c0000000000000000000000000000000', '00000000000000000000000000000001', 'first', \
             'a reply', 'h2', 'ip2', 3000, 'site')",
        )
        .unwrap();
        conn
    };
    let native = release_13();
    let before = message_rows(&native);
    assert_eq!(before.len(), 4);
    native.execute_batch("PRAGMA user_version = 13").unwrap();
    assert_eq!(migrate::apply(&native).unwrap().unwrap().from, 13);
    let d1 = release_13();
    for (name, sql) in migrations() {
        if name.as_str() >= "0014" {
            d1.execute_batch(&sql)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    for conn in [&native, &d1] {
        assert_eq!(message_rows(conn), before, "every row, as it was");
        let reasons: i64 = conn
            .query_row("SELECT count(reason) FROM messages", [], |r| r.get(0))
            .unwrap();
        assert_eq!(reasons, 0);
        let posts: Vec<(i64, String, Option<i64>)> = conn
            .prepare("SELECT rowid, kind, expires_at FROM posts ORDER BY rowid")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(posts.len(), OLD_NOTES.len());
        assert!(posts.iter().all(|p| p.2.is_none()), "never expiring");
        let live: Vec<(i64, String, Option<i64>)> = conn
            .prepare("SELECT post, kind, expires_at FROM live ORDER BY post")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(live, posts, "every old post is open");
        assert_eq!(
            conn.query_row("PRAGMA foreign_key_check", [], |_| Ok(()))
                .optional()
                .unwrap(),
            None
        );

        // The decisions of this release: a close of post 0, a removal of
        // post 1 and of its reply, a report; then a post of this release.
        let post = |i: i64| format!("{i:032x}");
        conn.execute_batch(&format!(
            "INSERT INTO messages (id, post_id, role, ip_hash, created_at) \
             VALUES ('d1000000000000000000000000000000', '{p0}', 'close', 'ip', 4000); \
             INSERT INTO messages (id, post_id, role, ip_hash, created_at, reason) \
             VALUES ('d2000000000000000000000000000000', '{p1}', 'remove', 'operator', 4001, 'spam'); \
             INSERT INTO messages (id, post_id, role, parent_id, ip_hash, created_at, reason) \
             VALUES ('d3000000000000000000000000000000', '{p1}', 'remove', \
             'c0000000000000000000000000000000', 'operator', 4002, 'abuse'); \
             INSERT INTO messages (id, post_id, role, ip_hash, created_at, reason, text) \
             VALUES ('d4000000000000000000000000000000', '{p2}', 'report', 'ip', 4003, 'scam', 'why'); \
             INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at, expires_at) \
             VALUES ('{p9}', 'have', 'new', 'h', 'ip', 5000, 9000);",
            p0 = post(0),
            p1 = post(1),
            p2 = post(2),
            p9 = post(9),
        ))
        .unwrap();
        let open: Vec<(i64, Option<i64>)> =
            column::<i64>(conn, "SELECT post FROM live ORDER BY post", [])
                .into_iter()
                .map(|p| (p, None))
                .collect();
        let mut want: Vec<(i64, Option<i64>)> =
            (3..=OLD_NOTES.len() as i64).map(|p| (p, None)).collect();
        want.push((OLD_NOTES.len() as i64 + 1, None));
        assert_eq!(
            open, want,
            "the closed and the removed post are not open; the new one is"
        );
        let expiry: Vec<Option<i64>> =
            column(conn, "SELECT expires_at FROM live WHERE post = 8", []);
        assert_eq!(expiry, [Some(9000)]);
        let ends: Vec<(i64, i64, i64)> = conn
            .prepare("SELECT n, post, indexed FROM post_ends ORDER BY n")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            ends,
            [(1, 1, 1), (2, 2, 1)],
            "a message's removal ends nothing"
        );
        // One close, one removal of a post, one of a message, one report
        // per client; a report's reason is one of the six.
        for refused in [
            format!("INSERT INTO messages (id, post_id, role, ip_hash, created_at) VALUES ('e1000000000000000000000000000000', '{}', 'close', 'ip3', 1)", post(0)),
            format!("INSERT INTO messages (id, post_id, role, ip_hash, created_at, reason) VALUES ('e2000000000000000000000000000000', '{}', 'remove', 'operator', 1, 'again')", post(1)),
            format!("INSERT INTO messages (id, post_id, role, parent_id, ip_hash, created_at, reason) VALUES ('e3000000000000000000000000000000', '{}', 'remove', 'c0000000000000000000000000000000', 'operator', 1, 'again')", post(1)),
            format!("INSERT INTO messages (id, post_id, role, ip_hash, created_at, reason) VALUES ('e4000000000000000000000000000000', '{}', 'report', 'ip', 1, 'spam')", post(2)),
            format!("INSERT INTO messages (id, post_id, role, ip_hash, created_at, reason) VALUES ('e5000000000000000000000000000000', '{}', 'report', 'ip9', 1, 'rude')", post(2)),
            format!("INSERT INTO messages (id, post_id, role, ip_hash, created_at) VALUES ('e6000000000000000000000000000000', '{}', 'report', 'ip9', 1)", post(2)),
            format!("INSERT INTO messages (id, post_id, role, ip_hash, created_at) VALUES ('e7000000000000000000000000000000', '{}', 'remove', 'operator', 1)", post(3)),
            format!("INSERT INTO messages (id, post_id, role, ip_hash, created_at, reason) VALUES ('e8000000000000000000000000000000', '{}', 'remove', 'ip', 1, 'x')", post(3)),
        ] {
            assert!(conn.execute(&refused, []).is_err(), "{refused}");
        }
    }
    assert_eq!(shape(&native), shape(&d1));
    assert_eq!(migrate::apply(&native).unwrap(), None);
}
