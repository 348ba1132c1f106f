//! Floors look down: no module of `needhave/src` or `needhave-macros/src`
//! imports, directly or through others, a module that imports it back.
//!
//! The graph is read from the source at file granularity: each `.rs` file
//! is a node, and every path it names that starts with `crate::`, `super::`,
//! `self::` or a child module's name (in a `use` or anywhere in the code) is
//! an edge to the file that defines the longest module prefix of that path.
//! A parent declaring `mod child;` is not an edge; a parent naming
//! `child::item` is. The test also fails on a planted circle, so that a
//! broken reader cannot pass it by finding no edges at all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// Module path (`["mcp", "server"]`) → the file that defines it.
type Files = BTreeMap<Vec<String>, PathBuf>;

/// Every module file under `src`, by its module path.
fn module_files(src: &Path) -> Files {
    let mut files = Files::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap();
            let mut module: Vec<String> = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                module.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                module.pop();
            }
            // `main.rs` is a second crate root beside `lib.rs`: it names the
            // library by the crate's name, never by `crate::`.
            if rel == Path::new("main.rs") {
                continue;
            }
            files.insert(module, path);
        }
    }
    files
}

/// What one file names: the module paths its paths resolve to.
struct Reader<'a> {
    files: &'a Files,
    /// The module this file defines, then any inline `mod` it is inside.
    module: Vec<String>,
    found: BTreeSet<Vec<String>>,
}

impl Reader<'_> {
    fn children(&self, of: &[String]) -> BTreeSet<String> {
        let mut c: BTreeSet<String> = self
            .files
            .keys()
            .filter(|k| k.len() == of.len() + 1 && k.starts_with(of))
            .map(|k| k[of.len()].clone())
            .collect();
        // Inline modules of this file are children too (resolving to itself).
        c.extend(INLINE.with(|i| i.borrow().get(of).cloned().unwrap_or_default()));
        c
    }

    fn resolve(&mut self, segments: &[String]) {
        let Some(first) = segments.first() else {
            return;
        };
        let (mut base, rest): (Vec<String>, &[String]) = match first.as_str() {
            "crate" => (Vec::new(), &segments[1..]),
            "self" => (self.module.clone(), &segments[1..]),
            "super" => {
                let mut base = self.module.clone();
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                (base, rest)
            }
            name if self.children(&self.module).contains(name) => (self.module.clone(), segments),
            _ => return,
        };
        for s in rest {
            let mut next = base.clone();
            next.push(s.clone());
            if self.children(&base).contains(s) {
                base = next;
            } else {
                break;
            }
        }
        // The deepest module of that path that has a file of its own.
        while !self.files.contains_key(&base) {
            base.pop();
        }
        self.found.insert(base);
    }
}

thread_local! {
    /// Inline modules (`mod tests { … }`) by their parent's module path.
    static INLINE: std::cell::RefCell<BTreeMap<Vec<String>, BTreeSet<String>>> =
        Default::default();
}

fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut p = prefix.clone();
            p.push(n.ident.to_string());
            out.push(p);
        }
        syn::UseTree::Rename(r) => {
            let mut p = prefix.clone();
            p.push(r.ident.to_string());
            out.push(p);
        }
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Reader<'_> {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut paths);
        for p in paths {
            self.resolve(&p);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            self.resolve(&segments);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if let Some((_, items)) = &m.content {
            self.module.push(m.ident.to_string());
            for item in items {
                self.visit_item(item);
            }
            self.module.pop();
        }
    }
}

/// Records the inline modules of a file, so that paths into them resolve.
fn inline_mods(module: &[String], items: &[syn::Item]) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            if let Some((_, inner)) = &m.content {
                INLINE.with(|i| {
                    i.borrow_mut()
                        .entry(module.to_vec())
                        .or_default()
                        .insert(m.ident.to_string())
                });
                let mut child = module.to_vec();
                child.push(m.ident.to_string());
                inline_mods(&child, inner);
            }
        }
    }
}

