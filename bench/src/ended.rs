//! A list where most posts have ended, against the same list with none
//! ended: what a page costs once the sweep has taken the ended posts out
//! of the index of words (`store::index::sweep`).
//!
//!     needhave-bench ended [--work DIR] [--posts 1000000] [--ended 0.9] [--rounds 300] [--group 16]
//!
//! One list is seeded as `search` seeds it (the same notes), a third of the
//! posts that are to end carrying an expiry; a copy of its file is the
//! other list. In the copy, the posts that are to end do: the expiring
//! ones by time, the others by the rows a close and a removal write (half
//! each), spread over the list's history (`fate`). The pages are asked of
//! both through the list's own page function (`handlers::posts::find`,
//! one statement a page), the samples of the two lists alternated: with
//! none ended (its clock before every expiry), against the other list
//! with its posts ended but not swept, then just swept (the real sweep,
//! run to completion), then merged (one create, then the writer's idle
//! merging until it settles, on both lists). Goal: each page within 1.5×
//! (docs/performance.md).

use std::sync::Arc;
use std::time::Instant;

use needhave::handlers::posts::{find, page, Filter, Kind};
use needhave::search::{Cursor, Words};
use needhave::store::index::{sweep, SWEEP_ROUND};
use needhave::store::sqlite::SqliteStore;
use needhave::store::Store;
use needhave::{Config, Ctx};

use crate::scale::percentile;
use crate::search::{idle_moment, index_bytes, seed_expiring, segment_report};

/// How the `i`th post of the seeded list ends, on a list where `tenths`
/// tenths of the posts end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Open,
    Expired,
    Closed,
    Removed,
}

/// Exactly `tenths` in ten posts end, and as many of those of each last
/// digit of `i` (so of the notes with `gpu`, `i % 10 == 3`, and of each
/// kind): `i / 10 + 7 × (i % 10)` runs through every tenth as `i / 10`
/// does. Of the ended, a third each expire, are closed and are removed,
/// spread alike.
pub fn fate(i: u64, tenths: u64) -> Fate {
    if (i / 10 + 7 * (i % 10)) % 10 >= tenths {
        return Fate::Open;
    }
    match (i / 100) % 3 {
        0 => Fate::Expired,
        1 => Fate::Closed,
        _ => Fate::Removed,
    }
}

/// When post `i` (created at `i` ms) ends by itself, when it does.
pub fn expires_at(i: u64, tenths: u64) -> Option<i64> {
    (fate(i, tenths) == Fate::Expired).then_some(i as i64 + 1000)
}

/// The rows that end post `i` by a decision, as the close and the
/// operator's removal write them (their triggers take the post out of
/// `live` and record the end): `(SQL, id)`.
pub const CLOSE: &str = "INSERT INTO messages (id, post_id, role, ip_hash, created_at) \
     VALUES ('c' || substr(?1, 2), ?1, 'close', 'closer', ?2)";
pub const REMOVE: &str = "INSERT INTO messages (id, post_id, role, ip_hash, created_at, reason) \
     VALUES ('r' || substr(?1, 2), ?1, 'remove', 'operator', ?2, 'spam')";

/// A page asked of both lists.
struct Shape {
    name: String,
    kind: Option<Kind>,
    q: Option<String>,
    /// Pages walked before the one timed.
    skip: usize,
}

fn shapes(posts: u64, tenths: u64) -> Vec<Shape> {
    // A word of its own, in a note that stays open, halfway down the list.
    let rare = (0..posts / 2)
        .rev()
        .find(|&i| fate(i, tenths) == Fate::Open)
        .unwrap_or(0);
    let shape = |name: &str, kind, q: Option<&str>, skip| Shape {
        name: name.into(),
        kind,
        q: q.map(String::from),
        skip,
    };
    vec![
        shape("the bare list", None, None, 0),
        shape("kind=have", Some(Kind::Have), None, 0),
        Shape {
            name: format!("a rare word (x{rare:x}q, 1 post)"),
            kind: None,
            q: Some(format!("x{rare:x}q")),
            skip: 0,
        },
        shape("a common word (gpu), 1st page", None, Some("gpu"), 0),
        shape("a common word (gpu), 100th page", None, Some("gpu"), 99),
    ]
}

