//! The index of words in two parts (`store::hot_cold`), through the
//! statements the list runs: the move a create's insert sets off, and the
//! page `GET /posts?q=` reads (`handlers::posts::WORDS_SQL`), for writers
//! whose copies of the hot set are current, behind, or missing.
use needhave::rules::hot::HotSet;
use needhave::rules::words::{terms as terms_of, waiting_text};
use needhave::rules::Kind;
use needhave::store::hot_cold::*;
use rusqlite::{params, Connection};

fn list() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    needhave::store::migrate::apply(&conn).unwrap();
    conn
}

/// Creates a post as a create's batch would, moving when 64 wait; the
/// writer's copy takes what the batch's catch-up hands back.
/// `catch_up`: whether the copy takes the batch's promotions (a copy
/// that does not is a writer behind).
fn create(
    conn: &Connection,
    copy: Option<&mut HotSet>,
    catch_up: bool,
    n: i64,
    kind: Kind,
    note: &str,
) {
    let id = format!("{n:032x}");
    conn.execute(
        "INSERT INTO posts (id, kind, note, secret_hash, ip_hash, created_at) \
         VALUES (?1, ?2, ?3, '', '', 0)",
        params![id, kind.as_str(), note],
    )
    .unwrap();
    let words = waiting_text(kind, note);
    let (tokens, candidates, version, cold) = match &copy {
        Some(hot) => {
            let t = hot.tokens(kind, &id, &words);
            (
                Some(t.text),
                Some(serde_json::to_string(&t.candidates).unwrap()),
                Some(t.version),
                t.cold,
            )
        }
        None => (None, None, None, None),
    };
    conn.execute(
        "INSERT INTO words_new (post, words, tokens, candidates, version, cold) \
         SELECT rowid, ?2, ?3, ?4, ?5, ?6 FROM posts WHERE id = ?1",
        params![id, words, tokens, candidates, version, cold],
    )
    .unwrap();
    if let Some(hot) = copy.filter(|_| catch_up) {
        let mut s = conn.prepare(CATCH_UP).unwrap();
        let rows: Vec<(i64, String)> = s
            .query_map([hot.version()], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        hot.extend(rows);
    }
}

/// The page as the list asks it (`handlers::posts::WORDS_SQL`): the
/// waiting posts, then the index's two parts, merged.
fn page(conn: &Connection, kinds: &[Kind], terms: &[&str], limit: i64) -> Vec<i64> {
    let marks: Vec<String> = kinds
        .iter()
        .map(|k| needhave::rules::words::kind_mark(*k).to_string())
        .collect();
    let kind = match kinds {
        [k] => Some(*k),
        _ => None,
    };
    let words = needhave::search::Words::parse(&terms.join(" ")).unwrap();
    let needles = words.needles(kind);
    let mut s = conn.prepare(needhave::handlers::posts::WORDS_SQL).unwrap();
    let rows: Vec<i64> = s
        .query_map(
            params![
                "",
                "",
                limit,
                1i64 << 53,
                serde_json::to_string(&marks).unwrap(),
                needles,
                words.terms(),
                0,
            ],
            |r| r.get::<_, Option<i64>>(1),
        )
        .unwrap()
        .filter_map(Result::unwrap)
        .take(limit as usize)
        .collect();
    rows
}

/// The posts a page must hold: every post of those kinds whose terms
/// (its runs as pairs) hold one beginning with each of the query's,
/// newest first.
fn expected(conn: &Connection, kinds: &[Kind], terms: &[&str], limit: usize) -> Vec<i64> {
    let asked: Vec<String> = serde_json::from_str(
        &needhave::search::Words::parse(&terms.join(" "))
            .unwrap()
            .terms(),
    )
    .unwrap();
    let mut s = conn
        .prepare("SELECT rowid, kind, note FROM posts ORDER BY rowid DESC")
        .unwrap();
    s.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .filter(|(_, kind, note)| {
        let kind = if kind == "need" {
            Kind::Need
        } else {
            Kind::Have
        };
        kinds.contains(&kind) && {
            let words = waiting_text(kind, note);
            asked
                .iter()
                .all(|t| terms_of(&words).any(|w| w.starts_with(t)))
        }
    })
    .map(|(rowid, _, _)| rowid)
    .take(limit)
    .collect()
}

fn note(i: i64) -> String {
    // Common words, a word of the post's own, and now and then a rarer one.
    // Some longer than eight letters, whose prefixes the list holds deeper
    // than that ([`deep_chain`]), and one that shares fourteen characters
    // with them but is not one of them.
    let common = [
        "gpu",
        "gpus",
        "tonight",
        "bike",
        "refurbishedlaptop",
        "mountainbike",
        "desk",
        "refurbishedlaptops",
        "refurbishedlazy",
    ];
    let a = common[(i % 9) as usize];
    let b = common[((i / 9) % 9) as usize];
    let rare = if i % 23 == 0 { " zephyr" } else { "" };
    // A run of unspaced letters, long or short, now and then one the
    // list has not seen.
    let han = ["自行车", "显卡", "我有自行车", "车", "显卡和自行车"][(i % 5) as usize];
    let new = if i % 11 == 0 {
        format!(" 新{}", char::from_u32(0x4e00 + i as u32).unwrap())
    } else {
        String::new()
    };
    format!("{a} {b} item q{i:x}z{rare} {han}{new}")
}

/// Makes every prefix of `ⁿrefurbishedlaptop` hot on a fresh list, as the
/// move would after many posts of it: prefixes deeper than eight
/// characters, which the list's first thousand posts would not reach.
fn deep_chain(conn: &Connection) {
    let word = "\u{207f}refurbishedlaptop";
    let ends: Vec<usize> = word.char_indices().map(|(i, _)| i).skip(2).collect();
    for end in ends.into_iter().chain([word.len()]) {
        conn.execute("INSERT INTO hot_prefixes (p) VALUES (?1)", [&word[..end]])
            .unwrap();
    }
}

fn kind(i: i64) -> Kind {
    if i % 3 == 0 {
        Kind::Have
    } else {
        Kind::Need
    }
}

#[test]
fn print_trigger() {
    if let Some(path) = std::env::var_os("PRINT_TRIGGER") {
        std::fs::write(path, trigger()).unwrap();
    }
}

#[test]
fn the_schema_moves_as_the_statements_say() {
    // EXPAND writes out the runs that `rules::words::RUN` begins (SQL has
    // no constants).
    let run = format!("'{}'", needhave::rules::words::RUN);
    assert_eq!(EXPAND.matches(&run).count(), 3, "{EXPAND}");
    let trigger = trigger();
    assert!(include_str!("../../schema.sql").contains(&trigger));
    assert!(include_str!("../../migrations/0015_deep_prefixes.sql").contains(&trigger));
}

#[test]
fn pages_are_what_the_notes_hold_whether_a_word_is_hot_or_cold() {
    // A writer with a copy it keeps current, one whose copy catches up
    // every 50th post only (the move adds what it missed), and one
    // without a copy (the move finds every token).
    for (with_copy, every) in [(true, 1), (true, 50), (false, 1)] {
        let conn = list();
        deep_chain(&conn);
        let mut hot = HotSet::default();
        for i in 1..=1000 {
            let copy = with_copy.then_some(&mut hot);
            create(&conn, copy, i % every == 0, i, kind(i), &note(i));
        }
        let promoted: i64 = conn
            .query_row("SELECT count(*) FROM hot_prefixes", [], |r| r.get(0))
            .unwrap();
        assert!(promoted > 10, "{promoted} promoted");
        let both = [Kind::Need, Kind::Have];
        for terms in [
            &["gpu"][..],
            &["gpus"],
            &["g"],
            &["bike", "tonight"],
            &["zephyr"],
            &["zephyr", "gpu"],
            &["q3e"],
            &["q3e8z"],
            &["mountainb"],
            &["mountainbike", "gpu"],
            &["refurbishedlaptop"],
            &["refurbishedlaptops"],
            &["refurbishedla"],
            &["refurbishedlaz"],
            &["refurbishedlaptop", "gpus"],
            &["refurbishedlaptop", "refurbishedlazy"],
            &["refurbishedlaptop", "zephyr"],
            &["nothing"],
            &["自行车"],
            &["车"],
            &["显"],
            &["自"],
            &["行车", "gpu"],
            &["我有自行"],
            &["新"],
        ] {
            for kinds in [&both[..], &[Kind::Need], &[Kind::Have]] {
                assert_eq!(
                    page(&conn, kinds, terms, 101),
                    expected(&conn, kinds, terms, 101),
                    "{terms:?} {kinds:?} copy {with_copy}, caught up every {every}"
                );
            }
        }
    }
}

#[test]
fn the_move_finds_the_tokens_a_writer_would() {
    let conn = list();
    deep_chain(&conn);
    let mut hot = HotSet::default();
    for i in 1..=640 {
        create(&conn, Some(&mut hot), true, i, kind(i), &note(i));
    }
    assert!(hot.len() > 10);
    assert_eq!(
        hot.version(),
        conn.query_row("SELECT max(rowid) FROM hot_prefixes", [], |r| r
            .get::<_, i64>(0))
            .unwrap()
    );
    // A post whose writer had no copy: the move's tokens are the copy's
    // (the move run by hand, to read what it wrote before it moves).
    conn.execute_batch("DROP TRIGGER words_move").unwrap();
    for i in 641..=700 {
        let words = waiting_text(kind(i), &note(i));
        conn.execute(
            "INSERT INTO words_new (post, words) VALUES (?1, ?2)",
            params![i + 10_000, words],
        )
        .unwrap();
    }
    // Fill to 64 so that BEHIND runs, then read what it wrote.
    let waiting: i64 = conn
        .query_row("SELECT count(*) FROM words_new", [], |r| r.get(0))
        .unwrap();
    for k in waiting..64 {
        conn.execute(
            "INSERT INTO words_new (post, words) VALUES (?1, '\u{b7}need x')",
            [20_000 + k],
        )
        .unwrap();
    }
    conn.execute_batch(EXPAND).unwrap();
    conn.execute_batch(BEHIND).unwrap();
    let mut s = conn
        .prepare("SELECT post, words, tokens FROM words_new WHERE post > 10000 AND post < 20000")
        .unwrap();
    let rows: Vec<(i64, String, String)> = s
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 60);
    // Not vacuous: tokens deeper than eight characters, and a word that
    // shares fourteen characters with a deeper hot prefix without being
    // one of its words (the depth counted a character at a time).
    let deep = rows
        .iter()
        .filter(|(_, _, tokens)| tokens.contains(" \u{207f}refurbishedlapto"))
        .count();
    let beside = rows
        .iter()
        .filter(|(_, words, _)| {
            words.contains("refurbishedlazy") && !words.contains("refurbishedlap")
        })
        .count();
    assert!(deep > 0 && beside > 0, "{deep} {beside}");
    for (post, words, tokens) in rows {
        let i = post - 10_000;
        assert_eq!(
            words,
            needhave::rules::words::expanded(&waiting_text(kind(i), &note(i)))
        );
        let mut got: Vec<&str> = tokens.split(' ').collect();
        let want_text = hot.tokens(kind(i), "any", &words).text;
        let mut want: Vec<&str> = want_text.split(' ').collect();
        // The move writes a prefix two terms share once for each (FTS5
        // holds a term once a post); the copy writes it once.
        got.sort_unstable();
        got.dedup();
        want.sort_unstable();
        assert_eq!(got, want, "{words}");
    }
}

