//! `GET /.well-known/api-catalog` (RFC 9727): a linkset (RFC 9264, JSON)
//! naming the list's two APIs by their URLs — the HTTP calls, described by
//! the OpenAPI document, and the MCP endpoint, described by its server
//! card — each with `/llms.txt` as its documentation.

use serde_json::{json, Value};

use super::{media_of, origin, text};
use crate::http::{Request, Response};
use crate::table::Api;
use crate::Ctx;

pub fn linkset(origin: &str) -> Value {
    let doc = json!([{"href": format!("{origin}/llms.txt"), "type": "text/plain"},
                     {"href": format!("{origin}/"), "type": "text/html"}]);
    json!({"linkset": [
        {
            "anchor": format!("{origin}/.well-known/api-catalog"),
            "item": [{"href": format!("{origin}/")}, {"href": format!("{origin}/mcp")}],
        },
        {
            "anchor": format!("{origin}/"),
            "service-desc": [{"href": format!("{origin}/openapi.json"), "type": "application/openapi+json"}],
            "service-doc": doc,
        },
        {
            "anchor": format!("{origin}/mcp"),
            "service-desc": [{"href": format!("{origin}/mcp/server-card"), "type": "application/json"}],
            "service-doc": doc,
        },
    ]})
}

pub async fn document(req: &Request, ctx: &Ctx) -> Response {
    let api: &Api = ctx.api;
    let body = serde_json::to_string(&linkset(&origin(req))).unwrap_or_default();
    text(media_of(api, "/.well-known/api-catalog"), body)
}