/// File → the files it names.
fn graph(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let files = module_files(src);
    let mut parsed = Vec::new();
    INLINE.with(|i| i.borrow_mut().clear());
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        inline_mods(module, &ast.items);
        parsed.push((module.clone(), path.clone(), ast));
    }
    let mut graph = BTreeMap::new();
    for (module, path, ast) in parsed {
        let mut reader = Reader {
            files: &files,
            module,
            found: BTreeSet::new(),
        };
        reader.visit_file(&ast);
        let targets = reader
            .found
            .iter()
            .map(|m| files[m].clone())
            .filter(|t| *t != path)
            .collect();
        graph.insert(path, targets);
    }
    graph
}

/// Every circle, each as the files along it (Tarjan's strongly connected
/// components of more than one file).
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct State<'g> {
        graph: &'g BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'g PathBuf, usize>,
        low: BTreeMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on_stack: BTreeSet<&'g PathBuf>,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g PathBuf) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join(name)
        .join("src")
}

fn assert_no_circle(src: &Path) {
    let graph = graph(src);
    assert!(
        graph.values().map(BTreeSet::len).sum::<usize>() > 10,
        "{}: hardly any imports read; the reader is broken",
        src.display()
    );
    let found = circles(&graph);
    let shown: Vec<String> = found
        .iter()
        .map(|c| {
            c.iter()
                .map(|p| p.strip_prefix(src).unwrap().display().to_string())
                .collect::<Vec<_>>()
                .join(" ↔ ")
        })
        .collect();
    assert!(
        found.is_empty(),
        "import circles in {}:\n{}",
        src.display(),
        shown.join("\n")
    );
}

#[test]
fn needhave_has_no_import_circle() {
    assert_no_circle(&crate_src("needhave"));
}

#[test]
fn the_macro_crate_has_no_import_circle() {
    assert_no_circle(&crate_src("needhave-macros"));
}

/// The no-circle tests are only worth something if a circle fails them:
/// a crate written here, whose `a` and `b` name each other through a
/// `use`, a `super::` path and a path in code.
#[test]
fn a_planted_circle_is_found() {
    let dir = std::env::temp_dir().join(format!("needhave-layers-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("b")).unwrap();
    let write = |name: &str, text: &str| std::fs::write(src.join(name), text).unwrap();
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n");
    write(
        "a.rs",
        "use crate::b::inner::Thing;\npub fn f() -> Thing { Thing }\n",
    );
    write("b/mod.rs", "pub mod inner;\n");
    write(
        "b/inner.rs",
        "pub struct Thing;\npub fn g() { super::super::c::h() }\n\
         #[cfg(test)]\nmod tests { use super::*; }\n",
    );
    write("c.rs", "pub fn h() { let _ = crate::a::f(); }\n");
    let graph = graph(&src);
    let found = circles(&graph);
    std::fs::remove_dir_all(&dir).unwrap();
    let names: Vec<Vec<String>> = found
        .iter()
        .map(|c| {
            c.iter()
                .map(|p| p.strip_prefix(&src).unwrap().display().to_string())
                .collect()
        })
        .collect();
    assert_eq!(names, vec![vec!["a.rs", "b/inner.rs", "c.rs"]]);
}

/// The ground floor: what every other module stands on names nothing above
/// it, so any of it can be read, tested or reused on its own.
#[test]
fn the_ground_floor_names_nothing_above_it() {
    const GROUND: &[&str] = &["error", "secrets", "platform", "rules", "store"];
    let src = crate_src("needhave");
    let on_ground = |p: &Path| {
        let rel = p.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        GROUND.contains(&first.trim_end_matches(".rs"))
    };
    let graph = graph(&src);
    let mut above = Vec::new();
    let mut ground_edges = 0;
    for (file, targets) in &graph {
        if !on_ground(file) {
            continue;
        }
        for t in targets {
            ground_edges += 1;
            if !on_ground(t) {
                above.push(format!(
                    "{} names {}",
                    file.strip_prefix(&src).unwrap().display(),
                    t.strip_prefix(&src).unwrap().display()
                ));
            }
        }
    }
    assert!(
        ground_edges > 5,
        "hardly any imports read on the ground floor"
    );
    assert!(above.is_empty(), "{}", above.join("\n"));
}
