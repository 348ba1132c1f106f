//! `GET /.well-known/api-catalog` (RFC 9727): a linkset (RFC 9264, JSON)
//! naming the list's two APIs by their URLs — the HTTP calls, described by
//! the OpenAPI document, and the MCP endpoint, described by its server
//! card — each with `/llms.txt` as its documentation.
//!
//! Served from `needhave/documents/api-catalog.json` (see [`super`]), the
//! linkset [`linkset`] builds for [`ORIGIN`](super::ORIGIN).

use serde_json::{json, Value};

use super::{fill_origin, filled, Escape};
use crate::api::Ctx;
use crate::http::{Request, Response};

/// [`linkset`] of [`ORIGIN`](super::ORIGIN), as JSON text, checked in.
pub const API_CATALOG: &str = include_str!("../../documents/api-catalog.json");

/// The linkset for `origin` (`scheme://host[:port]`).
pub fn linkset(origin: &str) -> Value {
    let at = |path: &str| format!("{origin}{path}");
    let doc = json!([{"href": at("/llms.txt"), "type": "text/plain"},
                     {"href": at("/"), "type": "text/html"}]);
    json!({"linkset": [
        {
            "anchor": at("/.well-known/api-catalog"),
            "item": [{"href": at("/")}, {"href": at("/mcp")}],
        },
        {
            "anchor": at("/"),
            "service-desc": [{"href": at("/openapi.json"), "type": "application/openapi+json"}],
            "service-doc": doc,
        },
        {
            "anchor": at("/mcp"),
            "service-desc": [{"href": at("/mcp/server-card"), "type": "application/json"}],
            "service-doc": doc,
        },
    ]})
}

/// The linkset as served to `origin`.
pub fn served(origin: &str) -> String {
    fill_origin(API_CATALOG, origin, Escape::Json)
}

pub async fn document(req: &Request, ctx: &Ctx) -> Response {
    filled(
        req,
        ctx,
        "/.well-known/api-catalog",
        API_CATALOG,
        Escape::Json,
    )
}
