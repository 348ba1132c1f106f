//! What the tests of the docs share: where the repository is, and which
//! files are its docs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

pub fn rel(path: &Path) -> String {
    path.strip_prefix(root()).unwrap().display().to_string()
}

/// The Markdown files of `dir` and of the folders below it, sorted.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(markdown_under(&path));
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The guides: every Markdown file under `docs/`.
pub fn guides() -> Vec<PathBuf> {
    markdown_under(&root().join("docs"))
}

/// Every document a reader is sent to: the front door, the changelog, the
/// bench's README and the guides.
pub fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![
        root.join("README.md"),
        root.join("CHANGELOG.md"),
        root.join("bench/README.md"),
    ];
    files.extend(guides());
    files
}
