//! The docs state what the code has: documentation drifts unless something
//! fails when it does.
//!
//! - The README's table of calls and its MCP tool list agree with the
//!   `routes!` table.
//! - Every limit and gate a doc states is the one the code has: the
//!   constants of `rules.rs`, the factors the bench scripts, the tests and
//!   `.ci/` check, and the defaults `needhave serve --help` prints. Each
//!   statement is pinned by the words the docs use, and each must still be
//!   said somewhere, so rewording one means pinning the new words here.
//!
//! Each check also runs on a planted mistake, so a reader that finds
//! nothing cannot pass.

mod docs;

use docs::{documents, read, rel};
use needhave::routes::{ROUTES, TOOLS};
use regex::Regex;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap()
}

#[test]
fn readme_lists_every_call() {
    let text = readme();
    for r in ROUTES {
        let call = format!("`{} {}", r.method, r.path);
        assert!(text.contains(&call), "README.md does not list {call}`");
    }
    // And no call that does not exist.
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let call = line.trim_start_matches("| `").split('`').next().unwrap();
        let mut words = call.split_whitespace();
        let (method, written) = (words.next().unwrap(), words.next().unwrap_or(""));
        if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method) {
            continue; // another table (the MCP tools)
        }
        // A call may be written with its query parameters (`/posts?kind&q`):
        // those it names must be the table's, and all of them.
        let (path, query) = written.split_once('?').unwrap_or((written, ""));
        let route = ROUTES.iter().find(|r| r.method == method && r.path == path);
        let Some(route) = route else {
            panic!("README.md lists {method} {path}, which is not in the table");
        };
        if !query.is_empty() {
            let named: Vec<&str> = query.split('&').collect();
            let declared: Vec<&str> = route.query.iter().map(|q| q.name).collect();
            assert_eq!(
                named, declared,
                "README.md's {method} {path}: its parameters"
            );
        }
    }
}

#[test]
fn readme_names_every_tool() {
    let text = readme();
    for t in TOOLS {
        assert!(
            text.contains(&format!("`{}`", t.name)),
            "README.md does not name the tool {}",
            t.name
        );
    }
}

// ------------------------------------------------------------ limits and gates

/// A number as a doc or a script writes it: `1,000`, `1.75`, or a word.
fn number(s: &str) -> f64 {
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    if let Some(n) = words.iter().position(|w| s.eq_ignore_ascii_case(w)) {
        return n as f64;
    }
    s.replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {s}"))
}

/// The first capture of `pattern` in `text`, as a number: what a script
/// or a source file says.
fn said(rel: &str, pattern: &str) -> f64 {
    let text = read(rel);
    let c = Regex::new(pattern)
        .unwrap()
        .captures(&text)
        .unwrap_or_else(|| {
            panic!("{rel} no longer says {pattern}: update this test to what it says now")
        });
    number(&c[1])
}

/// A statement the docs make, and the values the code has for its
/// numbers, in the order the pattern captures them.
struct Claim {
    what: &'static str,
    pattern: &'static str,
    values: Vec<f64>,
}

fn claim(what: &'static str, pattern: &'static str, values: &[f64]) -> Claim {
    Claim {
        what,
        pattern,
        values: values.to_vec(),
    }
}

