//! The SQLite file as its operator counts on it (docs/native.md): private files, a clean stop that leaves the `.db` whole, an
//! online backup that holds what was acknowledged, a list that follows
//! another process's writes, a vanished file answered 503, and group
//! commit keeping each batch its own unit.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use common::*;
use needhave::store::sqlite::SqliteStore;
use needhave::store::{prepare, Store};
use serde_json::json;

struct Served {
    child: Child,
    server: Server,
    log: PathBuf,
}

/// `needhave serve` on `db`, its log in a file beside it.
fn serve(db: &Path) -> Served {
    let log = db.with_extension("log");
    let (child, url) = start(
        serve_command("127.0.0.1:0", db)
            .stdin(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap()),
    );
    Served {
        server: Server::at(&url),
        child,
        log,
    }
}

impl Served {
    async fn create(&self, label: &str) -> (u16, Option<String>) {
        let r = create_on(&self.server, "have", &fresh_note(label)).await;
        let id = (r.status == 201).then(|| r.json()["id"].as_str().unwrap().to_string());
        (r.status, id)
    }

    async fn listed(&self) -> Vec<String> {
        let r = send_to(&self.server, fresh_ip(), "GET", "/posts", None, &[]).await;
        assert_eq!(r.status, 200);
        listed(&r.json())
    }

