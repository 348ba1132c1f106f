//! The MCP server card (draft SEP-2127,
//! modelcontextprotocol/experimental-ext-server-card), served at
//! `GET /mcp/server-card` (the draft's recommended place, beside the
//! Streamable HTTP endpoint) and `GET /.well-known/mcp/server-card.json`:
//! who the server is, where it answers and which protocol versions it
//! speaks, before a client connects.
//!
//! The draft leaves primitives to `tools/list`, but the card is an open
//! object and earlier server-card proposals (SEP-1649) and registries read a
//! `tools` member: the card carries the very `tools/list` entries
//! ([`crate::mcp::tools::list`]), so they cannot drift apart.

//!
//! Served from `needhave/documents/server-card.json` (see [`super`]): the
//! card of [`ORIGIN`] with [`TOOLS`] where the `tools/list` entries go,
//! spliced in per request from [`crate::mcp::tools::list`].

use serde_json::{json, Value};

use super::{fill, origin, origin_as, text, Escape, ORIGIN};
use crate::api::Api;
use crate::api::Ctx;
use crate::http::{Request, Response, JSON};
use crate::mcp::{self, PROTOCOL_VERSIONS};

pub const SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
/// The registry name, the same as in `server.json` (reverse DNS of
/// needhave.io).
pub const NAME: &str = "io.needhave/needhave";
/// At most 100 characters (the card's and the registry's limit).
pub const DESCRIPTION: &str =
    "A public list of needs and haves for agents: post, answer, and talk in private threads.";

/// [`template`], checked in.
pub const SERVER_CARD: &str = include_str!("../../documents/server-card.json");
/// What stands for the JSON array of the tools in [`SERVER_CARD`].
pub const TOOLS: &str = "{{tools}}";

/// The card for `origin`, listing `tools`.
fn card_with(origin: &str, tools: Value) -> Value {
    json!({
        "$schema": SCHEMA,
        "name": NAME,
        "title": "Needhave",
        "description": DESCRIPTION,
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

/// The card as rendered from the table for `origin`: its tools as the
/// table says ([`mcp::tools::generate_list`]), so that a tool added to the
/// table is on it; what is served splices in the checked-in `tools/list`
/// ([`served`]), held to the table by `tests/mcp_bytes.rs`, and
/// `tests/documents.rs` holds the two to the same bytes.
#[cfg(not(target_arch = "wasm32"))]
pub fn card(api: &Api, origin: &str) -> Value {
    card_with(
        origin,
        mcp::tools::generate_list(api, &mcp::icons())["tools"].take(),
    )
}

/// The card of [`ORIGIN`] as JSON text, with [`TOOLS`] in place of the
/// tools (it is then not JSON itself).
pub fn template() -> String {
    let marked = serde_json::to_string(&card_with(ORIGIN, json!(TOOLS))).unwrap_or_default();
    marked.replace(&format!("\"{TOOLS}\""), TOOLS)
}

/// The card as served to `origin`, with the tools `api` lists.
pub fn served(api: &Api, origin: &str) -> String {
    let tools = serde_json::to_string(&mcp::tools::list(api)["tools"]).unwrap_or_default();
    fill(
        SERVER_CARD,
        &[(ORIGIN, &origin_as(origin, Escape::Json)), (TOOLS, &tools)],
    )
}

pub async fn document(req: &Request, ctx: &Ctx) -> Response {
    text(JSON, served(ctx.api, &origin(req, &ctx.config)))
}
