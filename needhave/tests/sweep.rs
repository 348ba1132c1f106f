//! The sweep (`store::index::sweep`): ended posts out of the index of
//! words, in both parts and in `words_new`, and the expired ones out of
//! `live`, while every open post stays exactly as it was. What the index
//! holds of each post is read back with FTS5's own vocabulary table
//! (`fts5vocab`, one row a term and post), so that "every term the index
//! holds for a post is in its superset, and the sweep deletes exactly
//! those" is checked term by term, not only through the queries a test
//! thinks of.
mod common;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use common::local;
use needhave::rules::Kind;
use needhave::store::index::{self, superset, Index};
use needhave::store::sqlite::SqliteStore;
use needhave::store::{prepare, Store, StoreExt, WORDS_BASE};
use rusqlite::Connection;
use serde_json::Value;

/// Words that share prefixes, so that moves promote them (deep ones
/// included, past `rules::hot::DEEPEST`), spelled in ways that fold
/// alike (case, width, accents), and runs of scripts written without
/// spaces (Han, Thai, kana), alone and beside Latin letters.
const WORDS: &[&str] = &[
    "gpu",
    "gpus",
    "GPUserver",
    "ＧＰＵ",
    "graphics",
    "bike",
    "bikes",
    "biker",
    "bicycle",
    "lamp",
    "lamps",
    "ladder",
    "internationalization",
    "internationalisation",
    "supercalifragilisticexpialidocious",
    "café",
    "CAFÉS",
    "naïve",
    "straße",
    "我有一辆自行车",
    "自行车",
    "显卡",
    "车",
    "rtx4090显卡",
    "จักรยาน",
    "ภาษาไทย",
    "東京タワー",
];

/// A small deterministic generator (xorshift), so a failure repeats.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The `i`th post's note: a few words of [`WORDS`], and a word of its own
/// (`u…q`), which a search of it finds alone.
fn note(rng: &mut Rng, i: u64) -> String {
    let mut words: Vec<&str> = (0..2 + rng.next(8))
        .map(|_| WORDS[rng.next(WORDS.len())])
        .collect();
    words.push("");
    let own = format!("u{i:x}q");
    let mut note = words.join(" ");
    note.push_str(&own);
    note
}

struct List {
    store: Arc<SqliteStore>,
    /// Each post's row number, kind and note, by row number.
    posts: HashMap<i64, (Kind, String)>,
    _dir: std::path::PathBuf,
}

impl Drop for List {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self._dir);
    }
}

impl List {
    fn new(label: &str) -> List {
        let dir = common::scratch(label);
        let path = dir.join("list.db");
        let store = SqliteStore::open(path.to_str().unwrap()).unwrap();
        List {
            store: Arc::new(store),
            posts: HashMap::new(),
            _dir: dir,
        }
    }

    fn id(rowid: i64) -> String {
        format!("{rowid:032x}")
    }

    /// Writes post `rowid` as a create's batch does: its row, then its
    /// words through the index's door, with this process's copy of the hot
    /// set (`copy`) or none (as the Worker writes them, the move finding
    /// its hot terms), and the copy takes the promotions the batch reads.
    async fn write(
        &mut self,
        rowid: i64,
        kind: Kind,
        note: &str,
        expires_at: Option<i64>,
        copy: bool,
    ) {
        let id = Self::id(rowid);
        let insert = prepare(
            "INSERT INTO posts (rowid, id, kind, note, secret_hash, ip_hash, created_at, expires_at) \
             VALUES (?1, ?2, ?3, ?4, 'h', 'ip', ?1, ?5)",
        )
        .bind(rowid)
        .bind(id.as_str())
        .bind(kind.as_str())
        .bind(note)
        .bind(expires_at.map_or(needhave::store::Value::Null, Into::into));
        let door = if copy {
            Index::of(&*self.store)
        } else {
            Index::without_copy()
        };
        let mut batch = vec![insert];
        batch.extend(door.statements(kind, &id, note));
        let rows = self.store.batch(batch).await.unwrap();
        door.committed(rows.last().unwrap());
        self.posts.insert(rowid, (kind, note.to_string()));
    }

    /// Writes posts `from..to` of random notes, both kinds, most with the
    /// copy of the hot set and some without; `expires_at(rowid)` for each.
    async fn write_many(
        &mut self,
        rng: &mut Rng,
        rows: std::ops::Range<i64>,
        expires_at: impl Fn(i64) -> Option<i64>,
    ) {
        for rowid in rows {
            let kind = if rng.next(3) == 0 {
                Kind::Have
            } else {
                Kind::Need
            };
            let note = note(rng, rowid as u64);
            let copy = rng.next(4) != 0;
            self.write(rowid, kind, &note, expires_at(rowid), copy)
                .await;
        }
    }