/// A word longer than eight letters that many notes hold is promoted to
/// its end, by writers with a copy of the hot set and without one, within
/// a few moves (the first move that one of its posts offers it in, once
/// eight moved posts hold it whole): a query of it then reads its own list
/// in the hot part (and the cold part needs it no more).
#[test]
fn a_long_word_many_notes_hold_is_promoted_to_its_end() {
    for with_copy in [true, false] {
        let conn = list();
        let mut hot = HotSet::default();
        let deepest = |conn: &Connection| -> String {
            conn.query_row(
                "SELECT p FROM hot_prefixes WHERE p GLOB '\u{207f}c*' ORDER BY length(p) DESC",
                [],
                |r| r.get(0),
            )
            .unwrap()
        };
        for i in 1..=1280 {
            let copy = with_copy.then_some(&mut hot);
            let note = format!("commonword own{i}x");
            create(&conn, copy, true, i, Kind::Need, &note);
            if i == 192 {
                // Three moves of 64 posts that all hold it.
                assert_eq!(deepest(&conn), "\u{207f}commonword", "copy {with_copy}");
            }
        }
        assert_eq!(deepest(&conn), "\u{207f}commonword", "copy {with_copy}");
        let all: Vec<i64> = (1..=1280).rev().take(101).collect();
        for terms in [
            &["commonword"][..],
            &["commonwor"],
            &["commonword", "own7x"],
        ] {
            assert_eq!(
                page(&conn, &[Kind::Need], terms, 101),
                expected(&conn, &[Kind::Need], terms, 101),
                "{terms:?} copy {with_copy}"
            );
        }
        assert_eq!(page(&conn, &[Kind::Need], &["commonword"], 101), all);
    }
}

