//! `needhave-bench`: Needhave's benchmarks and fault checks.
//!
//!     needhave-bench all     [--needhave BIN] [--work DIR] [--quick]   the README table
//!                            [--durable]   only round trips, reads, writes and fsyncs
//!     needhave-bench faults  [--needhave BIN] [--work DIR] [--seconds 10]
//!                            mixed load + rows == 201s + limits, then kill -9 mid-write
//!     needhave-bench group-sweep [--needhave BIN] [--work DIR] [--rounds 3] [--secs 2]
//!                            [--conns 1,8,64] [--caps 1,4,16,64,256,1024] [--waits 0,100,500,2000]
//!                            where a group commit should close (bench/group-sweep.sh)
//!     needhave-bench before-after --baseline BIN [--needhave BIN] [--work DIR] [--rounds 3] [--secs 5]
//!                            [--io-secs SECS] [--prefixes "1 2 3 4 5 6 7 8;1 2;none"]
//!                            the durable create + first reply flow (also this build with its
//!                            word index a no-op) and GET /posts, this build against another,
//!                            alternating; then WAL bytes and fsyncs per write under strace
//!                            (bench/before-after.sh, bench/src/before_after.rs)
//!     needhave-bench write-instructions [--baseline BIN] [--needhave BIN] [--work DIR]
//!                            [--conns 8] [--secs 10] [--prefixes …]
//!                            callgrind's instructions per write answered 201, each server
//!     needhave-bench index-creates [--needhave BIN] [--baseline BIN] [--work DIR] [--conns 1,8,64] [--rounds 5] [--secs 3]
//!                            [--notes search|ordinary]
//!                            POST /posts only, this build with its word index against it a
//!                            no-op, alternating; the median ratio at each connection count
//!                            (env BENCH_WRAP: each server under a profiler, `{side}` its run;
//!                            BENCH_PREPARE_NOW: SQL on this build's file before it starts;
//!                            BENCH_KEEP=1: each run's file is left in --work)
//!     needhave-bench metrics-cost [--needhave BIN] [--work DIR] [--rounds 15] [--secs 3]
//!                            GET /posts and durable writes, --metrics-addr on against off
//!     needhave-bench reads   [--needhave BIN] [--work DIR] [--rounds 5] [--secs 5]
//!                            GET /posts (200, and 304 with If-None-Match) against the
//!                            hello-world, alternating; medians and ranges
//!     needhave-bench read-instructions [--needhave BIN] [--work DIR] [--requests 4000] [--conns 8]
//!                            callgrind's instructions per GET /posts answered 200 and per
//!                            304, needhave serve and the same-bytes hello-world
//!     needhave-bench stall   [--needhave BIN] [--baseline "BIN [FLAGS],…"] [--work DIR] [--posts 12000]
//!                            [--rounds 3] [--secs 5] [--attackers 4] [--extra "FLAGS"]
//!                            the cheap reads' p50/p90, idle and while attackers send the
//!                            slowest searches; each server side by side (bench/src/stall.rs)
//!     needhave-bench hello   --answer F [--not-modified F]   the read baseline server:
//!                            the raw answers F (HTTP/1.1, as captured from needhave
//!                            serve), the second to any If-None-Match (bench/src/hello.rs)
//!     needhave-bench seed    --db F --posts N  seed a database directly
//!     needhave-bench search  [--work DIR] [--large 1000000] [--small 1000] [--rounds 300] [--group 16] [--creates 5] [--pgsz BYTES]
//!                            finding posts at 1 k and 1 M posts (docs/finding.md)
//!     needhave-bench search-page --db F --q WORDS [--kind K] [--limit 100] [--runs 1] [--falling 1] [--pages 1] [--live 0]
//!                            a page's statement (the first, or the `pages`th), `runs` times
//!                            (bench/search-instructions.sh; `--live 0`: without its join to
//!                            the open posts, NEEDHAVE_LIVE=0 there)
//!     needhave-bench search-seed --db F --posts N [--group 16] [--pgsz BYTES]
//!                            a file as `search` seeds it, left as written
//!     needhave-bench search-call --db F --q WORDS [--kind K] [--limit 100] [--runs 1]
//!                            the same page through the store's `find`, as `GET /posts` asks for it
//!     needhave-bench disk    [--work DIR] [--posts 300] [--after 0] [--pgsz BYTES]
//!                            what a post costs on disk against its bound, for notes
//!                            of many shapes, and at the worst size of a young list
//!                            (bench/src/disk.rs; env DISK_TABLES=1: pages by table,
//!                            DISK_KEEP=1: each case's file is left in --work)
//!     needhave-bench d1-seed --posts N --out DIR [--per-file 10000]
//!                            search's posts as SQL files for a local D1 (bench/d1-rows-read.sh)
//!
//! `bench/run` builds everything in release mode and runs `all`; `.ci/faults`
//! runs `faults` in its short form.

