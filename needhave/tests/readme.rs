//! The README's table of calls and its MCP tool list agree with the
//! `routes!` table: documentation drifts unless something fails when it does.

use needhave::routes::{ROUTES, TOOLS};

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
