//! The docs lead somewhere and read as guides, or a test fails:
//!
//! - every relative link in them leads to a file, and every `#anchor` to a
//!   heading of the page it names;
//! - every pointer from the code into a doc (`docs/finding.md, "Pages
//!   and cursors"` in a comment) names a doc that exists and a heading it
//!   has;
//! - the README stays a front door (400 lines at most) and each guide under
//!   `docs/` reads in one sitting (450 lines at most);
//! - no doc reads as a lab notebook: no commit hashes, no "issue N", no
//!   run-by-run headings (history is git's).
//!
//! Each check also runs on a planted mistake, so a reader that finds
//! nothing cannot pass. What the docs state of the code's limits and gates
//! is checked in `readme.rs`.

mod docs;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use docs::{documents, guides, read, rel, root};
use regex::Regex;

// ------------------------------------------------------------ links

/// The targets of the Markdown links (`[text](target)`) and of the HTML
/// `href`/`src` attributes in `text`, as written.
fn targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].trim().to_string());
        }
    }
    for attr in ["href=\"", "src=\""] {
        let mut rest = text;
        while let Some(i) = rest.find(attr) {
            rest = &rest[i + attr.len()..];
            if let Some(end) = rest.find('"') {
                out.push(rest[..end].to_string());
            }
        }
    }
    out
}

/// The headings of a Markdown text, as a reader sees them (backticks
/// left out), skipping fenced code, whose `#` lines are comments.
fn headings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#');
        if title.starts_with(' ') {
            out.push(title.trim().replace('`', ""));
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, spaces made hyphens, every
/// character but letters, digits, `-` and `_` left out.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors a Markdown text has: one for each heading, a repeated one
/// numbered as GitHub numbers it (`-1`, `-2`, …).
fn anchors(text: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    headings(text)
        .iter()
        .map(|h| {
            let base = slug(h);
            let n = seen.entry(base.clone()).or_default();
            let anchor = match *n {
                0 => base,
                k => format!("{base}-{k}"),
            };
            *n += 1;
            anchor
        })
        .collect()
}

/// The relative links of `text` (a file in `dir`) that name no file or
/// folder of the repository, or an anchor the Markdown page they name
/// does not have.
fn broken(text: &str, dir: &Path) -> Vec<String> {
    targets(text)
        .into_iter()
        .filter(|t| {
            !(t.is_empty()
                || t.starts_with('/')
                || t.contains("://")
                || t.starts_with("mailto:")
                || t.starts_with("data:"))
        })
        .filter(|t| {
            // A link may carry a title (`path "title"`) and a fragment.
            let target = t.split_whitespace().next().unwrap_or("");
            let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
            let page = if path.is_empty() {
                Some(text.to_string())
            } else if !dir.join(path).exists() {
                return true;
            } else if path.ends_with(".md") {
                std::fs::read_to_string(dir.join(path)).ok()
            } else {
                None
            };
            match page {
                Some(page) if !fragment.is_empty() => !anchors(&page).iter().any(|a| a == fragment),
                _ => false,
            }
        })
        .collect()
}

#[test]
fn every_relative_link_resolves() {
    let mut bad = Vec::new();
    let mut links = 0;
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        links += targets(&text).len();
        for t in broken(&text, file.parent().unwrap()) {
            bad.push(format!("{}: {t}", rel(&file)));
        }
    }
    assert!(links > 20, "only {links} links read: the reader is broken");
    assert!(
        bad.is_empty(),
        "links that lead nowhere:\n{}",
        bad.join("\n")
    );
}

#[test]
fn a_broken_link_is_found() {
    let dir = root();
    // Made here, so that this file itself holds no dead pointer.
    let gone = ["docs/", "no-such-file.md"].concat();
    let text = format!(
        "# Top\n[ok](docs/finding.md#pages-and-cursors) [web](https://example.com) \
         [top](#top) [gone]({gone}) <img src=\"docs/none.png\"> \
         [lost](docs/finding.md#no-such-heading) [here](#nowhere)\n\
         ```sh\n# not a heading\n```\n[code](#not-a-heading)"
    );
    let text = text.as_str();
    assert_eq!(
        broken(text, &dir),
        [
            gone.as_str(),
            "docs/finding.md#no-such-heading",
            "#nowhere",
            "#not-a-heading",
            "docs/none.png",
        ]
    );
    assert_eq!(
        anchors("# A `b`: c, d's e\n## Twice\n## Twice"),
        ["a-b-c-ds-e", "twice", "twice-1"]
    );
}

// ------------------------------------------------------------ lengths

#[test]
fn the_readme_is_a_front_door() {
    let lines = read("README.md").lines().count();
    assert!(
        lines <= 400,
        "README.md has {lines} lines; move guides to docs/"
    );
}

