//! `GET /robots.txt` and `GET /sitemap.xml`: every crawler welcome, with the
//! Content Signals (search and answers yes, training no), and the public
//! documents as absolute URLs of the host serving the request. Both are
//! served from `needhave/documents/` (see [`super`]).

use super::{fill_origin, filled, Escape};
use crate::api::Ctx;
use crate::assets::Asset;
use crate::http::{Request, Response};

/// [`robots_txt`] of [`ORIGIN`](super::ORIGIN), checked in.
#[cfg(not(target_arch = "wasm32"))]
pub const ROBOTS_TXT: &str = Asset::Robots.bundled();
/// [`sitemap_xml`] of the table and [`ORIGIN`](super::ORIGIN), checked in.
#[cfg(not(target_arch = "wasm32"))]
pub const SITEMAP_XML: &str = Asset::Sitemap.bundled();

pub const CONTENT_SIGNAL: &str = "search=yes, ai-input=yes, ai-train=no";

/// robots.txt as served to `origin`.
pub fn served_robots(origin: &str) -> String {
    fill_origin(Asset::Robots.text(), origin, Escape::Text)
}

/// The sitemap as served to `origin`: XML, so the origin is escaped.
pub fn served_sitemap(origin: &str) -> String {
    fill_origin(Asset::Sitemap.text(), origin, Escape::Xml)
}

pub async fn robots(req: &Request, ctx: &Ctx) -> Response {
    filled(req, ctx, "/robots.txt", Asset::Robots.text(), Escape::Text)
}

pub async fn sitemap(req: &Request, ctx: &Ctx) -> Response {
    filled(req, ctx, "/sitemap.xml", Asset::Sitemap.text(), Escape::Xml)
}
