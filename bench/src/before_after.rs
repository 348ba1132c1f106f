//! This build against another (`--baseline`) on the two paths every write
//! and read takes, in one run (`bench/before-after.sh`):
//!
//! - the durable create + first reply flow (64 connections, a fresh
//!   database each run), for three servers: the baseline, this build, and
//!   this build on a file whose word index is a no-op (below), so that what
//!   the word index costs and what the rest of the write path costs are
//!   told apart;
//! - `GET /posts` of 100 posts (wrk, 64 connections), baseline and this
//!   build.
//!
//! The servers alternate, who goes first rotating each round, so that a
//! noisy neighbour costs them alike. Each write run also reads the server's
//! `/proc/PID/io` (`write_bytes`: the bytes it handed the page cache for
//! the disk, the WAL's and the checkpoints').
//!
//! Then one run of each under `strace` (`--io-secs`, 0 to skip): the bytes
//! written into the WAL and into the database file (each `write`/`pwrite64`
//! by the path of its descriptor, `strace -y`), and the fsyncs, per write
//! answered 201. strace stops the writer at every one of those calls, so
//! its groups are not the timed runs' groups: the figures compare the
//! servers with each other, under the same strace.
//!
//! The word index made a no-op: before the server starts, the file is made
//! at this build's schema version (by this build's own store, so the
//! server's open finds it current and migrates nothing) and `post_words` is
//! replaced by a plain table with a trigger that drops every insert
//! (`RAISE(IGNORE)`): the create batch runs the same statements, and its
//! index statement writes nothing. Black-box: no switch in the server.
//! `--prefixes "1 2 3 4 5 6 7 8;1 2;none"` adds a server per entry, this
//! build on a file whose word index is made again with those FTS5 prefix
//! indexes (the rest of its definition as schema.sql has it): what the
//! prefix indexes cost a write.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::load::{self, Mode, Notes};
use crate::procs::{self, Server};
use crate::{fresh_db, seed, Args};

/// One server of the comparison: which build, and how its file is made
/// before it starts.
#[derive(Clone)]
struct Side {
    label: String,
    /// The server's binary.
    bin: String,
    /// What is done to a fresh file at this build's schema before the
    /// server opens it (`None`: the server makes the file itself).
    prepare: Option<Prepare>,
}

/// How a side's file is changed before its server starts.
#[derive(Clone)]
enum Prepare {
    /// The word index made a no-op (`index_off::turn_off`), its cold part
    /// too where the build has one. A variant of its own, so that SQL handed
    /// in (`BENCH_PREPARE_NOW`) never turns the cold part off by matching
    /// the text.
    IndexOff,
    /// SQL run on the file.
    Sql(String),
}

/// The three servers, and one more per `--prefixes` entry (`;`-separated
/// FTS5 `prefix` options, `none` for no prefix index): this build with
/// its word index made again with those prefix indexes, everything else
/// of its definition as schema.sql has it.
fn sides(args: &Args, before: Option<String>) -> Vec<Side> {
    let now = args.needhave();
    let mut sides: Vec<Side> = before
        .into_iter()
        .map(|bin| Side {
            label: "before".into(),
            bin,
            prepare: None,
        })
        .collect();
    sides.push(Side {
        label: "now".into(),
        bin: now.clone(),
        // `BENCH_PREPARE_NOW=SQL`: run on this build's fresh file before
        // its server starts, to try a setting (FTS5's `automerge`, say).
        prepare: std::env::var("BENCH_PREPARE_NOW").ok().map(Prepare::Sql),
    });
    sides.push(Side {
        label: "now, index a no-op".into(),
        bin: now.clone(),
        prepare: Some(Prepare::IndexOff),
    });
    // `--other BIN`: a third build beside the two (e.g. this branch's base).
    if let Some(other) = args.get("other") {
        sides.push(Side {
            label: format!("other ({other})"),
            bin: other.to_string(),
            prepare: None,
        });
    }
    for prefix in args.get("prefixes").unwrap_or("").split(';') {
        let prefix = prefix.trim();
        if prefix.is_empty() {
            continue;
        }
        let option = if prefix == "none" {
            String::new()
        } else {
            format!(", prefix = '{prefix}'")
        };
        sides.push(Side {
            label: format!("now, prefix '{prefix}'"),
            bin: now.clone(),
            prepare: Some(Prepare::Sql(format!(
                "DROP TABLE post_words; CREATE VIRTUAL TABLE post_words USING fts5 (\
                 words, content = '', columnsize = 0, detail = none, tokenize = 'ascii'{option});"
            ))),
        });
    }
    sides
}

