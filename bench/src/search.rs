//! Finding posts at 1 k and at 1 M posts: the list's own page function
//! (`handlers::posts::find`, one statement per page) on a database seeded
//! directly with SQL, with notes whose words are spread so that each query
//! has a known selectivity. Also the index's bytes per post (SQLite's
//! `dbstat`) and create throughput with the index against without.
//!
//!     needhave-bench search [--work DIR] [--large 1000000] [--small 1000] [--rounds 300] [--group 16] [--creates 5] [--pgsz BYTES]
//!
//! `--group`: posts per seeding transaction (0: the whole seed in one).
//! `--creates`: rounds of the create comparison, with and without the
//! index alternated (the median ratio is the figure). `--pgsz`: FTS5's
//! leaf size in the seeded files from their first post, instead of the
//! list's (`store::WORDS_LEAF_YOUNG` until the 10,000th post, then
//! `store::WORDS_LEAF`).

use std::sync::Arc;
use std::time::Instant;

use rusqlite::params;

use needhave::handlers::posts::{find, page, Filter, Kind};
use needhave::rules::hot::HotSet;
use needhave::rules::words::waiting_text;
use needhave::search::{Cursor, Words};
use needhave::store::hot_cold::CATCH_UP;
use needhave::store::sqlite::{segments, SqliteStore};
use needhave::store::{NEW_WORDS, SMALL_LEAVES};
use needhave::{Config, Ctx};

use crate::corpus::search_note as note;
use crate::scale::percentile;

/// Posts per transaction when seeding, by default: what a group commit of
/// the create batch writes on a list with a few clients at once. FTS5
/// writes a segment per transaction, so the segments of a list written this
/// way are what a live list has (one transaction for the whole seed makes
/// fewer and bigger ones).
pub const SEED_GROUP: u64 = 16;

fn seed(path: &str, n: u64) -> Result<SqliteStore, String> {
    seed_grouped(path, n, SEED_GROUP, None)
}

/// `seed`, `group` posts a transaction (0: all in one).
/// `pgsz`: FTS5's leaf size for the file's index, when not the list's
/// (a setting FTS5 keeps in the file).
pub fn seed_grouped(
    path: &str,
    n: u64,
    group: u64,
    pgsz: Option<u64>,
) -> Result<SqliteStore, String> {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
    let store = SqliteStore::open(path).map_err(|e| e.to_string())?;
    store
        .with_connection(|c| -> rusqlite::Result<()> {
            if let Some(bytes) = pgsz {
                c.execute(
                    "INSERT INTO post_words (post_words, rank) VALUES ('pgsz', ?1)",
                    [bytes],
                )?;
            }
            // Durability is not what the seed measures.
            c.execute_batch("PRAGMA synchronous = OFF; BEGIN")?;
            {
                // Each post, then its words as the create batch writes them
                // (the store's own statements): into words_new, and 64
                // posts a move into the index.
                let mut post = c.prepare(
                    "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at, note_key) \
                     VALUES (?1, ?2, ?3, 'h', 'ip', ?4, ?5)",
                )?;
                let mut new_words = c.prepare(NEW_WORDS)?;
                // A leaf size asked for stays; otherwise the list's switch
                // to small leaves at its 10,000th post.
                let mut small_leaves = match pgsz {
                    Some(_) => None,
                    None => Some(c.prepare(SMALL_LEAVES)?),
                };
                // The writer's copy of the hot set, as a server keeps it.
                let mut hot = HotSet::new();
                let mut catch_up = c.prepare(CATCH_UP)?;
                for i in 0..n {
                    if group > 0 && i > 0 && i % group == 0 {
                        c.execute_batch("COMMIT; BEGIN")?;
                    }
                    let (kind, note) = note(i);
                    let key = needhave::rules::note_key(&note);
                    let id = format!("{i:032x}");
                    post.execute(params![id, kind.as_str(), note, i as i64, key])?;
                    let words = waiting_text(kind, &note);
                    let tokens = hot.tokens(kind, &id, &words);
                    let candidates = serde_json::to_string(&tokens.candidates)
                        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
                    new_words.execute(params![
                        id,
                        words,
                        tokens.text,
                        candidates,
                        tokens.version,
                        tokens.cold
                    ])?;
                    if let Some(statement) = small_leaves.as_mut() {
                        statement.execute([])?;
                    }
                    let promoted = catch_up
                        .query_map([hot.version()], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect::<rusqlite::Result<Vec<(i64, String)>>>()?;
                    hot.extend(promoted);
                }
            }
            c.execute_batch("COMMIT; PRAGMA synchronous = FULL")?;
            // No ANALYZE: the list never runs it, and its statistics change
            // what a page costs. With STAT4's samples of `post_words_idx`,
            // SQLite prepares FTS5's own lookup statement again at every
            // bind (its range on that index depends on the bound term), once
            // per term and segment of every page
            // (docs/design/search-index.md, "Segments, and the writer's
            // merging").
            c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
            Ok(())
        })
        .map_err(|e| e.to_string())?;
    Ok(store)
}

/// Bytes the index holds per post: both parts' shadow tables, the hot set
/// and the words waiting for the move, and the kind index, as `dbstat`
/// counts their pages.
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
        let words = [
            "post_words%",
            "post_cold%",
            "hot_prefixes",
            "sqlite_autoindex_hot_prefixes%",
            "words_new",
        ]
        .iter()
        .map(|t| bytes(t))
        .sum::<f64>();
        (words / n as f64, bytes("posts_kind") / n as f64)
    })
}