#[test]
fn every_guide_reads_in_one_sitting() {
    let guides = guides();
    assert!(guides.len() > 10, "only {} guides found", guides.len());
    let long: Vec<String> = guides
        .iter()
        .map(|g| (rel(g), std::fs::read_to_string(g).unwrap().lines().count()))
        .filter(|(_, n)| *n > 450)
        .map(|(g, n)| format!("{g}: {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "guides over 450 lines (split them by subject):\n{}",
        long.join("\n")
    );
}

// ------------------------------------------------------------ history

/// What makes a doc a lab notebook rather than a guide: commit hashes,
/// issue numbers, sessions and run-by-run headings.
fn history(text: &str) -> Vec<String> {
    let hash = Regex::new(r"\b[0-9a-f]{7,40}\b").unwrap();
    let said = Regex::new(r"(?i:\b(?:issue|session) #?\d+)|(?m:^#+ .*\bRuns? [A-Z]\b)").unwrap();
    let hashes = hash.find_iter(text).map(|m| m.as_str()).filter(|h| {
        h.bytes().any(|b| b.is_ascii_digit()) && h.bytes().any(|b| b.is_ascii_lowercase())
    });
    hashes
        .chain(said.find_iter(text).map(|m| m.as_str()))
        .map(String::from)
        .collect()
}

#[test]
fn the_docs_carry_no_history() {
    let mut found = Vec::new();
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        for h in history(&text) {
            found.push(format!("{}: {h}", rel(&file)));
        }
    }
    assert!(
        found.is_empty(),
        "history in the docs (say it in the present; the history is git's):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_history_is_found() {
    let text = "Measured at e877fa8, after issue 13.\n### Runs J and K\n\
                A row of 1000000 posts, U+FDFA, 0x10, the word deadbeef, session keys.";
    assert_eq!(history(text), ["e877fa8", "issue 13", "### Runs J"]);
}

// ------------------------------------------------------------ pointers

/// Files whose pointers this branch cannot mend while another engineer's
/// work in them lands: each pointer here must still be there and still
/// lead nowhere, so that the list empties as they are mended.
const AWAITING: &[(&str, &str, &str)] = &[];

/// The pointers into the docs in `text`: a doc (a Markdown file under
/// `docs/`, or the README) and, when a quoted heading follows it (after a
/// comma, a space or a parenthesis), that heading, read across the line
/// breaks of a comment.
fn pointers(text: &str) -> Vec<(String, Option<String>)> {
    // Between the doc and its heading: commas, spaces, a parenthesis, and
    // the markers of a comment that goes on to the next line.
    let doc = Regex::new(
        r#"(?:^|[^/\w])(docs/[\w./-]+\.md\b|README(?:\.md)?)`?((?:,|\s|\(|//[!/]?|--|#)+")?"#,
    )
    .unwrap();
    let markers = Regex::new(r"^\s*(?://[!/]?|--|#|\*)?\s*").unwrap();
    doc.captures_iter(text)
        .map(|c| {
            let file = match &c[1] {
                "README" => "README.md".to_string(),
                f => f.to_string(),
            };
            let heading = c.get(2).map(|open| {
                let rest = &text[open.end()..];
                let quoted = &rest[..rest.find('"').unwrap_or(0)];
                quoted
                    .lines()
                    .map(|l| markers.replace(l, "").trim().to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            (file, heading)
        })
        .collect()
}

/// The pointers of `text` that name a doc the repository does not have, or
/// a heading that doc does not have.
fn dead_pointers(text: &str) -> Vec<String> {
    pointers(text)
        .into_iter()
        .filter_map(|(file, heading)| {
            let Ok(doc) = std::fs::read_to_string(root().join(&file)) else {
                return Some(file);
            };
            let heading = heading?;
            let known = headings(&doc).contains(&heading);
            (!known).then(|| format!("{file}, \"{heading}\""))
        })
        .collect()
}

/// Every text file of the repository a pointer could be in: the code, the
/// schema and migrations, the scripts, the tests and the docs.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            let skipped = ["target", "node_modules", "build", "corpus", "artifacts"];
            if !skipped.contains(&name.as_ref()) && (!name.starts_with('.') || name == ".ci") {
                sources(&path, out);
            }
        } else if std::fs::metadata(&path).is_ok_and(|m| m.len() < 1 << 20) {
            out.push(path);
        }
    }
}

#[test]
fn every_pointer_into_the_docs_names_a_heading() {
    let mut files = Vec::new();
    sources(&root(), &mut files);
    let (mut dead, mut awaiting, mut read) = (Vec::new(), Vec::new(), 0);
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue; // not text
        };
        let name = rel(&file);
        read += pointers(&text).iter().filter(|(_, h)| h.is_some()).count();
        for p in dead_pointers(&text) {
            match AWAITING
                .iter()
                .find(|(f, d, h)| *f == name && p == format!("{d}, \"{h}\""))
            {
                Some(known) => awaiting.push(*known),
                None => dead.push(format!("{name}: {p}")),
            }
        }
    }
    assert!(
        read > 20,
        "only {read} pointers to a heading read: the reader is broken"
    );
    assert!(
        dead.is_empty(),
        "pointers into the docs that lead nowhere (name the file and the heading as it is):\n{}",
        dead.join("\n")
    );
    let mended: Vec<_> = AWAITING.iter().filter(|a| !awaiting.contains(a)).collect();
    assert!(
        mended.is_empty(),
        "mended, so no longer awaited: take them out of AWAITING: {mended:?}"
    );
}

#[test]
fn a_dead_pointer_is_found() {
    // Made here, so that this file itself holds no dead pointer.
    let (doc, nowhere) = ("docs/finding.md", ["docs/", "nowhere.md"].concat());
    let text = format!(
        "//! See {doc}, \"Pages and cursors\", and {doc} (\"Upgrading a\n\
         //! database\"), and `{doc}`, \"Pages\n//! and nothing\".\n\
         -- {nowhere}, and README \"The calls\", and README.md, \"No such part\",\n\
         # but bench/README.md is another README, and \"{doc}\" a string."
    );
    assert_eq!(
        dead_pointers(&text),
        [
            "docs/finding.md, \"Pages and nothing\"",
            nowhere.as_str(),
            "README.md, \"No such part\"",
        ]
    );
}
