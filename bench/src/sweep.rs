//! `needhave-bench group-sweep`: where a group commit should close.
//!
//! The durable write flow of `all` (create a post, then a first reply to it,
//! every 201 fsynced) at each number of connections, against `needhave
//! serve --group-max N --group-wait-us W` for each cap and window, every
//! server under `strace -c` counting its fsyncs. Per cell: writes answered
//! 201 per second, their p50 and p99 latency, fsyncs per acknowledged write,
//! and the mean group the writer committed (its own count, logged at stop).
//!
//! Side by side in one run: every round runs every cell (in reverse order
//! every other round, so a drift of the machine does not favour the cells
//! that come first) and, before each block of connections, a raw rusqlite
//! one-row `synchronous=FULL` baseline (an fsync per row): an fsync on the
//! shared disk costs twenty times more or less with other I/O, so each
//! cell's rate is also given over its round's baseline, which is what
//! compares across rounds. The load average is printed with each round.
//!
//! A cap at or above the number of connections is one cell: each connection
//! has at most one write in flight (HTTP/1.1, the flow waits for each
//! answer), so the queue never holds more than that many and no larger cap
//! can close a group differently. A cap of 1 closes every group at once, so
//! a window changes nothing there either.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::load::{self, Mode};
use crate::procs::Server;
use crate::{fresh_db, raw, Args};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Cell {
    conns: usize,
    /// The cap passed to the server.
    cap: usize,
    /// Whether `cap` stands for every cap at or above `conns`.
    open: bool,
    wait_us: u64,
}

impl Cell {
    fn cap_label(&self, caps: &[usize]) -> String {
        if self.open {
            let same: Vec<String> = caps
                .iter()
                .filter(|&&c| c >= self.conns)
                .map(|c| c.to_string())
                .collect();
            format!("≥ {} ({})", self.conns, same.join(", "))
        } else {
            self.cap.to_string()
        }
    }
}

/// One cell's run in one round.
struct Sample {
    acked_rate: f64,
    /// The same over the round's raw FULL rows per second.
    over_full: f64,
    p50_us: f64,
    p99_us: f64,
    fsyncs: u64,
    acked: u64,
    counts: Counts,
    errors: u64,
}

