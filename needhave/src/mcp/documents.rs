//! The static parts of MCP answers, said once as JSON text.
//!
//! Everything but the echoed version in `initialize`, `server/discover`,
//! `tools/list` and the server's identity is known when the server is
//! built. Built per request as `json!` trees, each key was an insert and an
//! allocation in code, here they are one
//! checked-in document, `needhave/mcp.min.json`, generated natively from
//! the table (`generate`) and held to it by `tests/golden.rs`, parsed once
//! on every target. Answers clone from it, so what clients read is the
//! same, byte for byte.

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The results of the methods whose answer never changes, under the
/// method's name (`ping`, `server/discover`, the empty lists), and the
/// parts of the others: `tools/list`'s result without the tools'
/// descriptions (`tools::list` adds them), `initialize`'s without
/// `protocolVersion`, and `serverInfo`, as `generate` writes them.
pub const DOCUMENT: &str = include_str!("../../mcp.min.json");

/// The part of the document named `key`, or `null` (never, while the
/// golden test holds).
pub fn get(key: &str) -> &'static Value {
    static PARSED: OnceLock<Map<String, Value>> = OnceLock::new();
    static NULL: Value = Value::Null;
    // From bytes, like every other JSON the list reads: `from_str` would
    // link a second copy of serde_json's parser into the Worker. As a
    // `Value`, since a typed read links serde_json's error messages (see
    // `crate::http::json_body`).
    let parsed = PARSED.get_or_init(|| match serde_json::from_slice(DOCUMENT.as_bytes()) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    });
    parsed.get(key).unwrap_or(&NULL)
}

/// The document as the table and this crate's constants say, for the
/// checked-in file.
#[cfg(not(target_arch = "wasm32"))]
pub fn generate(api: &crate::api::Api) -> Value {
    use serde_json::json;

    use super::server::INSTRUCTIONS;
    use super::{skills, tools, DESCRIPTION, ICON, PROTOCOL_VERSIONS, WEBSITE};

    let icons = json!([{"src": ICON, "mimeType": "image/svg+xml", "sizes": ["any"]}]);
    let server_info = json!({
        "name": "needhave",
        "title": "Needhave",
        "version": env!("CARGO_PKG_VERSION"),
        "description": DESCRIPTION,
        "websiteUrl": WEBSITE,
        "icons": icons,
    });
    // `tools::list` adds them back from the table.
    let mut tools_without_descriptions = tools::generate_list(api, &icons);
    for tool in tools_without_descriptions["tools"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        tool.as_object_mut().map(|t| t.remove("description"));
    }
    // Resources hold the skill's file (the Skills extension requires the
    // capability of whoever declares it).
    let resources = json!({"listChanged": false, "subscribe": false});
    let extensions = json!({ skills::EXTENSION: {} });
    json!({
        "ping": {},
        "prompts/list": {"prompts": []},
        "resources/list": skills::resources(),
        "resources/templates/list": {"resourceTemplates": []},
        "server/discover": {
            "supportedVersions": PROTOCOL_VERSIONS,
            // Prompts: declared because their list answers (empty), as the
            // capabilities must match what is handled.
            "capabilities": {
                "tools": {"listChanged": false},
                "prompts": {"listChanged": false},
                "resources": resources,
                "extensions": extensions,
            },
            "instructions": INSTRUCTIONS,
        },
        "initialize": {
            "capabilities": {
                "tools": {"listChanged": false},
                "resources": resources,
                "extensions": extensions,
            },
            "serverInfo": server_info,
            "instructions": INSTRUCTIONS,
        },
        "serverInfo": server_info,
        "tools/list": tools_without_descriptions,
    })
}