    /// The author's close of post `rowid`: the row the close writes (its
    /// triggers take the post out of `live` and record the end).
    async fn close(&self, rowid: i64) {
        self.decide(rowid, "close", None).await;
    }

    /// The operator's removal of post `rowid`.
    async fn remove(&self, rowid: i64) {
        self.decide(rowid, "remove", Some("spam")).await;
    }

    async fn decide(&self, rowid: i64, role: &str, reason: Option<&str>) {
        let ip = if role == "remove" {
            "operator"
        } else {
            "closer"
        };
        let row = prepare(
            "INSERT INTO messages (id, post_id, role, ip_hash, created_at, reason) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .bind(format!("{role}{rowid:027x}"))
        .bind(Self::id(rowid))
        .bind(role)
        .bind(ip)
        .bind(rowid)
        .bind(reason);
        self.store.batch(vec![row]).await.unwrap();
    }

    /// Sweeps at `now` in rounds of `max` until nothing is left; returns
    /// the ends taken.
    async fn sweep(&self, now: i64, max: usize) -> usize {
        let mut total = 0;
        loop {
            let n = index::sweep(&*self.store, now, max).await.unwrap();
            if n == 0 {
                return total;
            }
            total += n;
        }
    }

    fn sql<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        self.store.with_connection(f)
    }

    /// Each post's terms in one part of the index (`post_words` or
    /// `post_cold`), by its row number, as FTS5 reads them back.
    fn terms(&self, part: &str) -> HashMap<i64, BTreeSet<String>> {
        self.sql(|c| {
            c.execute_batch(&format!(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.{part}_terms USING fts5vocab(main, {part}, instance)"
            ))
            .unwrap();
            let mut out: HashMap<i64, BTreeSet<String>> = HashMap::new();
            let mut s = c
                .prepare(&format!("SELECT doc, term FROM temp.{part}_terms"))
                .unwrap();
            let rows = s
                .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
                .unwrap();
            for row in rows {
                let (doc, term) = row.unwrap();
                out.entry(WORDS_BASE - doc).or_default().insert(term);
            }
            out
        })
    }

    /// Both parts' FTS5 `integrity-check`.
    fn integrity(&self) {
        self.sql(|c| {
            for part in ["post_words", "post_cold"] {
                c.execute(
                    &format!("INSERT INTO {part} ({part}) VALUES ('integrity-check')"),
                    [],
                )
                .unwrap_or_else(|e| panic!("{part}: {e}"));
            }
        });
    }

    /// The first column of every row `sql` reads.
    fn column<T: rusqlite::types::FromSql + Ord>(&self, sql: &str) -> BTreeSet<T> {
        self.sql(|c| {
            let mut s = c.prepare(sql).unwrap();
            let rows: BTreeSet<T> = s
                .query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            rows
        })
    }

    fn count(&self, sql: &str) -> i64 {
        self.sql(|c| c.query_row(sql, [], |r| r.get(0)).unwrap())
    }

    /// Every term each part holds for each post is in the post's superset.
    fn held_within_supersets(&self) {
        for (part, hot) in [("post_words", true), ("post_cold", false)] {
            for (rowid, held) in self.terms(part) {
                let (kind, note) = &self.posts[&rowid];
                let s = superset(*kind, note);
                let all: BTreeSet<&str> = if hot {
                    s.hot.split(' ')
                } else {
                    s.cold.split(' ')
                }
                .collect();
                let outside: Vec<&String> =
                    held.iter().filter(|t| !all.contains(t.as_str())).collect();
                assert!(
                    outside.is_empty(),
                    "{part}, post {rowid} ({note:?}): {outside:?} not in its superset"
                );
            }
        }
    }