fn list(args: &Args, key: &str, default: &[u64]) -> Vec<u64> {
    args.get(key)
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

fn cells(conns: &[u64], caps: &[u64], waits: &[u64]) -> Vec<Cell> {
    let mut out = Vec::new();
    for &c in conns {
        let c = c as usize;
        let mut kept: Vec<(usize, bool)> = caps
            .iter()
            .map(|&k| k as usize)
            .filter(|&k| k < c)
            .map(|k| (k, false))
            .collect();
        if let Some(&top) = caps.iter().max().filter(|&&k| k as usize >= c) {
            kept.push((top as usize, true));
        }
        for (cap, open) in kept {
            for &w in waits {
                if cap == 1 && w > 0 {
                    continue;
                }
                out.push(Cell {
                    conns: c,
                    cap,
                    open,
                    wait_us: w,
                });
            }
        }
    }
    out
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// The writer's own counts, from the line it logs at a clean stop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    commits: u64,
    batches: u64,
    running_us: u64,
    committing_us: u64,
}

fn group_counts(log: &Path) -> Counts {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let field = |name: &str| -> u64 {
        text.lines()
            .rev()
            .find_map(|l| {
                let at = l.find(&format!("{name}="))? + name.len() + 1;
                l[at..]
                    .split(|ch: char| !ch.is_ascii_digit())
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or(0)
    };
    Counts {
        commits: field("commits"),
        batches: field("writes"),
        running_us: field("running_us"),
        committing_us: field("committing_us"),
    }
}

async fn run_cell(bin: &str, work: &Path, cell: Cell, secs: u64, full: f64) -> Sample {
    let db = fresh_db(work, "sweep.db");
    let trace = work.join("sweep-strace.txt");
    let log = work.join("sweep-server.log");
    let cap = cell.cap.to_string();
    let wait = cell.wait_us.to_string();
    let mut server_args = crate::strace_args(&trace);
    server_args.extend(
        [
            bin,
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--db",
            &db,
            "--exit-with-stdin",
            "--group-max",
            &cap,
            "--group-wait-us",
            &wait,
        ]
        .map(String::from),
    );
    let argv: Vec<&str> = server_args.iter().map(String::as_str).collect();
    let server =
        match Server::start_logged("strace", &argv, Some((&log, "warn,needhave::store=info"))) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("  {cell:?}: {e} (apt-get install strace)");
                return Sample {
                    acked_rate: 0.0,
                    over_full: 0.0,
                    p50_us: f64::NAN,
                    p99_us: f64::NAN,
                    fsyncs: 0,
                    acked: 0,
                    counts: Counts::default(),
                    errors: 1,
                };
            }
        };
    let report = load::run(load::Options {
        server: server.addr,
        mode: Mode::Writes,
        conns: cell.conns,
        duration: Duration::from_secs(secs),
        ip_base: 0,
        stop: Arc::new(AtomicBool::new(false)),
    })
    .await;
    server.stop();
    let mut us: Vec<u64> = report.acked_us.iter().map(|&u| u64::from(u)).collect();
    us.sort_unstable();
    let counts = group_counts(&log);
    Sample {
        acked_rate: report.acked_rate(),
        over_full: report.acked_rate() / full.max(1e-9),
        p50_us: crate::scale::percentile(&us, 0.5),
        p99_us: crate::scale::percentile(&us, 0.99),
        fsyncs: crate::strace_fsyncs(&trace).unwrap_or(0),
        acked: us.len() as u64,
        counts,
        errors: report.server_errors + report.transport_errors + report.unexpected.len() as u64,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub async fn sweep(args: &Args) -> Result<(), String> {
    let bin = args.needhave();
    let work = args.work();
    let rounds = args.num("rounds", 3).max(1);
    let secs = args.num("secs", 2).max(1);
    let conns = list(args, "conns", &[1, 8, 64]);
    let caps = list(args, "caps", &[1, 4, 16, 64, 256, 1024]);
    let waits = list(args, "waits", &[0, 100, 500, 2000]);
    let grid = cells(&conns, &caps, &waits);
    let caps_us: Vec<usize> = caps.iter().map(|&c| c as usize).collect();
    let raw_db = work.join("sweep-raw.db").to_string_lossy().into_owned();
    println!(
        "group sweep: {} cells × {rounds} rounds, {secs} s each; conns {conns:?}, caps {caps:?}, waits (µs) {waits:?}",
        grid.len()
    );
    let mut samples: BTreeMap<Cell, Vec<Sample>> = BTreeMap::new();
    let mut baselines = Vec::new();
    for r in 0..rounds {
        let mut order: Vec<usize> = conns.iter().map(|&c| c as usize).collect();
        let mut round_grid = grid.clone();
        if r % 2 == 1 {
            order.reverse();
            round_grid.reverse();
        }
        let before = loadavg();
        let mut fulls = Vec::new();
        for c in order {
            let full = raw::run(&raw_db, Duration::from_secs(1), "FULL")?;
            fulls.push(format!("{full:.0}"));
            for cell in round_grid.iter().filter(|cell| cell.conns == c) {
                let s = run_cell(&bin, &work, *cell, secs, full).await;
                eprintln!(
                    "  round {} · {} conns · cap {} · wait {} µs: {:.0} acked/s ({:.2}× FULL {full:.0}), p50 {:.2} ms, p99 {:.2} ms, {:.3} fsyncs/write, mean group {:.1}, {:.0} µs a batch, {:.2} ms a COMMIT{}",
                    r + 1,
                    cell.conns,
                    cell.cap_label(&caps_us),
                    cell.wait_us,
                    s.acked_rate,
                    s.over_full,
                    s.p50_us / 1000.0,
                    s.p99_us / 1000.0,
                    s.fsyncs as f64 / s.acked.max(1) as f64,
                    s.counts.batches as f64 / s.counts.commits.max(1) as f64,
                    s.counts.running_us as f64 / s.counts.batches.max(1) as f64,
                    s.counts.committing_us as f64 / 1000.0 / s.counts.commits.max(1) as f64,
                    if s.errors > 0 {
                        format!(", {} ERRORS", s.errors)
                    } else {
                        String::new()
                    }
                );
                samples.entry(*cell).or_default().push(s);
            }
        }
        let line = format!(
            "round {}: load average {before} before, {} after; raw one-row FULL txn/s before each block: {}",
            r + 1,
            loadavg(),
            fulls.join(", ")
        );
        eprintln!("{line}");
        baselines.push(line);
    }

    println!();
    for b in &baselines {
        println!("{b}");
    }
    println!(
        "\n| conns | cap | wait µs | acked writes/s (median; per round) | ÷ round's raw FULL (median) | p50 ms | p99 ms | fsyncs / acked write | mean group | µs a batch / ms a COMMIT |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut errors = 0;
    for (cell, s) in &samples {
        let rates: Vec<String> = s.iter().map(|x| format!("{:.0}", x.acked_rate)).collect();
        let fsyncs: u64 = s.iter().map(|x| x.fsyncs).sum();
        let acked: u64 = s.iter().map(|x| x.acked).sum();
        let sum =
            |f: fn(&Counts) -> u64| -> f64 { s.iter().map(|x| f(&x.counts)).sum::<u64>() as f64 };
        let (commits, batches) = (sum(|c| c.commits).max(1.0), sum(|c| c.batches).max(1.0));
        errors += s.iter().map(|x| x.errors).sum::<u64>();
        println!(
            "| {} | {} | {} | {:.0} ({}) | {:.2}× | {:.2} | {:.2} | {:.3} | {:.1} | {:.0} / {:.2} |",
            cell.conns,
            cell.cap_label(&caps_us),
            cell.wait_us,
            median(s.iter().map(|x| x.acked_rate).collect()),
            rates.join(" / "),
            median(s.iter().map(|x| x.over_full).collect()),
            median(s.iter().map(|x| x.p50_us).collect()) / 1000.0,
            median(s.iter().map(|x| x.p99_us).collect()) / 1000.0,
            fsyncs as f64 / acked.max(1) as f64,
            batches / commits,
            sum(|c| c.running_us) / batches,
            sum(|c| c.committing_us) / 1000.0 / commits,
        );
    }
    println!(
        "\np50/p99: medians over rounds of each round's percentiles of the 201s' latency (create and reply alike); fsyncs: strace -c over the server's whole run (start, load, the clean stop's checkpoint) over the writes answered 201, summed over rounds; mean group, µs a batch (running it in its savepoint), ms a COMMIT (the fsync): the writer's own counts, summed over rounds."
    );
    if errors > 0 {
        return Err(format!(
            "{errors} 5xx, transport errors or unexpected answers in the sweep"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_at_or_above_the_connections_are_one_cell_and_cap_1_never_waits() {
        let g = cells(&[1, 8], &[1, 4, 16, 64], &[0, 500]);
        let at = |conns: usize| -> Vec<(usize, bool, u64)> {
            g.iter()
                .filter(|c| c.conns == conns)
                .map(|c| (c.cap, c.open, c.wait_us))
                .collect()
        };
        assert_eq!(at(1), vec![(64, true, 0), (64, true, 500)]);
        assert_eq!(
            at(8),
            vec![
                (1, false, 0),
                (4, false, 0),
                (4, false, 500),
                (64, true, 0),
                (64, true, 500)
            ]
        );
    }

    #[test]
    fn the_writer_counts_are_read_from_its_stop_line() {
        let dir = std::env::temp_dir().join(format!("sweep-log-{}", std::process::id()));
        std::fs::write(
            &dir,
            "2026-12-01T12:00:00Z  INFO needhave::store: checkpointed x.db commits=12 writes=345 largest_group=9 running_us=6789 committing_us=45678\n",
        )
        .unwrap();
        assert_eq!(
            group_counts(&dir),
            Counts {
                commits: 12,
                batches: 345,
                running_us: 6789,
                committing_us: 45678
            }
        );
        let _ = std::fs::remove_file(&dir);
    }
}