/// p50 and p99 in µs and the posts of the page, or `None` when the list
/// has no such page.
type Timing = Option<(f64, f64, usize)>;

/// The cursor of the page `shape` asks for on the list of `ctx`, walked
/// with the same statement; `None` when the list has fewer pages.
async fn cursor(ctx: &Ctx, shape: &Shape) -> Option<Option<Cursor>> {
    let words = shape.q.as_deref().and_then(Words::parse);
    let mut before = None;
    for _ in 0..shape.skip {
        let filter = Filter::new(shape.kind, words.clone(), 100, before);
        let found = find(ctx, &filter, None, None).await.ok()?;
        before = Some(page(found.rows, 100, ctx.now_ms).next?);
    }
    Some(before)
}

/// The page of `shape` on both lists, `rounds` samples each, alternated
/// (each round in the other order from the last).
async fn time_both(ctxs: [&Ctx; 2], shape: &Shape, rounds: usize) -> [Timing; 2] {
    let words = shape.q.as_deref().and_then(Words::parse);
    let mut at = [None, None];
    for (side, ctx) in ctxs.iter().enumerate() {
        at[side] = cursor(ctx, shape).await;
    }
    let mut samples: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    let mut sizes = [0, 0];
    for round in 0..rounds {
        for k in 0..2 {
            let side = if round % 2 == 0 { k } else { 1 - k };
            let Some(before) = at[side] else { continue };
            let filter = Filter::new(shape.kind, words.clone(), 100, before);
            let t = Instant::now();
            let Ok(found) = find(ctxs[side], &filter, None, None).await else {
                continue;
            };
            let posts = page(found.rows, 100, ctxs[side].now_ms).posts;
            samples[side].push(t.elapsed().as_nanos() as u64);
            sizes[side] = posts.len();
        }
    }
    let timing = |side: usize| -> Timing {
        (!samples[side].is_empty()).then(|| {
            (
                percentile(&samples[side], 0.5) / 1e3,
                percentile(&samples[side], 0.99) / 1e3,
                sizes[side],
            )
        })
    };
    [timing(0), timing(1)]
}

fn print_phase(title: &str, shapes: &[Shape], rows: &[[Timing; 2]]) {
    println!("\n{title}\n");
    println!("| page (100 posts) | none ended p50 / p99 µs | ended p50 / p99 µs | ratio p50 | ratio p99 | posts (none / ended) |");
    println!("|---|---|---|---|---|---|");
    let cell = |t: &Timing| match t {
        Some((p50, p99, _)) => format!("{p50:.0} / {p99:.0}"),
        None => "— (no such page)".into(),
    };
    for (shape, [none, ended]) in shapes.iter().zip(rows) {
        let (r50, r99) = match (none, ended) {
            (Some(a), Some(b)) => (format!("{:.2}×", b.0 / a.0), format!("{:.2}×", b.1 / a.1)),
            _ => ("—".into(), "—".into()),
        };
        let size = |t: &Timing| t.map_or("—".into(), |t| t.2.to_string());
        println!(
            "| {} | {} | {} | {r50} | {r99} | {} / {} |",
            shape.name,
            cell(none),
            cell(ended),
            size(none),
            size(ended)
        );
    }
}

async fn phase(ctxs: [&Ctx; 2], shapes: &[Shape], rounds: usize) -> Vec<[Timing; 2]> {
    let mut rows = Vec::new();
    for shape in shapes {
        rows.push(time_both(ctxs, shape, rounds).await);
    }
    rows
}

