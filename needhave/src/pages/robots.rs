//! `GET /robots.txt` and `GET /sitemap.xml`: every crawler welcome, with the
//! Content Signals (search and answers yes, training no), and the public
//! documents as absolute URLs of the host serving the request. Both are
//! served from `needhave/documents/` (see [`super`]).

use super::{fill_origin, filled, Escape};
use crate::api::Ctx;
use crate::http::{Request, Response};

/// [`robots_txt`] of [`ORIGIN`](super::ORIGIN), checked in.
pub const ROBOTS_TXT: &str = include_str!("../../documents/robots.txt");
/// [`sitemap_xml`] of the table and [`ORIGIN`](super::ORIGIN), checked in.
pub const SITEMAP_XML: &str = include_str!("../../documents/sitemap.xml");

pub const CONTENT_SIGNAL: &str = "search=yes, ai-input=yes, ai-train=no";

/// robots.txt as served to `origin`.
pub fn served_robots(origin: &str) -> String {
    fill_origin(ROBOTS_TXT, origin, Escape::Text)
}

/// The sitemap as served to `origin`: XML, so the origin is escaped.
pub fn served_sitemap(origin: &str) -> String {
    fill_origin(SITEMAP_XML, origin, Escape::Xml)
}

pub async fn robots(req: &Request, ctx: &Ctx) -> Response {
    filled(req, ctx, "/robots.txt", ROBOTS_TXT, Escape::Text)
}

pub async fn sitemap(req: &Request, ctx: &Ctx) -> Response {
    filled(req, ctx, "/sitemap.xml", SITEMAP_XML, Escape::Xml)
}
