//! The checked-in documents are what the table generates.
//!
//! `openapi.json` (for people; `openapi.min.json` is the same document
//! without whitespace, as served) and `tool-schemas.json` (likewise, with
//! `tool-schemas.min.json`), and the home page (`documents/index.html`,
//! `documents/index.md`), are served from
//! the checked-in files on every target (the Worker links no schema library). When the
//! table or a type changes, these tests fail until the files are rewritten:
//!
//!     UPDATE_GOLDEN=1 cargo test -p needhave --test golden

use std::path::PathBuf;

use serde_json::Value;

fn check(file: &str, generated: Value) {
    let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
    check_text(file, text);
}

fn check_text(file: &str, text: String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == text,
        "needhave/{file} is not what the routes! table generates.\n\
         If the change is intended, rewrite it with:\n\n    \
         UPDATE_GOLDEN=1 cargo test -p needhave --test golden\n"
    );
}

#[test]
fn openapi_document_is_current() {
    check(
        "openapi.json",
        needhave::pages::openapi::generate(&needhave::routes::API),
    );
    // The same document without whitespace, which is what is served.
    let compact =
        serde_json::to_string(&needhave::pages::openapi::generate(&needhave::routes::API)).unwrap();
    check_text("openapi.min.json", compact);
}

#[test]
fn tool_schemas_are_current() {
    let schemas = needhave::mcp::tools::generate_schemas(&needhave::routes::API);
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
    check_text("documents/index.html", needhave::pages::home::render(api));
    check_text("documents/index.md", needhave::pages::home::markdown(api));
    // What is served is what is checked in.
    assert_eq!(
        needhave::pages::home::INDEX_HTML,
        needhave::pages::home::render(api)
    );
    assert_eq!(
        needhave::pages::home::INDEX_MD,
        needhave::pages::home::markdown(api)
    );
}

/// OpenAPI wants every operationId unique (openapi-spec-validator refuses the
/// document otherwise), and one handler may serve two paths.
#[test]
fn operation_ids_are_unique() {
    let doc = needhave::pages::openapi::generate(&needhave::routes::API);
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
