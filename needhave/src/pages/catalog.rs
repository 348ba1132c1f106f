//! `GET /.well-known/api-catalog` (RFC 9727): a linkset (RFC 9264, JSON)
//! naming the list's two APIs by their URLs — the HTTP calls, described by
//! the OpenAPI document, and the MCP endpoint, described by its server
//! card — each with `/llms.txt` as its documentation.
//!
//! Served from `needhave/documents/api-catalog.json` (see [`super`]), the
//! linkset `gen::documents::linkset` builds for [`ORIGIN`](super::ORIGIN).

use super::{fill_origin, filled, Escape};
use crate::api::Ctx;
use crate::assets::Asset;
use crate::http::{Request, Response};

/// `gen::documents::linkset` of [`ORIGIN`](super::ORIGIN), as JSON text, checked in.
#[cfg(not(target_arch = "wasm32"))]
pub const API_CATALOG: &str = Asset::Catalog.bundled();

/// The linkset as served to `origin`.
pub fn served(origin: &str) -> String {
    fill_origin(Asset::Catalog.text(), origin, Escape::Json)
}

pub async fn document(req: &Request, ctx: &Ctx) -> Response {
    filled(
        req,
        ctx,
        "/.well-known/api-catalog",
        Asset::Catalog.text(),
        Escape::Json,
    )
}
