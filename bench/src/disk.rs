//! What a post costs on disk against the bound of five times its note's
//! UTF-8 bytes plus 1 KiB, for notes of many shapes: each case writes
//! `posts` posts through the list's own create (in process, each from an
//! IPv6 site of its own, so every row keeps a site hash) into a fresh
//! file, and counts its pages in use after a checkpoint, as
//! `tests/limits.rs` does for the cases it asserts: at the end, and on a
//! young list just before and after each move of the waiting words, where
//! the worst of those sizes is reported too (the bound holds at every
//! size).
//!
//!     needhave-bench disk [--work DIR] [--posts 300] [--after 0] [--pgsz BYTES]
//!
//! `--after N`: each case on a list that already holds N ordinary posts
//! (not counted), so a list past 10,000 posts, in its small leaves,
//! with a vocabulary it has seen. `--pgsz`: FTS5's leaf size for the
//! index, instead of the list's. `DISK_PREPARE=SQL`: statements run on
//! each case's fresh file before its posts, to measure a setting the list
//! does not make (an FTS5 option of one part, say).
//!
//! Besides the test's cases: notes of words no other note has (ASCII,
//! Deseret, pairs of Han letters), random text as a client might send
//! it (words of one to ten random letters, base64url, hex), and ordinary
//! notes (words of a 5,000-word vocabulary, Zipf's law), whose words a
//! young list has not seen yet. It reports; it asserts nothing
//! (docs/design/search-costs.md, "The disk bound").

use std::path::Path;
use std::sync::Arc;

use needhave::http::Request;
use needhave::store::sqlite::{segments, SqliteStore};
use needhave::{Config, Ctx};

use crate::notes::{self, from_alphabet, han, random_words, tail, unique_words, Ordinary, Worst};

/// A case: its label, and its `i`th note.
type Case<'a> = (&'static str, Box<dyn Fn(u64) -> String + 'a>);

/// Bytes of the file's pages in use, after a checkpoint.
fn used_bytes(store: &SqliteStore) -> i64 {
    store.with_connection(|c| {
        let _ = c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        let get = |p: &str| c.query_row(p, [], |r| r.get::<_, i64>(0)).unwrap_or(0);
        (get("PRAGMA page_count") - get("PRAGMA freelist_count")) * get("PRAGMA page_size")
    })
}

/// Per post: the note's bytes, and what the file grew by.
/// One create through the list's own handler, from IPv6 site `site`.
async fn create(
    store: &Arc<SqliteStore>,
    config: &Arc<Config>,
    site: &str,
    now_ms: i64,
    text: &str,
) -> Result<(), String> {
    let mut req = Request::new("POST", "/posts");
    req.headers.push(("host".into(), "127.0.0.1:8787".into()));
    req.body = serde_json::json!({"kind": "need", "note": text})
        .to_string()
        .into_bytes();
    let mut ctx = Ctx::new(&needhave::routes::API, store.clone(), config.clone(), site);
    ctx.now_ms = now_ms;
    let r = needhave::handle(&req, &ctx).await;
    if r.status != 201 {
        return Err(format!("{} {}", r.status, String::from_utf8_lossy(&r.body)));
    }
    Ok(())
}