    /// What the sweep's SQL deletes of each post is what the index holds
    /// of it: in the hot part, exactly its kind's term and the prefixes of
    /// its superset the hot set holds; in the cold part, at least its
    /// kind's term and the terms the hot set does not hold whole (a term
    /// that became hot to its end after the post moved may stay too).
    fn held_as_the_sweep_deletes(&self) {
        let hot_set = self.column::<String>("SELECT p FROM hot_prefixes");
        for (rowid, held) in self.terms("post_words") {
            let (kind, note) = &self.posts[&rowid];
            let s = superset(*kind, note);
            let mut terms = s.hot.split(' ');
            let mut want: BTreeSet<String> = terms.next().map(String::from).into_iter().collect();
            want.extend(terms.filter(|t| hot_set.contains(*t)).map(String::from));
            assert_eq!(held, want, "hot part, post {rowid} ({note:?})");
        }
        for (rowid, held) in self.terms("post_cold") {
            let (kind, note) = &self.posts[&rowid];
            let s = superset(*kind, note);
            let mut terms = s.cold.split(' ');
            let kind_term = terms.next().unwrap();
            assert!(held.contains(kind_term), "post {rowid}");
            for t in terms.filter(|t| !hot_set.contains(*t)) {
                assert!(
                    held.contains(t),
                    "cold part, post {rowid} ({note:?}): {t} not held"
                );
            }
        }
    }