mod before_after;
mod check;
mod client;
mod corpus;
mod d1_seed;
mod disk;
mod hello;
mod index_off;
mod load;
// The notes tests/limits.rs measures too, and the sizes it measures them
// at, from the one file (whose per-post figures only the test reads).
#[path = "../../needhave/tests/common/notes.rs"]
#[allow(dead_code)]
mod notes;
mod procs;
mod raw;
mod read_instructions;
mod roundtrips;
mod scale;
mod search;
mod seed;
mod stall;
mod sweep;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use client::Conn;
use load::{Mode, Report};
use procs::Server;

struct Args {
    cmd: String,
    flags: HashMap<String, String>,
}

impl Args {
    fn parse() -> Args {
        let mut it = std::env::args().skip(1);
        let cmd = it.next().unwrap_or_default();
        let mut flags = HashMap::new();
        let rest: Vec<String> = it.collect();
        let mut i = 0;
        while i < rest.len() {
            let k = rest[i].trim_start_matches("--").to_string();
            let v = rest.get(i + 1).filter(|v| !v.starts_with("--")).cloned();
            i += if v.is_some() { 2 } else { 1 };
            flags.insert(k, v.unwrap_or_else(|| "true".into()));
        }
        Args { cmd, flags }
    }
    fn get(&self, k: &str) -> Option<&str> {
        self.flags.get(k).map(String::as_str)
    }
    fn num(&self, k: &str, default: u64) -> u64 {
        self.get(k).and_then(|v| v.parse().ok()).unwrap_or(default)
    }
    fn beside_me(name: &str) -> PathBuf {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join(name)))
            .unwrap_or_else(|| PathBuf::from(name))
    }
    fn needhave(&self) -> String {
        self.get("needhave")
            .map(String::from)
            .unwrap_or_else(|| Args::beside_me("needhave").to_string_lossy().into_owned())
    }
    fn work(&self) -> PathBuf {
        let dir = self
            .get("work")
            .map(PathBuf::from)
            .unwrap_or_else(|| Args::beside_me("bench-work"));
        let _ = std::fs::create_dir_all(&dir);
        dir
    }
}

