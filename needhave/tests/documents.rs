//! Every discovery document is a pure function of the table: built here
//! from an `Api` made by hand — the real table plus one route and one tool
//! it does not have — each document names the newcomers where it should,
//! with no change anywhere else. (What the served documents look like is
//! `discovery.rs`.)

use needhave::api::{Api, Body, Branch, Route, RouteResponse, Step, Tool};
use needhave::mcp::card;
use needhave::pages::{llms, robots, skills};
use needhave::routes::{API, ROUTES, TOOLS};
use needhave::store::Consistency;

const ORIGIN: &str = "https://list.example";

fn extended() -> &'static Api {
    let mut routes: Vec<Route> = ROUTES.to_vec();
    routes.push(Route {
        method: "GET",
        path: "/badges",
        query: &[],
        doc: "Every badge (a route only this test has).",
        handler: "pages::badges",
        body: None,
        raw: true,
        consistency: Consistency::Replica,
        responses: &[RouteResponse {
            status: 200,
            body: Body::Json("BadgeList"),
        }],
        tools: &["list_badges"],
    });
    let mut tools: Vec<Tool> = TOOLS.to_vec();
    tools.push(Tool {
        name: "list_badges",
        title: "List badges",
        description: "Read every badge (a tool only this test has).",
        read_only: true,
        idempotent: true,
        branches: &[Branch {
            when: None,
            steps: &[Step {
                when_prev: None,
                method: "GET",
                path: "/badges",
                query: &[],
                args: &[],
            }],
        }],
    });
    Box::leak(Box::new(Api {
        routes: Box::leak(routes.into_boxed_slice()),
        tools: Box::leak(tools.into_boxed_slice()),
        resolve: API.resolve,
        answer: API.answer,
        openapi_schemas: API.openapi_schemas,
        tool_input_schemas: API.tool_input_schemas,
        tool_output_schemas: API.tool_output_schemas,
    }))
}

