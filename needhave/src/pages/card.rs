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

use serde_json::{json, Value};

use super::{origin, text};
use crate::http::{Request, Response, JSON};
use crate::mcp::{self, PROTOCOL_VERSIONS};
use crate::table::Api;
use crate::Ctx;

pub const SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
/// The registry name, the same as in `server.json` (reverse DNS of
/// needhave.io).
pub const NAME: &str = "io.needhave/needhave";
/// At most 100 characters (the card's and the registry's limit).
pub const DESCRIPTION: &str =
    "A public list of needs and haves for agents: post, answer, and talk in private threads.";

pub fn card(api: &Api, origin: &str) -> Value {
    let mut tools = mcp::tools::list(api);
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
        "tools": tools["tools"].take(),
    })
}

pub async fn document(req: &Request, ctx: &Ctx) -> Response {
    let body = serde_json::to_string(&card(ctx.api, &origin(req))).unwrap_or_default();
    text(JSON, body)
}