/// What the docs say of the limits and gates, and what the code says.
fn claims() -> Vec<Claim> {
    use needhave::rules::*;
    let (posts, replies, thread) = (
        CREATES_PER_HOUR as f64,
        REPLIES_PER_HOUR as f64,
        THREAD_MESSAGES_PER_HOUR as f64,
    );
    let (waiting, share) = (WAITING_CAP as f64, WAITING_PER_CLIENT as f64);
    let (chars, page) = (MAX_CHARS as f64, LIST_SIZE as f64);
    // The gates, from the scripts and tests that hold them.
    let worker = {
        let text = read("bench/worker-size.sh");
        let c = Regex::new(r"\(\( (\d+) \* ours_gz > (\d+) \* yard_gz \)\)")
            .unwrap()
            .captures(&text)
            .expect("bench/worker-size.sh no longer checks `N * ours_gz > M * yard_gz`: update this test");
        number(&c[2]) / number(&c[1])
    };
    let disk = said(
        "needhave/tests/common/notes.rs",
        r"let bound = (\d+) \* bytes \+ 1024",
    );
    let deep = said(".ci/deep-page", r"r > 0 && r <= ([\d.]+)");
    let d1 = said("bench/d1-rows-read.mjs", r"const GOAL = (\d+);");
    let all = "bench/src/main.rs";
    vec![
        claim(
            "the hourly limits",
            r"(\d+) posts, (\d+) first replies and (\d+) thread messages per IP per hour",
            &[posts, replies, thread],
        ),
        claim(
            "the hourly limits",
            r"(\d+) posts, (\d+) first replies, (\d+) thread messages an hour",
            &[posts, replies, thread],
        ),
        claim(
            "the hourly limits",
            r"in an hour: (\d+) posts, (\d+) first replies \(and so at most (\d+) accepts of them by their authors\), (\d+) later messages",
            &[posts, replies, replies, thread],
        ),
        claim(
            "the hourly limits",
            r"\| post creations \| client, last hour \| ([\d,]+) \|",
            &[posts],
        ),
        claim(
            "the hourly limits",
            r"\| post creations \| site, last hour \| ([\d,]+) \|",
            &[SITE_CREATES_PER_HOUR as f64],
        ),
        claim(
            "the hourly limits",
            r"\| first replies \| client, last hour \| ([\d,]+) \|",
            &[replies],
        ),
        claim(
            "the hourly limits",
            r"\| first replies \| site, last hour \| ([\d,]+) \|",
            &[SITE_REPLIES_PER_HOUR as f64],
        ),
        claim(
            "the hourly limits",
            r"\| later messages in threads \| client, last hour \| ([\d,]+) \|",
            &[thread],
        ),
        claim(
            "the hourly limits",
            r"\| later messages in threads \| site, last hour \| ([\d,]+) \|",
            &[SITE_THREAD_MESSAGES_PER_HOUR as f64],
        ),
        claim(
            "the waiting cap",
            r"(\d+) waiting (?:first )?replies per post",
            &[waiting],
        ),
        claim(
            "the waiting cap",
            r"\| waiting first replies on a post \| post \| (\d+) \|",
            &[waiting],
        ),
        claim(
            "the waiting cap",
            r"at most (\d+) waiting first replies, at most (\d+) of them from one client",
            &[waiting, share],
        ),
        claim(
            "the waiting share",
            r"\| waiting first replies on a post \| client, on that post \| (\d+) \|",
            &[share],
        ),
        claim(
            "the note's length",
            r"notes and messages are 1–(\d+) characters",
            &[chars],
        ),
        claim(
            "the note's length",
            r"\*\*More than (\d+) characters\*\*",
            &[chars],
        ),
        claim("the list's page", r"newest first, (\d+) a page", &[page]),
        claim(
            "the list's page",
            r"posts per page, 1 to (\d+) \(default (\d+)\)",
            &[page, page],
        ),
        claim(
            "a search's words",
            r"at most (\d+) words, (\d+) characters",
            &[
                needhave::search::MAX_QUERY_WORDS as f64,
                needhave::search::MAX_QUERY_CHARS as f64,
            ],
        ),
        claim(
            "an MCP batch",
            r"at most (\d+) elements; a batch stops running once its answers reach (\d+) MiB",
            &[
                needhave::mcp::batch::MAX_BATCH as f64,
                (needhave::mcp::batch::MAX_BATCH_ANSWER >> 20) as f64,
            ],
        ),
        claim(
            "a request body",
            r"\| request body \| (\d+) KiB",
            &[(MAX_BODY >> 10) as f64],
        ),
        claim(
            "the disk bound",
            r"(?i)at most (\w+) times its note's UTF-8 bytes plus 1 KiB",
            &[disk],
        ),
        claim(
            "the disk bound",
            r"(?i)costs at most (\w+) times (?:its|the) note's UTF-8 bytes plus 1 KiB",
            &[disk],
        ),
        claim(
            "the Worker's size gate",
            r"(\d+(?:\.\d+)?)× the yardstick's",
            &[worker],
        ),
        claim(
            "the Worker's size gate",
            r"(?i)size gate (?:is|of) (\d+(?:\.\d+)?)×",
            &[worker],
        ),
        claim(
            "the deep page's gate",
            r"100th page (?:of a common word )?(?:at most|within) (\d+(?:\.\d+)?)× (?:its|the) first",
            &[deep],
        ),
        claim(
            "D1's rows a page",
            r"every page on D1 under ([\d,]+) rows read",
            &[d1],
        ),
        claim(
            "D1's rows a page",
            r"`--check` fails when a page reads ([\d,]+) rows or more",
            &[d1],
        ),
        claim(
            "the read goal",
            r"at least (\d+(?:\.\d+)?)× the hello-world's",
            &[said(all, r"Some\(ratio >= ([\d.]+) && read_errors")],
        ),
        claim(
            "the write goal",
            r"at least (\d+(?:\.\d+)?)× raw rusqlite",
            &[said(all, r"Some\(ratio >= ([\d.]+) && write_errors")],
        ),
        claim(
            "the fsync goal",
            r"at most (\d+(?:\.\d+)?) fsyncs per acknowledged write",
            &[said(all, r"per <= ([\d.]+) && acked")],
        ),
        claim(
            "the scale goal",
            r"1 M posts within (\d+(?:\.\d+)?)× of 1 k, p50 and p99",
            &[said(all, r"Some\(r50 <= ([\d.]+) && r99")],
        ),
        claim(
            "the memory goal",
            r"peak RSS at most (\d+) MiB",
            &[said(all, r"p <= (\d+) \* 1024")],
        ),
        claim(
            "the hostile suite's memory",
            r"RSS (?:stays )?under (\d+) MiB",
            &[said(
                "scripts/hostile/hostile.py",
                r"RSS_LIMIT = (\d+) \* MiB",
            )],
        ),
    ]
}

