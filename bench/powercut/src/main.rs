//! The power-loss test of `needhave serve` (docs/design/group-commit.md,
//! "Power loss").
//!
//!     powercut mount DISK MOUNTPOINT     the filesystem (see `fs`), until unmounted
//!     powercut test --needhave BIN --work DIR [--synchronous NORMAL] [--expect-loss]
//!                   [--conns 16] [--secs 3]
//!
//! `test` mounts the filesystem, runs `needhave serve` on a database in it
//! and drives concurrent creates, each from its own client address (so no
//! limit refuses them), noting every post answered 201; then a few creates
//! one by one, one more left in flight, and it cuts the power (kill -9 of
//! the filesystem: everything not fsynced is gone, and the server's next
//! file operation fails) and kill -9s the server; remounts what the disk
//! kept, restarts the server, and asks for every acknowledged post. It
//! passes when every one is there and `PRAGMA integrity_check` is ok; with
//! `--expect-loss` (for `--synchronous NORMAL`, which the server takes from
//! NEEDHAVE_TEST_SYNCHRONOUS) it passes only when some are gone (up to
//! three attempts), which shows the test can fail.

mod fs;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("mount") if args.len() == 3 => mount(&args[1], &args[2]),
        Some("test") => test(&args[1..]),
        _ => Err("usage: powercut mount DISK MOUNTPOINT | powercut test --needhave BIN --work DIR [--synchronous NORMAL] [--expect-loss] [--conns N] [--secs S]".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("powercut: {e}");
            ExitCode::FAILURE
        }
    }
}

fn mount(disk: &str, mountpoint: &str) -> Result<(), String> {
    let fs = fs::PowerCut::new(PathBuf::from(disk)).map_err(|e| format!("{disk}: {e}"))?;
    let mut config = fuser::Config::default();
    config.mount_options.extend([
        fuser::MountOption::FSName("powercut".into()),
        // The kernel unmounts when this process dies (the cut).
        fuser::MountOption::AutoUnmount,
        fuser::MountOption::DefaultPermissions,
    ]);
    config.acl = fuser::SessionACL::All;
    fuser::mount(fs, mountpoint, &config).map_err(|e| format!("mount {mountpoint}: {e}"))
}

struct Opts {
    needhave: String,
    work: PathBuf,
    synchronous: String,
    expect_loss: bool,
    conns: usize,
    secs: u64,
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        needhave: String::new(),
        work: PathBuf::new(),
        synchronous: "FULL".into(),
        expect_loss: false,
        conns: 16,
        secs: 3,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--needhave" => o.needhave = value()?,
            "--work" => o.work = PathBuf::from(value()?),
            "--synchronous" => o.synchronous = value()?,
            "--expect-loss" => o.expect_loss = true,
            "--conns" => o.conns = value()?.parse().map_err(|e| format!("--conns: {e}"))?,
            "--secs" => o.secs = value()?.parse().map_err(|e| format!("--secs: {e}"))?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if o.needhave.is_empty() || o.work.as_os_str().is_empty() {
        return Err("--needhave and --work are required".into());
    }
    Ok(o)
}

fn is_mounted(mountpoint: &Path) -> bool {
    let want = mountpoint.to_string_lossy();
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|m| m.lines().any(|l| l.split(' ').nth(4) == Some(&*want)))
        .unwrap_or(false)
}

fn unmount(mountpoint: &Path) {
    let _ = Command::new("fusermount3")
        .args(["-u", "-z"])
        .arg(mountpoint)
        .stderr(Stdio::null())
        .status();
}

/// Mounts the disk and waits until the mount is there (bounded).
fn mount_child(disk: &Path, mountpoint: &Path) -> Result<Child, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let child = Command::new(me)
        .arg("mount")
        .arg(disk)
        .arg(mountpoint)
        .spawn()
        .map_err(|e| format!("spawn the filesystem: {e}"))?;
    let started = Instant::now();
    while !is_mounted(mountpoint) {
        if started.elapsed() > Duration::from_secs(10) {
            return Err("the filesystem did not mount within 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(child)
}

struct Served {
    child: Child,
    addr: String,
}

fn serve(o: &Opts, db: &Path) -> Result<Served, String> {
    let mut child = Command::new(&o.needhave)
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--client-ip-header",
            "x-forwarded-for",
            "--db",
        ])
        .arg(db)
        .env("NEEDHAVE_LOG", "warn")
        .env("NEEDHAVE_TEST_SYNCHRONOUS", &o.synchronous)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("spawn needhave serve: {e}"))?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().ok_or("no stdout")?)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let addr = line
        .split_whitespace()
        .nth(2)
        .and_then(|u| u.strip_prefix("http://"))
        .ok_or_else(|| format!("needhave serve did not start: {line:?}"))?
        .to_string();
    Ok(Served { child, addr })
}

/// One HTTP/1.1 exchange on a fresh connection: (status, body).
fn call(addr: &str, method: &str, path: &str, ip: &str, body: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\nx-forwarded-for: {ip}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let status = out.split(' ').nth(1)?.parse().ok()?;
    let body = out.split_once("\r\n\r\n")?.1.to_string();
    Some((status, body))
}

