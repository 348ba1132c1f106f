//! The checked-in MCP documents: `needhave/documents/mcp.min.json` (the fixed
//! answers, which `mcp::documents` serves) and the server card's tools, made
//! from the table and the server's identity.

use serde_json::{json, Value};

use super::tools;
use crate::api::Api;
use crate::mcp;
use crate::mcp::card;
use crate::mcp::identity::{DESCRIPTION, ICON, INSTRUCTIONS, PROTOCOL_VERSIONS, WEBSITE};
use crate::mcp::skills::{self, MIME_TYPE, URI};
use crate::pages::skills::{DESCRIPTION as SKILL_DESCRIPTION, NAME as SKILL_NAME};

/// The document as the table and this crate's constants say, for the
/// checked-in file.
pub fn generate(api: &Api) -> Value {
    let icons = json!([{"src": ICON, "mimeType": "image/svg+xml", "sizes": ["any"]}]);
    let server_info = json!({
        "name": "needhave",
        "title": "Needhave",
        "version": env!("CARGO_PKG_VERSION"),
        "description": DESCRIPTION,
        "websiteUrl": WEBSITE,
        "icons": icons,
    });
    // With the tools' descriptions: the Worker's table carries none
    // (`crate::api::doc`), so its `tools/list` is the file's.
    let tools = tools::generate_list(api, &icons);
    // Resources hold the skill's file (the Skills extension requires the
    // capability of whoever declares it).
    let resources = json!({"listChanged": false, "subscribe": false});
    let extensions = json!({ skills::EXTENSION: {} });
    json!({
        "ping": {},
        "prompts/list": {"prompts": []},
        "resources/list": skill_resources(),
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
        "tools/list": tools,
    })
}

/// The card as rendered from the table for `origin`: its tools as the
/// table says ([`tools::generate_list`]), so that a tool added to the
/// table is on it; what is served splices in the checked-in `tools/list`
/// (`mcp::card::served`), held to the table by `tests/mcp_bytes.rs`, and
/// `tests/documents.rs` holds the two to the same bytes.
pub fn card(api: &Api, origin: &str) -> Value {
    card_with(
        origin,
        tools::generate_list(api, &mcp::icons())["tools"].take(),
    )
}

/// `resources/list`: the skill's `SKILL.md`, named and described as its
/// frontmatter says (the same in every origin, so checked in with the
/// other fixed answers).
pub fn skill_resources() -> Value {
    json!({ "resources": [{
        "uri": URI,
        "name": SKILL_NAME,
        "title": "Needhave skill",
        "description": SKILL_DESCRIPTION,
        "mimeType": MIME_TYPE,
    }] })
}

/// The card for `origin`, listing `tools`.
pub fn card_with(origin: &str, tools: Value) -> Value {
    json!({
        "$schema": card::SCHEMA,
        "name": card::NAME,
        "title": "Needhave",
        "description": card::DESCRIPTION,
        "version": env!("CARGO_PKG_VERSION"),
        "websiteUrl": format!("{origin}/"),
        "icons": mcp::icons(),
        "remotes": [{
            "type": "streamable-http",
            "url": format!("{origin}/mcp"),
            "supportedProtocolVersions": PROTOCOL_VERSIONS,
        }],
        "tools": tools,
    })
}
