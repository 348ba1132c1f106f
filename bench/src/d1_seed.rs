//! The posts of `search`'s seed (the same notes, the same words) as SQL
//! files for `wrangler d1 execute --local --file`: the D1 half of
//! bench/d1-rows-read.sh, which measures D1's rows read per `GET /posts`.
//!
//!     needhave-bench d1-seed --posts 100000 --out DIR [--per-file 10000]
//!
//! Each file holds multi-row INSERTs of posts (row numbers given, so that
//! the index rows can name them) and of their words in both parts of the
//! index, as an upgrade writes them (`store::migrate::fill_index`): the
//! first file begins with the hot set the posts share, counted
//! (`rules::hot::counted`; a list grown by its creates promotes those
//! prefixes too, a few a move), then each post's hot prefixes and cold
//! terms from a copy of it. As a list's creates leave them: the posts up to
//! the last multiple of `PENDING_MAX` in the index, the few newer ones'
//! words in `words_new`.
//! Multi-row statements because wrangler runs a file statement by statement
//! and 200,000 single-row ones take many minutes; each stays well under
//! D1's 100 KB statement limit.

use std::fmt::Write as _;

use needhave::rules::hot::{self, HotSet};
use needhave::rules::words::waiting_text;
use needhave::secrets::sha256_hex;
use needhave::store::{PENDING_MAX, WORDS_BASE, WORDS_GROWN, WORDS_LEAF};

use crate::corpus::search_note as note;

/// Rows per INSERT: a note row is about 250 bytes of SQL.
const ROWS: u64 = 200;

/// A SQL text literal.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Writes `DIR/seed-NNN.sql`, `per_file` posts each, and returns the files.
pub fn write(out: &std::path::Path, posts: u64, per_file: u64) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let mut files = Vec::new();
    let mark = posts / PENDING_MAX as u64 * PENDING_MAX as u64;
    let moved: Vec<(needhave::rules::Kind, String)> = (0..mark)
        .map(|i| {
            let (kind, text) = note(i);
            (kind, waiting_text(kind, &text))
        })
        .collect();
    let promoted = hot::counted(
        || moved.iter().map(|(k, w)| (*k, w.as_str())),
        hot::PROMOTED_AT,
    );
    let mut copy = HotSet::new();
    copy.extend_unsorted((1..).zip(promoted.iter().cloned()).collect());
    let mut prefixes = String::new();
    for chunk in promoted.chunks(ROWS as usize) {
        let values: Vec<String> = chunk.iter().map(|p| format!("({})", quoted(p))).collect();
        let _ = writeln!(
            prefixes,
            "INSERT INTO hot_prefixes (p) VALUES {};",
            values.join(",")
        );
    }
    let mut start = 0;
    while start < posts {
        let end = (start + per_file).min(posts);
        let mut sql = std::mem::take(&mut prefixes);
        let mut at = start;
        while at < end {
            let stop = (at + ROWS).min(end);
            let mut rows = String::new();
            // Each post under its row number reversed, as the create batch
            // writes it, newest first: FTS5 keeps a statement's rows in one
            // segment only while their row numbers ascend.
            let mut words = Vec::new();
            let mut cold = Vec::new();
            let mut waiting = Vec::new();
            for i in at..stop {
                let (kind, text) = note(i);
                let key = needhave::rules::note_key(&text);
                // Row numbers from 1, as a fresh table gives them.
                let rowid = i + 1;
                let sep = if i == at { "" } else { "," };
                let _ = write!(
                    rows,
                    "{sep}\n({rowid},'{i:032x}','{}',{},'h','ip',{i},'{}')",
                    kind.as_str(),
                    quoted(&text),
                    sha256_hex(&key),
                );
                if rowid <= mark {
                    let (_, waiting_words) = &moved[i as usize];
                    let (hot, terms) = copy.parts(kind, &format!("{i:032x}"), waiting_words);
                    let reversed = WORDS_BASE - rowid as i64;
                    words.push(format!("\n({reversed},{})", quoted(&hot)));
                    cold.push(format!("\n({reversed},{})", quoted(&terms)));
                } else {
                    let waiting_words = quoted(&waiting_text(kind, &text));
                    waiting.push(format!("\n({rowid},{waiting_words})"));
                }
            }
            let _ = writeln!(
                sql,
                "INSERT INTO posts (rowid, id, kind, note, secret_hash, ip_hash, created_at, note_key_hash) VALUES{rows};"
            );
            words.reverse();
            cold.reverse();
            // The list's leaves: FTS5's own until its 10,000th post, small
            // from the rows that reach it (store::SMALL_LEAVES).
            if at < WORDS_GROWN as u64 && stop >= WORDS_GROWN as u64 {
                let _ = writeln!(
                    sql,
                    "INSERT INTO post_words (post_words, rank) VALUES ('pgsz', {WORDS_LEAF});"
                );
            }
            if !words.is_empty() {
                let _ = writeln!(
                    sql,
                    "INSERT INTO post_words (rowid, words) VALUES{};",
                    words.join(",")
                );
            }
            if !cold.is_empty() {
                let _ = writeln!(
                    sql,
                    "INSERT INTO post_cold (rowid, words) VALUES{};",
                    cold.join(",")
                );
            }
            if !waiting.is_empty() {
                let _ = writeln!(
                    sql,
                    "INSERT INTO words_new (post, words) VALUES{};",
                    waiting.join(",")
                );
            }
            at = stop;
        }
        let file = out.join(format!("seed-{:03}.sql", files.len()));
        std::fs::write(&file, sql).map_err(|e| e.to_string())?;
        files.push(file.to_string_lossy().into_owned());
        start = end;
    }
    Ok(files)
}
