//! What ending a post and reporting one cost, against what creating one
//! costs: `needhave serve` on a fresh file, over HTTP, one call at a time.
//!
//!     needhave-bench close-report [--needhave BIN] [--work DIR] [--rounds 2000]
//!
//! Each round creates a post (`POST /posts`), then reports it
//! (`POST /posts/:id/report`) and closes it (`POST /posts/:id/close`), the
//! two in the other order every other round, so that the machine's noise
//! falls on the three alike. The close's cost includes what it leaves to
//! the server's sweep (the post out of the index of words, a write batch
//! of its own in the background, on the same writer). Every call must
//! answer its success (201, 202, 201); the first tenth of the rounds warm
//! up and are not counted. Each client address creates ten posts, under
//! the per-client limits (`rules::CREATES_PER_HOUR`,
//! `rules::REPORTS_PER_HOUR`).

use std::net::SocketAddr;
use std::path::Path;
use std::time::Instant;

use serde_json::json;

use crate::client::{Conn, Error, Ips};
use crate::procs::Server;
use crate::scale::percentile;

const OPS: [&str; 3] = ["create", "report", "close"];

/// Posts one client address creates (and reports, and closes).
const PER_IP: usize = 10;

/// Microseconds of each call of each op, after the warm-up.
async fn measure(server: SocketAddr, rounds: usize) -> Result<[Vec<u64>; 3], Error> {
    let ips = Ips::new(0x5eed);
    let mut samples: [Vec<u64>; 3] = Default::default();
    let mut conn = Conn::connect(server, ips.take()).await?;
    for round in 0..rounds {
        if round > 0 && round % PER_IP == 0 {
            conn = Conn::connect(server, ips.take()).await?;
        }
        let mut timed = Vec::with_capacity(3);
        let body =
            json!({"kind": "need", "note": format!("close-report round {round} gpu tonight")});
        let t = Instant::now();
        let (status, created) = conn.json("POST", "/posts", Some(&body)).await?;
        timed.push((0, t.elapsed().as_micros() as u64));
        if status != 201 {
            return Err(format!("create: {status} {created}").into());
        }
        let id = created["id"].as_str().unwrap_or_default().to_string();
        let secret = created["secret"].as_str().unwrap_or_default().to_string();
        let order = if round % 2 == 0 { [1, 2] } else { [2, 1] };
        for op in order {
            let (path, body, want) = if op == 1 {
                (
                    format!("/posts/{id}/report"),
                    json!({"reason": "spam"}),
                    202,
                )
            } else {
                (format!("/posts/{id}/close"), json!({"secret": secret}), 201)
            };
            let t = Instant::now();
            let (status, answer) = conn.json("POST", &path, Some(&body)).await?;
            timed.push((op, t.elapsed().as_micros() as u64));
            if status != want {
                return Err(format!("{}: {status} {answer}", OPS[op]).into());
            }
        }
        if round >= rounds / 10 {
            for (op, micros) in timed {
                samples[op].push(micros);
            }
        }
    }
    Ok(samples)
}

pub async fn run(needhave: &str, work: &Path, rounds: usize) -> Result<(), String> {
    let db = work.join("close-report.db").to_string_lossy().into_owned();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{db}{suffix}"));
    }
    let server = Server::needhave(needhave, &db)?;
    let result = measure(server.addr, rounds.max(10)).await;
    server.stop();
    let samples = result.map_err(|e| e.to_string())?;
    let p = |op: usize, q: f64| percentile(&samples[op], q);
    println!(
        "\n{} rounds of create, report and close over HTTP (one connection, one call at a time), \
         the first tenth not counted\n",
        rounds
    );
    println!("| call | p50 µs | p99 µs | p50 against create | p99 against create |");
    println!("|---|---:|---:|---:|---:|");
    for (op, name) in OPS.iter().enumerate() {
        println!(
            "| {name} | {:.0} | {:.0} | {:.2}× | {:.2}× |",
            p(op, 0.5),
            p(op, 0.99),
            p(op, 0.5) / p(0, 0.5),
            p(op, 0.99) / p(0, 0.99)
        );
    }
    Ok(())
}
