//! The checked-in documents are what the table generates.
//!
//! `openapi.json` (for people; `openapi.min.json` is the same document
//! without whitespace, as served) and `tool-schemas.json` (likewise, with
//! `tool-schemas.min.json`), the home page (`documents/index.html`,
//! `documents/index.md`) and the discovery documents (the rest of
//! `documents/`, with `{{origin}}` where the serving origin goes), are
//! served from
//! the checked-in files on every target (the Worker links no schema library). When the
//! table or a type changes, these tests fail (with a diff) until the files
//! are rewritten:
//!
//!     EXPECTORATE=overwrite cargo test -p needhave --test golden

use serde_json::Value;

fn check(file: &str, generated: Value) {
    let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
    check_text(file, text);
}

/// `file` is relative to the crate (the tests' working directory).
fn check_text(file: &str, text: String) {
    expectorate::assert_contents(file, &text);
}

#[test]
fn openapi_document_is_current() {
    check(
        "openapi.json",
        needhave::gen::openapi::generate(&needhave::routes::API),
    );
    // The same document without whitespace, which is what is served.
    let compact =
        serde_json::to_string(&needhave::gen::openapi::generate(&needhave::routes::API)).unwrap();
    check_text("documents/openapi.min.json", compact);
}

#[test]
fn tool_schemas_are_current() {
    let schemas = needhave::gen::tools::generate_schemas(&needhave::routes::API);
    check("tool-schemas.json", schemas.clone());
    // The same without whitespace, which is what every target reads: the
    // Worker pays for each byte it embeds.
    check_text(
        "tool-schemas.min.json",
        serde_json::to_string(&schemas).unwrap(),
    );
}

/// The home page, HTML and Markdown: rendered from the table here, served
/// from the checked-in files (the Worker carries the bytes, not the
/// renderer).
#[test]
fn home_page_documents_are_current() {
    let api = &needhave::routes::API;
    check_text(
        "documents/index.html",
        needhave::gen::documents::render(api),
    );
    check_text(
        "documents/index.md",
        needhave::gen::documents::markdown(api),
    );
    // What is served is what is checked in.
    assert_eq!(
        needhave::pages::home::INDEX_HTML,
        needhave::gen::documents::render(api)
    );
    assert_eq!(
        needhave::pages::home::INDEX_MD,
        needhave::gen::documents::markdown(api)
    );
}

/// The discovery documents, rendered from the table for the origin mark;
/// `tests/documents.rs` checks that filling them in gives the renderers'
/// output for real origins.
#[test]
fn discovery_documents_are_current() {
    use needhave::mcp::card;
    use needhave::pages::{catalog, llms, robots, skills, ORIGIN};
    let api = &needhave::routes::API;
    let skill = needhave::gen::documents::skill_md(api, ORIGIN);
    let documents = [
        (
            "documents/llms.txt",
            llms::LLMS_TXT,
            needhave::gen::documents::llms_txt(api, ORIGIN),
        ),
        (
            "documents/robots.txt",
            robots::ROBOTS_TXT,
            needhave::gen::documents::robots_txt(ORIGIN),
        ),
        (
            "documents/sitemap.xml",
            robots::SITEMAP_XML,
            needhave::gen::documents::sitemap_xml(api, ORIGIN),
        ),
        ("documents/SKILL.md", skills::SKILL_MD, skill),
        (
            "documents/agent-skills-index.json",
            skills::INDEX_JSON,
            skills::index_of(skills::DIGEST),
        ),
        (
            "documents/api-catalog.json",
            catalog::API_CATALOG,
            serde_json::to_string(&needhave::gen::documents::linkset(ORIGIN)).unwrap(),
        ),
        (
            "documents/server-card.json",
            card::SERVER_CARD,
            needhave::gen::documents::template(),
        ),
    ];
    for (file, _, rendered) in &documents {
        check_text(file, rendered.clone());
    }
    // What is served is what is checked in.
    for (file, served, rendered) in documents {
        assert_eq!(served, rendered, "{file}");
    }
}

/// OpenAPI wants every operationId unique (openapi-spec-validator refuses the
/// document otherwise), and one handler may serve two paths.
#[test]
fn operation_ids_are_unique() {
    let doc = needhave::gen::openapi::generate(&needhave::routes::API);
    let mut ids: Vec<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .filter_map(|op| op["operationId"].as_str())
        .collect();
    let count = ids.len();
    assert!(count >= needhave::routes::API.routes.len());
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "duplicate operationIds in {ids:?}");
}
