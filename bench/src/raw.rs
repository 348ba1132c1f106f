//! The write baseline: the rows the create-post + first-reply flow writes,
//! inserted straight through rusqlite on one connection, one transaction
//! per row (as each HTTP call is one transaction), in WAL with the default
//! VFS as the server, its schema and indexes, and a given `synchronous`:
//! `NORMAL` (fsync only at checkpoints: what the server did before it was
//! durable) or `FULL` (an fsync per transaction: durable, without group
//! commit).

use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OpenFlags};

use crate::client::random_hex;
use needhave::secrets::sha256_hex;

/// Rows per second (each row its own transaction) over `duration`.
pub fn run(path: &str, duration: Duration, synchronous: &str) -> Result<f64, String> {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
    let c = Connection::open_with_flags(path, OpenFlags::default()).map_err(|e| e.to_string())?;
    c.pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| e.to_string())?;
    c.pragma_update(None, "synchronous", synchronous)
        .map_err(|e| e.to_string())?;
    c.execute_batch(needhave::store::migrate::SCHEMA)
        .map_err(|e| e.to_string())?;
    let run = random_hex(4);
    let started = Instant::now();
    let mut rows = 0u64;
    let mut ip = String::new();
    let result = (|| -> rusqlite::Result<()> {
        let mut post = c.prepare(
            "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at, note_key_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let mut first = c.prepare(
            "INSERT INTO messages (id, post_id, role, text, secret_hash, ip_hash, created_at) \
             VALUES (?1, ?2, 'first', ?3, ?4, ?5, ?6)",
        )?;
        while started.elapsed() < duration {
            if rows.is_multiple_of(20) {
                ip = sha256_hex(&random_hex(4));
            }
            let now = needhave::platform::now_ms();
            let id = random_hex(16);
            let note = format!("bench {run} raw n{rows} — {}", random_hex(6));
            c.execute_batch("BEGIN IMMEDIATE")?;
            post.execute(params![
                id,
                "need",
                note,
                sha256_hex(&random_hex(32)),
                ip,
                now,
                needhave::store::migrate::note_key_hash(&note)
            ])?;
            c.execute_batch("COMMIT")?;
            c.execute_batch("BEGIN IMMEDIATE")?;
            first.execute(params![
                random_hex(16),
                id,
                "a first reply",
                sha256_hex(&random_hex(32)),
                ip,
                now
            ])?;
            c.execute_batch("COMMIT")?;
            rows += 2;
        }
        Ok(())
    })();
    result.map_err(|e| e.to_string())?;
    Ok(rows as f64 / started.elapsed().as_secs_f64())
}
