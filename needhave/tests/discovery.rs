//! The discovery documents, black-box, against a list at a base URL
//! (`needhave serve` by default; `NEEDHAVE_TEST_URL` for another host of the
//! same calls, such as `wrangler dev`): each one served, of its media type,
//! valid against its published format (the schemas in `schemas/`, copies of
//! the published ones with their sources), and naming every route and tool
//! of the table where it should.

mod common;

use std::collections::BTreeSet;

use common::*;
use needhave::api::Body;
use needhave::routes::{ROUTES, TOOLS};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const STATEMENT: &str = "A public list of needs and haves. Agents post what they need and what they have. No accounts. No matcher.";

fn schema_file(name: &str) -> Value {
    let path = format!("{}/../schemas/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect("schema JSON")
}

/// Validates `doc` against `schema` (formats checked too), listing every
/// violation.
#[track_caller]
fn validate(schema: &Value, doc: &Value) {
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\nin {doc:#}");
}

/// The server card schema's `ServerCard` definition, as a schema.
fn card_schema() -> Value {
    let full = schema_file("mcp-server-card.schema.json");
    json!({"$ref": "#/$defs/ServerCard", "$defs": full["$defs"]})
}

fn base() -> &'static str {
    &server().base
}

async fn get(path: &str) -> Resp {
    let r = Client::new().get(path).await;
    assert_eq!(r.status, 200, "GET {path}: {}", r.text());
    r
}

/// The path of an absolute URL of the host under test.
#[track_caller]
fn own_path(url: &str) -> &str {
    url.strip_prefix(base())
        .unwrap_or_else(|| panic!("{url} is not an absolute URL of {}", base()))
}

#[track_caller]
fn is_table_route(method: &str, path: &str) {
    assert!(
        ROUTES.iter().any(|r| r.method == method && r.path == path),
        "{method} {path} is not a route of the table"
    );
}

/// The checks can fail: each schema refuses a document that breaks it.
#[test]
fn schemas_refuse_broken_documents() {
    let refuses = |schema: &Value, doc: Value| {
        let v = jsonschema::options()
            .should_validate_formats(true)
            .build(schema)
            .unwrap();
        assert!(!v.is_valid(&doc), "{doc} passed");
    };
    refuses(
        &schema_file("linkset-rfc9264.schema.json"),
        json!({"linkset": [{"service-desc": [{"type": "application/json"}]}]}),
    );
    refuses(
        &card_schema(),
        json!({"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
               "name": "no-slash", "description": "d", "version": "1"}),
    );
    refuses(
        &schema_file("agent-skills-discovery-0.2.0.schema.json"),
        json!({"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
               "skills": [{"name": "x", "type": "skill-md", "description": "d", "url": "/x", "digest": "md5:00"}]}),
    );
}

#[tokio::test]
async fn every_document_of_the_table_is_served_with_its_media_type() {
    for route in ROUTES
        .iter()
        .filter(|r| r.method == "GET" && !r.path.contains(':'))
    {
        let r = get(route.path).await;
        let declared = match route.success().map(|s| &s.body) {
            Some(Body::Media(m)) => *m,
            Some(Body::Html) => "text/html; charset=utf-8",
            _ => "application/json",
        };
        assert_eq!(
            r.header("content-type"),
            Some(declared),
            "GET {}",
            route.path
        );
    }
}

#[tokio::test]
async fn robots_txt() {
    let r = get("/robots.txt").await;
    let text = r.text();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    assert!(lines.contains(&"User-agent: *"), "{text}");
    assert!(lines.contains(&"Allow: /"), "{text}");
    assert!(
        !lines
            .iter()
            .any(|l| l.to_ascii_lowercase().starts_with("disallow:") && l.len() > 9),
        "every crawler is allowed: {text}"
    );
    assert!(
        lines.contains(&"Content-Signal: search=yes, ai-input=yes, ai-train=no"),
        "{text}"
    );
    let sitemap = format!("Sitemap: {}/sitemap.xml", base());
    assert!(lines.contains(&sitemap.as_str()), "{text}");
}

#[tokio::test]
async fn sitemap_lists_the_public_pages_as_absolute_urls() {
    let xml = get("/sitemap.xml").await.text();
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    assert!(xml.contains("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"));
    assert!(xml.trim_end().ends_with("</urlset>"));
    let locs: Vec<&str> = xml
        .split("<loc>")
        .skip(1)
        .map(|s| s.split("</loc>").next().unwrap())
        .collect();
    let paths: BTreeSet<&str> = locs.iter().map(|l| own_path(l)).collect();
    for page in ["/", "/index.md", "/llms.txt", "/openapi.json", "/posts"] {
        assert!(paths.contains(page), "{page} missing from {xml}");
    }
    for path in &paths {
        is_table_route("GET", path);
        get(path).await;
    }
}

#[tokio::test]
async fn llms_txt_names_every_call_and_tool() {
    let r = get("/llms.txt").await;
    let text = r.text();
    assert!(text.starts_with("# Needhave\n"), "{text}");
    assert!(text.contains(&format!("> {STATEMENT}")), "{text}");
    for route in ROUTES {
        let line = format!("`{} {}`: {}", route.method, route.path, route.doc);
        assert!(text.contains(&line), "{line} missing");
    }
    for tool in TOOLS {
        assert!(text.contains(&format!("`{}`", tool.name)), "{}", tool.name);
        assert!(text.contains(tool.description), "{}", tool.name);
    }
    for limit in [
        "500 characters",
        "10 posts",
        "20 first replies",
        "100 thread messages",
        "20 waiting",
    ] {
        assert!(text.contains(limit), "limit {limit:?} missing");
    }
    assert!(text.contains(&format!("{}/openapi.json", base())));
    assert!(text.contains(&format!("{}/mcp ", base())));
    assert!(text.contains("contact_details"));
}

#[tokio::test]
async fn markdown_home_page_by_negotiation_and_at_index_md() {
    let c = Client::new();
    let md = c
        .send("GET", "/", None, &[("accept", "text/markdown")])
        .await;
    assert_eq!(md.status, 200);
    assert_eq!(
        md.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    assert!(md
        .header("vary")
        .is_some_and(|v| v.to_ascii_lowercase().contains("accept")));
    let index = get("/index.md").await;
    assert_eq!(md.text(), index.text(), "the same Markdown both ways");
    let text = md.text();
    assert!(text.starts_with("# Needhave: a public list of needs and haves\n"));
    assert!(text.contains(&format!("**{STATEMENT}**")));
    assert!(text.contains("e-mail address or a phone number"));
    // A browser still gets HTML, and the answer says it varies.
    let html = c
        .send(
            "GET",
            "/",
            None,
            &[("accept", "text/html,application/xhtml+xml,*/*;q=0.8")],
        )
        .await;
    assert!(html
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    assert!(html
        .header("vary")
        .is_some_and(|v| v.to_ascii_lowercase().contains("accept")));
}

#[tokio::test]
async fn home_page_renders_its_markdown_and_warns_about_contact_details() {
    let html = get("/").await.text();
    assert!(!html.contains('`'), "raw Markdown backticks in the page");
    assert!(
        !html.contains("This document"),
        "route docs read as the page"
    );
    assert!(html.contains("<code>/mcp</code>"));
    assert!(html.contains("never put an e-mail address or a phone number"));
    assert!(html.contains(STATEMENT));
    for banned in ["<script", "<form", "<input", "<iframe"] {
        assert!(!html.to_ascii_lowercase().contains(banned), "{banned}");
    }
    // How to report, and no abuse contact's mark left, set or not.
    let md = get("/index.md").await.text();
    for page in [&html, &md] {
        assert!(page.contains("POST /posts/:id/report"), "{page}");
        assert!(page.contains("expires_in"), "{page}");
        assert!(!page.contains("{{abuse_contact}}"), "{page}");
    }
}

/// The operator's abuse contact (`--abuse-contact`, or `ABUSE_CONTACT`)
/// on the home page, HTML and Markdown, escaped; absent when not given.
#[tokio::test]
async fn home_page_shows_the_abuse_contact_escaped() {
    let contact = "abuse@list.example <b>&</b> *now*";
    let with_env = |contact: Option<&str>| {
        let mut cmd = serve_command("127.0.0.1:0", ":memory:");
        cmd.arg("--exit-with-stdin").env_remove("ABUSE_CONTACT");
        if let Some(c) = contact {
            cmd.env("ABUSE_CONTACT", c);
        }
        let (child, url) = start(&mut cmd);
        Owned {
            child,
            server: Server::at(&url),
        }
    };
    let by_flag = Owned::spawn("127.0.0.1:0", ":memory:", &["--abuse-contact", contact]);
    let by_env = with_env(Some(contact));
    for server in [&by_flag, &by_env] {
        let html = send_to(server, fresh_ip(), "GET", "/", None, &[])
            .await
            .text();
        assert!(
            html.contains("<p>Abuse contact: abuse@list.example &lt;b&gt;&amp;&lt;/b&gt; *now*</p>\n<h2>The calls</h2>"),
            "{html}"
        );
        let md = send_to(server, fresh_ip(), "GET", "/index.md", None, &[])
            .await
            .text();
        assert!(
            md.contains("\n\nAbuse contact: abuse@list.example \\<b\\>\\&\\</b\\> \\*now\\*\n\n## The calls"),
            "{md}"
        );
    }
    let none = with_env(None);
    for path in ["/", "/index.md"] {
        let page = send_to(&none, fresh_ip(), "GET", path, None, &[])
            .await
            .text();
        assert!(!page.contains("Abuse contact"), "{page}");
        assert!(!page.contains("{{abuse_contact}}"), "{page}");
    }
}

/// `<path>; rel="…"; type="…"` elements of a `Link` header.
fn links(header: &str) -> Vec<(String, String)> {
    header
        .split(", <")
        .map(|l| {
            let l = l.trim_start_matches('<');
            let (target, params) = l.split_once('>').expect("<target>");
            let rel = params
                .split(';')
                .filter_map(|p| p.trim().strip_prefix("rel="))
                .next()
                .expect("rel")
                .trim_matches('"');
            (target.to_string(), rel.to_string())
        })
        .collect()
}

#[tokio::test]
async fn home_page_link_header_names_every_document() {
    let r = get("/").await;
    let header = r.header("link").expect("one Link header");
    assert_eq!(
        r.headers.iter().filter(|(n, _)| n == "link").count(),
        1,
        "one Link header"
    );
    assert!(header
        .starts_with(r#"</openapi.json>; rel="service-desc"; type="application/openapi+json""#));
    let links = links(header);
    let rels: BTreeSet<&str> = links.iter().map(|(_, r)| r.as_str()).collect();
    for rel in [
        "service-desc",
        "service-doc",
        "alternate",
        "api-catalog",
        "mcp",
        "mcp-server-card",
        "agent-skills",
        "sitemap",
    ] {
        assert!(rels.contains(rel), "rel {rel} missing from {header}");
    }
    let targets: BTreeSet<&str> = links.iter().map(|(t, _)| t.as_str()).collect();
    for (target, rel) in &links {
        if rel == "mcp" {
            is_table_route("POST", target);
        } else {
            is_table_route("GET", target);
            get(target).await;
        }
    }
    // Every discovery document of the table is named, but for the card's
    // second address and the skill, which the index names.
    for route in ROUTES.iter().filter(|r| {
        matches!(r.success().map(|s| &s.body), Some(Body::Media(_)))
            && !matches!(r.path, "/robots.txt" | "/.well-known/mcp/server-card.json")
            && !r.path.ends_with("/SKILL.md")
    }) {
        assert!(targets.contains(route.path), "{} not linked", route.path);
    }
}

#[tokio::test]
async fn api_catalog_is_an_rfc9727_linkset() {
    let r = get("/.well-known/api-catalog").await;
    assert_eq!(
        r.header("content-type"),
        Some(r#"application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727""#)
    );
    let doc = r.json();
    validate(&schema_file("linkset-rfc9264.schema.json"), &doc);
    let mut hrefs = BTreeSet::new();
    for context in doc["linkset"].as_array().unwrap() {
        for (rel, targets) in context.as_object().unwrap() {
            if rel == "anchor" {
                hrefs.insert(own_path(targets.as_str().unwrap()).to_string());
                continue;
            }
            for t in targets.as_array().unwrap() {
                hrefs.insert(own_path(t["href"].as_str().unwrap()).to_string());
            }
        }
    }
    for needed in [
        "/openapi.json",
        "/llms.txt",
        "/mcp",
        "/.well-known/api-catalog",
    ] {
        assert!(hrefs.contains(needed), "{needed} missing from {doc}");
    }
    for href in &hrefs {
        if href == "/mcp" {
            is_table_route("POST", href);
        } else {
            is_table_route("GET", href);
        }
    }
}

#[tokio::test]
async fn server_card_lists_every_tool_at_both_addresses() {
    let card = get("/mcp/server-card").await;
    let well_known = get("/.well-known/mcp/server-card.json").await;
    assert_eq!(
        card.body, well_known.body,
        "the same card at both addresses"
    );
    let card = card.json();
    validate(&card_schema(), &card);
    assert_eq!(card["remotes"][0]["type"], "streamable-http");
    assert_eq!(card["remotes"][0]["url"], format!("{}/mcp", base()));
    assert_eq!(card["version"], env!("CARGO_PKG_VERSION"));
    let listed = Client::new()
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert_eq!(
        card["tools"], listed["result"]["tools"],
        "the card's tools are tools/list's"
    );
    let names: Vec<&str> = card["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let table: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
    assert_eq!(names, table);
    // Its protocol versions are the ones the endpoint speaks: those its
    // unsupported-version error lists.
    let refused = Client::new()
        .mcp_with(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            &[("mcp-protocol-version", "1999-01-01")],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.text());
    assert_eq!(
        card["remotes"][0]["supportedProtocolVersions"],
        refused.json()["error"]["data"]["supported"]
    );
}

#[tokio::test]
async fn agent_skills_index_and_its_skill() {
    let index = get("/.well-known/agent-skills/index.json").await;
    assert!(index
        .header("content-type")
        .unwrap()
        .starts_with("application/json"));
    let index = index.json();
    validate(
        &schema_file("agent-skills-discovery-0.2.0.schema.json"),
        &index,
    );
    let skills = index["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1);
    let skill = &skills[0];
    // Relative to the index URL (RFC 3986 §5): here, path-absolute.
    let url = skill["url"].as_str().unwrap();
    assert!(url.starts_with('/'), "{url}");
    is_table_route("GET", url);
    let md = get(url).await;
    let digest = hex::encode(Sha256::digest(&md.body));
    assert_eq!(
        skill["digest"],
        format!("sha256:{digest}"),
        "digest of the served bytes"
    );
    let text = md.text();
    let name = skill["name"].as_str().unwrap();
    assert!(
        url.ends_with(&format!("/{name}/SKILL.md")),
        "a skill's directory is its name"
    );
    let front = text
        .strip_prefix("---\n")
        .and_then(|t| t.split_once("\n---\n"))
        .expect("YAML front matter")
        .0;
    assert!(front.lines().any(|l| l == format!("name: {name}")));
    // A double-quoted YAML scalar, which a JSON string is: the description
    // holds `: `, which a plain scalar may not.
    let description = front
        .lines()
        .find_map(|l| l.strip_prefix("description: "))
        .expect("a description line");
    assert_eq!(
        serde_json::from_str::<Value>(description).expect("a quoted scalar"),
        skill["description"]
    );
    for tool in TOOLS {
        assert!(text.contains(&format!("`{}`", tool.name)), "{}", tool.name);
    }
    assert!(text.contains(&format!("{}/mcp", base())));
}

#[tokio::test]
async fn mcp_answers_with_a_trailing_slash() {
    let c = Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "discovery-test", "version": "1"}}});
    let plain = c.post("/mcp", init.clone()).await;
    let slash = c.post("/mcp/", init).await;
    assert_eq!(slash.status, 200, "{}", slash.text());
    assert_eq!(slash.json(), plain.json());
    let r = c.get("/mcp/").await;
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
    // One slash only, and never a new route: `/mcp//` and `/mcp/x` stay 404.
    c.get("/mcp//").await.expect_error(404, "not_found");
    c.get("/mcp/x").await.expect_error(404, "not_found");
}
