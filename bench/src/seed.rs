//! Seeds a database directly (no HTTP): `n` posts, a first message on every
//! other post, an accept and three later messages on every tenth. Ids,
//! secrets and thread keys are derived from the index, so the scale driver
//! can address any of them without reading the database.

use rusqlite::params;
use sha2::{Digest, Sha256};

use needhave::secrets::sha256_hex;
use needhave::store::sqlite::SqliteStore;

fn h(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

pub fn post_id(i: u64) -> String {
    h(&format!("post-id-{i}"))[..32].to_string()
}
pub fn post_secret(i: u64) -> String {
    h(&format!("post-secret-{i}"))
}
pub fn first_id(i: u64) -> String {
    h(&format!("first-id-{i}"))[..32].to_string()
}
pub fn thread_key(i: u64) -> String {
    h(&format!("thread-key-{i}"))
}

/// Posts with a waiting (unaccepted) first message: `i % 10 == 2`.
pub fn waiting_post(k: u64, n: u64) -> u64 {
    (k * 10 + 2) % n
}
/// Posts with a thread: `i % 10 == 0`.
pub fn thread_post(k: u64, n: u64) -> u64 {
    (k * 10) % n
}
/// Posts nobody answered, for new first replies: odd `i`.
pub fn quiet_post(k: u64, n: u64) -> u64 {
    (k * 2 + 1) % n
}

pub fn seed(path: &str, n: u64) -> Result<(), String> {
    seed_notes(path, n, |i, kind| {
        format!("seeded {kind} number {i}: a short public note of ordinary length")
    })
}

/// [`seed`], post `i` of kind `kind` with the note `note(i, kind)` (notes
/// must differ: the list refuses a duplicate).
pub fn seed_notes(path: &str, n: u64, note: impl Fn(u64, &str) -> String) -> Result<(), String> {
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(format!("{path}-wal"));
    let _ = std::fs::remove_file(format!("{path}-shm"));
    let store = SqliteStore::open(path).map_err(|e| e.to_string())?;
    let now = needhave::platform::now_ms();
    // Old enough that no seeded row counts against an hour's limits.
    let base = now - 2 * needhave::rules::HOUR_MS - n as i64 * 4;
    store.with_connection(|c| -> rusqlite::Result<()> {
        c.execute_batch("BEGIN")?;
        {
            let mut post = c.prepare(
                "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at, note_key_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            let mut msg = c.prepare(
                "INSERT INTO messages (id, post_id, role, parent_id, text, secret_hash, thread_key, thread_key_hash, ip_hash, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for i in 0..n {
                let t = base + i as i64 * 4;
                let pid = post_id(i);
                let ip = h(&format!("seed-ip-{}", i / 10));
                let kind = if i % 2 == 0 { "need" } else { "have" };
                let note = note(i, kind);
                let key = needhave::store::migrate::note_key_hash(&note);
                post.execute(params![pid, kind, note, sha256_hex(&post_secret(i)), ip, t, key])?;
                if i % 2 == 0 {
                    let fid = first_id(i);
                    let text = format!("a first reply to post {i}");
                    let secret = sha256_hex(&h(&format!("reply-secret-{i}")));
                    msg.execute(params![fid, pid, "first", None::<String>, text, secret, None::<String>, None::<String>, ip, t + 1])?;
                    if i % 10 == 0 {
                        let key = thread_key(i);
                        let kh = sha256_hex(&key);
                        let aid = h(&format!("accept-id-{i}"))[..32].to_string();
                        msg.execute(params![aid, pid, "accept", fid, None::<String>, None::<String>, key, kh, ip, t + 2])?;
                        for j in 0..3 {
                            let lid = h(&format!("later-id-{i}-{j}"))[..32].to_string();
                            let text = format!("later line {j} in thread {i}");
                            msg.execute(params![lid, pid, "later", None::<String>, text, None::<String>, None::<String>, kh, ip, t + 3])?;
                        }
                    }
                }
            }
        }
        // The index of words, as an upgrade writes it: the hot set the
        // posts share, then both parts, newest first.
        needhave::store::migrate::fill_index(c)?;
        c.execute_batch("COMMIT")?;
        c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); ANALYZE;")?;
        Ok(())
    })
    .map_err(|e| e.to_string())
}