/// A query word longer than the hot set's deepest prefix (only a word
/// that NFKC lengthens gets there: U+FB03 is "ffi") is asked as its
/// first hundred characters, whose list the hot part keeps once many
/// posts hold the word (the statement writes the number out).
#[test]
fn a_word_longer_than_the_deepest_prefix_is_asked_by_it() {
    let longest = needhave::search::LONGEST_TERM;
    let sql = needhave::handlers::posts::WORDS_SQL;
    assert_eq!(
        sql.matches(&format!("substr(w.value, 1, {longest})"))
            .count(),
        2,
        "{sql}"
    );
    let conn = list();
    let mut hot = HotSet::default();
    let word = "ffi".repeat(40);
    for i in 1..=200 {
        let note = format!("{word} own{i}x");
        create(&conn, Some(&mut hot), true, i, Kind::Need, &note);
    }
    let marked = format!("\u{207f}{}", &word[..longest]);
    let deepest: i64 = conn
        .query_row(
            "SELECT count(*) FROM hot_prefixes WHERE p = ?1",
            [&marked],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(deepest, 1, "the word is hot to the deepest prefix");
    let typed = "\u{fb03}".repeat(40);
    let all: Vec<i64> = (1..=200).rev().take(101).collect();
    assert_eq!(page(&conn, &[Kind::Need], &[&typed], 101), all);
    assert_eq!(page(&conn, &[Kind::Need], &[&typed, "own7x"], 101), vec![7]);
}

#[test]
fn notes_of_words_no_other_note_holds_promote_nothing() {
    let conn = list();
    let mut hot = HotSet::default();
    for i in 1..=640 {
        // Ten words of eight letters, each post's own: the digits of a
        // number as letters, the last digit first, so that a prefix of
        // k letters is shared by about 6,400 / 10^k words.
        let note: String = (0..10)
            .map(|k| {
                format!("{:08}", i * 10 + k)
                    .chars()
                    .rev()
                    .map(|c| char::from(b'a' + c.to_digit(10).unwrap() as u8))
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join(" ");
        create(&conn, Some(&mut hot), true, i, Kind::Need, &note);
    }
    // Only prefixes many posts share: letters and pairs (640 and 64
    // words each), some of three letters (6.4); none of four (0.64).
    let deepest: i64 = conn
        .query_row(
            "SELECT coalesce(max(length(p)), 0) FROM hot_prefixes",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!((3..=4).contains(&deepest), "{deepest}");
}
