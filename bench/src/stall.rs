//! `needhave-bench stall`: whether slow searches stall everyone else.
//!
//! A list of `posts` posts, half of whose notes hold `commonword`; one
//! client (its own address) asks, one after another, for the cheap things:
//! the bare list (the memo's answer, no statement), `/healthz`, a kind page
//! (`?kind=have`) and one post (`GET /posts/:id`). First with nothing else
//! going on, then while `attackers` connections, each from an address of
//! its own, send the most expensive searches there are, over and over
//! ([`WORST`]). Each round runs both phases on each server (this build,
//! then each `--baseline`: another build, or this one with other flags),
//! so the machine's drift falls on all of them; the table gives each
//! probe's p50 and p90 in each phase and the ratio of the p90s, and what
//! the attackers got (their 200s and their 503 `busy`).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::client::{Conn, Ips};
use crate::procs::Server;
use crate::scale::percentile;
use crate::seed;

/// The searches the attackers send, in turn: eight words of which one is
/// in half the notes and the others are letters that begin many words; a
/// prefix of that word with two letters; and the feed of the first.
pub const WORST: [&str; 3] = [
    "/posts?q=commonword+b+c+d+f+g+h+j",
    "/posts?q=commonwor+b+c",
    "/posts.atom?q=commonword+b+c+d+f+g+h+j",
];

/// The probes' labels, in the order they are asked.
const PROBES: [&str; 4] = [
    "GET /posts",
    "GET /healthz",
    "GET /posts?kind=have",
    "GET /posts/:id",
];

pub struct Options {
    pub needhave: String,
    /// Other servers, run the same way beside this one: each a binary and
    /// its `serve` flags, split at spaces.
    pub baselines: Vec<String>,
    pub work: PathBuf,
    pub posts: u64,
    pub rounds: u64,
    /// Seconds of each phase.
    pub secs: u64,
    pub attackers: usize,
    /// More `serve` flags, for this build only.
    pub extra: Vec<String>,
}

/// What one server's phases gathered over the rounds.
#[derive(Default)]
struct Side {
    /// Per probe, latencies in µs: `[idle, attacked]`.
    probes: [[Vec<u64>; 2]; PROBES.len()],
    /// Probe answers that were not the expected status.
    probe_errors: u64,
    /// The attackers' answers: status and µs.
    attacks: Vec<(u16, u64)>,
}

/// The seed's notes ([`seed::seed`]) with one more word of a few, so that
/// the letters of [`WORST`] begin words of many notes; posts `i` with
/// `i % 4 < 2` (half of them, of both kinds) also hold `commonword`.
fn note(i: u64, kind: &str) -> String {
    const WORDS: [&str; 8] = [
        "gpu", "batch", "dataset", "fine", "hours", "job", "beta", "disk",
    ];
    let word = WORDS[(i / 4 % WORDS.len() as u64) as usize];
    let common = if i % 4 < 2 { " commonword" } else { "" };
    format!("seeded {kind} number {i}: a short public note of ordinary length, {word}{common}")
}