/// Where `text` states `claim` with other numbers than the code's, and how
/// many times it states it.
fn misstated(text: &str, claim: &Claim) -> (Vec<String>, usize) {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let re = Regex::new(claim.pattern).unwrap();
    let mut wrong = Vec::new();
    let mut n = 0;
    for c in re.captures_iter(&flat) {
        n += 1;
        let stated: Vec<f64> = (1..c.len()).map(|i| number(&c[i])).collect();
        if stated
            .iter()
            .zip(&claim.values)
            .any(|(a, b)| (a - b).abs() > 1e-9)
        {
            wrong.push(format!(
                "{}: \"{}\" (the code: {:?})",
                claim.what, &c[0], claim.values
            ));
        }
    }
    (wrong, n)
}

#[test]
fn the_docs_state_the_limits_and_gates_the_code_has() {
    let texts: Vec<(String, String)> = documents()
        .iter()
        .map(|f| (rel(f), std::fs::read_to_string(f).unwrap()))
        .collect();
    let mut wrong = Vec::new();
    for claim in claims() {
        let mut said = 0;
        for (name, text) in &texts {
            let (w, n) = misstated(text, &claim);
            said += n;
            wrong.extend(w.into_iter().map(|w| format!("{name}: {w}")));
        }
        assert!(
            said > 0,
            "no doc says /{}/ any more: pin what the docs say of {} instead",
            claim.pattern,
            claim.what
        );
    }
    assert!(
        wrong.is_empty(),
        "docs that state a limit or a gate the code does not have:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_scripts_state_the_size_gate_they_check() {
    let gate = claims()
        .into_iter()
        .find(|c| c.what == "the Worker's size gate")
        .unwrap()
        .values[0];
    let stated =
        Regex::new(r"(?i)(\d+(?:\.\d+)?) ?x the yardstick|budget:? (\d+(?:\.\d+)?)").unwrap();
    for script in ["bench/worker-size.sh", ".ci/run"] {
        let text = read(script);
        let found: Vec<f64> = stated
            .captures_iter(&text)
            .map(|c| number(c.get(1).or(c.get(2)).unwrap().as_str()))
            .collect();
        assert!(!found.is_empty(), "{script} no longer states the size gate");
        assert!(
            found.iter().all(|f| (f - gate).abs() < 1e-9),
            "{script} states the size gate as {found:?}; it checks {gate}"
        );
    }
}

#[test]
fn a_misstated_limit_is_found() {
    let claims = claims();
    let hourly = &claims[0];
    let text = "Limits: 10 posts, 20 first replies and\n100 thread messages per IP per hour.\n\
                Elsewhere: 12 posts, 20 first replies and 100 thread messages per IP per hour.";
    let (wrong, n) = misstated(text, hourly);
    assert_eq!((wrong.len(), n), (1, 2), "{wrong:?}");
    assert!(wrong[0].contains("12 posts"));
    let gate = claims
        .iter()
        .find(|c| c.what == "the Worker's size gate")
        .unwrap();
    let (wrong, n) = misstated("at most 1.5× the yardstick's gzip", gate);
    assert_eq!((wrong.len(), n), (1, 1));
    let disk = claims.iter().find(|c| c.what == "the disk bound").unwrap();
    let (wrong, _) = misstated(
        "a post costs at most three times its note's UTF-8 bytes plus 1 KiB",
        disk,
    );
    assert_eq!(wrong.len(), 1);
}

// ------------------------------------------------------------ flags

/// The flags of `needhave serve --help` and the default each shows
/// (`[default: …]`), in the order printed.
fn serve_flags() -> Vec<(String, Option<String>)> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_needhave"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let flag = Regex::new(r"^\s+(?:-\w, )?--([\w-]+)").unwrap();
    let default = Regex::new(r"\[default: ([^\]]+)\]").unwrap();
    let mut flags: Vec<(String, Option<String>)> = Vec::new();
    for line in help.lines() {
        if let Some(c) = flag.captures(line) {
            flags.push((c[1].to_string(), None));
        }
        if let (Some(c), Some(last)) = (default.captures(line), flags.last_mut()) {
            last.1 = Some(c[1].to_string());
        }
    }
    flags.retain(|(f, _)| f != "help");
    flags
}