/// A fresh file for `side`'s server: none for the builds' own; else one
/// made at this build's schema, then changed by `side.prepare`.
fn write_db(work: &Path, i: usize, side: &Side, name: &str) -> Result<String, String> {
    let db = fresh_db(work, &format!("before-after-{name}-{i}.db"));
    if let Some(prepare) = &side.prepare {
        // Made by the side's own build (a server started on the path and
        // stopped), so that it is at that build's schema, whichever it is.
        Server::needhave(&side.bin, &db)?.stop();
        let conn = rusqlite::Connection::open(&db).map_err(|e| e.to_string())?;
        match prepare {
            Prepare::IndexOff => crate::index_off::turn_off(&conn),
            Prepare::Sql(sql) => conn.execute_batch(sql),
        }
        .and_then(|()| conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)"))
        .map_err(|e| e.to_string())?;
    }
    Ok(db)
}

/// `write_bytes` of `/proc/PID/io`.
fn write_bytes(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("write_bytes:"))?
        .trim()
        .parse()
        .ok()
}

/// Nanoseconds on a CPU of each thread of `pid` (`/proc/PID/task/*/schedstat`,
/// its first field), by the thread's name: the writer's (`needhave-writer`)
/// and the others', summed. Threads that ended between two readings drop
/// out of the second, so the figures are read while the process runs.
#[derive(Clone, Copy, Default)]
struct Cpu {
    writer_ns: u64,
    rest_ns: u64,
}

impl Cpu {
    fn total_ns(self) -> u64 {
        self.writer_ns + self.rest_ns
    }
}

fn cpu(pid: &str) -> Option<Cpu> {
    let mut cpu = Cpu::default();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let dir = task.ok()?.path();
        let Some(ns) = std::fs::read_to_string(dir.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        else {
            continue;
        };
        let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if name.trim() == "needhave-writer" {
            cpu.writer_ns += ns;
        } else {
            cpu.rest_ns += ns;
        }
    }
    Some(cpu)
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One write run at 64 connections: the report, and `write_bytes` over it.
async fn write_run(server: &Server, secs: u64, ip_base: u32) -> (load::Report, Option<u64>) {
    let io0 = write_bytes(server.pid());
    let report = write_run_with(server, secs, 64, ip_base).await;
    let io1 = write_bytes(server.pid());
    (report, io0.zip(io1).map(|(a, b)| b - a))
}

fn errors(report: &load::Report) -> u64 {
    report.server_errors + report.transport_errors + report.unexpected.len() as u64
}

/// What strace saw a server write: bytes into the WAL and into the
/// database file, their write calls, and fsync + fdatasync calls.
#[derive(Default)]
struct Io {
    wal_bytes: u64,
    db_bytes: u64,
    fsyncs: u64,
}

/// Reads `strace -f -y` output: `[pid N] pwrite64(5</…/x.db-wal>, …, 4096, 0) = 4096`.
fn parse_strace(text: &str, db: &str) -> Io {
    let mut io = Io::default();
    for line in text.lines() {
        let call = line
            .find(|c: char| c.is_ascii_alphabetic())
            .map(|i| &line[i..])
            .unwrap_or("");
        let call = call.strip_prefix("pid ").map_or(call, |rest| {
            rest.split_once(' ').map_or("", |(_, c)| c.trim_start())
        });
        if call.starts_with("fsync(") || call.starts_with("fdatasync(") {
            io.fsyncs += 1;
            continue;
        }
        if !(call.starts_with("pwrite64(") || call.starts_with("write(")) {
            continue;
        }
        let Some(path) = call.split_once('<').and_then(|(_, r)| r.split_once('>')) else {
            continue;
        };
        // The count asked (the third argument): a call strace shows in two
        // parts has its result on the second line.
        let (path, rest) = path;
        let written: u64 = rest
            .split(',')
            .nth(2)
            .map(|a| {
                a.trim_start()
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            })
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if path == format!("{db}-wal") {
            io.wal_bytes += written;
        } else if path == db {
            io.db_bytes += written;
        }
    }
    io
}

/// One run of `secs` under strace; (what it wrote, writes answered 201).
async fn io_run(
    bin: &str,
    db: &str,
    work: &Path,
    i: usize,
    secs: u64,
) -> Result<(Io, u64), String> {
    let out = work.join(format!("before-after-strace-{i}.txt"));
    let out_s = out.to_string_lossy().into_owned();
    let wrapper = [
        "strace",
        "-f",
        "--seccomp-bpf",
        "-y",
        "-qq",
        "-s",
        "0",
        "-e",
        "trace=write,pwrite64,fsync,fdatasync",
        "-e",
        "signal=none",
        "-o",
        &out_s,
    ];
    let server = Server::needhave_under(&wrapper, bin, db)
        .map_err(|e| format!("{e} (apt-get install strace)"))?;
    let (report, _) = write_run(&server, secs, 3_000_000 + i as u32 * 100_000).await;
    server.stop();
    if errors(&report) > 0 {
        return Err(format!("{} errors under strace", errors(&report)));
    }
    let text = std::fs::read_to_string(&out).map_err(|e| format!("{out_s}: {e}"))?;
    let _ = std::fs::remove_file(&out);
    let db = std::fs::canonicalize(db)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| db.to_string());
    Ok((parse_strace(&text, &db), report.acked_us.len() as u64))
}