#[test]
fn a_new_route_and_tool_reach_every_document() {
    let api = extended();
    let llms = needhave::gen::documents::llms_txt(api, ORIGIN);
    assert!(llms.contains("- `GET /badges`: Every badge (a route only this test has)."));
    assert!(llms.contains("- `list_badges` (List badges, read-only): Read every badge"));

    let md = needhave::gen::documents::markdown(api);
    assert!(md.contains("- `GET /badges` — Every badge"));
    let html = needhave::gen::documents::render(api);
    assert!(html.contains("<li><code>GET /badges</code> — Every badge"));

    let sitemap = needhave::gen::documents::sitemap_xml(api, ORIGIN);
    assert!(sitemap.contains("<loc>https://list.example/badges</loc>"));

    let skill = needhave::gen::documents::skill_md(api, ORIGIN);
    assert!(skill.contains("- `list_badges`: Read every badge"));
    assert!(skill.contains("- `GET /badges` (tools: list_badges)"));
    // The index's digest follows the skill's bytes.
    assert_ne!(
        needhave::gen::documents::index_json(api, ORIGIN),
        needhave::gen::documents::index_json(&API, ORIGIN)
    );

    let card = needhave::gen::mcp::card(api, ORIGIN);
    let names: Vec<&str> = card["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.last(), Some(&"list_badges"));
    assert_eq!(names.len(), TOOLS.len() + 1);

    // And the real table's documents do not have them.
    assert!(!needhave::gen::documents::llms_txt(&API, ORIGIN).contains("badges"));
    assert!(!needhave::gen::documents::sitemap_xml(&API, ORIGIN).contains("badges"));
}

/// What is served is the checked-in rendering with the origin filled in:
/// the same bytes as rendering for that origin, whatever the Host header
/// held (quotes, backslashes and XML's specials are escaped in place).
#[test]
fn served_documents_are_the_renderings_for_each_origin() {
    use needhave::pages::catalog;
    for origin in [
        ORIGIN,
        "http://127.0.0.1:8787",
        "https://needhave.io",
        r#"https://a"b\c<d>&e{{origin}}{{tools}}{{digest}}"#,
    ] {
        assert_eq!(
            llms::served(origin),
            needhave::gen::documents::llms_txt(&API, origin),
            "{origin}"
        );
        assert_eq!(
            robots::served_robots(origin),
            needhave::gen::documents::robots_txt(origin)
        );
        assert_eq!(
            robots::served_sitemap(origin),
            needhave::gen::documents::sitemap_xml(&API, origin)
        );
        assert_eq!(
            skills::served_skill(origin),
            needhave::gen::documents::skill_md(&API, origin)
        );
        assert_eq!(
            skills::served_index(origin),
            needhave::gen::documents::index_json(&API, origin)
        );
        let linkset = catalog::served(origin);
        assert_eq!(
            linkset,
            serde_json::to_string(&needhave::gen::documents::linkset(origin)).unwrap()
        );
        let card = card::served(&API, origin);
        assert_eq!(
            card,
            serde_json::to_string(&needhave::gen::mcp::card(&API, origin)).unwrap()
        );
        // Each stays JSON.
        for json in [&linkset, &card, &skills::served_index(origin)] {
            serde_json::from_str::<serde_json::Value>(json).unwrap();
        }
    }
}

#[test]
fn every_discovery_link_is_a_route_and_every_document_is_linked() {
    use needhave::pages::{is_discovery, Link, LINKS};
    for Link(path, _, _, _) in LINKS {
        let method = if *path == "/mcp" { "POST" } else { "GET" };
        assert!(
            API.route(method, path).is_some(),
            "{path} is not a route of the table"
        );
    }
    // Each document is linked from `GET /`, but the card's second address
    // and robots.txt (found by their well-known names) and the skill (its
    // index names it).
    for route in ROUTES.iter().filter(|r| is_discovery(r)) {
        let linked = LINKS.iter().any(|Link(p, ..)| *p == route.path);
        let exempt = matches!(
            route.path,
            "/robots.txt" | "/.well-known/mcp/server-card.json" | skills::PATH
        );
        assert!(linked || exempt, "{} is not in pages::LINKS", route.path);
    }
}

fn repo_file(name: &str) -> String {
    let path = format!("{}/../{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn repo_json(name: &str) -> serde_json::Value {
    serde_json::from_str(&repo_file(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The MCP registry entry: valid against the registry's schema (a copy in
/// `schemas/`), the same server as the card, and the package the registry
/// can verify (the `mcp-name:` line of the README, PyPI's description).
#[test]
fn server_json_is_a_valid_registry_entry_of_the_same_server() {
    let entry = repo_json("server.json");
    let schema = repo_json("schemas/mcp-registry-server.2025-12-11.schema.json");
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the registry schema");
    let errors: Vec<String> = validator
        .iter_errors(&entry)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "server.json: {errors:#?}");
    assert_eq!(entry["$schema"], schema["$id"]);
    // The schema can fail: it refuses an entry without a name.
    let mut broken = entry.clone();
    broken.as_object_mut().unwrap().remove("name");
    assert!(!validator.is_valid(&broken));

    let card = needhave::gen::mcp::card(&API, "https://needhave.io");
    for field in ["name", "title", "description", "version", "websiteUrl"] {
        assert_eq!(
            entry[field], card[field],
            "{field}: server.json vs the card"
        );
    }
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(entry["remotes"][0]["type"], "streamable-http");
    assert_eq!(entry["remotes"][0]["url"], card["remotes"][0]["url"]);
    // The registry's own rule beyond the schema: a public https remote.
    assert!(entry["remotes"][0]["url"]
        .as_str()
        .unwrap()
        .starts_with("https://"));
    let package = &entry["packages"][0];
    assert_eq!(package["registryType"], "pypi");
    assert_eq!(package["version"], version);
    assert_eq!(package["transport"]["type"], "stdio");
    assert_eq!(package["packageArguments"][0]["value"], "mcp");
    assert_eq!(
        package["environmentVariables"][0]["name"],
        "NEEDHAVE_LIST_URL"
    );
    let pyproject = repo_file("pyproject.toml");
    assert!(pyproject.contains(&format!("name = {}", package["identifier"])));
    assert!(pyproject.contains("bindings = \"bin\""));
    assert!(pyproject.contains("readme = \"README.md\""));
    let name = entry["name"].as_str().unwrap();
    assert!(repo_file("README.md")
        .lines()
        .any(|l| l == format!("mcp-name: {name}")));
}

/// `npm run mcp` is the stdio server and `npm test` the README's test
/// command (`.ci/npm-mcp` runs the former for real).
#[test]
fn npm_scripts() {
    let package = repo_json("package.json");
    let mcp = package["scripts"]["mcp"].as_str().unwrap();
    assert!(
        mcp.starts_with("cargo run") && mcp.ends_with("--bin needhave -- mcp"),
        "{mcp}"
    );
    let test = package["scripts"]["test"].as_str().unwrap();
    assert!(
        repo_file("README.md").contains(&format!("\n    {test}\n")),
        "{test}"
    );
    assert!(repo_file(".npmrc").lines().any(|l| l == "loglevel=silent"));
}

/// Every document route names the documents it is made from, or the
/// Worker would answer it from a document it never loaded; the routes of
/// the list's data name none.
#[test]
fn each_document_route_names_its_assets() {
    use needhave::assets::Asset;
    use needhave::http::Request;
    use needhave::pages::assets::needed as assets_for;
    use needhave::pages::documents;
    let data = ["/healthz", "/posts", "/posts.atom"];
    for route in documents(&API) {
        for method in ["GET", "HEAD"] {
            let named = assets_for(&Request::new(method, route.path));
            assert_eq!(
                named.is_empty(),
                data.contains(&route.path),
                "{method} {}: {named:?}",
                route.path
            );
        }
    }
    let mut markdown = Request::new("GET", "/");
    markdown
        .headers
        .push(("accept".into(), "text/markdown".into()));
    assert_eq!(assets_for(&markdown), [Asset::Markdown]);
    assert_eq!(assets_for(&Request::new("GET", "/")), [Asset::Html]);
    // MCP: its static answers always, the skill for the methods that
    // serve it, however the body writes their names.
    let mcp = |body: &str| {
        let mut req = Request::new("POST", "/mcp");
        req.body = body.as_bytes().to_vec();
        assets_for(&req).to_vec()
    };
    let tools = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    assert_eq!(mcp(tools), [Asset::Mcp]);
    for skill in [
        r#"{"jsonrpc":"2.0","id":1,"method":"skills/list"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"skills\/get","params":{}}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"resources/read"}]"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"\u0073kills/list"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"r\u0065sources/read"}"#,
    ] {
        assert_eq!(mcp(skill), [Asset::Mcp, Asset::Skill], "{skill}");
    }
    assert!(assets_for(&Request::new("OPTIONS", "/")).is_empty());
    assert!(assets_for(&Request::new("POST", "/posts")).is_empty());
}

/// The Worker's assets directory holds exactly the documents it fetches,
/// each the text the native server carries.
#[test]
fn the_assets_directory_is_the_documents() {
    use needhave::assets::Asset;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("documents");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let mut named: Vec<String> = Asset::ALL.iter().map(|a| a.file().to_string()).collect();
    named.sort();
    assert_eq!(files, named, "needhave/documents/ against Asset::ALL");
    for asset in Asset::ALL {
        let text = std::fs::read_to_string(dir.join(asset.file())).unwrap();
        assert_eq!(text, asset.text(), "{}", asset.file());
        assert!(!text.is_empty(), "{}", asset.file());
    }
}
