//! The README is a front door and `docs/` holds the rest: every relative
//! link in them must lead somewhere in the repository, and the README stays
//! short enough to read at the door (at most 400 lines).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

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

/// The relative links of `text` (a file in `dir`) that name no file or
/// folder of the repository.
fn broken(text: &str, dir: &Path) -> Vec<String> {
    targets(text)
        .into_iter()
        .filter(|t| {
            !(t.is_empty()
                || t.starts_with('#')
                || t.starts_with('/')
                || t.contains("://")
                || t.starts_with("mailto:")
                || t.starts_with("data:"))
        })
        .filter(|t| {
            // A link may carry a title (`path "title"`) and a fragment.
            let path = t.split_whitespace().next().unwrap_or("");
            let path = path.split('#').next().unwrap_or("");
            !dir.join(path).exists()
        })
        .collect()
}

fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

#[test]
fn every_relative_link_resolves() {
    let mut bad = Vec::new();
    let mut links = 0;
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        links += targets(&text).len();
        for t in broken(&text, file.parent().unwrap()) {
            bad.push(format!(
                "{}: {t}",
                file.strip_prefix(root()).unwrap().display()
            ));
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
    let text = "[ok](docs/finding.md#cursor) [web](https://example.com) \
                [top](#top) [gone](docs/no-such-file.md) <img src=\"docs/none.png\">";
    assert_eq!(
        broken(text, &dir),
        ["docs/no-such-file.md", "docs/none.png"]
    );
}

#[test]
fn the_readme_is_a_front_door() {
    let lines = std::fs::read_to_string(root().join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(
        lines <= 400,
        "README.md has {lines} lines; move guides to docs/"
    );
}