pub async fn run(args: &Args) -> Result<(), String> {
    let old = args
        .get("baseline")
        .ok_or("--baseline BIN: the build to compare against")?
        .to_string();
    let sides = sides(args, Some(old));
    let bin = |side: &Side| side.bin.clone();
    let work = args.work();
    let rounds = args.num("rounds", 3);
    let secs = args.num("secs", 5);
    let io_secs = args.num("io-secs", secs);
    let read_db = fresh_db(&work, "before-after-read.db");
    seed::seed(&read_db, 100)?;
    let n = sides.len();
    let mut writes: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut bytes: Vec<Vec<f64>> = vec![Vec::new(); n];
    // The reads of the two builds (sides 0 and 1).
    let mut reads: [Vec<f64>; 2] = Default::default();
    let mut errors_seen = 0;
    for r in 0..rounds {
        let mut order: Vec<usize> = (0..n).collect();
        order.rotate_left(r as usize % n);
        for i in order {
            let side = &sides[i];
            let db = write_db(&work, i, side, &format!("write-{r}"))?;
            let server = Server::needhave(&bin(side), &db)?;
            let (report, written) =
                write_run(&server, secs, (r as u32 * n as u32 + i as u32) * 100_000).await;
            server.stop();
            errors_seen += errors(&report);
            if errors(&report) > 0 {
                eprintln!("round {r}, {}: {}", side.label, report.summary());
            }
            writes[i].push(report.rate());
            let acked = report.acked_us.len().max(1) as f64;
            if let Some(w) = written {
                bytes[i].push(w as f64 / acked);
            }
            let mut line = format!(
                "round {r}, {}: writes {:.0} req/s ({:.0} B written per 201)",
                side.label,
                report.rate(),
                written.map_or(f64::NAN, |w| w as f64 / acked)
            );
            if i < 2 {
                let server = Server::needhave(&bin(side), &read_db)?;
                let w = procs::wrk(&format!("http://{}/posts", server.addr), 64, secs)?;
                server.stop();
                errors_seen += w.non_2xx + w.socket_errors;
                if w.non_2xx + w.socket_errors > 0 {
                    eprintln!(
                        "round {r}, {}: wrk counted {} non-2xx answers, {} socket errors",
                        side.label, w.non_2xx, w.socket_errors
                    );
                }
                reads[i].push(w.rps);
                line += &format!(", GET /posts {:.0} req/s", w.rps);
            }
            eprintln!("{line}");
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let rounds_of = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let before = mean(&writes[0]);
    println!(
        "| durable create + first reply, 64 connections (means of {rounds} rounds of {secs} s, rotating) | req/s | / before | each round | bytes written per 201 (/proc/PID/io write_bytes, median) |"
    );
    println!("|---|---|---|---|---|");
    for (i, side) in sides.iter().enumerate() {
        let w = mean(&writes[i]);
        println!(
            "| {} | {w:.0} | {:.2}× | {} | {:.0} |",
            side.label,
            w / before,
            rounds_of(&writes[i]),
            median(&mut bytes[i])
        );
    }
    let (rb, rn) = (mean(&reads[0]), mean(&reads[1]));
    println!(
        "\n| GET /posts, 100 posts, wrk -c64 | before {rb:.0} req/s | now {rn:.0} req/s | {:.2}× |",
        rn / rb
    );
    println!("(errors: {errors_seen})");
    if io_secs > 0 {
        println!(
            "\n| under strace, {io_secs} s, 64 connections, per write answered 201 | WAL bytes | WAL frames | database file bytes | fsyncs | writes answered 201 |"
        );
        println!("|---|---|---|---|---|---|");
        for (i, side) in sides.iter().enumerate() {
            let db = write_db(&work, i, side, "io")?;
            let (io, acked) = io_run(&bin(side), &db, &work, i, io_secs).await?;
            let n = acked.max(1) as f64;
            // A WAL frame is a 24-byte header and a 4 KiB page.
            println!(
                "| {} | {:.0} | {:.2} | {:.0} | {:.3} | {acked} |",
                side.label,
                io.wal_bytes as f64 / n,
                io.wal_bytes as f64 / 4120.0 / n,
                io.db_bytes as f64 / n,
                io.fsyncs as f64 / n,
            );
        }
    }
    if errors_seen > 0 {
        return Err(format!("{errors_seen} errors during the runs"));
    }
    Ok(())
}

/// Instructions per write answered 201, by callgrind, for each of the
/// three servers (`needhave-bench write-instructions --baseline BIN`):
/// the server under `valgrind --tool=callgrind`, `--conns` connections of
/// the write flow for a warm-up second, counters zeroed, `--secs` of the
/// flow, counters dumped. Load-independent, unlike the rates: what one
/// write costs in the server's own instructions (the kernel's are not
/// counted). Keeps each dump in `--work` for `callgrind_annotate`.
pub async fn instructions(args: &Args) -> Result<(), String> {
    let work = args.work();
    let conns = args.num("conns", 8) as usize;
    let secs = args.num("secs", 10);
    println!("| server (callgrind, {conns} connections, {secs} s) | instructions per write answered 201 | writes answered 201 | dump |");
    println!("|---|---|---|---|");
    let sides = sides(args, args.get("baseline").map(String::from));
    for (i, side) in sides.iter().enumerate() {
        let bin = &side.bin;
        let db = write_db(&work, i, side, "callgrind")?;
        let stem = format!("callgrind-{i}.out");
        procs::remove_dumps(&work, &stem)?;
        let dump = work.join(&stem);
        let out = format!("--callgrind-out-file={}", dump.to_string_lossy());
        let wrapper = ["valgrind", "--tool=callgrind", "--dump-instr=no", &out];
        let server = Server::needhave_under(&wrapper, bin, &db)?;
        let control = |flag: &str| server.callgrind_control(flag);
        let base = 5_000_000 + i as u32 * 200_000;
        write_run_with(&server, 1, conns, base).await;
        control("-z")?;
        let report = write_run_with(&server, secs, conns, base + 50_000).await;
        control("-d")?;
        server.stop();
        if errors(&report) > 0 {
            return Err(format!("{} errors under callgrind", errors(&report)));
        }
        let (total, last) = procs::last_dump_total(&work, &stem)?;
        let acked = report.acked_us.len() as u64;
        println!(
            "| {} | {:.0} | {acked} | {} |",
            side.label,
            total as f64 / acked.max(1) as f64,
            last.display()
        );
    }
    Ok(())
}

/// Create throughput with the word index against it made a no-op
/// (`needhave-bench index-creates`; with `--baseline BIN`, that build both
/// ways as well, so that a change to how the index is written is measured
/// against the build before it): this build's server on a fresh file
/// for each run, `POST /posts` only with notes of a dozen words (`--notes
/// search`, the search bench's, by default; `--notes ordinary`, words of
/// a Zipf vocabulary, [`Notes`]), at each of `--conns` (default 1, 8, 64), `--rounds`
/// rounds of `--secs`, the two servers' order alternated each round. The
/// figure is the median of each round's ratio: at one connection every
/// commit carries one post, so the index's pages are a whole commit's
/// share; with more, a group commit shares them out. Each run also prints
/// the bytes the server hands the disk a create and the CPU a create of
/// the writer thread, of the server's other threads and of this bench's
/// load ([`cpu`]), unless a wrapper (`BENCH_WRAP`) stands between.
pub async fn index_creates(args: &Args) -> Result<(), String> {
    let work = args.work();
    let rounds = args.num("rounds", 5);
    let secs = args.num("secs", 3);
    let notes = args.get("notes").unwrap_or("search");
    let notes = Notes::parse(notes).ok_or(format!("--notes: {notes} (search or ordinary)"))?;
    let conns: Vec<usize> = args
        .get("conns")
        .unwrap_or("1,8,64")
        .split(',')
        .map(|c| c.trim().parse().map_err(|_| format!("--conns: {c}")))
        .collect::<Result<_, _>>()?;
    // This build as it is and with its index a no-op; with `--baseline
    // BIN`, that build too, both ways.
    let mut pair = sides(args, None);
    pair.truncate(2);
    if let Some(bin) = args.get("baseline") {
        for (label, prepare) in [
            ("baseline", None),
            ("baseline, index a no-op", Some(Prepare::IndexOff)),
        ] {
            pair.push(Side {
                label: label.into(),
                bin: bin.to_string(),
                prepare,
            });
        }
    }
    let n = pair.len();
    let labels: Vec<&str> = pair.iter().map(|s| s.label.as_str()).collect();
    println!(
        "| connections | {} | now / now, index a no-op, each round | median |{}",
        labels.join(" req/s (rounds) | ") + " req/s (rounds)",
        if n > 2 {
            " now / baseline, index a no-op: median |"
        } else {
            ""
        }
    );
    println!(
        "|---|{}---|---|{}",
        "---|".repeat(n),
        if n > 2 { "---|" } else { "" }
    );
    let mut errors_seen = 0;
    let mut ip_base = 7_000_000u32;
    for &c in &conns {
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); n];
        let mut ratios = Vec::new();
        let mut against_baseline = Vec::new();
        for r in 0..rounds {
            let mut order: Vec<usize> = (0..n).collect();
            order.rotate_left(r as usize % n);
            let mut round = vec![0.0; n];
            for i in order {
                let side = &pair[i];
                let db = write_db(&work, i, side, &format!("creates-{c}-{r}"))?;
                // `BENCH_WRAP="perf record -o /tmp/{side}.data"`: each
                // server run under a profiler, `{side}` in it replaced by
                // connections-round-side, so each run has its own file.
                let wrap = std::env::var("BENCH_WRAP").unwrap_or_default();
                let wrap = wrap.replace("{side}", &format!("{c}-{r}-{i}"));
                let wrapper: Vec<&str> = wrap.split_whitespace().collect();
                let server = Server::needhave_under(&wrapper, &side.bin, &db)?;
                // What the server hands the disk a create (`/proc/PID/io`;
                // not under a wrapper, whose own writes it would count).
                let io0 = wrapper
                    .is_empty()
                    .then(|| write_bytes(server.pid()))
                    .flatten();
                // What a create costs each thread: the server's writer, its
                // other threads, and this bench's load (the same cores).
                let pid = server.pid().to_string();
                let cpu0 = wrapper.is_empty().then(|| cpu(&pid)).flatten();
                let load0 = cpu("self");
                let started = std::time::Instant::now();
                let report = load::run(load::Options {
                    server: server.addr,
                    mode: Mode::Creates(notes),
                    conns: c,
                    duration: Duration::from_secs(secs),
                    ip_base,
                    stop: Arc::new(AtomicBool::new(false)),
                })
                .await;
                ip_base += 100_000;
                let acked = report.acked_us.len().max(1) as f64;
                if let (Some(a), Some(b), Some(l0), Some(l1)) =
                    (cpu0, cpu(&pid), load0, cpu("self"))
                {
                    let us = |a: u64, b: u64| b.saturating_sub(a) as f64 / 1e3 / acked;
                    let load = us(l0.total_ns(), l1.total_ns());
                    eprintln!(
                        "{c} connections, round {r}, {}: CPU a create: writer {:.1} µs, \
                         the server's other threads {:.1} µs, the load {load:.1} µs; \
                         {:.0} µs of wall a create",
                        side.label,
                        us(a.writer_ns, b.writer_ns),
                        us(a.rest_ns, b.rest_ns),
                        started.elapsed().as_secs_f64() * 1e6 / acked,
                    );
                }
                if let (Some(a), Some(b)) = (io0, write_bytes(server.pid())) {
                    eprintln!(
                        "{c} connections, round {r}, {}: {:.0} B written a create",
                        side.label,
                        (b - a) as f64 / acked
                    );
                }
                server.stop();
                // `BENCH_KEEP=1`: each run's file is left in `--work`.
                if std::env::var_os("BENCH_KEEP").is_none() {
                    let _ = std::fs::remove_file(&db);
                }
                errors_seen += errors(&report);
                if errors(&report) > 0 {
                    eprintln!(
                        "{c} connections, round {r}, {}: {}",
                        side.label,
                        report.summary()
                    );
                }
                round[i] = report.acked_rate();
                rates[i].push(round[i]);
            }
            eprintln!(
                "{c} connections, round {r}: {}",
                labels
                    .iter()
                    .zip(&round)
                    .map(|(l, x)| format!("{l} {x:.0}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            ratios.push(round[0] / round[1]);
            if n > 2 {
                against_baseline.push(round[0] / round[3]);
            }
        }
        let list = |v: &[f64], digits: usize| {
            v.iter()
                .map(|x| format!("{x:.digits$}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut line = format!("| {c} |");
        for v in &mut rates {
            let each = list(v, 0);
            line += &format!(" {:.0} ({each}) |", median(v));
        }
        let each = list(&ratios, 2);
        line += &format!(" {each} | {:.2}× |", median(&mut ratios));
        if n > 2 {
            line += &format!(" {:.2}× |", median(&mut against_baseline));
        }
        println!("{line}");
    }
    if errors_seen > 0 {
        return Err(format!("{errors_seen} errors during the runs"));
    }
    Ok(())
}

/// `conns` connections of the write flow for `secs`.
async fn write_run_with(server: &Server, secs: u64, conns: usize, ip_base: u32) -> load::Report {
    load::run(load::Options {
        server: server.addr,
        mode: Mode::Writes,
        conns,
        duration: Duration::from_secs(secs),
        ip_base,
        stop: Arc::new(AtomicBool::new(false)),
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strace_lines_are_read_by_path() {
        let text = "\
[pid 12] pwrite64(5</w/x.db-wal>, \"\"..., 24, 32) = 24
[pid 12] pwrite64(5</w/x.db-wal>, \"\"..., 4096, 56) = 4096
12 fdatasync(5</w/x.db-wal>) = 0
12 pwrite64(5</w/x.db-wal>, \"\"..., 4096, 4152 <unfinished ...>
12 <... pwrite64 resumed>) = 4096
[pid 13] write(9<socket:[1]>, \"\"..., 200) = 200
pwrite64(4</w/x.db>, \"\"..., 4096, 0) = 4096
[pid 12] fsync(4</w/x.db>) = 0
";
        let io = parse_strace(text, "/w/x.db");
        assert_eq!(io.wal_bytes, 8216);
        assert_eq!(io.db_bytes, 4096);
        assert_eq!(io.fsyncs, 2);
    }
}