fn fresh_db(work: &Path, name: &str) -> String {
    let path = work.join(name).to_string_lossy().into_owned();
    for suffix in ["", "-wal", "-shm", ".salt"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
    path
}

fn main() -> ExitCode {
    let args = Args::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let result = match args.cmd.as_str() {
        "all" => rt.block_on(all(&args)),
        "faults" => rt.block_on(faults(&args)),
        "group-sweep" => rt.block_on(sweep::sweep(&args)),
        "before-after" => rt.block_on(before_after::run(&args)),
        "write-instructions" => rt.block_on(before_after::instructions(&args)),
        "index-creates" => rt.block_on(before_after::index_creates(&args)),
        "metrics-cost" => rt.block_on(metrics_cost(&args)),
        "reads" => rt.block_on(reads(&args)),
        "read-instructions" => rt.block_on(read_instructions::run(&args)),
        "stall" => rt.block_on(stall::run(stall::Options {
            needhave: args.needhave(),
            baselines: args
                .get("baseline")
                .map(|b| b.split(',').map(|s| s.trim().to_string()).collect())
                .unwrap_or_default(),
            work: args.work(),
            posts: args.num("posts", 12_000),
            rounds: args.num("rounds", 3),
            secs: args.num("secs", 5),
            attackers: args.num("attackers", 4) as usize,
            extra: args
                .get("extra")
                .map(|e| e.split_whitespace().map(String::from).collect())
                .unwrap_or_default(),
        })),
        "hello" => {
            let addr: SocketAddr = args
                .get("addr")
                .unwrap_or("127.0.0.1:0")
                .parse()
                .expect("--addr");
            let answers = hello::Answer::read(args.get("answer").unwrap_or("")).and_then(|ok| {
                let not_modified = args.get("not-modified").map(hello::Answer::read).transpose()?;
                Ok((ok, not_modified))
            });
            answers.and_then(|(ok, not_modified)| {
                rt.block_on(hello::serve(addr, ok, not_modified))
                    .map_err(|e| e.to_string())
            })
        }
        "disk" => rt.block_on(disk::run(
            &args.work(),
            args.num("after", 0),
            args.num("posts", 300).max(1),
            args.get("pgsz").and_then(|v| v.parse().ok()),
        )),
        "search" => rt.block_on(search::run(
            &args.work(),
            args.num("large", 1_000_000),
            args.num("small", 1_000),
            args.num("rounds", 300) as usize,
            args.num("group", search::SEED_GROUP),
            args.num("creates", 5),
            args.get("pgsz").and_then(|v| v.parse().ok()),
        )),
        "search-page" => search::page_statement(
            args.get("db").unwrap_or("search-1000000.db"),
            args.get("q").unwrap_or("gpu"),
            args.get("kind").and_then(needhave::handlers::posts::Kind::parse),
            args.num("limit", 100) as u32,
            args.num("runs", 1),
            args.get("falling").is_some_and(|v| v != "0"),
            args.num("pages", 1),
            args.get("live").is_none_or(|v| v != "0"),
        ),
        "search-seed" => search::seed_grouped(
            args.get("db").unwrap_or("search.db"),
            args.num("posts", 1000),
            args.num("group", search::SEED_GROUP),
            args.get("pgsz").and_then(|v| v.parse().ok()),
        )
        .map(drop),
        "search-call" => rt.block_on(search::page_call(
            args.get("db").unwrap_or("search-1000000.db"),
            args.get("q").unwrap_or("gpu"),
            args.get("kind").and_then(needhave::handlers::posts::Kind::parse),
            args.num("limit", 100) as u32,
            args.num("runs", 1),
        )),
        "seed" => seed::seed(args.get("db").unwrap_or("seed.db"), args.num("posts", 1000)),
        "d1-seed" => d1_seed::write(
            Path::new(args.get("out").unwrap_or("d1-seed")),
            args.num("posts", 100_000),
            args.num("per-file", 10_000).max(1),
        )
        .map(|files| println!("{}", files.join("\n"))),
        _ => Err(
            "usage: needhave-bench all|faults|group-sweep|hello|search|stall|disk|seed|d1-seed (see the top of bench/src/main.rs)".into(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("needhave-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------- reads

/// `GET /posts` of 100 posts against the hyper hello-world serving the same
/// bytes, and the 304 of a client that holds the current tag against the
/// hello-world's 304: wrk -t2 -c64, the two alternating in each round (who
/// goes first alternating too); medians and ranges of the rounds.
async fn reads(args: &Args) -> Result<(), String> {
    let bin = args.needhave();
    let work = args.work();
    let rounds = args.num("rounds", 5);
    let secs = args.num("secs", 5);
    let me = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .to_string_lossy()
        .into_owned();
    let (server, hello, etag, _) = list_and_hello(&bin, &me, &work, "reads").await?;
    let inm = format!("If-None-Match: {etag}");
    // [ours, hello] × [200, 304]
    let mut runs: [[Vec<f64>; 2]; 2] = Default::default();
    let mut errors = 0;
    for r in 0..rounds {
        for (kind, headers) in [(0, vec![]), (1, vec![inm.as_str()])] {
            let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
            for which in order {
                let addr = if which == 0 { server.addr } else { hello.addr };
                let w = procs::wrk_with(&format!("http://{addr}/posts"), 64, secs, &headers)?;
                errors += w.non_2xx + w.socket_errors;
                runs[kind][which].push(w.rps);
            }
            eprintln!(
                "round {r}, {}: needhave {:.0}, hello {:.0} req/s",
                if kind == 0 { 200 } else { 304 },
                runs[kind][0][r as usize],
                runs[kind][1][r as usize]
            );
        }
    }
    server.stop();
    hello.stop();
    let summary = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    println!(
        "| `GET /posts`, wrk -t2 -c64 ({rounds} rounds of {secs} s: median (min–max)) | needhave | hello-world | ratio of medians | per-round ratios |"
    );
    println!("|---|---|---|---|---|");
    for (kind, label) in [(0, "200, 100 posts"), (1, "304, If-None-Match")] {
        let ratios: Vec<String> = runs[kind][0]
            .iter()
            .zip(&runs[kind][1])
            .map(|(a, b)| format!("{:.2}", a / b))
            .collect();
        let (a, a_lo, a_hi) = summary(&mut runs[kind][0]);
        let (b, b_lo, b_hi) = summary(&mut runs[kind][1]);
        println!(
            "| {label} | {a:.0} ({a_lo:.0}–{a_hi:.0}) | {b:.0} ({b_lo:.0}–{b_hi:.0}) | {:.2}× | {} |",
            a / b,
            ratios.join(", ")
        );
    }
    if errors > 0 {
        return Err(format!(
            "{errors} errors (non-2xx/3xx or socket) during the runs"
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------- metrics

/// What `--metrics-addr` costs: reads (wrk on `GET /posts`, 100 posts) and
/// durable writes (64 connections of creates, each acknowledged after its
/// fsync), the server with the metrics listener on and off, alternating in
/// each round (which goes first alternates too) so that the machine's
/// drift falls on both.
async fn metrics_cost(args: &Args) -> Result<(), String> {
    let bin = args.needhave();
    let work = args.work();
    // Many short rounds: on two cores one round of either side swings by
    // 15 % or more on its own (the whole machine's pace changes, metrics or
    // not), so a median of three says little and one of fifteen is steady.
    let rounds = args.num("rounds", 15);
    let secs = args.num("secs", 3);
    let read_db = fresh_db(&work, "metrics-read.db");
    seed::seed(&read_db, 100)?;
    let mut reads = [Vec::new(), Vec::new()];
    let mut writes = [Vec::new(), Vec::new()];
    for r in 0..rounds {
        let order = if r % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for on in order {
            let extra: &[&str] = if on {
                &["--metrics-addr", "127.0.0.1:0"]
            } else {
                &[]
            };
            let server = Server::needhave_with(&bin, &read_db, extra)?;
            let w = procs::wrk(&format!("http://{}/posts", server.addr), 64, secs)?;
            server.stop();
            let write_db = fresh_db(&work, "metrics-write.db");
            let server = Server::needhave_with(&bin, &write_db, extra)?;
            let report = load::run(load::Options {
                server: server.addr,
                mode: Mode::Writes,
                conns: 64,
                duration: Duration::from_secs(secs),
                ip_base: (r as u32 * 2 + u32::from(on)) * 200_000,
                stop: Arc::new(AtomicBool::new(false)),
            })
            .await;
            server.stop();
            let i = usize::from(on);
            reads[i].push(w.rps);
            writes[i].push(report.acked_rate());
            eprintln!(
                "round {r}, metrics {}: GET /posts {:.0} req/s, writes {:.0}/s",
                if on { "on" } else { "off" },
                w.rps,
                report.acked_rate()
            );
        }
    }
    // The median, and the range around it: the reader sees the noise.
    let summary = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    println!(
        "| load ({rounds} rounds of {secs} s: median (min–max)) | metrics off | metrics on | on / off |"
    );
    println!("|---|---|---|---|");
    for (label, runs) in [
        ("GET /posts, 100 posts, wrk -t2 -c64, req/s", &mut reads),
        ("durable creates, 64 connections, 201/s", &mut writes),
    ] {
        let (off, off_lo, off_hi) = summary(&mut runs[0]);
        let (on, on_lo, on_hi) = summary(&mut runs[1]);
        println!(
            "| {label} | {off:.0} ({off_lo:.0}–{off_hi:.0}) | {on:.0} ({on_lo:.0}–{on_hi:.0}) | {:.3} |",
            on / off
        );
    }
    Ok(())
}

// ---------------------------------------------------------------- faults

/// The mixed load on a fresh database, then the rows against the 201s.
async fn mixed(
    bin: &str,
    work: &Path,
    secs: u64,
    log: &mut String,
) -> Result<(Report, Option<u64>), String> {
    let db = fresh_db(work, "mixed.db");
    let server = Server::needhave(bin, &db)?;
    let report = load::run(load::Options {
        server: server.addr,
        mode: Mode::Mixed,
        conns: 64,
        duration: Duration::from_secs(secs),
        ip_base: 0,
        stop: Arc::new(AtomicBool::new(false)),
    })
    .await;
    let rss = server.peak_rss_kib();
    server.stop();
    let outcome = check::check(&db, &report.ledger, true, 0);
    *log += &format!(
        "mixed load, {secs} s, 64 connections:\n{}",
        report.summary()
    );
    *log += &format!(
        "  rows after: {} posts, {} first, {} accept, {} later; {}\n",
        outcome.rows[0],
        outcome.rows[1],
        outcome.rows[2],
        outcome.rows[3],
        if outcome.ok() {
            "rows == 201s, integrity ok, limits hold".to_string()
        } else {
            outcome.failures.join("; ")
        }
    );
    let mut failures = outcome.failures;
    if report.server_errors > 0 {
        failures.push(format!("{} 5xx answers", report.server_errors));
    }
    if !report.unexpected.is_empty() {
        failures.push(format!("{} unexpected answers", report.unexpected.len()));
    }
    if report.transport_errors > 0 {
        failures.push(format!("{} transport errors", report.transport_errors));
    }
    if report.count("accept", 201) == 0
        || report.count("thread_write", 201) == 0
        || report.count("mcp", 200) == 0
    {
        failures.push("the mixed load did not reach accepts, thread writes and MCP".into());
    }
    if failures.is_empty() {
        Ok((report, rss))
    } else {
        Err(format!("mixed load failed: {}", failures.join("; ")))
    }
}

/// Write load, kill -9 halfway, restart on the same file: every 201 is
/// there, integrity holds, the limits hold.
async fn crash(bin: &str, work: &Path, secs: u64, log: &mut String) -> Result<(), String> {
    let db = fresh_db(work, "crash.db");
    let server = Server::needhave(bin, &db)?;
    let addr = server.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let load = tokio::spawn(load::run(load::Options {
        server: addr,
        mode: Mode::Writes,
        conns: 64,
        duration: Duration::from_secs(secs * 4),
        ip_base: 0,
        stop: stop.clone(),
    }));
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::SeqCst);
    server.kill9();
    let report = load.await.map_err(|e| e.to_string())?;
    *log += &format!(
        "crash test: write load, kill -9 after {secs} s:\n{}",
        report.summary()
    );
    let mut failures = Vec::new();
    if report.ledger.posts.is_empty() {
        failures.push("no write was answered before the kill".to_string());
    }
    // Restart on the same file.
    let server = Server::needhave(bin, &db)?;
    // The per-IP limit survives: an address that created 10 posts gets 429.
    let mut per_ip: HashMap<std::net::Ipv4Addr, usize> = HashMap::new();
    for (_, ip) in &report.ledger.posts {
        *per_ip.entry(*ip).or_default() += 1;
    }
    if let Some((ip, _)) = per_ip.iter().find(|(_, n)| **n >= 10) {
        let mut c = Conn::connect(server.addr, *ip)
            .await
            .map_err(|e| e.to_string())?;
        let body = serde_json::json!({"kind": "need", "note": "one more after the crash"});
        let (status, v) = c
            .json("POST", "/posts", Some(&body))
            .await
            .map_err(|e| e.to_string())?;
        if status != 429 {
            failures.push(format!(
                "after restart, an address with 10 posts got {status} {v}"
            ));
        }
    }
    // Every answered post is served again.
    let mut c = Conn::connect(server.addr, "127.0.0.1".parse().expect("ip"))
        .await
        .map_err(|e| e.to_string())?;
    let mut served = 0;
    for (id, _) in report.ledger.posts.iter().rev().take(200) {
        let (status, _) = c
            .send("GET", &format!("/posts/{id}"), None)
            .await
            .map_err(|e| e.to_string())?;
        served += usize::from(status == 200);
    }
    let asked = report.ledger.posts.len().min(200);
    if served != asked {
        failures.push(format!(
            "after restart, {served} of the last {asked} answered posts are served"
        ));
    }
    server.stop();
    let outcome = check::check(&db, &report.ledger, false, 64);
    *log += &format!(
        "  after restart: {} posts, {} first messages in the file ({} and {} answered 201); {}\n",
        outcome.rows[0],
        outcome.rows[1],
        report.ledger.posts.len(),
        report.ledger.firsts.len(),
        if outcome.ok() && failures.is_empty() {
            "every 201 is there, integrity_check ok, limits hold".to_string()
        } else {
            outcome.failures.join("; ")
        }
    );
    failures.extend(outcome.failures);
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("crash test failed: {}", failures.join("; ")))
    }
}

async fn faults(args: &Args) -> Result<(), String> {
    let bin = args.needhave();
    let work = args.work();
    let secs = args.num("seconds", 10);
    let mut log = String::new();
    let m = mixed(&bin, &work, secs, &mut log).await;
    let c = crash(&bin, &work, (secs / 2).max(2), &mut log).await;
    print!("{log}");
    m?;
    c?;
    println!("faults: 2 passed, 0 failed");
    Ok(())
}

// ---------------------------------------------------------------- the table

struct Table {
    rows: Vec<[String; 6]>,
    commands: Vec<String>,
}

impl Table {
    fn row(
        &mut self,
        what: &str,
        ours: String,
        base: String,
        ratio: String,
        goal: &str,
        met: Option<bool>,
    ) {
        let met = match met {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "—",
        };
        self.rows
            .push([what.into(), ours, base, ratio, goal.into(), met.into()]);
    }
    fn print(&self) {
        println!("\n| measure | needhave | baseline | ratio | goal | met |");
        println!("|---|---|---|---|---|---|");
        for r in &self.rows {
            println!("| {} |", r.join(" | "));
        }
    }
}

/// Runs the write flow at `conns` connections for `secs` against a server
/// under `strace -f -c -e trace=fsync,fdatasync`, stops it cleanly, and
/// returns (fsync + fdatasync calls, writes answered 201).
async fn fsyncs_per_write(
    bin: &str,
    db: &str,
    work: &Path,
    conns: usize,
    secs: u64,
) -> Result<(u64, u64), String> {
    let out = work.join(format!("strace-{conns}.txt"));
    let strace = strace_args(&out);
    let wrapper: Vec<&str> = std::iter::once("strace")
        .chain(strace.iter().map(String::as_str))
        .collect();
    let server = Server::needhave_under(&wrapper, bin, db)
        .map_err(|e| format!("{e} (apt-get install strace)"))?;
    let report = load::run(load::Options {
        server: server.addr,
        mode: Mode::Writes,
        conns,
        duration: Duration::from_secs(secs),
        ip_base: 900_000 + conns as u32 * 10_000,
        stop: Arc::new(AtomicBool::new(false)),
    })
    .await;
    server.stop();
    let acked: u64 = report
        .statuses
        .iter()
        .filter(|((_, status), _)| *status == 201)
        .map(|(_, n)| n)
        .sum();
    Ok((strace_fsyncs(&out)?, acked))
}

/// `strace` counting the fsync and fdatasync calls of a process and its
/// threads into `out` (`--seccomp-bpf`: only those calls stop it).
fn strace_args(out: &Path) -> Vec<String> {
    [
        "-f",
        "--seccomp-bpf",
        "-c",
        "-e",
        "trace=fsync,fdatasync",
        "-o",
        &out.to_string_lossy(),
    ]
    .map(String::from)
    .to_vec()
}

/// The fsync + fdatasync calls in a `strace -c` summary.
fn strace_fsyncs(out: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(out).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            matches!(words.last(), Some(&"fsync") | Some(&"fdatasync"))
                .then(|| words.get(3)?.parse::<u64>().ok())
                .flatten()
        })
        .sum())
}

/// `needhave serve` on a fresh file of 100 posts, and the hyper
/// hello-world (`me hello`) serving the very bytes its `GET /posts`
/// answered, the 200 and the 304 of a client holding the current tag,
/// each captured from a live answer: the two sides of every read
/// comparison, the tag, and the body's length. Refuses when the two
/// servers' answers differ in any byte but `date` (see `hello.rs`).
async fn list_and_hello(
    bin: &str,
    me: &str,
    work: &Path,
    name: &str,
) -> Result<(Server, Server, String, usize), String> {
    let db = fresh_db(work, &format!("{name}.db"));
    seed::seed(&db, 100)?;
    let server = Server::needhave(bin, &db)?;
    let ok = hello::exchange(server.addr, "/posts", "")?;
    let (etag, body_len) = {
        let text = String::from_utf8_lossy(&ok);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let tag = head
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("etag")
                    .then(|| value.trim().to_string())
            })
            .ok_or("GET /posts answered no ETag")?;
        if !head.starts_with("HTTP/1.1 200 ") {
            return Err(format!("GET /posts answered {:?}", head.lines().next()));
        }
        (tag, body.len())
    };
    let inm = format!("If-None-Match: {etag}\r\n");
    let not_modified = hello::exchange(server.addr, "/posts", &inm)?;
    if !not_modified.starts_with(b"HTTP/1.1 304 ") {
        return Err(format!(
            "GET /posts with {inm:?} answered {:?}",
            String::from_utf8_lossy(&not_modified).lines().next()
        ));
    }
    let file = |kind: &str, raw: &[u8]| -> Result<String, String> {
        let path = work.join(format!("{name}-{kind}.http"));
        std::fs::write(&path, raw).map_err(|e| e.to_string())?;
        Ok(path.to_string_lossy().into_owned())
    };
    let (ok_file, nm_file) = (file("200", &ok)?, file("304", &not_modified)?);
    let hello = Server::start(
        me,
        &["hello", "--answer", &ok_file, "--not-modified", &nm_file],
    )?;
    hello::same_bytes(server.addr, hello.addr, "/posts", "")?;
    hello::same_bytes(server.addr, hello.addr, "/posts", &inm)?;
    Ok((server, hello, etag, body_len))
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or("?".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

async fn all(args: &Args) -> Result<(), String> {
    let bin = args.needhave();
    let work = args.work();
    let quick = args.get("quick").is_some();
    let round = if quick { 2 } else { 5 };
    let rounds = if quick { 1 } else { 3 };
    let mut t = Table {
        rows: vec![],
        commands: vec![],
    };
    let mut log = String::new();
    let mut failed = Vec::new();
    let me = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .to_string_lossy()
        .into_owned();

    // Round trips.
    eprintln!("== round trips");
    for (call, status, n) in roundtrips::count().await {
        let list = call.contains("(list)");
        let goal = if list { "1" } else { "≤ 1" };
        t.row(
            &format!("round trips: {call} ({status})"),
            n.to_string(),
            "".into(),
            "".into(),
            goal,
            Some(n <= 1),
        );
    }

    // Reads: wrk on GET /posts (100 posts) against hello-world with a body of the same size.
    eprintln!("== reads");
    let (server, hello, etag, body_len) = list_and_hello(&bin, &me, &work, "read").await?;
    let (mut ours, mut base) = (0.0, 0.0);
    let mut read_errors = 0;
    for _ in 0..rounds {
        let a = procs::wrk(&format!("http://{}/posts", server.addr), 64, round)?;
        let b = procs::wrk(&format!("http://{}/posts", hello.addr), 64, round)?;
        read_errors += a.non_2xx + a.socket_errors;
        ours += a.rps;
        base += b.rps;
    }
    // The conditional read: the tag the client holds, answered 304.
    let inm = format!("If-None-Match: {etag}");
    let (mut ours_304, mut base_304) = (0.0, 0.0);
    for _ in 0..rounds {
        let a = procs::wrk_with(&format!("http://{}/posts", server.addr), 64, round, &[&inm])?;
        let b = procs::wrk_with(&format!("http://{}/posts", hello.addr), 64, round, &[&inm])?;
        read_errors += a.non_2xx + a.socket_errors;
        ours_304 += a.rps;
        base_304 += b.rps;
    }
    let read_rss = server.peak_rss_kib();
    server.stop();
    hello.stop();
    let ratio = ours / base;
    t.row(
        &format!("read: GET /posts, 100 posts ({body_len} B), wrk -t2 -c64, req/s"),
        format!("{:.0}", ours / rounds as f64),
        format!("{:.0} (hyper hello-world)", base / rounds as f64),
        format!("{ratio:.2}×"),
        "≥ 0.68×",
        Some(ratio >= 0.68 && read_errors == 0),
    );
    let ratio = ours_304 / base_304;
    t.row(
        "read: GET /posts with If-None-Match (304), wrk -t2 -c64, req/s",
        format!("{:.0}", ours_304 / rounds as f64),
        format!("{:.0} (hyper hello-world, 304)", base_304 / rounds as f64),
        format!("{ratio:.2}×"),
        "report",
        None,
    );

    // Writes: the durable create + first reply flow against raw rusqlite
    // one-row transactions, NORMAL (not durable: what the server was) and
    // FULL (durable, one fsync each), the three alternating in each round:
    // fsync cost on a shared disk swings with other I/O, so each round's
    // baselines are reported beside the ratio.
    eprintln!("== writes");
    let db = fresh_db(&work, "write.db");
    let server = Server::needhave(&bin, &db)?;
    let (mut ours, mut normal, mut full) = (0.0, 0.0, 0.0);
    let mut per_round = Vec::new();
    let mut write_errors = 0;
    for r in 0..rounds {
        let report = load::run(load::Options {
            server: server.addr,
            mode: Mode::Writes,
            conns: 64,
            duration: Duration::from_secs(round),
            ip_base: r as u32 * 200_000,
            stop: Arc::new(AtomicBool::new(false)),
        })
        .await;
        write_errors +=
            report.server_errors + report.transport_errors + report.unexpected.len() as u64;
        let raw_db = work.join("raw.db").to_string_lossy().into_owned();
        let n = raw::run(&raw_db, Duration::from_secs(round), "NORMAL")?;
        let f = raw::run(&raw_db, Duration::from_secs(round), "FULL")?;
        per_round.push(format!(
            "{:.0} vs NORMAL {n:.0} / FULL {f:.0}",
            report.rate()
        ));
        ours += report.rate();
        normal += n;
        full += f;
    }
    let write_rss = server.peak_rss_kib();
    server.stop();
    let ratio = ours / normal;
    t.row(
        "write, durable: create post + first reply, 64 connections, req/s",
        format!("{:.0}", ours / rounds as f64),
        format!(
            "{:.0} (raw rusqlite rows/s, 1 txn each, WAL + NORMAL)",
            normal / rounds as f64
        ),
        format!("{ratio:.2}×"),
        "≥ 0.58×",
        Some(ratio >= 0.58 && write_errors == 0),
    );
    t.row(
        "write, durable, against raw FULL (per round: ours vs NORMAL / FULL)",
        format!("{:.0}", ours / rounds as f64),
        format!(
            "{:.0} (raw rusqlite rows/s, 1 txn each, WAL + FULL); rounds: {}",
            full / rounds as f64,
            per_round.join("; ")
        ),
        format!("{:.2}×", ours / full),
        "report",
        None,
    );

    // fsyncs per acknowledged write, counted by strace around the server
    // (its whole run: start, the load, the clean stop's checkpoint).
    eprintln!("== fsyncs per write");
    for conns in [1usize, 8, 64] {
        let db = fresh_db(&work, &format!("fsync-{conns}.db"));
        let (fsyncs, acked) = fsyncs_per_write(&bin, &db, &work, conns, round).await?;
        let per = fsyncs as f64 / acked.max(1) as f64;
        t.row(
            &format!("fsyncs per acknowledged write, {conns} connection(s) (strace -c)"),
            format!("{per:.3}"),
            format!("{fsyncs} fsync+fdatasync / {acked} writes answered 201"),
            "".into(),
            if conns == 64 { "≤ 0.25" } else { "report" },
            (conns == 64).then_some(per <= 0.25 && acked > 0),
        );
    }

    // `--durable`: the durability rows only (round trips, reads, writes,
    // fsyncs), for a rerun of them alone.
    if args.get("durable").is_some() {
        t.print();
        return Ok(());
    }

    // Scale.
    eprintln!("== scale (seeding)");
    let small = fresh_db(&work, "scale-1k.db");
    let big_n = if quick { 100_000 } else { 1_000_000 };
    let big = fresh_db(&work, "scale-big.db");
    seed::seed(&small, 1000)?;
    seed::seed(&big, big_n)?;
    eprintln!("== scale (measuring)");
    let sa = Server::needhave(&bin, &small)?;
    let sb = Server::needhave(&bin, &big)?;
    let samples = if quick { 300 } else { 2000 };
    let (a, b) = scale::run((sa.addr, 1000), (sb.addr, big_n), samples, 1).await;
    sa.stop();
    sb.stop();
    for f in a.failures.iter().chain(&b.failures).take(5) {
        failed.push(format!("scale: {f}"));
    }
    for (i, op) in scale::OPS.iter().enumerate() {
        let (a50, a99) = (
            scale::percentile(&a.samples[i], 0.5),
            scale::percentile(&a.samples[i], 0.99),
        );
        let (b50, b99) = (
            scale::percentile(&b.samples[i], 0.5),
            scale::percentile(&b.samples[i], 0.99),
        );
        let (r50, r99) = (b50 / a50, b99 / a99);
        t.row(
            &format!(
                "scale: {op}, p50 / p99 µs, {} vs 1 k posts",
                if quick { "100 k" } else { "1 M" }
            ),
            format!("{b50:.0} / {b99:.0}"),
            format!("{a50:.0} / {a99:.0}"),
            format!("{r50:.2}× / {r99:.2}×"),
            "≤ 1.3×",
            Some(r50 <= 1.3 && r99 <= 1.3),
        );
    }

    // Load and faults (long form), and the memory under them.
    eprintln!("== mixed load");
    let mixed_secs = if quick { 10 } else { 60 };
    let mixed_rss = match mixed(&bin, &work, mixed_secs, &mut log).await {
        Ok((report, rss)) => {
            t.row(
                &format!("load: {mixed_secs} s mixed, 64 connections"),
                format!(
                    "{:.0} req/s, 0 5xx, 0 transport errors, rows == 201s",
                    report.rate()
                ),
                "".into(),
                "".into(),
                "0 5xx / 0 errors",
                Some(true),
            );
            rss
        }
        Err(e) => {
            t.row(
                "load: mixed",
                e.clone(),
                "".into(),
                "".into(),
                "0 5xx / 0 errors",
                Some(false),
            );
            failed.push(e);
            None
        }
    };
    eprintln!("== crash");
    match crash(&bin, &work, if quick { 5 } else { 15 }, &mut log).await {
        Ok(()) => t.row(
            "crash: kill -9 mid-write, restart",
            "every 201 there, integrity ok, limits hold".into(),
            "".into(),
            "".into(),
            "all",
            Some(true),
        ),
        Err(e) => {
            t.row(
                "crash: kill -9 mid-write, restart",
                e.clone(),
                "".into(),
                "".into(),
                "all",
                Some(false),
            );
            failed.push(e);
        }
    }
    let peak = [read_rss, write_rss, mixed_rss].into_iter().flatten().max();
    t.row(
        "memory: peak RSS of needhave serve (reads / writes / mixed)",
        format!(
            "{} / {} / {}",
            mib(read_rss),
            mib(write_rss),
            mib(mixed_rss)
        ),
        "".into(),
        "".into(),
        "≤ 40 MiB",
        peak.map(|p| p <= 40 * 1024),
    );

    // Worker size: the other engineer's script, when it is there.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("worker-size.sh");
    if script.exists() {
        eprintln!("== worker size (bench/worker-size.sh)");
        let out = std::process::Command::new("bash").arg(&script).output();
        match out {
            Ok(o) if o.status.success() => {
                let text = String::from_utf8_lossy(&o.stdout).into_owned();
                let ratio = text
                    .lines()
                    .find(|l| l.contains("yardstick:"))
                    .unwrap_or("?")
                    .to_string();
                let ours = text
                    .lines()
                    .find(|l| l.starts_with("needhave"))
                    .map(|l| l.split_whitespace().rev().take(2).collect::<Vec<_>>())
                    .map(|v| format!("{} B raw, {} B gzip", v[1], v[0]))
                    .unwrap_or_default();
                t.row(
                    "worker size: wasm (bench/worker-size.sh)",
                    ours,
                    "workers-rs + D1 baseline".into(),
                    ratio,
                    "",
                    None,
                );
                log += &format!("bench/worker-size.sh:\n{text}");
            }
            Ok(o) => {
                t.row(
                    "worker size: wasm raw / gzip",
                    "not built (bench/worker-size.sh failed)".into(),
                    "".into(),
                    "".into(),
                    "",
                    None,
                );
                log += &format!(
                    "bench/worker-size.sh failed:\n{}",
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            Err(e) => {
                t.row(
                    "worker size: wasm raw / gzip",
                    format!("not built ({e})"),
                    "".into(),
                    "".into(),
                    "",
                    None,
                );
            }
        }
    } else {
        t.row(
            "worker size: wasm raw / gzip",
            "not built".into(),
            "not built".into(),
            "".into(),
            "",
            None,
        );
        t.commands
            .push("worker size: bench/worker-size.sh is not in the tree yet".into());
    }

    println!("{log}");
    t.print();
    for c in &t.commands {
        println!("{c}");
    }
    if !failed.is_empty() {
        return Err(failed.join("\n"));
    }
    Ok(())
}
