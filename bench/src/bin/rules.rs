//! `rules-bench`: what the text rules of a post's note cost, per note of 500
//! characters, beside a note of 500 ASCII letters, in one run. The worst
//! cases are the characters that NFKC expands most (U+FDFA 18 times,
//! U+FDFB 8 times, squared katakana 5 times) and notes built to make the
//! contact scanner work hardest.
//!
//!     cargo run --release -p needhave-bench --bin rules-bench [-- --ms 300]
//!
//! Prints nanoseconds per note and the ratio to the ASCII note timed beside
//! it (medians of 7 rounds) for `rules::note` (text rules, contact details
//! and the key).

use std::hint::black_box;
use std::time::{Duration, Instant};

fn notes() -> Vec<(&'static str, String)> {
    let rep = |s: &str, n: usize| s.repeat(n);
    vec![
        ("ascii letters", rep("a", 500)),
        ("ascii words", rep("need a bike ", 41) + "and more"),
        ("latin é", rep("é", 500)),
        ("latin e + U+0301", rep("e\u{301}", 250)),
        ("cyrillic", rep("ж", 500)),
        ("arabic", rep("ب", 500)),
        ("devanagari", rep("नमस्ते ", 71) + "न"),
        ("cjk", rep("東", 500)),
        ("emoji", rep("😀", 500)),
        ("U+FDFA (NFKC x18)", rep("\u{fdfa}", 500)),
        ("U+FDFB (NFKC x8)", rep("\u{fdfb}", 500)),
        ("U+3347 (NFKC x5)", rep("\u{3347}", 500)),
        ("U+33AF (NFKC x6)", rep("\u{33af}", 500)),
        ("U+247D (NFKC x4, digits)", rep("\u{247d}", 500)),
        ("full-width digits", rep("１", 500)),
        ("arabic-indic digits", rep("٤", 500)),
        ("digit groups", rep("12 ", 166) + "12"),
        ("at signs", rep("a@", 250)),
        ("dots and at", rep("a.", 200) + &rep("@b", 50)),
        ("lone marks", "x".to_string() + &rep(" \u{93f}", 249) + "x"),
    ]
}

/// Nanoseconds per call of `rules::note` on `note`, over about `budget`.
fn time(note: &str, budget: Duration) -> f64 {
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < budget {
        for _ in 0..16 {
            black_box(needhave::rules::note(black_box(note)).ok());
        }
        n += 16;
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

/// The note's time and its ratio to the ASCII note's, each the median of 7
/// rounds that time the two back to back, so that a machine busy with other
/// work slows both alike.
fn per_note(note: &str, ascii: &str, budget: Duration) -> (f64, f64) {
    let mut times = Vec::new();
    let mut ratios = Vec::new();
    for _ in 0..7 {
        let t = time(note, budget / 14);
        let a = time(ascii, budget / 14);
        times.push(t);
        ratios.push(t / a);
    }
    times.sort_by(f64::total_cmp);
    ratios.sort_by(f64::total_cmp);
    (times[3], ratios[3])
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut ms = 300;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--ms" => ms = args.next().and_then(|v| v.parse().ok()).unwrap_or(ms),
            other => {
                eprintln!("usage: rules-bench [--ms PER_NOTE]; got {other}");
                std::process::exit(2);
            }
        }
    }
    let budget = Duration::from_millis(ms);
    let notes = notes();
    let ascii = &notes[0].1;
    println!(
        "{:<28} {:>6} {:>10} {:>8}  verdict",
        "note (500 characters)", "chars", "ns/note", "x ascii"
    );
    for (name, note) in &notes {
        let (ns, ratio) = per_note(note, ascii, budget);
        let verdict = match needhave::rules::note(note) {
            Ok(_) => "ok".to_string(),
            Err(c) => c.as_str().to_string(),
        };
        println!(
            "{name:<28} {:>6} {ns:>10.0} {ratio:>8.2}  {verdict}",
            note.chars().count()
        );
    }
}