pub async fn run(
    work: &std::path::Path,
    posts: u64,
    ended: f64,
    rounds: usize,
    group: u64,
) -> Result<(), String> {
    let tenths = (ended * 10.0).round().clamp(0.0, 10.0) as u64;
    let config = Arc::new(Config {
        ip_salt: "bench".into(),
        ..Config::default()
    });
    let path = |name: &str| work.join(name).to_string_lossy().into_owned();
    let (none_path, ended_path) = (path("ended-none.db"), path("ended-most.db"));
    let t = Instant::now();
    let none = seed_expiring(&none_path, posts, group, None, |i| expires_at(i, tenths))?;
    none.checkpoint().map_err(|e| e.0)?;
    eprintln!(
        "ended: seeded {posts} posts in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{ended_path}{suffix}"));
    }
    std::fs::copy(&none_path, &ended_path).map_err(|e| e.to_string())?;
    let most = SqliteStore::open(&ended_path).map_err(|e| e.0)?;

    // The ends by a decision, as their rows are written.
    let t = Instant::now();
    let decided = most
        .with_connection(|c| -> rusqlite::Result<u64> {
            c.execute_batch("PRAGMA synchronous = OFF; BEGIN")?;
            let (mut close, mut remove) = (c.prepare(CLOSE)?, c.prepare(REMOVE)?);
            let mut decided = 0;
            for i in 0..posts {
                let id = format!("{i:032x}");
                match fate(i, tenths) {
                    Fate::Closed => close.execute(rusqlite::params![id, i as i64 + 500])?,
                    Fate::Removed => remove.execute(rusqlite::params![id, i as i64 + 500])?,
                    _ => continue,
                };
                decided += 1;
            }
            c.execute_batch("COMMIT; PRAGMA synchronous = FULL")?;
            Ok(decided)
        })
        .map_err(|e| e.to_string())?;
    eprintln!(
        "ended: {decided} posts closed or removed in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let none: Arc<SqliteStore> = Arc::new(none);
    let most: Arc<SqliteStore> = Arc::new(most);
    let ctx = |store: &Arc<SqliteStore>, now: Option<i64>| {
        let store: Arc<dyn Store> = store.clone();
        let mut ctx = Ctx::new(&needhave::routes::API, store, config.clone(), "127.0.0.1");
        if let Some(now) = now {
            ctx.now_ms = now;
        }
        ctx
    };
    // The list with none ended reads at a time before every expiry.
    let (none_ctx, most_ctx) = (ctx(&none, Some(0)), ctx(&most, None));
    let ctxs = [&none_ctx, &most_ctx];
    let shapes = shapes(posts, tenths);

    let unswept = phase(ctxs, &shapes, rounds).await;
    let bytes_before = index_bytes(&most, posts).0;

    let t = Instant::now();
    let now = needhave::platform::now_ms();
    let (mut ends, mut rounds_swept) = (0, 0);
    loop {
        let n = sweep(&*most, now, SWEEP_ROUND).await.map_err(|e| e.0)?;
        if n == 0 {
            break;
        }
        ends += n;
        rounds_swept += 1;
    }
    let swept_secs = t.elapsed().as_secs_f64();
    let swept_segments = segment_report(&most);
    let swept = phase(ctxs, &shapes, rounds).await;

    let (none_secs, none_steps) = idle_moment(&none, &config).await?;
    let (most_secs, most_steps) = idle_moment(&most, &config).await?;
    let merged = phase(ctxs, &shapes, rounds).await;
    let bytes_after = index_bytes(&most, posts).0;

    println!(
        "\n{posts} posts; {}% ended in the second list (a third each expired, closed, removed); \
         pages of 100, {rounds} samples a page and list, the lists alternated",
        tenths * 10
    );
    print_phase(
        "Ended, not swept (the index still holds the ended posts):",
        &shapes,
        &unswept,
    );
    print_phase("Just swept:", &shapes, &swept);
    print_phase(
        "Merged (one create, then the writer's idle merging until it settles, both lists):",
        &shapes,
        &merged,
    );
    println!(
        "\nthe sweep: {ends} ends in {rounds_swept} rounds of {SWEEP_ROUND} in {swept_secs:.1} s \
         ({:.0} a second), leaving {swept_segments}",
        ends as f64 / swept_secs
    );
    println!(
        "the idle merging: {none_steps} steps in {none_secs:.1} s (none ended), \
         {most_steps} steps in {most_secs:.1} s (ended, after the sweep)"
    );
    println!(
        "the index of words of the ended list: {bytes_before:.0} bytes a post before the sweep, \
         {bytes_after:.0} after it and the merging (dbstat, over all {posts} posts)"
    );
    let none_bytes = index_bytes(&none, posts).0;
    println!("the index of words of the list with none ended: {none_bytes:.0} bytes a post");
    Ok(())
}
