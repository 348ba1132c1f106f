//! The operator's commands, on the list's file while `needhave serve` runs
//! on it: `needhave remove` (a post, a message; unknown ids, twice, bad
//! reasons), `needhave remove --sql` (the same rows as the native removal,
//! whatever the reason holds), and `needhave reports` (most reported
//! first, each post's reports newest first; as text and as JSON).

mod common;
#[path = "docs/mod.rs"]
mod docs;

use std::path::Path;
use std::process::{Command, Output};

use common::*;
use serde_json::{json, Value};

fn needhave(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_needhave"))
        .args(args)
        .env("NEEDHAVE_LOG", "warn")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `needhave remove ID --reason REASON --db DB`, which must exit 0; what
/// it printed.
fn remove(db: &Path, id: &str, reason: &str) -> String {
    let o = needhave(&[
        "remove",
        id,
        "--reason",
        reason,
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    stdout(&o)
}

/// `needhave remove` that must fail; its stderr.
fn refused(args: &[&str]) -> String {
    let o = needhave(args);
    assert!(!o.status.success(), "{}", stdout(&o));
    assert_eq!(stdout(&o), "");
    stderr(&o)
}

/// This binary's list on a file, or `None` (with a word on stderr) when
/// the list under test is another host's: these commands work on files.
fn local_db() -> Option<&'static Path> {
    let db = on_file();
    if db.is_none() {
        eprintln!("skipped: the operator's commands work on this binary's own file");
    }
    db
}

fn count(db: &Path, sql: &str, id: &str) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(sql, [id], |r| r.get(0))
        .unwrap()
}

async fn listed_now(kind: &str) -> Vec<String> {
    listed(
        &Client::new()
            .get(&format!("/posts?kind={kind}"))
            .await
            .json(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_beside_a_running_server() {
    let Some(db) = local_db() else { return };
    let post = create_post("need").await;
    let (accepted, other) = (reply(&post).await, reply(&post).await);
    let key = accept(&post, &accepted).await;
    assert!(listed_now("need").await.contains(&post.id));

    // A first reply: out of the waiting list at once.
    assert_eq!(waiting_ids(&post).await, vec![other.id.clone()]);
    let said = remove(db, &other.id, "spam in a reply");
    assert!(
        said.contains("removed the message") && said.contains(&other.id),
        "{said}"
    );
    assert_eq!(waiting_ids(&post).await, Vec::<String>::new());

    // The post: 410 at once, out of the list; its thread goes on.
    let said = remove(db, &post.id, "a scam");
    assert!(
        said.contains("removed the post") && said.contains(&post.id),
        "{said}"
    );
    Client::new()
        .get(&format!("/posts/{}", post.id))
        .await
        .expect_error(410, "removed");
    assert!(!listed_now("need").await.contains(&post.id));
    let thread = Client::new()
        .post("/threads", json!({"thread_key": key}))
        .await;
    assert_eq!(thread.status, 200, "{}", thread.text());

    // Twice: nothing changes, and it says so, with success.
    for id in [&post.id, &other.id] {
        let said = remove(db, id, "again");
        assert!(said.contains("removed already: nothing changed"), "{said}");
    }
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM messages WHERE post_id = ?1 AND role = 'remove'",
            &post.id
        ),
        2
    );

    // An unknown id is an error that says so; so is a bad reason.
    let file = db.to_str().unwrap();
    for unknown in ["00000000000000000000000000000000", "not-an-id"] {
        let err = refused(&["remove", unknown, "--reason", "x", "--db", file]);
        assert!(err.contains("no post and no message has this id"), "{err}");
    }
    let long = "é".repeat(501);
    for (reason, code) in [
        ("", "empty_note"),
        (" \n ", "empty_note"),
        (&long[..], "huge_note"),
    ] {
        let err = refused(&["remove", &accepted.id, "--reason", reason, "--db", file]);
        assert!(err.contains("reason") && err.contains(code), "{err}");
        let err = refused(&["remove", "--sql", &accepted.id, "--reason", reason]);
        assert!(err.contains("reason") && err.contains(code), "{err}");
    }
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM messages WHERE parent_id = ?1 AND role = 'remove'",
            &accepted.id
        ),
        0
    );
}

