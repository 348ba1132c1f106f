//! Finding posts at 1 k and at 1 M posts: the list's own page function
//! (`handlers::posts::find`, one statement per page) on a database seeded
//! directly with SQL, with notes whose words are spread so that each query
//! has a known selectivity. Also the index's bytes per post (SQLite's
//! `dbstat`) and create throughput with the index against without.
//!
//!     needhave-bench search [--work DIR] [--large 1000000] [--small 1000] [--rounds 300]

use std::sync::Arc;
use std::time::Instant;

use rusqlite::params;

use needhave::handlers::posts::{find, page, Filter, Kind};
use needhave::rules::words::index_text;
use needhave::search::{Cursor, Words};
use needhave::store::sqlite::SqliteStore;
use needhave::{Config, Ctx};

use crate::scale::percentile;

/// Fillers every note has three of: each in about 1 note in 65.
const FILLERS: &[&str] = &[
    "spare", "ladder", "lamp", "desk", "chair", "monitor", "cable", "router", "tent", "stove",
    "kayak", "drill", "saw", "piano", "guitar", "violin", "camera", "lens", "tripod", "printer",
    "scanner", "laptop", "phone", "charger", "battery", "bike", "helmet", "pump", "lock", "rack",
    "trailer", "van", "truck", "boat", "oar", "sail", "anchor", "rope", "net", "rod", "reel",
    "bait", "hook", "boots", "jacket", "gloves", "scarf", "hat", "coat", "skis", "poles", "board",
    "wax", "skates", "sled", "tools", "paint", "brush", "roller", "tape", "glue", "nails",
    "screws", "bolts", "washers",
];

/// The `i`th note of the seeded list, and its kind (also what
/// `d1_seed` writes for the Worker's figures).
pub fn note(i: u64) -> (Kind, String) {
    let kind = if i.is_multiple_of(2) {
        Kind::Need
    } else {
        Kind::Have
    };
    let f = |k: u64| FILLERS[((i / 7 + k * 31 + i * k) % FILLERS.len() as u64) as usize];
    // `gpu` in 10% of the notes; a word of its own in every note (rare);
    // Chinese in 5%.
    let gpu = if i % 10 == 3 { " gpu tonight" } else { "" };
    let zh = if i % 20 == 7 {
        " 我有一辆自行车"
    } else {
        ""
    };
    let note = format!(
        "{} a {} and a {}{gpu}, ask for item x{i:x}q{zh} near {}",
        kind.as_str(),
        f(1),
        f(2),
        f(3)
    );
    (kind, note)
}

fn seed(path: &str, n: u64, indexed: bool) -> Result<SqliteStore, String> {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
    let store = SqliteStore::open(path).map_err(|e| e.to_string())?;
    store
        .with_connection(|c| -> rusqlite::Result<()> {
            c.execute_batch("BEGIN")?;
            {
                let mut post = c.prepare(
                    "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at, note_key) \
                     VALUES (?1, ?2, ?3, 'h', 'ip', ?4, ?5)",
                )?;
                let mut words = c.prepare(
                    "INSERT INTO post_words (rowid, words) VALUES (last_insert_rowid(), ?1)",
                )?;
                for i in 0..n {
                    let (kind, note) = note(i);
                    let key = needhave::rules::note_key(&note);
                    post.execute(params![format!("{i:032x}"), kind.as_str(), note, i as i64, key])?;
                    if indexed {
                        words.execute(params![index_text(kind, &note)])?;
                    }
                }
            }
            c.execute_batch("COMMIT")?;
            c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); ANALYZE;")?;
            Ok(())
        })
        .map_err(|e| e.to_string())?;
    Ok(store)
}

/// Bytes the index holds per post: the FTS5 table's shadow tables and the
/// kind index, as `dbstat` counts their pages.
fn index_bytes(store: &SqliteStore, n: u64) -> (f64, f64) {
    store.with_connection(|c| {
        let bytes = |pattern: &str| -> f64 {
            c.query_row(
                "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE ?1",
                [pattern],
                |r| r.get::<_, i64>(0),
            )
            .unwrap_or(0) as f64
        };
        (
            bytes("post_words%") / n as f64,
            bytes("posts_kind") / n as f64,
        )
    })
}

struct Query {
    name: &'static str,
    kind: Option<Kind>,
    q: Option<&'static str>,
    /// Pages to walk before the one timed (99: the 100th page).
    skip: usize,
}

const QUERIES: &[Query] = &[
    Query {
        name: "kind=have",
        kind: Some(Kind::Have),
        q: None,
        skip: 0,
    },
    Query {
        name: "q of a rare word (1 post)",
        kind: None,
        q: Some("x7fq"),
        skip: 0,
    },
    Query {
        name: "q of a word in 10% (gpu)",
        kind: None,
        q: Some("gpu"),
        skip: 0,
    },
    Query {
        name: "two words (gpu tonight)",
        kind: None,
        q: Some("gpu tonight"),
        skip: 0,
    },
    Query {
        name: "a prefix of one letter (l)",
        kind: None,
        q: Some("l"),
        skip: 0,
    },
    Query {
        name: "CJK (自行车, 5%)",
        kind: None,
        q: Some("自行车"),
        skip: 0,
    },
    Query {
        name: "kind=need and gpu",
        kind: Some(Kind::Need),
        q: Some("gpu"),
        skip: 0,
    },
    Query {
        name: "100th page of gpu",
        kind: None,
        q: Some("gpu"),
        skip: 99,
    },
];

