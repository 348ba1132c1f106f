//! `GET /robots.txt` and `GET /sitemap.xml`: every crawler welcome, with the
//! Content Signals (search and answers yes, training no), and the public
//! documents as absolute URLs of the host serving the request. Both are
//! served from `needhave/documents/` (see [`super`]).

use super::{documents, escape, fill_origin, filled, Escape};
use crate::api::Api;
use crate::api::Ctx;
use crate::http::{Request, Response};

/// [`robots_txt`] of [`ORIGIN`](super::ORIGIN), checked in.
pub const ROBOTS_TXT: &str = include_str!("../../documents/robots.txt");
/// [`sitemap_xml`] of the table and [`ORIGIN`](super::ORIGIN), checked in.
pub const SITEMAP_XML: &str = include_str!("../../documents/sitemap.xml");

pub const CONTENT_SIGNAL: &str = "search=yes, ai-input=yes, ai-train=no";

pub fn robots_txt(origin: &str) -> String {
    format!(
        "# Needhave: a public list of needs and haves. Crawlers are welcome.\n\
         # Content signals: search and AI answers may use the list; model training may not.\n\
         User-agent: *\nContent-Signal: {CONTENT_SIGNAL}\nAllow: /\n\n\
         Sitemap: {origin}/sitemap.xml\n"
    )
}

/// Every document of the table, but these two files and the well-known
/// ones (machines find those by their address, not by search).
pub fn sitemap_xml(api: &Api, origin: &str) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for r in documents(api).filter(|r| {
        // A probe is no document for a crawler.
        !r.path.starts_with("/.well-known/")
            && !matches!(r.path, "/robots.txt" | "/sitemap.xml" | "/healthz")
    }) {
        xml.push_str(&format!(
            "<url><loc>{}</loc></url>\n",
            escape(&format!("{origin}{}", r.path))
        ));
    }
    xml.push_str("</urlset>\n");
    xml
}

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