struct Query {
    name: &'static str,
    kind: Option<Kind>,
    q: Option<&'static str>,
    /// Pages to walk before the one timed (99: the 100th page).
    skip: usize,
    /// Posts a page: what both list sizes fill, so that the two sizes
    /// compare pages of the same number of posts.
    limit: u32,
}

/// A query of the table: its name, kind, words, pages skipped and page size.
const fn query(
    name: &'static str,
    kind: Option<Kind>,
    q: Option<&'static str>,
    skip: usize,
    limit: u32,
) -> Query {
    Query {
        name,
        kind,
        q,
        skip,
        limit,
    }
}

/// The words every row's ratio to a single common word's first page is
/// taken against (the table's last column).
const ONE_COMMON_WORD: &str = "gpu";

/// The long word half the notes hold (`corpus::COMMON`) beside a letter
/// that each of them also holds a word of, for each of seven letters.
const LONG_AND_LETTERS: &str = "commonword b c d f g h j";

/// A query as long as one may be, of a script written without spaces: a
/// hundred Han letters, each pair new, that no note holds.
const HAN_RUN: &str = "一万与丕东丣个丱丸丿乆乍乔乛乢乩买乷乾亅二亓亚亡亨亯亶亽仄介仒仙仠仧仮仵仼伃伊休优伟伦伭伴伻佂佉佐佗佞佥佬佳佺侁侈侏侖依侤侫侲侹俀俇俎俕俜俣俪俱俸俿倆倍倔倛倢倩倰倷倾偅偌偓做偡偨偯偶偽傄傋傒備傠傧傮債";

