//! What a person, a crawler or an agent reads about the list: the home page
//! (HTML and Markdown), the OpenAPI document, and the discovery documents
//! (robots.txt, sitemap, llms.txt, the API catalog, the agent-skills index
//! and its skill). The MCP server card is filled the same way, from
//! `crate::mcp::card`, which stands above this module: nothing here names MCP.
//!
//! Every document is a pure function of the table handed down as
//! [`Api`](crate::api::Api) (and, for absolute URLs, of the serving
//! origin): a route or a tool added to `routes.rs` shows up in all of them,
//! and nothing here lists calls by hand.
//!
//! Each module keeps the function that renders its document from an `Api`
//! (what the tests build documents with), but what is served is that
//! rendering of the real table done ahead of time and checked in under
//! `needhave/documents/`, with [`ORIGIN`] where the serving origin goes:
//! [`fill`] puts the origin in per request. `tests/golden.rs` fails until
//! the checked-in files are what the renderers make of the table, and
//! `tests/documents.rs` that the filled files are the renderers' output for
//! any origin, byte for byte. The Worker then carries the documents' bytes
//! (which gzip finds again in the table, side by side in its data) rather
//! than the code that renders them.

pub mod assets;
pub mod catalog;
pub mod feed;
pub mod home;
pub mod llms;
pub mod openapi;
pub mod robots;
pub mod skills;

use crate::api::Ctx;
use crate::api::{Api, Body, Route};
use crate::http::{Request, Response};
use crate::origin::serving;

/// The discovery documents `GET /` names in its one `Link` header, with
/// their relation types: `service-desc`, `service-doc`, `alternate`,
/// `api-catalog` and `sitemap` are registered (RFC 8631, RFC 9727, the IANA
/// registry); the MCP and agent-skills relations have no registered name
/// yet, so they are named as the documents they point at. A test checks
/// that each path is a route of the table and that every discovery route is
/// here.
pub const LINKS: &[Link] = &[
    Link(
        "/openapi.json",
        "service-desc",
        "application/openapi+json",
        "The calls, as OpenAPI 3",
    ),
    Link(
        "/llms.txt",
        "service-doc",
        "text/plain",
        "Everything in one text, for a model",
    ),
    Link(
        "/index.md",
        "alternate",
        "text/markdown",
        "This page as Markdown",
    ),
    Link(
        "/posts.atom",
        "alternate",
        "application/atom+xml",
        "The newest posts, as an Atom feed",
    ),
    Link(
        "/.well-known/api-catalog",
        "api-catalog",
        "application/linkset+json",
        "The API catalog (RFC 9727)",
    ),
    Link(
        "/mcp",
        "mcp",
        "application/json",
        "The MCP endpoint (Streamable HTTP)",
    ),
    Link(
        "/mcp/server-card",
        "mcp-server-card",
        "application/json",
        "The MCP server card",
    ),
    Link(
        "/.well-known/agent-skills/index.json",
        "agent-skills",
        "application/json",
        "The agent skill",
    ),
    Link("/sitemap.xml", "sitemap", "application/xml", "The sitemap"),
];

/// What stands for the serving origin (`scheme://host[:port]`) in a
/// pre-rendered document: no character in it is escaped in JSON, XML or
/// Markdown, so rendering a document with it as the origin gives the
/// template as is.
pub const ORIGIN: &str = "{{origin}}";

