//! `GET /openapi.json`: the checked-in document, as served.
//!
//! The document is generated natively from `ROUTES` and the Rust types
//! (schemars, `gen::openapi`), checked in as `needhave/openapi.json`, and
//! served from that file on every target: the Worker links no schema
//! library, and a test fails whenever the checked-in file drifts from what
//! the table says.

use crate::api::Ctx;
use crate::assets::Asset;
use crate::http::{Request, Response};

/// The checked-in document, as served: `openapi.min.json`, the golden
/// test's compact copy of `openapi.json` (which is for people to read);
/// 20 KB less data in the Worker.
#[cfg(not(target_arch = "wasm32"))]
pub const DOCUMENT: &str = Asset::OpenApi.bundled();

pub async fn document(_req: &Request, _ctx: &Ctx) -> Response {
    Response::new(
        200,
        crate::http::JSON,
        Asset::OpenApi.text().as_bytes().to_vec(),
    )
}