const QUERIES: &[Query] = &[
    query("kind=have", Some(Kind::Have), None, 0, 100),
    query("q of a rare word (1 post)", None, Some("x7fq"), 0, 100),
    query("q of a word in 10% (gpu)", None, Some(ONE_COMMON_WORD), 0, 100),
    query("two words (gpu tonight)", None, Some("gpu tonight"), 0, 100),
    query("a prefix of one letter (l)", None, Some("l"), 0, 100),
    // 5% of 1,000 posts is 50: a page of 40 (and the one more that says
    // `next`) is full at both sizes, where a page of 100 would hold 50
    // posts at 1 k and 100 at 1 M.
    query("CJK (自行车, 5%), a page of 40", None, Some("自行车"), 0, 40),
    query("kind=need and gpu", Some(Kind::Need), Some("gpu"), 0, 100),
    query("100th page of gpu", None, Some("gpu"), 99, 100),
    query("a long word in 50% (commonword)", None, Some("commonword"), 0, 100),
    query("its first nine letters (commonwor)", None, Some("commonwor"), 0, 100),
    query(
        "the long word and seven letters (commonword b c d f g h j)",
        None,
        Some(LONG_AND_LETTERS),
        0,
        100,
    ),
    query("seven letters (b c d f g h j)", None, Some("b c d f g h j"), 0, 100),
    query(
        "the long word eight times",
        None,
        Some("commonword commonword commonword commonword commonword commonword commonword commonword"),
        0,
        100,
    ),
    query(
        "the long word and seven of its prefixes (c co … commonw commonword)",
        None,
        Some("c co com comm commo common commonw commonword"),
        0,
        100,
    ),
    query("a rare word and the long word (x7fq commonword)", None, Some("x7fq commonword"), 0, 100),
    query("a word no note holds, eight letters of the long one (commonwox)", None, Some("commonwox"), 0, 100),
    query("the long word and a letter more (commonwordy, 0 posts)", None, Some("commonwordy"), 0, 100),
    query(
        "kind=need, the long word and seven letters",
        Some(Kind::Need),
        Some(LONG_AND_LETTERS),
        0,
        100,
    ),
    query("the long word and CJK in one word (commonword自行车), a page of 40", None, Some("commonword自行车"), 0, 40),
    query("CJK and Latin, eight words (我有 一辆 自行车 commonword b c d f)", None, Some("我有 一辆 自行车 commonword b c d f"), 0, 40),
    query("a run of 100 Han letters no note holds (99 pairs)", None, Some(HAN_RUN), 0, 100),
    query("100th page of the long word and seven letters", None, Some(LONG_AND_LETTERS), 99, 100),
];

/// p50 and p99 of one query, in microseconds, and the posts of its page.
async fn time(ctx: &Ctx, query: &Query, rounds: usize) -> Option<(f64, f64, usize)> {
    let words = query.q.and_then(Words::parse);
    let mut before: Option<Cursor> = None;
    let limit = query.limit;
    let filter = |before| Filter::new(query.kind, words.clone(), limit, before);
    for _ in 0..query.skip {
        let found = find(ctx, &filter(before), None, None).await.ok()?;
        before = Some(page(found.rows, limit as usize, ctx.now_ms).next?);
    }
    let mut samples = Vec::with_capacity(rounds);
    let mut size = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        let found = find(ctx, &filter(before), None, None).await.ok()?;
        let posts = page(found.rows, limit as usize, ctx.now_ms).posts;
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
    let store = seed(path, 1000)?;
    if !indexed {
        // The same batch without its index statement: what writing the
        // index costs is the difference.
        store
            .with_connection(crate::index_off::turn_off)
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
            expires_in: None,
        };
        needhave::handlers::posts::create(&ctx, body)
            .await
            .map_err(|e| format!("create {i}: {:?}", e.0))?;
    }
    Ok(n as f64 / t.elapsed().as_secs_f64())
}

