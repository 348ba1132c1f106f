//! Floors look down: no module of `needhave/src` or `needhave-macros/src`
//! imports, directly or through others, a module that imports it back.
//!
//! The graph is read from the source at file granularity: each `.rs` file
//! is a node, and every path it names that starts with `crate::`, `super::`,
//! `self::` or a child module's name (in a `use` or anywhere in the code) is
//! an edge to the file that defines the longest module prefix of that path.
//! A parent declaring `mod child;` is not an edge; a parent naming
//! `child::item` is.
//!
//! The same graph is then read at module granularity: a folder and its
//! same-named file are one module (`rules.rs` + `rules/`, `store/mod.rs` +
//! `store/*`), and an edge from any file of module A to any file of its
//! sibling B is an edge A → B, so a circle that passes through different
//! files of two modules (`a/x.rs` → `b.rs`, `b/y.rs` → `a.rs`) fails too.
//! The tests also fail on planted circles, so that a broken reader cannot
//! pass them by finding no edges at all.

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
            // `main.rs` is a second crate root beside `lib.rs`: it names the
            // library by the crate's name, never by `crate::`.
            if rel == Path::new("main.rs") {
                continue;
            }
            files.insert(module_path(rel), path);
        }
    }
    files
}

/// The module a file under `src` defines: `store/sqlite/run.rs` is
/// `["store", "sqlite", "run"]`; `store/mod.rs` is `["store"]` and
/// `lib.rs` the root, `[]`.
fn module_path(rel: &Path) -> Vec<String> {
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
    module
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
fn graph(src: &Path) -> Graph<PathBuf> {
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

/// Module → the sibling modules it names, read from the file graph. Each
/// edge between two files counts at the level where their module paths part:
/// `store/sqlite/run.rs` → `store/d1.rs` is `store::sqlite` → `store::d1`,
/// and `mcp/tools.rs` → `store/sqlite/run.rs` is `mcp` → `store`. A file
/// that is the parent of the other (`store/mod.rs`, `lib.rs`) stands for
/// itself at that level, beside its children: what it re-exports it names,
/// so a path through a re-export is still an edge.
fn module_graph(src: &Path, files: &Graph<PathBuf>) -> Graph<String> {
    let name = |path: &Path, module: &[String], depth: usize| {
        if module.len() > depth {
            module[..=depth].join("::")
        } else {
            path.strip_prefix(src).unwrap().display().to_string()
        }
    };
    let mut graph: Graph<String> = BTreeMap::new();
    for (from, targets) in files {
        let m_from = module_path(from.strip_prefix(src).unwrap());
        for to in targets {
            let m_to = module_path(to.strip_prefix(src).unwrap());
            let depth = m_from.iter().zip(&m_to).take_while(|(a, b)| a == b).count();
            let (a, b) = (name(from, &m_from, depth), name(to, &m_to, depth));
            graph.entry(b.clone()).or_default();
            graph.entry(a).or_default().insert(b);
        }
    }
    graph
}

/// A directed graph: node → the nodes it names.
type Graph<T> = BTreeMap<T, BTreeSet<T>>;

/// Every circle, each as the nodes along it (Tarjan's strongly connected
/// components of more than one node).
fn circles<T: Ord + Clone>(graph: &Graph<T>) -> Vec<Vec<T>> {
    struct State<'g, T> {
        graph: &'g Graph<T>,
        index: BTreeMap<&'g T, usize>,
        low: BTreeMap<&'g T, usize>,
        stack: Vec<&'g T>,
        on_stack: BTreeSet<&'g T>,
        out: Vec<Vec<T>>,
    }
    fn visit<'g, T: Ord + Clone>(s: &mut State<'g, T>, v: &'g T) {
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

/// Each circle of files and of modules under `src`, as the names along it.
fn named_circles(src: &Path) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let files = graph(src);
    let by_file = circles(&files)
        .iter()
        .map(|c| {
            c.iter()
                .map(|p| p.strip_prefix(src).unwrap().display().to_string())
                .collect()
        })
        .collect();
    (by_file, circles(&module_graph(src, &files)))
}

fn assert_no_circle(src: &Path) {
    assert!(
        graph(src).values().map(BTreeSet::len).sum::<usize>() > 10,
        "{}: hardly any imports read; the reader is broken",
        src.display()
    );
    let (files, modules) = named_circles(src);
    let shown = |found: &[Vec<String>]| {
        found
            .iter()
            .map(|c| c.join(" ↔ "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        files.is_empty(),
        "import circles between files in {}:\n{}",
        src.display(),
        shown(&files)
    );
    assert!(
        modules.is_empty(),
        "import circles between modules in {}:\n{}",
        src.display(),
        shown(&modules)
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
/// a crate written here, whose files `a`, `b/inner` and `c` name each other
/// through a `use`, a `super::` path and a path in code; whose modules `x`
/// (`x.rs` + `x/deep.rs`) and `y` (`y/mod.rs` + `y/leaf.rs`) name each other
/// from different files, so that no two files do; and whose `z::p` (`z/p.rs`
/// + `z/p/q.rs`) and `z::r` do the same one floor down.
#[test]
fn a_planted_circle_is_found() {
    let dir = std::env::temp_dir().join(format!("needhave-layers-{}", std::process::id()));
    let src = dir.join("src");
    for folder in ["b", "x", "y", "z/p"] {
        std::fs::create_dir_all(src.join(folder)).unwrap();
    }
    let write = |name: &str, text: &str| std::fs::write(src.join(name), text).unwrap();
    write(
        "lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub mod x;\npub mod y;\npub mod z;\n",
    );
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
    write("x.rs", "pub mod deep;\npub fn f() {}\n");
    write("x/deep.rs", "pub fn g() { crate::y::leaf::h() }\n");
    write("y/mod.rs", "pub mod leaf;\npub fn k() { crate::x::f() }\n");
    write("y/leaf.rs", "pub fn h() {}\n");
    write("z/mod.rs", "pub mod p;\npub mod r;\n");
    write("z/p.rs", "pub mod q;\npub struct S;\n");
    write("z/p/q.rs", "pub fn f() { super::super::r::g() }\n");
    write(
        "z/r.rs",
        "pub fn g() {}\npub fn s() -> super::p::S { super::p::S }\n",
    );
    let (files, mut modules) = named_circles(&src);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(files, vec![vec!["a.rs", "b/inner.rs", "c.rs"]]);
    modules.sort();
    assert_eq!(
        modules,
        vec![vec!["a", "b", "c"], vec!["x", "y"], vec!["z::p", "z::r"]]
    );
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