/// p50 and p99 of one query, in microseconds, and the posts of its page.
async fn time(ctx: &Ctx, query: &Query, rounds: usize) -> Option<(f64, f64, usize)> {
    let words = query.q.and_then(Words::parse);
    let mut before: Option<Cursor> = None;
    let filter = |before| Filter::new(query.kind, words.clone(), 100, before);
    for _ in 0..query.skip {
        let found = find(ctx, &filter(before), None, None).await.ok()?;
        before = Some(page(&found.rows, 100).next?);
    }
    let mut samples = Vec::with_capacity(rounds);
    let mut size = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        let found = find(ctx, &filter(before), None, None).await.ok()?;
        let posts = page(&found.rows, 100).posts;
        samples.push(t.elapsed().as_nanos() as u64);
        size = posts.len();
    }
    samples.sort_unstable();
    Some((
        percentile(&samples, 0.5) / 1e3,
        percentile(&samples, 0.99) / 1e3,
        size,
    ))
}

/// Creates per second through the list's own create (one batch: checks,
/// insert, index), on a fresh file.
async fn creates(path: &str, n: u64, indexed: bool) -> Result<f64, String> {
    let store = seed(path, 1000, true)?;
    if !indexed {
        // The same batch without its index statement: what writing the
        // index costs is the difference.
        store.with_connection(|c| {
            c.execute_batch(
                "DROP TABLE post_words; CREATE TABLE post_words (rowid INTEGER PRIMARY KEY, words TEXT); \
                 CREATE TRIGGER post_words_off BEFORE INSERT ON post_words BEGIN SELECT RAISE(IGNORE); END;",
            )
        })
        .map_err(|e| e.to_string())?;
    }
    let store: Arc<dyn needhave::store::Store> = Arc::new(store);
    let config = Arc::new(Config {
        ip_salt: "bench".into(),
        ..Config::default()
    });
    let t = Instant::now();
    for i in 0..n {
        // A client per post: the create rate is not what is measured.
        let ctx = Ctx::new(
            &needhave::routes::API,
            store.clone(),
            config.clone(),
            &format!("10.{}.{}.{}", i >> 16 & 255, i >> 8 & 255, i & 255),
        );
        let body = needhave::handlers::posts::CreatePost {
            kind: Some("have".into()),
            note: format!("bench create {i} with a few words of a note, gpu {i:x}"),
        };
        needhave::handlers::posts::create(&ctx, body)
            .await
            .map_err(|e| format!("create {i}: {:?}", e.0))?;
    }
    Ok(n as f64 / t.elapsed().as_secs_f64())
}

pub async fn run(
    work: &std::path::Path,
    large: u64,
    small: u64,
    rounds: usize,
) -> Result<(), String> {
    let config = Arc::new(Config::default());
    let mut results = Vec::new();
    let mut sizes = Vec::new();
    for n in [small, large] {
        let path = work
            .join(format!("search-{n}.db"))
            .to_string_lossy()
            .into_owned();
        let t = Instant::now();
        let store = seed(&path, n, true)?;
        eprintln!(
            "search: seeded {n} posts in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        sizes.push((n, index_bytes(&store, n)));
        let store: Arc<dyn needhave::store::Store> = Arc::new(store);
        let ctx = Ctx::new(&needhave::routes::API, store, config.clone(), "127.0.0.1");
        let mut row = Vec::new();
        for q in QUERIES {
            row.push(time(&ctx, q, rounds).await);
        }
        results.push(row);
    }
    println!("| query (a page of 100) | {small} posts p50 / p99 µs | {large} posts p50 / p99 µs | ratio p50 | posts on the page ({large}) |");
    println!("|---|---|---|---|---|");
    let cell = |r: &Option<(f64, f64, usize)>| match r {
        Some((p50, p99, _)) => format!("{p50:.0} / {p99:.0}"),
        None => "— (no such page)".into(),
    };
    for (i, q) in QUERIES.iter().enumerate() {
        let (a, b) = (&results[0][i], &results[1][i]);
        let ratio = match (a, b) {
            (Some(a), Some(b)) => format!("{:.2}×", b.0 / a.0),
            _ => "—".into(),
        };
        let size = b.as_ref().map_or("—".into(), |b| b.2.to_string());
        println!(
            "| {} | {} | {} | {ratio} | {size} |",
            q.name,
            cell(a),
            cell(b)
        );
    }
    if let (Some(first), Some(hundredth)) = (&results[1][2], &results[1][7]) {
        println!(
            "\n100th page against the first, gpu at {large} posts: {:.2}× (p50)",
            hundredth.0 / first.0
        );
    }
    println!();
    for (n, (words, kind)) in sizes {
        println!(
            "index bytes per post at {n} posts: {words:.0} (post_words) + {kind:.0} (posts_kind)"
        );
    }
    let creates_n = 2000;
    let with = creates(
        &work.join("search-create-on.db").to_string_lossy(),
        creates_n,
        true,
    )
    .await?;
    let without = creates(
        &work.join("search-create-off.db").to_string_lossy(),
        creates_n,
        false,
    )
    .await?;
    println!(
        "\ncreates/s through the create batch, {creates_n} posts: {with:.0} with the index, {without:.0} without: {:.2}×",
        with / without
    );
    Ok(())
}