/// Waits until the store's writer has merged the index as far as it keeps
/// it merged (`segments::settled`), after one post created through the
/// list's own create (a commit, then an empty queue: an idle moment).
/// Returns the seconds it took and the merge steps it made.
async fn idle_moment(store: &Arc<SqliteStore>, config: &Arc<Config>) -> Result<(f64, u64), String> {
    use std::sync::atomic::Ordering;
    let steps = || store.group_stats().merges.load(Ordering::Relaxed);
    let before = steps();
    let t = Instant::now();
    let ctx = Ctx::new(
        &needhave::routes::API,
        store.clone(),
        config.clone(),
        "10.255.255.254",
    );
    let body = needhave::handlers::posts::CreatePost {
        kind: Some("need".into()),
        note: "an idle moment for the bench".into(),
        expires_in: None,
    };
    needhave::handlers::posts::create(&ctx, body)
        .await
        .map_err(|e| format!("create: {:?}", e.0))?;
    loop {
        let settled = store
            .with_connection(segments::settled)
            .map_err(|e| e.to_string())?;
        if settled {
            break;
        }
        if t.elapsed().as_secs() > 3600 {
            return Err("the index was still merging after an hour".into());
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Ok((t.elapsed().as_secs_f64(), steps() - before))
}

/// The index's segments, by level (sizes in leaf pages), for the report.
fn segment_report(store: &SqliteStore) -> String {
    store.with_connection(|c| match segments::levels(c) {
        Ok(levels) => {
            let n: usize = levels.iter().map(|l| l.segments.len()).sum();
            let per_level: Vec<String> = levels
                .iter()
                .filter(|l| !l.segments.is_empty())
                .map(|l| l.segments.len().to_string())
                .collect();
            format!("{n} segments (by level: {})", per_level.join(" "))
        }
        Err(e) => format!("segments unknown: {e}"),
    })
}

type Timings = Vec<Option<(f64, f64, usize)>>;

fn print_table(title: &str, small: u64, large: u64, results: &[Timings]) {
    println!("\n{title}\n");
    println!("| query (a page of 100 unless said) | {small} posts p50 / p99 µs | {large} posts p50 / p99 µs | ratio p50 | ratio p99 | posts on the page ({large}) | p50 ÷ {ONE_COMMON_WORD}'s first page ({large}) |");
    println!("|---|---|---|---|---|---|---|");
    let common = QUERIES
        .iter()
        .position(|q| q.skip == 0 && q.kind.is_none() && q.q == Some(ONE_COMMON_WORD))
        .and_then(|i| results[1][i].as_ref());
    let cell = |r: &Option<(f64, f64, usize)>| match r {
        Some((p50, p99, _)) => format!("{p50:.0} / {p99:.0}"),
        None => "— (no such page)".into(),
    };
    for (i, q) in QUERIES.iter().enumerate() {
        let (a, b) = (&results[0][i], &results[1][i]);
        let (r50, r99) = match (a, b) {
            (Some(a), Some(b)) => (format!("{:.2}×", b.0 / a.0), format!("{:.2}×", b.1 / a.1)),
            _ => ("—".into(), "—".into()),
        };
        let size = b.as_ref().map_or("—".into(), |b| b.2.to_string());
        let to_common = match (b, common) {
            (Some(b), Some(c)) => format!("{:.2}×", b.0 / c.0),
            _ => "—".into(),
        };
        println!(
            "| {} | {} | {} | {r50} | {r99} | {size} | {to_common} |",
            q.name,
            cell(a),
            cell(b)
        );
    }
    // Each deep page against the first page of the same query.
    for (i, q) in QUERIES.iter().enumerate().filter(|(_, q)| q.skip > 0) {
        let first = QUERIES
            .iter()
            .position(|f| f.skip == 0 && f.q == q.q && f.kind == q.kind && f.limit == q.limit);
        if let (Some(first), Some(deep)) =
            (first.and_then(|f| results[1][f].as_ref()), &results[1][i])
        {
            println!(
                "\n{} against its first page at {large} posts: {:.2}× (p50), {:.2}× (p99)",
                q.name,
                deep.0 / first.0,
                deep.1 / first.1
            );
        }
    }
}

pub async fn run(
    work: &std::path::Path,
    large: u64,
    small: u64,
    rounds: usize,
    group: u64,
    creates_rounds: u64,
    pgsz: Option<u64>,
) -> Result<(), String> {
    let config = Arc::new(Config {
        ip_salt: "bench".into(),
        ..Config::default()
    });
    // [as written, after an idle moment][small, large]
    let mut results: [Vec<Timings>; 2] = [Vec::new(), Vec::new()];
    let mut sizes = Vec::new();
    let mut notes = Vec::new();
    let mut live = Vec::new();
    for n in [small, large] {
        let path = work
            .join(format!("search-{n}.db"))
            .to_string_lossy()
            .into_owned();
        let t = Instant::now();
        let store = Arc::new(seed_grouped(&path, n, group, pgsz)?);
        eprintln!(
            "search: seeded {n} posts in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        sizes.push((n, index_bytes(&store, n)));
        let written = segment_report(&store);
        let dyn_store: Arc<dyn needhave::store::Store> = store.clone();
        let ctx = Ctx::new(
            &needhave::routes::API,
            dyn_store,
            config.clone(),
            "127.0.0.1",
        );
        let mut row = Vec::new();
        for q in QUERIES {
            row.push(time(&ctx, q, rounds).await);
        }
        results[0].push(row);
        let (secs, steps) = idle_moment(&store, &config).await?;
        let idle = segment_report(&store);
        eprintln!("search: {n} posts merged in {secs:.1} s, {steps} steps");
        let mut row = Vec::new();
        for q in QUERIES {
            row.push(time(&ctx, q, rounds).await);
        }
        results[1].push(row);
        live.push((n, live_pairs(&path, rounds)?));
        notes.push(format!(
            "{n} posts: as written {written}; after an idle moment {idle} ({steps} merge steps, {secs:.1} s)"
        ));
        drop(ctx);
    }
    print_table(
        "As written (posts in transactions of --group, no idle moment):",
        small,
        large,
        &results[0],
    );
    print_table(
        "After an idle moment (one create, then the writer's merging until settled):",
        small,
        large,
        &results[1],
    );
    print_live(&live);
    println!();
    for note in notes {
        println!("{note}");
    }
    println!();
    for (n, (words, kind)) in sizes {
        println!(
            "index bytes per post at {n} posts, as written: {words:.0} (the index of words: both parts, the hot set, words_new) + {kind:.0} (posts_kind)"
        );
    }
    let creates_n = 2000;
    let on = work
        .join("search-create-on.db")
        .to_string_lossy()
        .into_owned();
    let off = work
        .join("search-create-off.db")
        .to_string_lossy()
        .into_owned();
    println!(
        "\ncreates/s through the create batch, {creates_n} posts a round, with the index and without, \
         the order alternated each round:\n"
    );
    let mut ratios = Vec::new();
    for round in 0..creates_rounds.max(1) {
        let (with, without) = if round % 2 == 0 {
            let with = creates(&on, creates_n, true).await?;
            (with, creates(&off, creates_n, false).await?)
        } else {
            let without = creates(&off, creates_n, false).await?;
            (creates(&on, creates_n, true).await?, without)
        };
        println!(
            "round {}: {with:.0} with, {without:.0} without: {:.2}×",
            round + 1,
            with / without
        );
        ratios.push(with / without);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "median of {} rounds: {:.2}× (lowest {:.2}×, highest {:.2}×)",
        ratios.len(),
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1]
    );
    Ok(())
}

/// The marks of the kinds a page asks for, as the list binds them.
fn marks(kind: Option<Kind>) -> &'static str {
    match kind {
        Some(Kind::Need) => "[\"\u{207f}\"]",
        Some(Kind::Have) => "[\"\u{2b0}\"]",
        None => "[\"\u{207f}\",\"\u{2b0}\"]",
    }
}

/// Each query's p50 with the join to `live` and without it, µs (`None`:
/// no words statement, or no such page).
type LivePairs = Vec<Option<(f64, f64)>>;

/// p50 in microseconds of each query's page statement with its join to
/// `live` and without it ([`without_live`]), on the file at `path` after
/// its idle moment: one read-only connection, the two statements run in
/// turn each round (which goes first alternating), every row read. The
/// bench's posts are all open, so both give the same page: what is timed
/// is the join's seek a post. The bare kind's page has no words statement.
fn live_pairs(path: &str, rounds: usize) -> Result<LivePairs, String> {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| e.to_string())?;
    let without = without_live();
    let mut with_live = conn
        .prepare(needhave::handlers::posts::WORDS_SQL)
        .map_err(|e| e.to_string())?;
    let mut no_live = conn.prepare(&without).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for query in QUERIES {
        let Some(words) = query.q.and_then(Words::parse) else {
            out.push(None);
            continue;
        };
        let marks = marks(query.kind);
        let (needles, terms) = (words.needles(query.kind), words.terms());
        let fetch = i64::from(query.limit) + 1;
        // One page of `stmt` below `before`: its posts' row numbers.
        let run = |stmt: &mut rusqlite::Statement, before: i64| -> rusqlite::Result<Vec<i64>> {
            stmt.query_map(
                params!["", "", fetch, before, marks, needles, terms, 0],
                |r| r.get::<_, Option<i64>>(1),
            )?
            .filter_map(|r| r.transpose())
            .collect()
        };
        // The page's cursor; no such page on a list too small for it.
        let mut before = Some(1i64 << 53);
        for _ in 0..query.skip {
            let Some(below) = before else { break };
            let rows = run(&mut with_live, below).map_err(|e| e.to_string())?;
            before = rows
                .get(query.limit as usize - 1)
                .copied()
                .filter(|_| rows.len() > query.limit as usize);
        }
        let Some(before) = before else {
            out.push(None);
            continue;
        };
        let (mut a, mut b) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
        for round in 0..rounds {
            for first in [round % 2 == 0, round % 2 == 1] {
                let (stmt, samples) = if first {
                    (&mut with_live, &mut a)
                } else {
                    (&mut no_live, &mut b)
                };
                let t = Instant::now();
                let rows = run(stmt, before).map_err(|e| e.to_string())?;
                samples.push(t.elapsed().as_nanos() as u64);
                std::hint::black_box(rows);
            }
        }
        a.sort_unstable();
        b.sort_unstable();
        out.push(Some((percentile(&a, 0.5) / 1e3, percentile(&b, 0.5) / 1e3)));
    }
    Ok(out)
}