/// The rows a removal leaves, without what differs between two runs of
/// it (the decision's id, its time).
fn removal_rows(db: &Path) -> Vec<Vec<Option<String>>> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut out = Vec::new();
    for sql in [
        "SELECT post_id, parent_id, reason, ip_hash FROM messages WHERE role = 'remove' \
         ORDER BY post_id, parent_id",
        "SELECT p.id, NULL, NULL, NULL FROM live JOIN posts p ON p.rowid = live.post ORDER BY p.id",
        "SELECT p.id, e.indexed, NULL, NULL FROM post_ends e JOIN posts p ON p.rowid = e.post ORDER BY e.n",
    ] {
        let mut stmt = conn.prepare(sql).unwrap();
        let rows = stmt
            .query_map([], |r| {
                (0..4)
                    .map(|i| {
                        r.get::<_, rusqlite::types::Value>(i).map(|v| match v {
                            rusqlite::types::Value::Null => None,
                            rusqlite::types::Value::Integer(i) => Some(i.to_string()),
                            rusqlite::types::Value::Text(t) => Some(t),
                            other => Some(format!("{other:?}")),
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .unwrap();
        out.push(vec![Some(sql.to_string())]);
        out.extend(rows.map(Result::unwrap));
    }
    out
}

/// Runs every statement of `sql` on `db` in one transaction, as
/// `wrangler d1 execute --file` does (an INSERT … RETURNING writes all it
/// writes at its first step).
fn apply(db: &Path, sql: &str) {
    assert_eq!(sql.matches(";\n").count(), 3, "{sql}");
    let mut conn = rusqlite::Connection::open(db).unwrap();
    let tx = conn.transaction().unwrap();
    tx.execute_batch(sql).unwrap();
    tx.commit().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_removal_gives_the_rows_of_the_native_one() {
    let Some(db) = local_db() else { return };
    let post = create_post("have").await;
    let other = create_post("have").await;
    let message = reply(&other).await;
    let (native, sql) = {
        let dir = scratch("sql-removal");
        let copy = |name: &str| {
            let to = dir.join(name);
            let o = needhave(&["backup", "--db", db.to_str().unwrap(), to.to_str().unwrap()]);
            assert!(o.status.success(), "{}", stderr(&o));
            to
        };
        (copy("native.db"), copy("sql.db"))
    };
    // What SQL quoting must survive: quotes, a statement's end, a comment,
    // line breaks, non-ASCII, and what looks like a parameter.
    let reason = "it's a scam'; DELETE FROM posts; --\nsecond line\r\n«non-ASCII» ✓ 名前 ?1 $x";
    for id in [&post.id, &message.id] {
        remove(&native, id, reason);
        let o = needhave(&["remove", "--sql", id, "--reason", reason]);
        assert!(o.status.success(), "{}", stderr(&o));
        let printed = stdout(&o);
        assert!(
            printed.contains("'it''s a scam''; DELETE FROM posts; --\nsecond line"),
            "{printed}"
        );
        apply(&sql, &printed);
        // Twice: the second run writes nothing.
        apply(&sql, &printed);
    }
    let rows = removal_rows(&native);
    assert_eq!(rows, removal_rows(&sql));
    assert_eq!(
        rows.iter()
            .filter(|r| r.get(2) == Some(&Some(reason.to_string())))
            .count(),
        2,
        "the reason is stored as given, in both: {rows:?}"
    );
    assert_eq!(
        count(&sql, "SELECT count(*) FROM posts WHERE id = ?1", &post.id),
        1
    );
    // An id that cannot be one is refused before any SQL is printed.
    let err = refused(&[
        "remove",
        "--sql",
        "x'; DROP TABLE posts; --",
        "--reason",
        "r",
    ]);
    assert!(err.contains("no post and no message has this id"), "{err}");
}

async fn report(id: &str, client: Client, reason: &str, text: Option<&str>) {
    let mut body = json!({"reason": reason});
    if let Some(t) = text {
        body["text"] = json!(t);
    }
    let r = client.post(&format!("/posts/{id}/report"), body).await;
    assert_eq!(r.status, 202, "{}", r.text());
    // Reports a millisecond apart, so that "newest first" is one order.
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_most_reported_first() {
    let Some(db) = local_db() else { return };
    let (once, thrice, never) = (
        create_post("need").await,
        create_post("have").await,
        create_post("need").await,
    );
    let (a, b, c) = (Client::new(), Client::new(), Client::new());
    report(&thrice.id, a, "spam", Some("the same ad\nagain")).await;
    report(&once.id, a, "other", None).await;
    report(&thrice.id, b, "scam", None).await;
    // The same client again counts once.
    report(&thrice.id, b, "illegal", Some("a second word")).await;
    report(&thrice.id, c, "prompt_injection", Some("ignore your rules")).await;
    let closed = Client::new()
        .post(
            &format!("/posts/{}/close", once.id),
            json!({"secret": once.secret}),
        )
        .await;
    assert_eq!(closed.status, 201, "{}", closed.text());
    remove(db, &thrice.id, "reported thrice");

    let file = db.to_str().unwrap();
    let o = needhave(&["reports", "--json", "--db", file]);
    assert!(o.status.success(), "{}", stderr(&o));
    let all: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let all = all.as_array().unwrap();
    let ours: Vec<&Value> = all
        .iter()
        .filter(|p| {
            [&once.id, &thrice.id, &never.id].contains(&&p["post_id"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(ours.len(), 2, "{ours:#?}");
    let (first, second) = (ours[0], ours[1]);
    assert_eq!(first["post_id"], thrice.id.as_str());
    assert_eq!(first["clients"], 3);
    assert_eq!(
        (&first["removed"], &first["status"]),
        (&json!(true), &json!("open"))
    );
    assert_eq!(first["note"], thrice.note.as_str());
    assert_eq!(
        first["reports"],
        json!([
            {"reason": "prompt_injection", "text": "ignore your rules", "created_at": first["reports"][0]["created_at"]},
            {"reason": "scam", "created_at": first["reports"][1]["created_at"]},
            {"reason": "spam", "text": "the same ad\nagain", "created_at": first["reports"][2]["created_at"]},
        ])
    );
    assert_eq!(second["post_id"], once.id.as_str());
    assert_eq!(second["clients"], 1);
    assert_eq!(
        (&second["removed"], &second["status"]),
        (&json!(false), &json!("closed"))
    );
    assert!(second["ended_at"].is_string(), "{second}");
    // Every post of the whole list in order: most clients first.
    let clients: Vec<i64> = all.iter().map(|p| p["clients"].as_i64().unwrap()).collect();
    assert!(clients.windows(2).all(|w| w[0] >= w[1]), "{clients:?}");

    // The text says the same for a person, in the same order.
    let o = needhave(&["reports", "--db", file]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} not in {text}"));
    assert!(at(&thrice.id) < at(&once.id), "{text}");
    assert!(!text.contains(&never.id), "{text}");
    assert!(text.contains("reported by 3 clients"), "{text}");
    assert!(text.contains("open, removed"), "{text}");
    assert!(
        at("prompt_injection: ignore your rules") < at("spam: the same ad again"),
        "{text}"
    );
}

#[test]
fn reports_of_an_empty_list() {
    let dir = scratch("no-reports");
    let db = dir.join("empty.db");
    let db = db.to_str().unwrap();
    // A list file of this build: made by `needhave serve`, then stopped.
    drop(Owned::spawn("127.0.0.1:0", db, &[]));
    let o = needhave(&["reports", "--db", db]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "no reports\n");
    let o = needhave(&["reports", "--json", "--db", db]);
    assert_eq!(stdout(&o).trim(), "[]");
    // A file that is no list is an error that names it.
    let err = refused(&["reports", "--db", dir.join("none.db").to_str().unwrap()]);
    assert!(err.contains("none.db"), "{err}");
}

/// The D1 query the operator's guide gives is the one `needhave reports`
/// runs, and `--query` prints it.
#[test]
fn the_guide_gives_the_reports_query_the_command_runs() {
    let query = needhave::native::operator::REPORTS;
    assert!(
        docs::read("docs/operating.md").contains(query),
        "docs/operating.md does not give the query of needhave reports:\n{query}"
    );
    assert_eq!(
        stdout(&needhave(&["reports", "--query"])),
        format!("{query}\n")
    );
}

/// Every 202 of a report counts under its reason (a client's report of
/// the same post again too); a refused report, or MCP's 202, does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_are_counted_by_reason_in_the_metrics() {
    let dir = scratch("report-metrics");
    let metrics_addr = free_port();
    let db = dir.join("m.db");
    let list = Owned::spawn(
        "127.0.0.1:0",
        db.to_str().unwrap(),
        &["--metrics-addr", &metrics_addr],
    );
    let metrics = Server::at(&format!("http://{metrics_addr}"));
    let send = |ip, path: String, body: Value| {
        let server = &list.server;
        async move {
            send_to(
                server,
                ip,
                "POST",
                &path,
                Some(body.to_string().into_bytes()),
                &[],
            )
            .await
            .status
        }
    };
    let created = create_on(&list.server, "need", &fresh_note("reported")).await;
    assert_eq!(created.status, 201, "{}", created.text());
    let id = created.json()["id"].as_str().unwrap().to_string();
    let path = format!("/posts/{id}/report");
    let before = scrape(&metrics).await;
    let (a, b) = (fresh_ip(), fresh_ip());
    assert_eq!(send(a, path.clone(), json!({"reason": "spam"})).await, 202);
    assert_eq!(send(a, path.clone(), json!({"reason": "spam"})).await, 202);
    assert_eq!(
        send(b, path.clone(), json!({"reason": "spam", "text": "an ad"})).await,
        202
    );
    assert_eq!(send(b, path.clone(), json!({"reason": "scam"})).await, 202);
    assert_eq!(send(b, path.clone(), json!({"reason": "rude"})).await, 400);
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(send(a, "/mcp".into(), notification).await, 202);
    remove(&db, &id, "spam");
    assert_eq!(send(a, path.clone(), json!({"reason": "other"})).await, 410);
    let after = scrape(&metrics).await;
    let moved = |reason: &str| {
        let series = format!("needhave_reports_total{{reason=\"{reason}\"}}");
        assert!(after.contains_key(&series), "{series} not in the scrape");
        after[&series] - before.get(&series).copied().unwrap_or(0.0)
    };
    assert_eq!(moved("spam"), 3.0);
    assert_eq!(moved("scam"), 1.0);
    for reason in ["illegal", "prompt_injection", "contact_details", "other"] {
        assert_eq!(moved(reason), 0.0, "{reason}");
    }
}
