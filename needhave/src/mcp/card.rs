//! The MCP server card (draft SEP-2127,
//! modelcontextprotocol/experimental-ext-server-card), served at
//! `GET /mcp/server-card` (the draft's recommended place, beside the
//! Streamable HTTP endpoint) and `GET /.well-known/mcp/server-card.json`:
//! who the server is, where it answers and which protocol versions it
//! speaks, before a client connects.
//!
//! The card follows the newest draft (`schemas/mcp-server-card.schema.json`):
//! its `$schema`, its fields, its media type `application/mcp-server-card+json`
//! when a client asks for it (`Accept`), `ETag`/304, `Cache-Control` and CORS.
//! The draft leaves primitives to `tools/list`, but the card is an open
//! object and earlier server-card proposals (SEP-1649) and registries read a
//! `tools` member: the card carries the very `tools/list` entries
//! ([`super::tools::list`]), so they cannot drift apart.
//!
//! Served from `needhave/documents/server-card.json` (see [`crate::pages`],
//! whose filling it shares): the card of [`ORIGIN`] with [`TOOLS`] where the
//! `tools/list` entries go, spliced in per request from
//! [`super::tools::list`]. It lives beside them, above the documents, so
//! that the documents name nothing of MCP.

use super::tools;
use crate::api::Api;
use crate::api::Ctx;
use crate::assets::Asset;
use crate::http::{Request, Response, JSON};
use crate::origin::serving;
use crate::pages::{fill, origin_as, text, Escape, ORIGIN};

pub const SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
/// The registry name, the same as in `server.json` (reverse DNS of
/// needhave.io).
pub const NAME: &str = "io.needhave/needhave";
/// At most 100 characters (the card's and the registry's limit).
pub const DESCRIPTION: &str =
    "A public list of needs and haves for agents: post, answer, and talk in private threads.";

/// `gen::documents::template`, checked in.
#[cfg(not(target_arch = "wasm32"))]
pub const SERVER_CARD: &str = Asset::ServerCard.bundled();
/// What stands for the JSON array of the tools in [`SERVER_CARD`].
pub const TOOLS: &str = "{{tools}}";

/// The card as served to `origin`, with the tools `api` lists.
pub fn served(api: &Api, origin: &str) -> String {
    let tools = serde_json::to_string(&tools::list(api)["tools"]).unwrap_or_default();
    fill(
        Asset::ServerCard.text(),
        &[(ORIGIN, &origin_as(origin, Escape::Json)), (TOOLS, &tools)],
    )
}

/// The card's own media type, answered to a client that asks for it.
pub const MEDIA: &str = "application/mcp-server-card+json";

/// The card changes only with a release: an hour, as the draft suggests.
pub const CACHE: &str = "public, max-age=3600";

/// Whether `Accept` names the card's media type (with a quality above 0).
pub fn asks_for_card(req: &Request) -> bool {
    req.header("accept").is_some_and(|accept| {
        accept.split(',').any(|range| {
            let mut parts = range.split(';').map(str::trim);
            parts.next().is_some_and(|m| m.eq_ignore_ascii_case(MEDIA))
                && !parts.any(|p| {
                    // A qvalue is `0`, `0.` and up to three digits, or `1…`
                    // (RFC 9110): zero is a `0` with only zeros after it.
                    // Read by hand, since a float parser is kilobytes of
                    // the Worker's code (14 KB gzip, bench/worker-size.sh).
                    p.strip_prefix("q=").is_some_and(|q| {
                        let q = q.trim();
                        q.starts_with('0') && q.bytes().all(|b| b == b'0' || b == b'.')
                    })
                })
        })
    })
}

/// The card, as `application/mcp-server-card+json` when the client asks
/// for it and `application/json` otherwise (so `Vary: Accept`), with the
/// draft's caching and CORS headers; its tag and 304 come from
/// [`crate::conditional::dress`], per media type.
pub async fn document(req: &Request, ctx: &Ctx) -> Response {
    let media = if asks_for_card(req) { MEDIA } else { JSON };
    text(media, served(ctx.api, &serving(req, &ctx.config)))
        .with_header("cache-control", CACHE)
        .with_header("vary", "Accept")
        .with_header("access-control-allow-methods", "GET")
        .with_header(
            "access-control-allow-headers",
            "Content-Type, If-None-Match",
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_media_type_by_accept() {
        let asks = |accept: Option<&str>| {
            let mut r = Request::new("GET", "/mcp/server-card");
            if let Some(a) = accept {
                r.headers.push(("accept".into(), a.into()));
            }
            asks_for_card(&r)
        };
        assert!(asks(Some("application/mcp-server-card+json")));
        assert!(asks(Some(
            "application/json;q=0.5, Application/MCP-Server-Card+JSON; q=0.9"
        )));
        assert!(!asks(Some("application/mcp-server-card+json;q=0")));
        assert!(!asks(Some("application/mcp-server-card+json; q=0.0")));
        assert!(!asks(Some("application/json")));
        assert!(!asks(Some("*/*")));
        assert!(!asks(None));
    }
}