fn print_live(live: &[(u64, LivePairs)]) {
    println!(
        "\nThe words statement with its join to the open posts (live) against without it, \
         p50 µs, the two in turn each round, after the idle moment:\n"
    );
    let mut header = "| query |".to_string();
    let mut rule = "|---|".to_string();
    for (n, _) in live {
        header.push_str(&format!(" {n}: with / without | ratio |"));
        rule.push_str("---|---|");
    }
    println!("{header}\n{rule}");
    for (i, q) in QUERIES.iter().enumerate() {
        if q.q.is_none() {
            continue;
        }
        let mut line = format!("| {} |", q.name);
        for (_, row) in live {
            match row[i] {
                Some((with, without)) => line.push_str(&format!(
                    " {with:.0} / {without:.0} | {:.2}× |",
                    with / without
                )),
                None => line.push_str(" — | — |"),
            }
        }
        println!("{line}");
    }
}

/// The page statement of an index that holds the row numbers as they are
/// (a file of version 6), walked newest first against FTS5's order: what
/// `search-page --falling` runs, to compare with the store's own.
const FALLING_SQL: &str = "SELECT (SELECT max(rowid) FROM posts) AS top, NULL AS r, NULL AS id, \
     NULL AS kind, NULL AS note, NULL AS created_at \
     UNION ALL SELECT * FROM (SELECT NULL, posts.rowid, posts.id, posts.kind, posts.note, \
     posts.created_at FROM post_words JOIN posts ON posts.rowid = post_words.rowid \
     WHERE post_words MATCH ?5 AND post_words.rowid < CAST(?4 AS INTEGER) \
     ORDER BY post_words.rowid DESC \
     LIMIT CASE WHEN (SELECT max(rowid) FROM posts) IN (?1, ?2) THEN 0 ELSE ?3 END)";