    /// SIGTERM, and the exit status.
    fn stop(mut self) -> bool {
        signal(&self.child, "TERM");
        self.child.wait().unwrap().success()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ids_in(db: &Path) -> BTreeSet<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok", "{}", db.display());
    let mut stmt = conn.prepare("SELECT id FROM posts").unwrap();
    let ids = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    ids
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_are_private_and_a_clean_stop_leaves_the_db_whole() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("private");
    let db = dir.join("list.db");
    let served = serve(&db);
    let mut acked = BTreeSet::new();
    for i in 0..5 {
        let (status, id) = served.create(&format!("stop {i}")).await;
        assert_eq!(status, 201);
        acked.insert(id.unwrap());
    }
    for file in ["list.db", "list.db-wal", "list.db-shm", "list.db.salt"] {
        let mode = std::fs::metadata(dir.join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{file} is {:o}", mode & 0o777);
    }
    assert!(served.stop(), "no clean exit");
    // The .db alone, copied without its side files, has every row.
    let copy = scratch("stopcopy").join("copy.db");
    std::fs::copy(&db, &copy).unwrap();
    assert_eq!(ids_in(&copy), acked);
    let wal = std::fs::metadata(dir.join("list.db-wal")).map_or(0, |m| m.len());
    assert_eq!(wal, 0, "the WAL still holds {wal} bytes after the stop");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_while_serving_holds_what_was_acknowledged() {
    let dir = scratch("backup");
    let db = dir.join("list.db");
    let served = Arc::new(serve(&db));
    let mut before = BTreeSet::new();
    for i in 0..20 {
        let (status, id) = served.create(&format!("before backup {i}")).await;
        assert_eq!(status, 201);
        before.insert(id.unwrap());
    }
    let backup = {
        let (dir, db) = (dir.clone(), db.clone());
        move |name: &str| {
            let out = dir.join(name);
            let run = Command::new(env!("CARGO_BIN_EXE_needhave"))
                .args(["backup", "--db"])
                .arg(&db)
                .arg(&out)
                .output()
                .unwrap();
            assert!(
                run.status.success(),
                "{}",
                String::from_utf8_lossy(&run.stderr)
            );
            out
        }
    };
    // Quiet: exactly what was acknowledged.
    assert_eq!(ids_in(&backup("quiet.db")), before);
    // While writers go on: everything acknowledged before it began, and
    // nothing that was not acknowledged by the time they all finished.
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let served = served.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in 0..15 {
                    let (status, id) = served.create(&format!("during {w} {i}")).await;
                    assert_eq!(status, 201);
                    ids.push(id.unwrap());
                }
                ids
            })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    let busy = tokio::task::spawn_blocking(move || backup("busy.db"))
        .await
        .unwrap();
    let mut acked = before.clone();
    for w in writers {
        acked.extend(w.await.unwrap());
    }
    let copied = ids_in(&busy);
    assert!(copied.is_superset(&before), "lost acknowledged posts");
    assert!(copied.is_subset(&acked), "holds posts never acknowledged");
    // A backup never overwrites.
    let again = Command::new(env!("CARGO_BIN_EXE_needhave"))
        .args(["backup", "--db"])
        .arg(&db)
        .arg(&busy)
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert_eq!(ids_in(&busy), copied);
    drop(served);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_follows_a_write_by_another_process() {
    let dir = scratch("outside");
    let db = dir.join("list.db");
    let served = serve(&db);
    let (_, id) = served.create("inside").await;
    let id = id.unwrap();
    // Twice: the second is answered from the kept copy.
    for _ in 0..2 {
        assert_eq!(served.listed().await, vec![id.clone()]);
    }
    // Another connection (the sqlite3 shell, say) adds a post.
    let outside = rusqlite::Connection::open(&db).unwrap();
    outside
        .busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    outside
        .execute(
            "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
             VALUES ('0000000000000000000000000000beef', 'need', 'from outside', 'x', 'y', ?1)",
            [needhave::platform::now_ms() + 1_000],
        )
        .unwrap();
    assert_eq!(
        served.listed().await,
        vec!["0000000000000000000000000000beef".to_string(), id.clone()]
    );
    drop(served);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_or_replaced_file_is_answered_503() {
    for replace in [false, true] {
        let dir = scratch("vanish");
        let db = dir.join("list.db");
        let served = serve(&db);
        assert_eq!(served.create("before").await.0, 201);
        if replace {
            let other = dir.join("other.db");
            std::fs::copy(&db, &other).unwrap();
            std::fs::rename(&other, &db).unwrap();
        } else {
            std::fs::remove_dir_all(&dir).unwrap();
        }
        for _ in 0..3 {
            let r = send_to(
                &served.server,
                fresh_ip(),
                "POST",
                "/posts",
                Some(
                    json!({"kind": "need", "note": fresh_note("after")})
                        .to_string()
                        .into_bytes(),
                ),
                &[],
            )
            .await;
            assert_eq!((r.status, r.json()), (503, json!({"error": "unavailable"})));
        }
        if !replace {
            // The log went with the directory; that it names the file is
            // checked on the replaced one.
            continue;
        }
        // Log lines reach the file through the server's non-blocking
        // writer thread, a moment after the answers: wait for them, boundedly.
        let refused = |log: &str| {
            log.lines()
                .filter(|l| l.contains("ERROR") && l.contains("gone or was replaced"))
                .count()
        };
        let mut log = String::new();
        for _ in 0..100 {
            log = std::fs::read_to_string(&served.log).unwrap();
            if refused(&log) >= 3 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(
            refused(&log) >= 3,
            "no error line per refused write:\n{log}"
        );
        drop(served);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Batches queued together are committed together, and each is its own
/// unit: one that fails leaves the others' rows, and its own first
/// statement is undone.
#[tokio::test]
async fn a_failing_batch_in_a_group_undoes_only_itself() {
    let store = SqliteStore::open(":memory:").unwrap();
    store.with_connection(|c| {
        c.execute_batch("CREATE TABLE g (x INTEGER PRIMARY KEY)")
            .unwrap()
    });
    // Queued before any is awaited, so the writer finds them together.
    let batches: Vec<_> = (0..60)
        .map(|i: i64| {
            let mut statements =
                vec![prepare("INSERT INTO g (x) VALUES (?1) RETURNING x").bind(i * 10)];
            if i % 3 == 0 {
                // Fails: the primary key it just wrote.
                statements.push(prepare("INSERT INTO g (x) VALUES (?1)").bind(i * 10));
            }
            store.batch(statements)
        })
        .collect();
    let mut ok = BTreeSet::new();
    for (i, b) in batches.into_iter().enumerate() {
        let i = i as i64;
        match b.await {
            Ok(rows) => {
                assert_ne!(i % 3, 0, "batch {i} should have failed");
                assert_eq!(rows[0][0]["x"], json!(i * 10));
                ok.insert(i * 10);
            }
            Err(e) => assert_eq!(i % 3, 0, "batch {i}: {e}"),
        }
    }
    let rows = store.with_connection(|c| {
        let mut s = c.prepare("SELECT x FROM g").unwrap();
        let rows: BTreeSet<i64> = s
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows
    });
    assert_eq!(rows, ok);
    assert_eq!(ok.len(), 40);
}

/// On a file, the kept list needs no round trip while nothing was
/// committed, by this process or another: the WAL index header says so.
/// A commit by another connection moves it, and the next list asks.
#[tokio::test]
async fn on_a_file_the_kept_list_is_vouched_for_by_the_wal_index() {
    use needhave::store::testing::Counting;
    let dir = scratch("walclock");
    let db = dir.join("list.db");
    let store = Arc::new(Counting::new(
        SqliteStore::open(db.to_str().unwrap()).unwrap(),
    ));
    let config = Arc::new(needhave::Config::default());
    let list = || async {
        let before = store.trips();
        let ctx = local::ctx(store.clone(), config.clone(), "10.0.9.2");
        let r = local::call(&ctx, "GET", "/posts", None).await;
        let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        (
            body["posts"].as_array().unwrap().len(),
            store.trips() - before,
        )
    };
    let outside = rusqlite::Connection::open(&db).unwrap();
    let insert = |n: i64| {
        outside
            .execute(
                "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
                 VALUES (printf('%032x', ?1), 'need', 'outside ' || ?1, 'x', 'y', ?1)",
                [n],
            )
            .unwrap()
    };
    insert(1);
    assert_eq!(list().await, (1, 1));
    // Nothing committed since: no round trip.
    assert_eq!(list().await, (1, 0));
    assert_eq!(list().await, (1, 0));
    insert(2);
    assert_eq!(list().await, (2, 1));
    assert_eq!(list().await, (2, 0));
    // A checkpoint that restarts the WAL changes nothing that matters…
    outside
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    // …and the commit after it, into a fresh WAL, still shows.
    insert(3);
    assert_eq!(list().await.0, 3);
    assert_eq!(list().await, (3, 0));
    drop(outside);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A group closes at its cap, or when its window after the first batch
/// ends: ten batches queued at once under a cap of 4 and a window far
/// longer than queueing them are exactly three commits (4, 4, 2).
#[tokio::test]
async fn a_group_closes_at_its_cap_and_at_the_end_of_its_window() {
    use needhave::store::sqlite::GroupPolicy;
    use std::sync::atomic::Ordering::Relaxed;
    use std::time::{Duration, Instant};
    let policy = GroupPolicy {
        max: 4,
        wait: Duration::from_millis(300),
    };
    let store = SqliteStore::open_with(":memory:", policy).unwrap();
    store.with_connection(|c| c.execute_batch("CREATE TABLE g (x INTEGER)").unwrap());
    let started = Instant::now();
    let batches: Vec<_> = (0..10)
        .map(|i: i64| store.batch(vec![prepare("INSERT INTO g (x) VALUES (?1)").bind(i)]))
        .collect();
    for b in batches {
        b.await.unwrap();
    }
    let stats = store.group_stats();
    assert_eq!(stats.batches.load(Relaxed), 10);
    assert_eq!(stats.largest.load(Relaxed), 4);
    assert_eq!(stats.commits.load(Relaxed), 3);
    // The last group (2) waited its window out; the full ones did not.
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took < Duration::from_millis(850), "{took:?}");

    // With no window, a lone batch is committed at once, never held.
    let store = SqliteStore::open_with(
        ":memory:",
        GroupPolicy {
            max: 4,
            wait: Duration::ZERO,
        },
    )
    .unwrap();
    let started = Instant::now();
    store
        .batch(vec![prepare("CREATE TABLE h (x INTEGER)")])
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_millis(250));
    assert_eq!(store.group_stats().commits.load(Relaxed), 1);
}

/// The contract's concurrency figures hold exactly whatever the group
/// policy: one batch per commit, small capped groups, and wide windows that
/// put whole bursts into one commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limits_hold_exactly_under_every_group_policy() {
    use needhave::store::sqlite::GroupPolicy;
    use std::time::Duration;
    for (max, wait_us) in [(1, 0), (3, 0), (3, 2_000), (1024, 0), (1024, 5_000)] {
        let policy = GroupPolicy {
            max,
            wait: Duration::from_micros(wait_us),
        };
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open_with(":memory:", policy).unwrap());
        let config = local::salted("a salt for the group tests");
        let call = |ip: String, path: String, body: serde_json::Value| {
            let (store, config) = (store.clone(), config.clone());
            tokio::spawn(async move {
                let ctx = local::ctx(store, config, &ip);
                let r = local::call(&ctx, "POST", &path, Some(&body)).await;
                let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
                (r.status, v)
            })
        };
        let tally = |answers: Vec<(u16, serde_json::Value)>| {
            let mut t = std::collections::BTreeMap::new();
            for (status, v) in answers {
                let code = v["error"].as_str().unwrap_or("").to_string();
                *t.entry((status, code)).or_insert(0) += 1;
            }
            t
        };
        let all = |handles: Vec<tokio::task::JoinHandle<(u16, serde_json::Value)>>| async {
            let mut out = Vec::new();
            for h in handles {
                out.push(h.await.unwrap());
            }
            out
        };
        let label = format!("max {max}, wait {wait_us} µs");

        // 15 creates at once from one address: exactly 10.
        let creates = (0..15)
            .map(|i| {
                call(
                    "10.7.0.1".into(),
                    "/posts".into(),
                    json!({"kind": "need", "note": format!("burst {i} of {label}")}),
                )
            })
            .collect();
        let t = tally(all(creates).await);
        assert_eq!(t.get(&(201, String::new())), Some(&10), "{label}: {t:?}");
        assert_eq!(
            t.get(&(429, "rate_limited".into())),
            Some(&5),
            "{label}: {t:?}"
        );

        // 40 first replies at once at one post: exactly 20.
        let (status, post) = call(
            "10.7.0.2".into(),
            "/posts".into(),
            json!({"kind": "have", "note": format!("the post of {label}")}),
        )
        .await
        .unwrap();
        assert_eq!(status, 201, "{post}");
        let id = post["id"].as_str().unwrap().to_string();
        let replies = (0..40)
            .map(|i| {
                call(
                    format!("10.7.1.{i}"),
                    format!("/posts/{id}/messages"),
                    json!({"text": format!("race {i}")}),
                )
            })
            .collect();
        let answers = all(replies).await;
        let first = answers
            .iter()
            .find(|(s, _)| *s == 201)
            .map(|(_, v)| v["id"].as_str().unwrap().to_string())
            .unwrap();
        let t = tally(answers);
        assert_eq!(t.get(&(201, String::new())), Some(&20), "{label}: {t:?}");
        assert_eq!(
            t.get(&(429, "too_many".into())),
            Some(&20),
            "{label}: {t:?}"
        );

        // 8 accepts of one message at once: exactly one.
        let accepts = (0..8)
            .map(|_| {
                call(
                    "10.7.0.2".into(),
                    format!("/posts/{id}/accept"),
                    json!({"secret": post["secret"], "message_id": first}),
                )
            })
            .collect();
        let t = tally(all(accepts).await);
        assert_eq!(t.get(&(201, String::new())), Some(&1), "{label}: {t:?}");
        assert_eq!(
            t.get(&(409, "already_accepted".into())),
            Some(&7),
            "{label}: {t:?}"
        );
    }
}