fn test(args: &[String]) -> Result<(), String> {
    let o = parse(args)?;
    if !o.expect_loss {
        let (acked, lost) = run_once(&o)?;
        return match lost {
            0 => Ok(()),
            _ => Err(format!("{lost} of {acked} acknowledged writes lost")),
        };
    }
    // Under NORMAL a write is lost only if no checkpoint fsynced the WAL
    // between its 201 and the cut. The quiet tail makes that the common
    // case, but a checkpoint that the last writes themselves trigger can
    // still sync everything; a few attempts make "the test cannot tell"
    // a real finding rather than bad luck.
    for attempt in 1..=ATTEMPTS {
        let (_, lost) = run_once(&o)?;
        if lost > 0 {
            return Ok(());
        }
        eprintln!("powercut: attempt {attempt} of {ATTEMPTS} lost nothing");
    }
    Err(format!(
        "expected acknowledged writes to be lost, none were in {ATTEMPTS} attempts: the test cannot tell"
    ))
}

/// Attempts of an `--expect-loss` run before it says the test cannot tell.
const ATTEMPTS: usize = 3;

/// Sequential creates acknowledged after the concurrent load and just
/// before the cut (see `run_once`).
const TAIL: u32 = 8;

fn create(addr: &str, ip: &str, note: &str) -> Option<String> {
    let body = format!(r#"{{"kind":"have","note":"{note}"}}"#);
    match call(addr, "POST", "/posts", ip, &body) {
        Some((201, body)) => {
            let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            v["id"].as_str().map(String::from)
        }
        _ => None,
    }
}

/// One mount, load, cut, remount and check: (acknowledged, lost).
///
/// The load runs `conns` concurrent writers for `secs`; then they stop and
/// `TAIL` creates are acknowledged one by one, one more is left in flight,
/// and the power is cut. Why the tail: under load the writer spends much
/// of its time in WAL checkpoints (each starts with an fsync of the WAL),
/// so a cut at a random moment often finds every acknowledged write
/// synced even under NORMAL, and the test could not tell NORMAL from FULL
/// (as a CI run on a slower disk showed: 3,848 acknowledged, 0 lost). The
/// tail's writes are the ones only `synchronous=FULL` protects.
fn run_once(o: &Opts) -> Result<(usize, usize), String> {
    let (disk, mnt) = (o.work.join("disk"), o.work.join("mnt"));
    unmount(&mnt);
    let _ = std::fs::remove_dir_all(&o.work);
    std::fs::create_dir_all(&disk).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&mnt).map_err(|e| e.to_string())?;
    let mnt = mnt.canonicalize().map_err(|e| e.to_string())?;
    let db = mnt.join("list.db");

    let mut fs = mount_child(&disk, &mnt)?;
    let mut server = serve(o, &db)?;
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let record = |acked: &Mutex<Vec<String>>, id: String| {
        acked.lock().unwrap_or_else(|p| p.into_inner()).push(id)
    };
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..o.conns)
        .map(|w| {
            let (acked, stop, addr) = (acked.clone(), stop.clone(), server.addr.clone());
            std::thread::spawn(move || {
                let mut i = 0u32;
                // Bounded: by the stop flag, and by the first failure.
                while !stop.load(Ordering::SeqCst) && i < 1_000_000 {
                    let ip = format!("10.{w}.{}.{}", (i >> 8) & 255, i & 255);
                    let Some(id) = create(&addr, &ip, &format!("power {w} {i}")) else {
                        break;
                    };
                    i += 1;
                    record(&acked, id);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(o.secs));
    stop.store(true, Ordering::SeqCst);
    for w in writers {
        let _ = w.join();
    }
    for t in 0..TAIL {
        let id = create(&server.addr, &format!("10.254.0.{t}"), &format!("tail {t}"))
            .ok_or("a tail create was not answered 201")?;
        record(&acked, id);
    }
    let in_flight = {
        let (acked, addr) = (acked.clone(), server.addr.clone());
        std::thread::spawn(move || {
            if let Some(id) = create(&addr, "10.254.1.0", "in flight") {
                record(&acked, id);
            }
        })
    };
    std::thread::sleep(Duration::from_millis(1));
    // The cut: the filesystem dies, with everything unsynced.
    let _ = fs.kill();
    let _ = fs.wait();
    let _ = in_flight.join();
    let _ = server.child.kill();
    let _ = server.child.wait();
    unmount(&mnt);
    let acked = acked.lock().unwrap_or_else(|p| p.into_inner()).clone();

    // Power back: what the disk kept, the server restarted on it.
    let mut fs = mount_child(&disk, &mnt)?;
    let mut server = serve(o, &db)?;
    let mut lost = 0;
    for id in &acked {
        match call(
            &server.addr,
            "GET",
            &format!("/posts/{id}"),
            "10.255.0.1",
            "",
        ) {
            Some((200, _)) => {}
            Some((404, _)) => lost += 1,
            other => return Err(format!("GET /posts/{id} after the restart: {other:?}")),
        }
    }
    let _ = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status();
    let _ = server.child.wait();
    let integrity: String = rusqlite::Connection::open(&db)
        .and_then(|c| c.query_row("PRAGMA integrity_check", [], |r| r.get(0)))
        .map_err(|e| format!("integrity_check: {e}"))?;
    unmount(&mnt);
    let _ = fs.wait();
    println!(
        "synchronous={}: {} creates answered 201 ({} concurrent connections for {} s, then {TAIL} one by one), then the cut; after restart {} there, {lost} lost; integrity_check {integrity}",
        o.synchronous,
        acked.len(),
        o.conns,
        o.secs,
        acked.len() - lost,
    );
    if integrity != "ok" {
        return Err("the database is damaged".into());
    }
    if acked.is_empty() {
        return Err("no write was acknowledged before the cut".into());
    }
    Ok((acked.len(), lost))
}