/// What each part of the words statement joins to, so that an ended post
/// is never found (`handlers::posts::WORDS_SQL`): the rows of `live`.
const LIVE_JOIN: &str = "CROSS JOIN live ON live.post = posts.rowid \
     AND (live.expires_at IS NULL OR live.expires_at > ?8) ";

/// The words statement without its join to `live`, in each of its three
/// parts: what the join costs a page is the difference.
fn without_live() -> String {
    let sql = needhave::handlers::posts::WORDS_SQL;
    assert_eq!(
        sql.matches(LIVE_JOIN).count(),
        3,
        "the join to live, as the list writes it"
    );
    sql.replace(LIVE_JOIN, "")
}

/// Runs the first page of a query `runs` times on a file, as the store
/// runs it (the words statement, bound alike, every row read), on one
/// connection opened read-only: the unit callgrind counts in
/// `bench/search-instructions.sh` (the instructions of `runs` = 11 less
/// those of `runs` = 1, over 10, are a page's on a warm page cache).
/// `falling`: the statement of a file of version 6 ([`FALLING_SQL`]);
/// `live`: false for the list's statement without its join to `live`
/// ([`without_live`]).
#[allow(clippy::too_many_arguments)]
pub fn page_statement(
    db: &str,
    q: &str,
    kind: Option<Kind>,
    limit: u32,
    runs: u64,
    falling: bool,
    pages: u64,
    live: bool,
) -> Result<(), String> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| e.to_string())?;
    let words = Words::parse(q).ok_or("a query over its bounds")?;
    let expression = words.expression(kind).ok_or("no word in the query")?;
    let needles = words.needles(kind);
    let terms = words.terms();
    let marks = marks(kind);
    let sql = if falling {
        FALLING_SQL.to_string()
    } else if live {
        needhave::handlers::posts::WORDS_SQL.to_string()
    } else {
        without_live()
    };
    let mut stmt = conn.prepare(&sql).map_err(|e| e.to_string())?;
    // Version 6's statement takes an FTS5 expression; the list's, the
    // kinds' marks, the needles and the terms.
    let bound = |before: i64| -> Vec<Box<dyn rusqlite::ToSql>> {
        let head: Vec<Box<dyn rusqlite::ToSql>> = vec![
            Box::new(""),
            Box::new(""),
            Box::new(i64::from(limit) + 1),
            Box::new(before),
        ];
        let tail: Vec<Box<dyn rusqlite::ToSql>> = if falling {
            vec![Box::new(expression.clone())]
        } else {
            vec![
                Box::new(marks),
                Box::new(needles.clone()),
                Box::new(terms.clone()),
                // The time: nothing the bench writes expires.
                Box::new(0),
            ]
        };
        head.into_iter().chain(tail).collect()
    };
    // The cursor of the page asked for: the row number of the last post of
    // each page before it, walked with the same statement (its parts
    // merged newest first, as the list merges them).
    let mut before = 1i64 << 53;
    for _ in 1..pages.max(1) {
        let mut rows: Vec<i64> = stmt
            .query_map(rusqlite::params_from_iter(bound(before)), |r| {
                r.get::<_, Option<i64>>(1)
            })
            .map_err(|e| e.to_string())?
            .filter_map(|r| r.ok().flatten())
            .collect();
        rows.sort_unstable_by(|a, b| b.cmp(a));
        rows.dedup();
        before = *rows
            .get(limit as usize - 1)
            .filter(|_| rows.len() > limit as usize)
            .ok_or("fewer pages than asked for")?;
    }
    let mut posts = 0;
    for _ in 0..runs {
        let mut rows = stmt
            .query(rusqlite::params_from_iter(bound(before)))
            .map_err(|e| e.to_string())?;
        posts = 0;
        while rows.next().map_err(|e| e.to_string())?.is_some() {
            posts += 1;
        }
    }
    // The version row, then the page and one more.
    println!("{}", posts - 1);
    Ok(())
}

/// Runs the first page of a query `runs` times as `GET /posts?q=` asks the
/// store for it: [`find`] through the SQLite store (its reader thread, the
/// rows made as the handlers read them), then [`page`]. Against
/// [`page_statement`], what the call costs besides its statement;
/// callgrind counts it like the statement (`runs` = 11 less `runs` = 1,
/// over 10).
pub async fn page_call(
    db: &str,
    q: &str,
    kind: Option<Kind>,
    limit: u32,
    runs: u64,
) -> Result<(), String> {
    let store: Arc<dyn needhave::store::Store> =
        Arc::new(SqliteStore::open(db).map_err(|e| e.to_string())?);
    let config = Arc::new(Config {
        ip_salt: "bench".into(),
        ..Config::default()
    });
    let ctx = Ctx::new(&needhave::routes::API, store, config, "127.0.0.1");
    let filter = Filter::new(kind, Words::parse(q), limit, None);
    let mut posts = 0;
    for _ in 0..runs {
        let found = find(&ctx, &filter, None, None)
            .await
            .map_err(|e| format!("{:?}", e.0))?;
        posts = page(found.rows, limit as usize, ctx.now_ms).posts.len();
    }
    println!("{posts}");
    Ok(())
}