/// The rows of every table in `text` with a `flag` and a `default`
/// column: the flag (`--name`) and what the row says its default is.
fn flag_rows(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut columns: Option<(usize, usize)> = None;
    let flag = Regex::new(r"`--([\w-]+)").unwrap();
    for line in text.lines() {
        let Some(row) = line.trim().strip_prefix('|') else {
            columns = None;
            continue;
        };
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        if let Some((f, d)) = columns {
            if let (Some(name), Some(default)) =
                (cells.get(f).and_then(|c| flag.captures(c)), cells.get(d))
            {
                out.push((name[1].to_string(), default.to_string()));
            }
        } else if let (Some(f), Some(d)) = (
            cells.iter().position(|c| *c == "flag"),
            cells.iter().position(|c| *c == "default"),
        ) {
            columns = Some((f, d));
        }
    }
    out
}

/// Whether a doc's default says what `--help`'s does: the same number
/// (with its `K`/`M`) or the same word, or none where there is none.
fn same_default(doc: &str, help: Option<&str>) -> bool {
    let first = Regex::new(r"\d[\d,.]*[KM]?|[a-z][\w.:]*").unwrap();
    let token = |s: &str| {
        first
            .find(&s.replace('`', ""))
            .map(|m| m.as_str().replace(',', ""))
    };
    match help {
        // No default shown: the doc says what happens without the flag.
        None => !doc.chars().any(|c| c.is_ascii_digit()),
        Some(h) => {
            let (d, h) = (token(doc), token(h));
            d.is_some()
                && (d == h
                    || d.zip(h).is_some_and(|(d, h)| {
                        d.parse::<f64>().ok() == h.parse().ok() && d.parse::<f64>().is_ok()
                    }))
        }
    }
}

#[test]
fn the_flag_tables_state_the_defaults_of_needhave_serve() {
    let flags = serve_flags();
    assert!(
        flags.len() > 10,
        "only {} flags read from --help",
        flags.len()
    );
    let mut wrong = Vec::new();
    let mut listed = Vec::new();
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        for (flag, default) in flag_rows(&text) {
            match flags.iter().find(|(f, _)| *f == flag) {
                None => wrong.push(format!(
                    "{}: --{flag}, which needhave serve does not have",
                    rel(&file)
                )),
                Some((_, help)) if !same_default(&default, help.as_deref()) => wrong.push(format!(
                    "{}: --{flag} defaults to {default:?}; --help says {help:?}",
                    rel(&file)
                )),
                Some(_) => listed.push(flag),
            }
        }
    }
    let missing: Vec<_> = flags
        .iter()
        .filter(|(f, _)| !listed.contains(f))
        .map(|(f, _)| f)
        .collect();
    assert!(
        wrong.is_empty(),
        "flag tables that disagree with the code:\n{}",
        wrong.join("\n")
    );
    assert!(
        missing.is_empty(),
        "flags of needhave serve no doc's flag table lists: {missing:?}"
    );
}

#[test]
fn a_misstated_default_is_found() {
    let rows = flag_rows("| flag | default | what |\n|---|---|---|\n| `--write-timeout SECS` | 60 | … |\n\nno table | `--x` |");
    assert_eq!(rows, [("write-timeout".to_string(), "60".to_string())]);
    assert!(!same_default("60", Some("30")));
    assert!(same_default("30", Some("30")));
    assert!(same_default("`64M`", Some("64M")));
    assert!(!same_default("`64K`", Some("64M")));
    assert!(same_default(
        "the file-descriptor limit less 64",
        Some("the file-descriptor limit less 64")
    ));
    assert!(same_default("none (off)", None));
    assert!(!same_default("10", None));
    assert!(same_default("`127.0.0.1:8787`", Some("127.0.0.1:8787")));
}