/// A pre-rendered document with each mark (`{{…}}`) replaced by its value,
/// in one pass: a value is never read again for marks. Marks start with
/// `{`, so the scan stops only there.
pub fn fill(template: &str, marks: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match marks.iter().find(|(mark, _)| rest.starts_with(mark)) {
            Some((mark, value)) => {
                out.push_str(value);
                rest = &rest[mark.len()..];
            }
            None => {
                out.push('{');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// How the origin is written into a document: as is, or escaped for XML
/// or for the inside of a JSON string.
#[derive(Clone, Copy)]
pub enum Escape {
    Text,
    Xml,
    Json,
}

/// `template` with the origin put in where [`ORIGIN`] stands, written as
/// `how` says. [`serving`] keeps an origin to visible ASCII, so in JSON only
/// `"` and `\` need a backslash (`tests/documents.rs` holds the result to
/// what serde_json writes).
pub fn fill_origin(template: &str, origin: &str, how: Escape) -> String {
    fill(template, &[(ORIGIN, &origin_as(origin, how))])
}

/// The origin as it goes into a document, written as `how` says.
pub fn origin_as(origin: &str, how: Escape) -> String {
    match how {
        Escape::Text => origin.to_string(),
        Escape::Xml => escape(origin),
        Escape::Json => {
            let mut out = String::with_capacity(origin.len() + 4);
            for c in origin.chars() {
                if matches!(c, '"' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
            out
        }
    }
}

/// The answer of a pre-rendered document that differs per host only by
/// its origin (robots.txt, the sitemap, llms.txt, SKILL.md, the API
/// catalog): one copy of this for all their handlers in the Worker.
pub fn filled(req: &Request, ctx: &Ctx, path: &str, template: &str, how: Escape) -> Response {
    text(
        media_of(ctx.api, path),
        fill_origin(template, &serving(req, &ctx.config), how),
    )
}

/// One discovery link: path, relation type, media type, title.
pub struct Link(
    pub &'static str,
    pub &'static str,
    pub &'static str,
    pub &'static str,
);

/// The one `Link` header of `GET /`, as served: [`link_header`] written
/// out, which a test holds it to (the Worker then carries neither the loop
/// nor the links' titles, which only the pre-rendered documents show).
pub const LINK_HEADER: &str = concat!(
    "</openapi.json>; rel=\"service-desc\"; type=\"application/openapi+json\", ",
    "</llms.txt>; rel=\"service-doc\"; type=\"text/plain\", ",
    "</index.md>; rel=\"alternate\"; type=\"text/markdown\", ",
    "</posts.atom>; rel=\"alternate\"; type=\"application/atom+xml\", ",
    "</.well-known/api-catalog>; rel=\"api-catalog\"; type=\"application/linkset+json\", ",
    "</mcp>; rel=\"mcp\"; type=\"application/json\", ",
    "</mcp/server-card>; rel=\"mcp-server-card\"; type=\"application/json\", ",
    "</.well-known/agent-skills/index.json>; rel=\"agent-skills\"; type=\"application/json\", ",
    "</sitemap.xml>; rel=\"sitemap\"; type=\"application/xml\"",
);

/// The one `Link` header of `GET /`, naming every entry of [`LINKS`].
pub fn link_header() -> String {
    // By `push_str` rather than `format!` and `join`: less Worker code.
    let mut header = String::new();
    for Link(path, rel, ty, _) in LINKS {
        if !header.is_empty() {
            header.push_str(", ");
        }
        for part in ["<", path, ">; rel=\"", rel, "\"; type=\"", ty, "\""] {
            header.push_str(part);
        }
    }
    header
}

/// The routes a reader can fetch as they are: `GET`, no path parameter.
pub fn documents(api: &Api) -> impl Iterator<Item = &'static Route> + '_ {
    api.routes
        .iter()
        .filter(|r| r.method == "GET" && !r.path.as_bytes().contains(&b':'))
}

/// Whether a route is one of the discovery documents (a text document the
/// table gives a media type).
pub fn is_discovery(route: &Route) -> bool {
    route
        .success()
        .is_some_and(|s| matches!(s.body, Body::Media(_)))
}

/// A document answer; the public documents may be cached briefly by
/// anyone, like any public page.
pub fn text(media: &str, body: String) -> Response {
    Response::new(200, media, body.into_bytes()).with_header("cache-control", "public, max-age=300")
}

/// The media type the table gives a route's success, for its handler.
pub fn media_of(api: &Api, path: &str) -> &'static str {
    api.route("GET", path)
        .and_then(Route::success)
        .and_then(|s| match s.body {
            Body::Media(m) => Some(m),
            Body::Html => Some("text/html; charset=utf-8"),
            _ => None,
        })
        .unwrap_or("text/plain; charset=utf-8")
}

/// Escapes text for HTML and XML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_header_names_each_link_once() {
        let header = link_header();
        assert_eq!(LINK_HEADER, header, "LINK_HEADER is link_header()");
        assert!(header.starts_with(
            r#"</openapi.json>; rel="service-desc"; type="application/openapi+json", </llms.txt>; rel="service-doc"; type="text/plain", "#
        ));
        assert!(header.ends_with(r#"</sitemap.xml>; rel="sitemap"; type="application/xml""#));
        assert_eq!(header.split(", <").count(), LINKS.len());
    }
}
