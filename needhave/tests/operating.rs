//! Operating `needhave serve`: start-up refusals that name their cause and
//! leave nothing behind, `/healthz` on a failing store, the metrics
//! listener, the log format and levels, the drain on stop, and backups.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::*;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_needhave")
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `needhave serve` that must refuse to start: its exit status and stderr.
/// Stdin is closed and `--exit-with-stdin` set, so one that wrongly starts
/// stops at once (and prints its URL, which the caller sees as success).
fn refused(db: &Path, extra: &[&str]) -> String {
    refused_as(&[], db, extra)
}

/// [`refused`], run through `wrap` (a command that runs another as some
/// other user) when it is not empty.
fn refused_as(wrap: &[&str], db: &Path, extra: &[&str]) -> String {
    let mut cmd = match wrap {
        [first, rest @ ..] => {
            let mut c = Command::new(first);
            c.args(rest).arg(bin());
            c
        }
        [] => Command::new(bin()),
    };
    let out = cmd
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--exit-with-stdin",
            "--db",
        ])
        .arg(db)
        .args(extra)
        .env("NEEDHAVE_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "started on {}: {}{stderr}",
        db.display(),
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

#[track_caller]
fn says(stderr: &str, parts: &[&str]) {
    for p in parts {
        assert!(stderr.contains(p), "{p:?} not in {stderr:?}");
    }
    assert!(
        !stderr.contains("salt") || parts.iter().any(|p| p.contains("salt")),
        "blames the salt: {stderr:?}"
    );
}

/// A database of the list with a few posts, closed cleanly.
fn list_db(path: &Path) {
    let store = needhave::store::sqlite::SqliteStore::open(path.to_str().unwrap()).unwrap();
    store.with_connection(|c| {
        for i in 0..50 {
            c.execute(
                "INSERT INTO posts (id, kind, note, note_key, secret_hash, ip_hash, created_at) \
                 VALUES (?1, 'need', ?2, ?2, 'h', 'ip', 1)",
                rusqlite_params(i),
            )
            .unwrap();
        }
    });
    store.checkpoint().unwrap();
}

fn rusqlite_params(i: i32) -> [String; 2] {
    [
        format!("{i:032x}"),
        format!("note number {i} {}", "x".repeat(200)),
    ]
}

#[test]
fn refusals_name_the_path_and_cause_and_leave_nothing() {
    let dir = scratch("refusals");
    let at = |name: &str| dir.join(name);

    // A directory that does not exist: the path and the OS's reason.
    let missing = at("no/such/dir/x.db");
    says(
        &refused(&missing, &[]),
        &[
            "cannot create",
            "no/such/dir/x.db",
            "No such file or directory",
        ],
    );

    // An empty path.
    says(&refused(Path::new(""), &[]), &["database path is empty"]);

    // Not a database at all: refused, and the file left as it was.
    let garbage = at("garbage.db");
    let junk: Vec<u8> = (0..20_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&garbage, &junk).unwrap();
    says(&refused(&garbage, &[]), &["garbage.db", "not a database"]);
    assert_eq!(std::fs::read(&garbage).unwrap(), junk);

    // A newer release's database.
    let newer = at("newer.db");
    list_db(&newer);
    let version = needhave::store::migrate::VERSION + 1;
    with_sqlite(&newer, &format!("PRAGMA user_version = {version}"));
    says(
        &refused(&newer, &[]),
        &[
            "newer.db",
            "newer release",
            &format!("schema version {version}"),
        ],
    );

    // Another application's file: refused, its tables untouched (no WAL
    // switch, no list tables added).
    let foreign = at("foreign.db");
    with_sqlite(
        &foreign,
        "CREATE TABLE customers (name TEXT); INSERT INTO customers VALUES ('a')",
    );
    says(
        &refused(&foreign, &[]),
        &["foreign.db", "another application", "customers"],
    );
    let conn = rusqlite::Connection::open(&foreign).unwrap();
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    assert_eq!((tables, mode.as_str()), (1, "delete"));

    // A damaged page of the posts table: quick_check refuses it.
    let damaged = at("damaged.db");
    list_db(&damaged);
    let root: i64 = {
        let conn = rusqlite::Connection::open(&damaged).unwrap();
        conn.query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = 'posts'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let mut bytes = std::fs::read(&damaged).unwrap();
    let page = (root as usize - 1) * 4096;
    // The b-tree page header: its type byte and cell count.
    bytes[page..page + 8].copy_from_slice(&[0x0d, 0xff, 0xff, 0x7f, 0x7f, 0x00, 0x00, 0x00]);
    std::fs::write(&damaged, &bytes).unwrap();
    says(&refused(&damaged, &[]), &["damaged.db", "quick_check"]);

    // A port in use: refused before anything is created.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = Command::new(bin())
        .args(["serve", "--exit-with-stdin", "--addr", &addr, "--db"])
        .arg(at("port.db"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    says(
        &String::from_utf8_lossy(&out.stderr),
        &["cannot listen on", &addr, "in use"],
    );

    // The salt cannot be kept (its path is a directory): the database
    // this start created is removed again.
    std::fs::create_dir(at("salted.db.salt")).unwrap();
    says(
        &refused(&at("salted.db"), &[]),
        &["cannot keep the IP salt in", "salted.db.salt"],
    );
    std::fs::remove_dir(at("salted.db.salt")).unwrap();

    // Nothing left but what the test itself wrote.
    assert_eq!(
        files_in(&dir),
        ["damaged.db", "foreign.db", "garbage.db", "newer.db"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every file in `dir`, with its bytes.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let files = files_in(dir).into_iter();
    files
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap()))
        .collect()
}

/// Another application's file with a `posts` table of its own passes the
/// table check, not the upgrade: refused, and left byte for byte as it was,
/// in its own journal mode, with no side file made beside it.
#[test]
fn a_foreign_file_with_a_posts_table_is_left_byte_for_byte() {
    let dir = scratch("foreign-posts");
    let db = dir.join("app.db");
    with_sqlite(
        &db,
        "CREATE TABLE posts (title TEXT, body TEXT);
         INSERT INTO posts VALUES ('a title', 'a body');",
    );
    let before = contents(&dir);
    says(&refused(&db, &[]), &["app.db", "schema"]);
    assert_eq!(contents(&dir), before);
    assert_eq!(files_in(&dir), ["app.db"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A database file this user may only read (mode 0444) is refused at start,
/// naming the file and the cause, rather than served with every write
/// failing. Root ignores modes: as root, the server runs as `nobody`
/// (`setpriv`), in a directory anyone may write, so that the file's mode is
/// the only cause.
#[test]
fn a_file_the_server_cannot_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("read-only");
    let db = dir.join("ro.db");
    list_db(&db);
    let set = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    set(&dir, 0o777);
    set(&db, 0o444);
    // SAFETY: a plain system call without arguments.
    let root = unsafe { libc::geteuid() } == 0;
    let wrap: &[&str] = if root {
        &[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ]
    } else {
        &[]
    };
    let before = contents(&dir);
    let stderr = refused_as(wrap, &db, &[]);
    says(
        &stderr,
        &["cannot write", "ro.db", "not writable", "Permission denied"],
    );
    assert_eq!(contents(&dir), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn with_sqlite(path: &Path, sql: &str) {
    rusqlite::Connection::open(path)
        .unwrap()
        .execute_batch(sql)
        .unwrap();
}

/// A backup killed half-way leaves nothing at the backup's name; a whole one
/// is a database with every row, and leaves the WAL no larger than it was.
#[test]
fn a_backup_is_whole_or_absent_and_leaves_the_wal_no_larger() {
    let dir = scratch("backup");
    let db = dir.join("big.db");
    // Kept open, WAL mode, no automatic checkpoint: the WAL holds writes
    // when the backup starts, as beside a busy server.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
         CREATE TABLE filler (b BLOB);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 25000)
         INSERT INTO filler SELECT randomblob(4000) FROM n;",
    )
    .unwrap();
    let wal = || std::fs::metadata(dir.join("big.db-wal")).map_or(0, |m| m.len());
    let wal_before = wal();
    assert!(wal_before > 50_000_000, "WAL of {wal_before} B");

    let out = dir.join("copy.db");
    let backup = || {
        let mut cmd = Command::new(bin());
        cmd.args(["backup", "--db"]).arg(&db).arg(&out);
        cmd
    };
    let mut child = backup().stderr(Stdio::piped()).spawn().unwrap();
    // Killed once the copy is under way.
    let started = std::time::Instant::now();
    loop {
        let partial = files_in(&dir)
            .into_iter()
            .find(|n| n.starts_with("copy.db.partial-"));
        if partial.is_some_and(|p| std::fs::metadata(dir.join(p)).unwrap().len() > 1_000_000) {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the backup ended before it could be killed"
        );
        assert!(started.elapsed().as_secs() < 60, "no partial copy appeared");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    signal(&child, "KILL");
    child.wait().unwrap();
    assert!(!out.exists(), "a killed backup left a file at its name");

    let done = backup().output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let copy = rusqlite::Connection::open(&out).unwrap();
    let rows: i64 = copy
        .query_row("SELECT count(*) FROM filler", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 25000);
    assert!(
        wal() <= wal_before,
        "WAL {} B after, {wal_before} B before",
        wal()
    );
    // The killed copy's partial file is the only other thing there.
    let left: Vec<String> = files_in(&dir)
        .into_iter()
        .filter(|n| !n.starts_with("big.db") && n != "copy.db")
        .collect();
    assert!(
        left.iter().all(|n| n.starts_with("copy.db.partial-")),
        "{left:?}"
    );
    drop(conn);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `needhave backup` of a file a server is writing leaves the WAL no larger
/// than it found it: the server's creates go on through the copy, which
/// holds one snapshot, so no checkpoint can reset the WAL until it ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_writes_leaves_the_wal_no_larger() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let dir = scratch("backup-load");
    let db = dir.join("busy.db");
    // About 20 MB of posts: the copy takes long enough for writes to pile up.
    {
        let store = needhave::store::sqlite::SqliteStore::open(db.to_str().unwrap()).unwrap();
        store.with_connection(|c| {
            c.execute_batch(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
                 INSERT INTO posts (id, kind, note, note_key, secret_hash, ip_hash, created_at)
                 SELECT printf('%032x', i), 'need', printf('seed %d ', i) || hex(randomblob(200)),
                        printf('seed %d', i), 'h', 'ip', i FROM n",
            )
            .unwrap()
        });
        store.checkpoint().unwrap();
    }
    let serve = Arc::new(common::Owned::spawn(
        "127.0.0.1:0",
        db.to_str().unwrap(),
        &["--client-ip-header", "CF-Connecting-IP"],
    ));
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..4)
        .map(|_| {
            let (serve, stop, acked) = (serve.clone(), stop.clone(), acked.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let body = serde_json::json!({"kind": "have", "note": fresh_note("busy")});
                    let body = Some(body.to_string().into_bytes());
                    let r = send_to(&serve, fresh_ip(), "POST", "/posts", body, &[]).await;
                    assert_eq!(r.status, 201, "{}", r.text());
                    acked.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let wal = || std::fs::metadata(dir.join("busy.db-wal")).map_or(0, |m| m.len());
    // Writes under way, the WAL at its working size.
    while acked.load(Ordering::Relaxed) < 300 {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let before = wal();
    let acked_before = acked.load(Ordering::Relaxed);
    let out = dir.join("copy.db");
    let mut backup = Command::new(bin());
    backup.args(["backup", "--db"]).arg(&db).arg(&out);
    let done = tokio::task::spawn_blocking(move || backup.output().unwrap())
        .await
        .unwrap();
    let after = wal();
    let during = acked.load(Ordering::Relaxed) - acked_before;
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(during > 0, "no create was acknowledged during the backup");
    assert!(
        after <= before,
        "WAL {after} B after the backup, {before} B before ({during} creates acknowledged during it)"
    );
    eprintln!("WAL {before} B before, {after} B after; {during} creates during the backup");
    drop(serve);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `NEEDHAVE_LOG` with a level that does not exist stops the start.
#[test]
fn a_bad_log_level_is_refused() {
    for bad in ["bogus_level", "info,needhave=loud"] {
        let out = Command::new(bin())
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--db",
                ":memory:",
                "--exit-with-stdin",
            ])
            .env("NEEDHAVE_LOG", bad)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{bad}: started");
        assert!(out.stdout.is_empty(), "{bad}: {:?}", out.stdout);
        assert!(
            stderr.contains("NEEDHAVE_LOG") && stderr.contains("is not a level"),
            "{bad}: {stderr}"
        );
    }
}

/// Under `--log-format json`, at the most detailed level the list logs,
/// every line is one JSON object with its time, level and target, and no
/// line holds a note, a secret, a thread key or the client's address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_json_and_hold_nothing_private() {
    let dir = scratch("json-logs");
    let log = dir.join("stderr.log");
    let mut cmd = serve_command("127.0.0.1:0", dir.join("l.db"));
    cmd.args(["--log-format", "json"])
        .env("NEEDHAVE_LOG", "debug")
        .stderr(std::fs::File::create(&log).unwrap());
    let (child, url) = start(&mut cmd);
    let server = Server::at(&url);
    let ip = fresh_ip();
    let call = |method: &'static str, path: String, body: serde_json::Value| {
        let server = &server;
        async move {
            let r = send_to(
                server,
                ip,
                method,
                &path,
                Some(body.to_string().into_bytes()),
                &[],
            )
            .await;
            assert!(r.status < 300, "{method} {path}: {} {}", r.status, r.text());
            r.json()
        }
    };
    let note = fresh_note("a private-looking note");
    let post = call(
        "POST",
        "/posts".into(),
        serde_json::json!({"kind": "need", "note": note}),
    )
    .await;
    let id = post["id"].as_str().unwrap().to_string();
    let text = fresh_note("a first reply");
    let reply = call(
        "POST",
        format!("/posts/{id}/messages"),
        serde_json::json!({"text": text}),
    )
    .await;
    let accepted = call(
        "POST",
        format!("/posts/{id}/accept"),
        serde_json::json!({"secret": post["secret"], "message_id": reply["id"]}),
    )
    .await;
    let key = accepted["thread_key"].as_str().unwrap().to_string();
    let later = fresh_note("a later message");
    call(
        "POST",
        "/threads/messages".into(),
        serde_json::json!({"thread_key": key, "text": later}),
    )
    .await;
    let bad = send_to(
        &server,
        ip,
        "POST",
        "/posts",
        Some(b"{not json".to_vec()),
        &[],
    )
    .await;
    assert_eq!(bad.status, 400);
    assert_eq!(
        send_to(&server, ip, "GET", "/healthz", None, &[])
            .await
            .status,
        200
    );
    signal(&child, "TERM");
    let mut child = child;
    assert!(child.wait().unwrap().success());

    let logged = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = logged.lines().collect();
    let mut routes = Vec::new();
    for line in &lines {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        for field in ["timestamp", "level", "target"] {
            assert!(v[field].is_string(), "no {field}: {line}");
        }
        if let Some(route) = v["route"].as_str() {
            routes.push((route.to_string(), v["status"].as_u64().unwrap()));
        }
        let secrets = [
            note.as_str(),
            text.as_str(),
            later.as_str(),
            post["secret"].as_str().unwrap(),
            reply["secret"].as_str().unwrap(),
            key.as_str(),
            &ip.to_string(),
        ];
        for s in secrets {
            assert!(!line.contains(s), "{s:?} logged: {line}");
        }
    }
    // The request lines are there, with their route patterns (never a
    // path with its id), and the store's debug detail too.
    for want in [
        ("/posts", 201),
        ("/posts/:id/messages", 201),
        ("/posts/:id/accept", 201),
        ("/threads/messages", 201),
        ("/posts", 400),
        ("/healthz", 200),
    ] {
        assert!(
            routes
                .iter()
                .any(|(r, s)| (r.as_str(), *s) == (want.0, want.1 as u64)),
            "{want:?} not logged: {routes:?}"
        );
    }
    assert!(logged.contains("group committed"), "{logged}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// At the default level a successful probe leaves no line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_is_not_logged_at_the_default_level() {
    let dir = scratch("probe-log");
    let log = dir.join("stderr.log");
    let mut cmd = serve_command("127.0.0.1:0", ":memory:");
    cmd.env_remove("NEEDHAVE_LOG")
        .stderr(std::fs::File::create(&log).unwrap());
    let (mut child, url) = start(&mut cmd);
    let server = Server::at(&url);
    for _ in 0..5 {
        assert_eq!(
            send_to(&server, fresh_ip(), "GET", "/healthz", None, &[])
                .await
                .status,
            200
        );
    }
    assert_eq!(
        send_to(&server, fresh_ip(), "GET", "/posts", None, &[])
            .await
            .status,
        200
    );
    signal(&child, "TERM");
    child.wait().unwrap();
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("route=\"/posts\"") || logged.contains("route=/posts"),
        "{logged}"
    );
    assert!(!logged.contains("healthz"), "{logged}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A stop lets the requests in flight finish: clients that began their
/// request before the SIGTERM (the body still arriving) get their whole
/// answer, and their connections are closed after it; nothing new is
/// accepted; the exit is clean; every 201 is there after a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_drains_the_requests_in_flight() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let dir = scratch("drain");
    let db = dir.join("drain.db");
    let (child, url) = start(&mut serve_command("127.0.0.1:0", &db));
    let server = Server::at(&url);
    let mut half_sent = Vec::new();
    for i in 0..6 {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind((fresh_ip(), 0).into()).unwrap();
        let mut stream = socket.connect(server.addr).await.unwrap();
        let body = serde_json::json!({"kind": "have", "note": fresh_note(&format!("drained {i}"))})
            .to_string();
        let head = format!(
            "POST /posts HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            server.host,
            body.len()
        );
        // Half the body now, the rest after the SIGTERM; every other
        // connection asks to be kept alive.
        let (first, rest) = body.split_at(body.len() / 2);
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(first.as_bytes()).await.unwrap();
        half_sent.push((stream, rest.to_string()));
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    signal(&child, "TERM");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        tokio::net::TcpStream::connect(server.addr).await.is_err(),
        "a new connection was accepted during the drain"
    );
    let mut ids = Vec::new();
    for (mut stream, rest) in half_sent {
        stream.write_all(rest.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        // To the end: the server closes the keep-alive connection after
        // the answer, so this ends.
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            stream.read_to_end(&mut answer),
        )
        .await
        .expect("the connection was left open after its answer")
        .unwrap();
        let answer = String::from_utf8(answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
        let body = &answer[answer.find("\r\n\r\n").unwrap() + 4..];
        let v: serde_json::Value =
            serde_json::from_str(body).unwrap_or_else(|_| panic!("cut off: {answer}"));
        ids.push(v["id"].as_str().unwrap().to_string());
    }
    let mut child = child;
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");

    let restarted = Owned::spawn("127.0.0.1:0", db.to_str().unwrap(), &[]);
    for id in &ids {
        let r = send_to(
            &restarted,
            fresh_ip(),
            "GET",
            &format!("/posts/{id}"),
            None,
            &[],
        )
        .await;
        assert_eq!(r.status, 200, "post {id} of a 201 is gone");
    }
    drop(restarted);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The counters move by exactly the requests sent between two scrapes; the
/// metrics are on their own listener, never the public one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_exactly_what_was_sent() {
    let dir = scratch("metrics");
    let metrics_addr = free_port();
    let mut cmd = serve_command("127.0.0.1:0", dir.join("m.db"));
    cmd.args(["--metrics-addr", &metrics_addr]);
    let (mut child, url) = start(&mut cmd);
    let server = Server::at(&url);
    let metrics = Server::at(&format!("http://{metrics_addr}"));
    let before = scrape(&metrics).await;
    for _ in 0..3 {
        assert_eq!(
            send_to(&server, fresh_ip(), "GET", "/healthz", None, &[])
                .await
                .status,
            200
        );
    }
    for i in 0..2 {
        let r = create_on(&server, "need", &fresh_note(&format!("metrics {i}"))).await;
        assert_eq!(r.status, 201);
    }
    let zero = format!("/posts/{}", "0".repeat(32));
    assert_eq!(
        send_to(&server, fresh_ip(), "GET", &zero, None, &[])
            .await
            .status,
        404
    );
    // Not on the public port.
    assert_eq!(
        send_to(&server, fresh_ip(), "GET", "/metrics", None, &[])
            .await
            .status,
        404
    );
    let after = scrape(&metrics).await;

    let moved = |series: &str| {
        after.get(series).copied().unwrap_or(0.0) - before.get(series).copied().unwrap_or(0.0)
    };
    let req = |m: &str, r: &str, s: u16| {
        moved(&format!(
            "needhave_http_requests_total{{method=\"{m}\",route=\"{r}\",status=\"{s}\"}}"
        ))
    };
    assert_eq!(req("GET", "/healthz", 200), 3.0);
    assert_eq!(req("POST", "/posts", 201), 2.0);
    assert_eq!(req("GET", "/posts/:id", 404), 1.0);
    assert_eq!(req("GET", "-", 404), 1.0);
    assert_eq!(
        moved("needhave_http_request_duration_seconds_count{method=\"POST\",route=\"/posts\"}"),
        2.0
    );
    // Two writes, each its own batch: the groups hold exactly two.
    assert_eq!(moved("needhave_group_commit_batches_sum"), 2.0);
    assert!(moved("needhave_group_commit_fsync_seconds_count") >= 1.0);
    assert!(after["needhave_database_bytes"] > 0.0);
    assert!(after.contains_key("needhave_wal_bytes"));
    assert_eq!(after["needhave_log_lines_dropped_total"], 0.0);
    assert_eq!(
        after[&format!(
            "needhave_build_info{{version=\"{}\"}}",
            env!("CARGO_PKG_VERSION")
        )],
        1.0
    );
    signal(&child, "TERM");
    assert!(child.wait().unwrap().success());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A 429 is counted under its code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_refusals_are_counted_by_code() {
    let metrics_addr = free_port();
    let mut cmd = serve_command("127.0.0.1:0", ":memory:");
    cmd.args(["--metrics-addr", &metrics_addr]);
    let (mut child, url) = start(&mut cmd);
    let server = Server::at(&url);
    let ip = fresh_ip();
    let mut refused = 0;
    for i in 0..12 {
        let body = serde_json::json!({"kind": "have", "note": fresh_note(&format!("limit {i}"))});
        let r = send_to(
            &server,
            ip,
            "POST",
            "/posts",
            Some(body.to_string().into_bytes()),
            &[],
        )
        .await;
        if r.status == 429 {
            refused += 1;
        }
    }
    assert!(refused > 0);
    let metrics = Server::at(&format!("http://{metrics_addr}"));
    assert_eq!(
        scrape(&metrics).await["needhave_limit_refusals_total{code=\"rate_limited\"}"],
        refused as f64
    );
    signal(&child, "TERM");
    child.wait().unwrap();
}

/// `/healthz` on a store that does not answer: 503 `unavailable`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_is_503_when_the_store_fails() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(needhave::native::serve::serve(
        listener,
        std::sync::Arc::new(needhave::store::testing::Failing::new("disk I/O error")),
        needhave::Config::default(),
        needhave::native::serve::Policy::default(),
        async {
            let _ = stopped.await;
        },
    ));
    let server = Server::at(&url);
    let r = send_to(&server, fresh_ip(), "GET", "/healthz", None, &[]).await;
    r.expect_error(503, "unavailable");
    let _ = stop.send(());
    served.await.unwrap();
}

/// A database file deleted under a running server: its open connections
/// still read the old file, so only asking whether the path is still that
/// file tells; `/healthz` answers 503 from then on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_is_503_once_the_file_is_deleted() {
    let dir = scratch("healthz-deleted");
    let db = dir.join("list.db");
    let mut cmd = serve_command("127.0.0.1:0", db.to_str().unwrap());
    cmd.stderr(std::process::Stdio::null());
    let (mut child, url) = start(&mut cmd);
    let server = Server::at(&url);
    let health = || send_to(&server, fresh_ip(), "GET", "/healthz", None, &[]);
    assert_eq!(health().await.status, 200);
    std::fs::remove_file(&db).unwrap();
    health().await.expect_error(503, "unavailable");
    signal(&child, "TERM");
    child.wait().unwrap();
}