    /// The ids a search of `q` answers, every page, at [`SEARCH_NOW`].
    async fn search(&self, q: &str) -> Vec<String> {
        let store: Arc<dyn Store> = self.store.clone();
        let ctx = local::ctx_at(store, local::salted("sweep"), "10.0.0.1", SEARCH_NOW);
        let mut ids = Vec::new();
        let mut path = format!("/posts?limit=100&q={}", urlencode(q));
        loop {
            let r = local::call(&ctx, "GET", &path, None).await;
            assert_eq!(r.status, 200, "{path}: {}", local::text(&r));
            let page = local::json(&r);
            ids.extend(common::listed(&page));
            match page["next"].as_str() {
                Some(next) => path = format!("/posts?limit=100&q={}&before={next}", urlencode(q)),
                None => return ids,
            }
        }
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Whether a post's words hold a term that begins with `word` (a plain
/// lower-case ASCII word): what a search of `word` finds.
fn holds(kind: Kind, note: &str, word: &str) -> bool {
    let waiting = needhave::rules::words::waiting_text(kind, note);
    let found = needhave::rules::words::terms(&waiting).any(|t| t.starts_with(word));
    found
}

/// Far past every expiry the tests write.
const LATER: i64 = 1 << 40;

/// The clock the tests' searches read: past every expiry the tests let
/// pass, before [`LATER`] (a post that expires then is open).
const SEARCH_NOW: i64 = 1 << 39;

#[tokio::test]
async fn the_index_holds_no_term_of_a_post_outside_its_superset() {
    let mut list = List::new("sweep-superset");
    let mut rng = Rng(0x5eed_0001);
    list.write_many(&mut rng, 1..700, |_| None).await;
    // The moves promoted prefixes, some several characters deep, and
    // wrote them for posts moved before.
    let deep = list.count("SELECT count(*) FROM hot_prefixes WHERE length(p) >= 5");
    assert!(deep > 0, "no prefix of four letters was promoted");
    assert!(list.terms("post_words").len() >= 640);
    list.held_within_supersets();
    list.held_as_the_sweep_deletes();
}

#[tokio::test]
async fn the_sweep_takes_ended_posts_out_of_the_index_and_leaves_the_rest() {
    let mut list = List::new("sweep-ends");
    let mut rng = Rng(0x5eed_0002);
    // Every seventh post expires: at 10,000 ms or at `LATER`.
    let expiry =
        |rowid: i64| (rowid % 7 == 0).then_some(if rowid % 2 == 0 { 10_000 } else { LATER });
    list.write_many(&mut rng, 1..420, expiry).await;
    // Ends of every kind, moved posts and waiting ones (the last 35).
    let mut ended = BTreeSet::new();
    for rowid in 1..420 {
        match rowid % 5 {
            1 => list.close(rowid).await,
            2 if rowid % 3 == 0 => list.remove(rowid).await,
            _ if rowid % 7 == 0 && rowid % 2 == 0 => {}
            _ => continue,
        }
        ended.insert(rowid);
    }
    // A closed post removed after: two ends, one post.
    list.remove(6).await;
    ended.insert(6);
    let waiting_ended = list
        .column::<i64>("SELECT post FROM words_new")
        .intersection(&ended)
        .count();
    assert!(waiting_ended > 0, "no ended post among the waiting ones");
    let (hot_before, cold_before) = (list.terms("post_words"), list.terms("post_cold"));
    let rows_before = list
        .count("SELECT (SELECT count(*) FROM posts) * 1000000 + (SELECT count(*) FROM messages)");

    let taken = list.sweep(20_000, 7).await;
    assert!(
        taken >= ended.len(),
        "{taken} ends taken for {} ended posts",
        ended.len()
    );

    let (hot, cold) = (list.terms("post_words"), list.terms("post_cold"));
    for rowid in &ended {
        assert!(
            !hot.contains_key(rowid),
            "post {rowid} still in the hot part: {:?}",
            hot[rowid]
        );
        assert!(
            !cold.contains_key(rowid),
            "post {rowid} still in the cold part: {:?}",
            cold[rowid]
        );
    }
    // Every other post exactly as it was.
    for (before, after) in [(&hot_before, &hot), (&cold_before, &cold)] {
        for (rowid, terms) in before.iter().filter(|(r, _)| !ended.contains(r)) {
            assert_eq!(after.get(rowid), Some(terms), "post {rowid}");
        }
    }
    list.integrity();
    assert_eq!(
        list.column::<i64>("SELECT post FROM words_new")
            .intersection(&ended)
            .count(),
        0
    );
    assert_eq!(
        list.count("SELECT count(*) FROM live WHERE expires_at <= 20000"),
        0
    );
    assert!(list.count("SELECT count(*) FROM live WHERE expires_at = 1099511627776") > 0);
    // Nothing of the rows themselves.
    let rows_after = list
        .count("SELECT (SELECT count(*) FROM posts) * 1000000 + (SELECT count(*) FROM messages)");
    assert_eq!(rows_after, rows_before);
    // Nothing left: the next round reads and writes nothing.
    assert_eq!(index::sweep(&*list.store, 20_000, 7).await.unwrap(), 0);

    // Searches find every open post, and only open posts: by its own word,
    // and by a common one.
    for rowid in (1..420).filter(|r| !ended.contains(r)).step_by(13) {
        assert_eq!(
            list.search(&format!("u{rowid:x}q")).await,
            [List::id(rowid)]
        );
    }
    for rowid in ended.iter().step_by(11) {
        assert!(
            list.search(&format!("u{rowid:x}q")).await.is_empty(),
            "ended post {rowid} found"
        );
    }
    for word in ["bik", "gpu", "internationali", "café"] {
        let want: Vec<String> = (1..420)
            .rev()
            .filter(|r| !ended.contains(r) && holds(list.posts[r].0, &list.posts[r].1, word))
            .map(List::id)
            .collect();
        assert!(want.len() > 20, "{word}");
        assert_eq!(list.search(word).await, want, "{word}");
    }

    // Moves and promotions after the sweep: new posts move, promote, and
    // write promoted prefixes for the posts that hold them, ended ones not
    // among them (their cold terms are gone).
    let promoted = list.count("SELECT count(*) FROM hot_prefixes");
    list.write_many(&mut rng, 420..900, |_| None).await;
    assert!(
        list.count("SELECT count(*) FROM hot_prefixes") > promoted,
        "nothing promoted after the sweep"
    );
    let (hot, cold) = (list.terms("post_words"), list.terms("post_cold"));
    for rowid in &ended {
        assert!(
            !hot.contains_key(rowid) && !cold.contains_key(rowid),
            "post {rowid} back in the index"
        );
    }
    list.held_within_supersets();
    list.held_as_the_sweep_deletes();
    list.integrity();
    let want: Vec<String> = (1..900)
        .rev()
        .filter(|r| !ended.contains(r) && holds(list.posts[r].0, &list.posts[r].1, "lamp"))
        .map(List::id)
        .collect();
    assert_eq!(list.search("lamp").await, want);
}

#[tokio::test]
async fn a_post_that_ends_while_its_words_wait_never_reaches_the_index() {
    let mut list = List::new("sweep-waiting");
    let mut rng = Rng(0x5eed_0003);
    list.write_many(&mut rng, 1..30, |_| None).await;
    list.close(17).await;
    assert!(list
        .column::<i64>("SELECT post FROM words_new")
        .contains(&17));
    list.sweep(0, 100).await;
    assert!(!list
        .column::<i64>("SELECT post FROM words_new")
        .contains(&17));
    // The move of the others.
    list.write_many(&mut rng, 30..100, |_| None).await;
    assert!(list.count("SELECT count(*) FROM words_new") < 64);
    let (hot, cold) = (list.terms("post_words"), list.terms("post_cold"));
    assert!(hot.contains_key(&16) && cold.contains_key(&18));
    assert!(!hot.contains_key(&17) && !cold.contains_key(&17));
    assert!(list.search("u11q").await.is_empty());
    list.integrity();
}

/// A move between the sweep's read and its write: the post's words went
/// from `words_new` into the index meanwhile, and the write takes them
/// out of there.
#[tokio::test]
async fn a_move_between_the_sweeps_read_and_write_changes_nothing() {
    let mut list = List::new("sweep-race");
    let mut rng = Rng(0x5eed_0004);
    list.write_many(&mut rng, 1..60, |_| None).await;
    list.close(40).await;
    let rows = list.store.all(index::to_sweep(0, 100)).await.unwrap();
    // Five more posts make 64 waiting: the move.
    list.write_many(&mut rng, 60..65, |_| None).await;
    assert_eq!(list.count("SELECT count(*) FROM words_new"), 0);
    assert!(list.terms("post_cold").contains_key(&40));
    let (write, taken) = index::sweep_statements(&rows, 0);
    assert_eq!(taken, 1);
    list.store.batch(write).await.unwrap();
    assert!(!list.terms("post_words").contains_key(&40));
    assert!(!list.terms("post_cold").contains_key(&40));
    assert_eq!(list.terms("post_cold").len(), 63);
    list.integrity();
}

/// Two sweeps of the same ends (a second runner, or a post that expired
/// and was removed after): the second deletes terms that are no longer
/// there, which cancels nothing.
#[tokio::test]
async fn sweeping_twice_changes_nothing() {
    let mut list = List::new("sweep-twice");
    let mut rng = Rng(0x5eed_0005);
    list.write_many(&mut rng, 1..300, |r| (r % 4 == 0).then_some(5_000))
        .await;
    for rowid in (1..300).filter(|r| r % 4 == 1) {
        list.close(rowid).await;
    }
    // Two sweepers read the same work, then both write it.
    let first = list.store.all(index::to_sweep(10_000, 1000)).await.unwrap();
    let second = list.store.all(index::to_sweep(10_000, 1000)).await.unwrap();
    for rows in [first, second] {
        let (write, taken) = index::sweep_statements(&rows, 10_000);
        assert!(taken > 100);
        list.store.batch(write).await.unwrap();
    }
    // An expired post removed after it was swept: its end is not indexed.
    list.remove(4).await;
    assert_eq!(
        list.count("SELECT indexed FROM post_ends WHERE post = 4"),
        0
    );
    let (hot, cold) = (list.terms("post_words"), list.terms("post_cold"));
    // And once more from the start, as a sweep with no mark would.
    list.sql(|c| c.execute("DELETE FROM sweep_mark", []).unwrap());
    assert!(list.sweep(10_000, 50).await > 0);
    assert_eq!(
        (list.terms("post_words"), list.terms("post_cold")),
        (hot, cold)
    );
    list.integrity();
    let open = |r: &i64| r % 4 > 1;
    assert!(list.terms("post_cold").keys().all(open));
    let want: Vec<String> = (1..300)
        .rev()
        .filter(|r| open(r) && holds(list.posts[r].0, &list.posts[r].1, "bi"))
        .map(List::id)
        .collect();
    assert_eq!(list.search("bi").await, want);
}

/// FTS5 on its own, with the index's options: rows deleted with their
/// terms and five terms they do not hold, then more rows, a merge and an
/// optimize; every other row is found exactly at each step, and
/// `integrity-check` passes. But each term a delete names comes off the
/// table's totals, held or not, and FTS5 refuses a table whose totals
/// would go below zero as malformed: on a table of few rows, a delete of
/// a row's terms and more fails. So the sweep deletes what the index
/// holds, not more.
#[test]
fn a_delete_of_terms_a_row_lacks_cancels_nothing_but_counts_against_the_totals() {
    let conn = Connection::open_in_memory().unwrap();
    needhave::store::migrate::apply(&conn).unwrap();
    conn.execute(
        "INSERT INTO post_words (post_words, rank) VALUES ('pgsz', 64)",
        [],
    )
    .unwrap();
    let terms: Vec<String> = (0..50).map(|i| format!("t{i}")).collect();
    let mut rng = Rng(0x5eed_0006);
    let mut pick = |n: usize, not: &[String]| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        while out.len() < n {
            let t = &terms[rng.next(terms.len())];
            if !out.contains(t) && !not.contains(t) {
                out.push(t.clone());
            }
        }
        out
    };
    let mut rows: HashMap<i64, Vec<String>> = HashMap::new();
    let insert =
        |conn: &Connection, rows: &mut HashMap<i64, Vec<String>>, r: i64, words: Vec<String>| {
            conn.execute(
                "INSERT INTO post_words (rowid, words) VALUES (?1, ?2)",
                rusqlite::params![r, words.join(" ")],
            )
            .unwrap();
            rows.insert(r, words);
        };
    for r in 1..=3000 {
        if r % 100 == 1 {
            conn.execute_batch("BEGIN").unwrap();
        }
        insert(&conn, &mut rows, r, pick(5, &[]));
        if r % 100 == 0 {
            conn.execute_batch("COMMIT").unwrap();
        }
    }
    let check = |conn: &Connection, rows: &HashMap<i64, Vec<String>>, step: &str| {
        for t in &terms {
            let mut s = conn
                .prepare("SELECT rowid FROM post_words WHERE post_words MATCH ?1")
                .unwrap();
            let got: BTreeSet<i64> = s
                .query_map([format!("\"{t}\"")], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let want: BTreeSet<i64> = rows
                .iter()
                .filter(|(_, w)| w.contains(t))
                .map(|(r, _)| *r)
                .collect();
            assert_eq!(got, want, "{t} {step}");
        }
        conn.execute(
            "INSERT INTO post_words (post_words) VALUES ('integrity-check')",
            [],
        )
        .unwrap_or_else(|e| panic!("{step}: {e}"));
    };
    let mut gone: Vec<i64> = rows.keys().copied().filter(|r| r % 3 == 0).collect();
    gone.sort_unstable();
    conn.execute_batch("BEGIN").unwrap();
    for (i, r) in gone.iter().enumerate() {
        let held = rows.remove(r).unwrap();
        let mut words = held.clone();
        words.extend(pick(5, &held));
        conn.execute(
            "INSERT INTO post_words (post_words, rowid, words) VALUES ('delete', ?1, ?2)",
            rusqlite::params![r, words.join(" ")],
        )
        .unwrap();
        if i % 50 == 49 {
            conn.execute_batch("COMMIT; BEGIN").unwrap();
        }
    }
    conn.execute_batch("COMMIT").unwrap();
    check(&conn, &rows, "after the deletes");
    for r in 3001..=4000 {
        insert(&conn, &mut rows, r, pick(5, &[]));
    }
    check(&conn, &rows, "after more rows");
    conn.execute(
        "INSERT INTO post_words (post_words, rank) VALUES ('merge', 500)",
        [],
    )
    .unwrap();
    check(&conn, &rows, "after a merge");
    conn.execute(
        "INSERT INTO post_words (post_words) VALUES ('optimize')",
        [],
    )
    .unwrap();
    check(&conn, &rows, "after optimize");

    // The totals: a row of two terms, deleted with five.
    let small = Connection::open_in_memory().unwrap();
    needhave::store::migrate::apply(&small).unwrap();
    small
        .execute("INSERT INTO post_cold (rowid, words) VALUES (7, 'a b')", [])
        .unwrap();
    let refused = small
        .execute(
            "INSERT INTO post_cold (post_cold, rowid, words) VALUES ('delete', 7, 'a b c d e')",
            [],
        )
        .unwrap_err();
    assert!(refused.to_string().contains("malformed"), "{refused}");
    // Nor a row it never held, on a table that holds none.
    let refused = small
        .execute(
            "INSERT INTO post_words (post_words, rowid, words) VALUES ('delete', 7, 'a')",
            [],
        )
        .unwrap_err();
    assert!(refused.to_string().contains("malformed"), "{refused}");
    small
        .execute(
            "INSERT INTO post_cold (post_cold, rowid, words) VALUES ('delete', 7, 'a b')",
            [],
        )
        .unwrap();
}

/// A list whose every post has ended: the sweep empties the index, its
/// totals at zero, and the list goes on (moves, promotions, searches).
#[tokio::test]
async fn the_sweep_empties_the_index_of_a_list_whose_every_post_ended() {
    let mut list = List::new("sweep-all");
    let mut rng = Rng(0x5eed_0008);
    list.write_many(&mut rng, 1..200, |r| (r % 2 == 0).then_some(50))
        .await;
    for rowid in (1..200).filter(|r| r % 2 == 1) {
        list.close(rowid).await;
    }
    assert_eq!(list.sweep(100, 64).await, 199);
    assert!(list.terms("post_words").is_empty());
    assert!(list.terms("post_cold").is_empty());
    assert_eq!(list.count("SELECT count(*) FROM words_new"), 0);
    assert_eq!(list.count("SELECT count(*) FROM live"), 0);
    list.integrity();
    list.write_many(&mut rng, 200..300, |_| None).await;
    list.held_as_the_sweep_deletes();
    list.integrity();
    let want: Vec<String> = (200..300)
        .rev()
        .filter(|r| holds(list.posts[r].0, &list.posts[r].1, "la"))
        .map(List::id)
        .collect();
    assert_eq!(list.search("la").await, want);
}

/// The superset's shape: the kind's term with its mark, every prefix of
/// two to `DEEPEST` characters of each marked term (runs as pairs).
#[test]
fn a_superset_is_every_prefix_of_every_term() {
    let s = superset(Kind::Need, "GPU gpus 自行车");
    let n = '\u{207f}';
    let want: BTreeSet<String> = [
        format!("{n}\u{b7}need"),
        format!("{n}g"),
        format!("{n}gp"),
        format!("{n}gpu"),
        format!("{n}gpus"),
        format!("{n}自"),
        format!("{n}自行"),
        format!("{n}行"),
        format!("{n}行车"),
    ]
    .into_iter()
    .collect();
    assert!(s.hot.starts_with(&format!("{n}\u{b7}need ")));
    let got: BTreeSet<String> = s.hot.split(' ').map(String::from).collect();
    assert_eq!(got, want);
    assert_eq!(s.cold, format!("\u{b7}need {n}gpu {n}gpus {n}自行 {n}行车"));
    // A long word: prefixes up to the deepest, the whole word in the cold part.
    let long = "abcdefghijklmnopqrstuvwxyz";
    let s = superset(Kind::Have, long);
    let deepest = needhave::rules::hot::DEEPEST;
    let longest = s.hot.split(' ').map(|t| t.chars().count()).max().unwrap();
    assert_eq!(longest, deepest.min(long.len() + 1));
    assert_eq!(
        s.hot.split(' ').count(),
        1 + deepest.min(long.len() + 1) - 1
    );
    assert!(s.cold.ends_with(long));
    // The cold part's terms are what the move writes of the words.
    for note in [
        "我有自行车, 自行车",
        "RTX4090显卡 and ＧＰＵ",
        "ภาษาไทย café",
    ] {
        let waiting = needhave::rules::words::waiting_text(Kind::Have, note);
        let words = needhave::rules::words::expanded(&waiting);
        assert_eq!(
            superset(Kind::Have, note).cold,
            needhave::rules::words::marked(Kind::Have, &words)
        );
    }
}

/// The sweep's read names only posts that ended: each end by a row in
/// order, with its post only when the post was in the index then (a post
/// closed, then removed, is read once), and the expired posts once their
/// time has passed.
#[tokio::test]
async fn the_sweep_reads_only_ended_posts() {
    let mut list = List::new("sweep-reads");
    let mut rng = Rng(0x5eed_0007);
    list.write_many(&mut rng, 1..20, |r| (r == 3).then_some(100))
        .await;
    list.close(5).await;
    list.remove(5).await;
    let rows = list.store.all(index::to_sweep(99, 100)).await.unwrap();
    let named: Vec<(Option<i64>, Option<i64>)> = rows
        .iter()
        .map(|r| {
            (
                r.get("n").and_then(Value::as_i64),
                r.get("post").and_then(Value::as_i64),
            )
        })
        .collect();
    assert_eq!(named, [(Some(1), Some(5)), (Some(2), None)]);
    let rows = list.store.all(index::to_sweep(100, 100)).await.unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[2].get("post").and_then(Value::as_i64), Some(3));
}

/// The index written again (a native upgrade's `fill_index`, and
/// `needhave d1-words` on D1) leaves an ended post out, as the sweep
/// does: an ended post is not in `live`.
#[test]
fn an_index_written_again_leaves_ended_posts_out() {
    let conn = Connection::open_in_memory().unwrap();
    needhave::store::migrate::apply(&conn).unwrap();
    let post = |rowid: i64| {
        conn.execute(
            "INSERT INTO posts (rowid, id, kind, note, secret_hash, ip_hash, created_at) \
             VALUES (?1, printf('%032x', ?1), 'need', 'an old bike ' || ?1, 'h', 'ip', ?1)",
            [rowid],
        )
        .unwrap();
    };
    let close = |rowid: i64| {
        conn.execute(
            "INSERT INTO messages (id, post_id, role, ip_hash, created_at) \
             VALUES (printf('c%031x', ?1), printf('%032x', ?1), 'close', 'closer', ?1)",
            [rowid],
        )
        .unwrap();
    };
    for rowid in 1..=100 {
        post(rowid);
    }
    for rowid in (1..=100).filter(|r| r % 3 == 0) {
        close(rowid);
    }
    assert_eq!(needhave::store::migrate::fill_index(&conn).unwrap(), 67);
    let indexed = |part: &str| -> BTreeSet<i64> {
        let mut s = conn
            .prepare(&format!(
                "SELECT {WORDS_BASE} - rowid FROM {part} WHERE {part} MATCH ?1"
            ))
            .unwrap();
        let any = if part == "post_words" {
            needhave::rules::words::ANY_INDEXED
        } else {
            needhave::rules::words::ANY_COLD
        };
        let rows: BTreeSet<i64> = s
            .query_map([any], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows
    };
    let open: BTreeSet<i64> = (1..=100).filter(|r| r % 3 != 0).collect();
    assert_eq!(indexed("post_words"), open);
    assert_eq!(indexed("post_cold"), open);
    // What `needhave d1-words` asks for: the open posts the index lacks.
    for rowid in 101..=110 {
        post(rowid);
    }
    close(104);
    let query = needhave::store::migrate::d1_unindexed();
    let unindexed = query.split("; ").nth(1).unwrap();
    let mut s = conn.prepare(unindexed).unwrap();
    let ids: Vec<String> = s
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want: Vec<String> = (101..=110)
        .rev()
        .filter(|r| *r != 104)
        .map(|r| format!("{r:032x}"))
        .collect();
    assert_eq!(ids, want);
}

/// `needhave serve` sweeps without being asked: a post closed by a row
/// written beside the server (as the operator's removal is, on the file
/// it serves) leaves the index within a few seconds, and the server goes
/// on finding the others.
#[tokio::test]
async fn needhave_serve_sweeps_ended_posts_out_of_the_index() {
    let dir = common::scratch("sweep-serve");
    let db = dir.join("list.db");
    let server = common::Owned::spawn("127.0.0.1:0", db.to_str().unwrap(), &[]);
    // 70 posts: the first 64 move into the index.
    let word = format!("w{}", &common::fresh_note("").replace(['#', ' '], "")[..12]);
    let mut ids = Vec::new();
    for _ in 0..70 {
        let note = format!("{word} {}", common::fresh_note("a post the server sweeps"));
        let r = common::create_on(&server, "have", &note).await;
        assert_eq!(r.status, 201, "{}", r.text());
        ids.push(r.json()["id"].as_str().unwrap().to_string());
    }
    let conn = Connection::open(&db).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    let rowid = |id: &str| -> i64 {
        conn.query_row("SELECT rowid FROM posts WHERE id = ?1", [id], |r| r.get(0))
            .unwrap()
    };
    let in_index = |rowid: i64| -> (bool, bool) {
        let held = |part: &str, term: &str| -> bool {
            conn.query_row(
                &format!("SELECT count(*) FROM {part} WHERE {part} MATCH ?1 AND rowid = ?2"),
                rusqlite::params![format!("\"{term}\""), WORDS_BASE - rowid],
                |r| r.get::<_, i64>(0),
            )
            .unwrap()
                > 0
        };
        (
            held("post_words", "\u{2b0}\u{b7}have"),
            held("post_cold", "\u{b7}have"),
        )
    };
    let (closed, kept) = (rowid(&ids[2]), rowid(&ids[3]));
    assert_eq!(in_index(closed), (true, true));
    conn.execute(
        "INSERT INTO messages (id, post_id, role, ip_hash, created_at) \
         VALUES ('c0000000000000000000000000000001', ?1, 'close', 'closer', 1)",
        [&ids[2]],
    )
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while in_index(closed) != (false, false) {
        assert!(
            std::time::Instant::now() < deadline,
            "post {closed} still in the index after 20 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(in_index(kept), (true, true));
    let r = common::send_to(
        &server,
        common::fresh_ip(),
        "GET",
        &format!("/posts?q={word}&limit=100"),
        None,
        &[],
    )
    .await;
    let found = common::listed(&r.json());
    assert_eq!(found.len(), 69);
    assert!(!found.contains(&ids[2]));
    drop((conn, server));
    let _ = std::fs::remove_dir_all(&dir);
}