/// Per post: the note's bytes, and what the file grew by for `posts`
/// posts of `note`, written after `after` ordinary posts (not counted).
async fn per_post(
    work: &Path,
    label: &str,
    (after, posts): (u64, u64),
    pgsz: Option<u64>,
    note: &dyn Fn(u64) -> String,
) -> Result<(i64, i64, Worst), String> {
    let path = crate::fresh_db(work, &format!("disk-{label}.db"));
    let store = Arc::new(SqliteStore::open(&path).map_err(|e| format!("{path}: {e}"))?);
    if let Some(bytes) = pgsz {
        store
            .with_connection(|c| {
                c.execute(
                    "INSERT INTO post_words (post_words, rank) VALUES ('pgsz', ?1)",
                    [bytes],
                )
            })
            .map_err(|e| e.to_string())?;
    }
    if let Ok(sql) = std::env::var("DISK_PREPARE") {
        store
            .with_connection(|c| c.execute_batch(&sql))
            .map_err(|e| e.to_string())?;
    }
    let config = Arc::new(Config {
        ip_salt: "bench".into(),
        ..Config::default()
    });
    let t0 = 1_800_000_000_000;
    let ordinary = Ordinary::new();
    for i in 0..after {
        let text = ordinary.note(1_000_000 + i);
        create(
            &store,
            &config,
            &format!("2001:db9:{i:x}::1"),
            t0 + i as i64,
            &text,
        )
        .await
        .map_err(|e| format!("{label}, ordinary post {i}: {e}"))?;
    }
    // The writer's merging after the list's switch to small leaves
    // writes its older segments again in them, once: a cost of reaching
    // 10,000 posts, not of the posts measured, so it is let finish.
    while after > 0
        && !store
            .with_connection(segments::settled)
            .map_err(|e| e.to_string())?
    {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let before = used_bytes(&store);
    let mut bytes = 0;
    let mut worst = Worst::default();
    for i in 0..posts {
        let text = note(i);
        bytes += text.len() as i64;
        let now = t0 + (after + i) as i64;
        create(&store, &config, &format!("2001:db8:{i:x}::1"), now, &text)
            .await
            .map_err(|e| format!("{label}, post {i}: {e}"))?;
        let n = i + 1;
        // On a young list only: there the file is the list, where past
        // 10,000 posts the growth over a few moves would charge these
        // posts with a merge of older segments under way.
        if after == 0 && notes::measured_size(n) {
            worst.see(n, bytes, used_bytes(&store) - before);
        }
    }
    let grew = used_bytes(&store) - before;
    worst.see(posts, bytes, grew);
    if std::env::var_os("DISK_TABLES").is_some() {
        // Where the bytes are, by table and index (pages in use).
        let tables = store.with_connection(|c| -> rusqlite::Result<Vec<(String, i64)>> {
            c.prepare(
                "SELECT name, sum(pgsize) FROM dbstat GROUP BY name \
                 ORDER BY 2 DESC LIMIT 12",
            )?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect()
        });
        for (name, used) in tables.map_err(|e| e.to_string())? {
            eprintln!("  {label}: {name} {} B/post", used / posts as i64);
        }
    }
    drop(store);
    if std::env::var_os("DISK_KEEP").is_none() {
        crate::fresh_db(work, &format!("disk-{label}.db"));
    }
    Ok((bytes / posts as i64, grew / posts as i64, worst))
}

pub async fn run(work: &Path, after: u64, posts: u64, pgsz: Option<u64>) -> Result<(), String> {
    let ordinary = Ordinary::new();
    let cases: Vec<Case> = vec![
        (
            "one word of 498 a",
            Box::new(|i| "a".repeat(498) + &tail(i)),
        ),
        (
            "U+FDFA x 498",
            Box::new(|i| "\u{fdfa}".repeat(498) + &tail(i)),
        ),
        ("ordinary words", Box::new(|i| ordinary.note(i))),
        ("random words of 1-10 letters", Box::new(random_words)),
        (
            "base64url",
            Box::new(|i| {
                from_alphabet(
                    i,
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
                )
            }),
        ),
        ("hex", Box::new(|i| from_alphabet(i, b"0123456789abcdef"))),
        (
            "124 words of 3 ASCII letters",
            Box::new(|i| unique_words(i, 124, 3, 97, 26)),
        ),
        (
            "55 words of 8 ASCII letters",
            Box::new(|i| unique_words(i, 55, 8, 97, 26)),
        ),
        (
            "55 words of 8 Deseret letters",
            Box::new(|i| unique_words(i, 55, 8, 0x10428, 40)),
        ),
        // Letters 7 apart from a point of their own: a post's pairs are
        // its own, but those of a post 40 later come back (20,000 pairs
        // in all), so segments merged share them.
        (
            "498 Han letters, 7 apart",
            Box::new(|i| han(i, |k| (i * 499 + k * 7) % 20000)),
        ),
        // Letters drawn from 20,000: nearly every pair is new to the list.
        (
            "498 Han letters, every pair new",
            Box::new(|i| han(i, |k| notes::mix(i * 499 + k) % 20000)),
        ),
        (
            "498 Han letters of 300 common ones",
            Box::new(|i| han(i, |k| notes::mix(i * 499 + k) % 300)),
        ),
    ];
    println!(
        "{posts} posts a case, each from its own IPv6 site, after {after} ordinary posts; bytes a post"
    );
    println!(
        "| note | note B | on disk | bound | on disk / bound | worst / bound, \
         before and after each move from post 127 (at posts) |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (label, note) in &cases {
        let file = label.replace(|c: char| !c.is_ascii_alphanumeric(), "-");
        let (note_bytes, on_disk, worst) =
            per_post(work, &file, (after, posts), pgsz, note.as_ref()).await?;
        let bound = 5 * note_bytes + 1024;
        let worst = match after {
            0 => format!("{:.2}× ({})", worst.ratio(), worst.posts),
            _ => "—".into(),
        };
        println!(
            "| {label} | {note_bytes} | {on_disk} | {bound} | {:.2}× | {worst} |",
            on_disk as f64 / bound as f64,
        );
    }
    Ok(())
}