pub async fn run(opts: Options) -> Result<(), String> {
    let db = crate::fresh_db(&opts.work, "stall.db");
    eprintln!("seeding {} posts …", opts.posts);
    seed::seed_notes(&db, opts.posts, note)?;
    let mut sides: Vec<(String, Vec<String>, Side)> =
        vec![(opts.needhave.clone(), opts.extra.clone(), Side::default())];
    for b in &opts.baselines {
        let mut words = b.split_whitespace().map(String::from);
        let bin = words.next().ok_or("an empty --baseline")?;
        sides.push((bin, words.collect(), Side::default()));
    }
    let post = format!("/posts/{}", seed::post_id(opts.posts / 2));
    let probes: [&str; 4] = ["/posts", "/healthz", "/posts?kind=have", &post];
    let ips = Ips::new(0);
    let secs = Duration::from_secs(opts.secs);
    for round in 0..opts.rounds {
        for (i, (bin, extra, side)) in sides.iter_mut().enumerate() {
            // Each server its own copy of the seeded file: one server a file.
            let copy = crate::fresh_db(&opts.work, &format!("stall-{i}.db"));
            std::fs::copy(&db, &copy).map_err(|e| format!("{copy}: {e}"))?;
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            let server = Server::needhave_with(bin, &copy, &extra)?;
            let me = ips.take();
            let mut conns = Vec::new();
            for path in probes {
                let mut c = Conn::connect(server.addr, me)
                    .await
                    .map_err(|e| e.to_string())?;
                // Warm: the memo holds the list, every statement is prepared.
                c.send("GET", path, None).await.map_err(|e| e.to_string())?;
                conns.push(c);
            }
            for attacked in [false, true] {
                let stop = Arc::new(AtomicBool::new(false));
                let mut attackers = Vec::new();
                if attacked {
                    for _ in 0..opts.attackers {
                        attackers.push(tokio::spawn(attack(server.addr, ips.take(), stop.clone())));
                    }
                    // Every attacker has a search running.
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                let started = Instant::now();
                while started.elapsed() < secs {
                    for (k, (c, path)) in conns.iter_mut().zip(probes).enumerate() {
                        let t = Instant::now();
                        let (status, _) =
                            c.send("GET", path, None).await.map_err(|e| e.to_string())?;
                        side.probes[k][usize::from(attacked)].push(t.elapsed().as_micros() as u64);
                        if status != 200 {
                            side.probe_errors += 1;
                        }
                    }
                }
                stop.store(true, Ordering::SeqCst);
                for a in attackers {
                    side.attacks.extend(a.await.map_err(|e| e.to_string())?);
                }
            }
            server.stop();
            eprintln!("round {round}: {bin} done");
        }
    }
    println!(
        "{} posts ({} with commonword), {} attackers each from its own address sending {}, in turn; {} rounds of {} s a phase; latencies in ms",
        opts.posts,
        (0..opts.posts).filter(|i| i % 4 < 2).count(),
        opts.attackers,
        WORST.join(", "),
        opts.rounds,
        opts.secs
    );
    println!();
    println!("| server | probe | idle p50 | idle p90 | attacked p50 | attacked p90 | p90 attacked / idle |");
    println!("|---|---|---|---|---|---|---|");
    let ms = |v: &[u64], p: f64| percentile(v, p) / 1000.0;
    let name = |bin: &str, extra: &[String]| {
        std::iter::once(bin)
            .chain(extra.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (bin, extra, side) in &sides {
        let bin = name(bin, extra);
        for (k, label) in PROBES.iter().enumerate() {
            let [idle, attacked] = &side.probes[k];
            println!(
                "| {bin} | {label} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1}× |",
                ms(idle, 0.5),
                ms(idle, 0.9),
                ms(attacked, 0.5),
                ms(attacked, 0.9),
                ms(attacked, 0.9) / ms(idle, 0.9)
            );
        }
    }
    println!();
    println!("| server | probes not 200 | attacks | 200 | 503 | other | attack p50 (ms) | attack p90 (ms) |");
    println!("|---|---|---|---|---|---|---|---|");
    for (bin, extra, side) in &sides {
        let bin = name(bin, extra);
        let count = |s: u16| side.attacks.iter().filter(|a| a.0 == s).count();
        let times: Vec<u64> = side.attacks.iter().map(|a| a.1).collect();
        println!(
            "| {bin} | {} | {} | {} | {} | {} | {:.1} | {:.1} |",
            side.probe_errors,
            side.attacks.len(),
            count(200),
            count(503),
            side.attacks.len() - count(200) - count(503),
            ms(&times, 0.5),
            ms(&times, 0.9)
        );
    }
    Ok(())
}

/// One attacker: the [`WORST`] searches in turn on one connection from
/// `ip` until `stop`; each answer's status and time (µs). A connection
/// that breaks is made again.
async fn attack(server: SocketAddr, ip: Ipv4Addr, stop: Arc<AtomicBool>) -> Vec<(u16, u64)> {
    let mut out = Vec::new();
    let mut conn = None;
    let mut k = 0;
    while !stop.load(Ordering::SeqCst) {
        let c = match &mut conn {
            Some(c) => c,
            None => match Conn::connect(server, ip).await {
                Ok(c) => conn.insert(c),
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let t = Instant::now();
        match c.send("GET", WORST[k % WORST.len()], None).await {
            Ok((status, _)) => out.push((status, t.elapsed().as_micros() as u64)),
            Err(_) => conn = None,
        }
        k += 1;
    }
    out
}
