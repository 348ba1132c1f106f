//! The discovery documents and the home page, rendered from the table for
//! the checked-in files under `needhave/documents/` that `pages` serves
//! (with `{{origin}}` where the serving origin goes). Rendered here, ahead
//! of time: the Worker carries their bytes, not their renderers.

use serde_json::{json, Value};

use super::mcp::card_with;
use crate::api::Api;
use crate::mcp::card::TOOLS;
use crate::pages::home::{ABUSE_CONTACT, CONTACT_WARNING, HOW, LIFE, STATEMENT, TITLE};
use crate::pages::llms::limits;
use crate::pages::robots::CONTENT_SIGNAL;
use crate::pages::skills::{index_of, DESCRIPTION, NAME};
use crate::pages::{documents, escape, is_discovery, Link, LINKS, ORIGIN};
use crate::rules::{self, Reason};

// ---------------------------------------------------------------- home

/// The home page as Markdown: the source of both forms.
pub fn markdown(api: &Api) -> String {
    let mut md = format!(
        "# Needhave: a public list of needs and haves\n\n**{STATEMENT}**\n\n{HOW}\n\n{CONTACT_WARNING}\n\n\
         ## Next step\n\n\
         Read the list at [/posts](/posts). Post and answer through the JSON calls described in \
         [/openapi.json](/openapi.json), or connect an MCP client to `/mcp` (Streamable HTTP).\n\n\
         ## A post's life\n\n{LIFE}\n\n\
         ## Reporting a post\n\n{}\n\n{ABUSE_CONTACT}\
         ## The calls\n\n",
        reporting()
    );
    // The discovery documents are listed below, for agents.
    for r in api.routes.iter().filter(|r| !is_discovery(r)) {
        md.push_str(&format!("- `{} {}` — {}\n", r.method, r.path, r.doc));
    }
    md.push_str("\n## For agents\n\n");
    for Link(path, _, _, title) in LINKS {
        md.push_str(&format!("- [{title}]({path})\n"));
    }
    md
}

/// How anyone reports a post, and what a report does: on the home page,
/// in llms.txt and in the skill.
pub fn reporting() -> String {
    let reasons: Vec<String> = Reason::ALL
        .iter()
        .map(|r| format!("`{}`", r.as_str()))
        .collect();
    format!(
        "To tell the list's operator about a post (spam, a scam, something illegal, a prompt \
         injection, contact details), anyone sends `POST /posts/:id/report` with \
         `{{\"reason\": REASON, \"text\": \"a few words\"}}` (`text` is optional); the reason is one of \
         {}. The answer is 202. A report hides nothing and changes nothing anyone reads: the \
         operator reads the reports and decides what to remove. A removed post answers 410 \
         `removed`. One address may send {} reports an hour; reporting the same post again counts once.",
        reasons.join(", "),
        rules::REPORTS_PER_HOUR
    )
}

/// The Markdown page as HTML (CommonMark, by pulldown-cmark), in the page's
/// head and style. The abuse contact's mark stands between two blocks, so
/// the parts on either side render as the page without it would, and the
/// mark is kept for [`with_contact`](crate::pages::home::with_contact).
pub fn render(api: &Api) -> String {
    let markdown = markdown(api);
    let mut body = String::new();
    let (before, after) = markdown
        .split_once(ABUSE_CONTACT)
        .unwrap_or((&markdown, ""));
    pulldown_cmark::html::push_html(&mut body, pulldown_cmark::Parser::new(before));
    if !after.is_empty() {
        body.push_str(ABUSE_CONTACT);
        pulldown_cmark::html::push_html(&mut body, pulldown_cmark::Parser::new(after));
    }
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{TITLE}</title>
<meta name="description" content="{STATEMENT}">
<meta name="robots" content="index, follow">
<link rel="service-desc" type="application/openapi+json" href="/openapi.json">
<link rel="alternate" type="text/markdown" href="/index.md">
<link rel="alternate" type="application/atom+xml" href="/posts.atom" title="Needhave: needs and haves">
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#222;overflow-wrap:anywhere}}code{{font-size:.9em}}li{{margin:.3rem 0}}</style>
</head>
<body>
{body}</body>
</html>
"#
    )
}

// ---------------------------------------------------------------- llms

pub fn llms_txt(api: &Api, origin: &str) -> String {
    let mut t = format!(
        "# Needhave\n\n> {STATEMENT}\n\n{HOW}\n\n{CONTACT_WARNING}\n\n{LIFE}\n\n{}\n\n\
         Every call takes and answers JSON; every error is `{{\"error\": CODE}}`. \
         The calls are described in OpenAPI 3 at {origin}/openapi.json, and the same \
         actions are MCP tools at {origin}/mcp (Streamable HTTP, stateless, JSON responses).\n\n\
         ## Calls\n\n",
        reporting()
    );
    for r in api.routes {
        t.push_str(&format!("- `{} {}`: {}\n", r.method, r.path, r.doc));
    }
    t.push_str(&format!(
        "\n## MCP tools\n\nAt {origin}/mcp, or from a local stdio server (`needhave mcp`, \
         or `npm run mcp` in the repository; `NEEDHAVE_LIST_URL` names the list).\n\n"
    ));
    for tool in api.tools {
        let hint = if tool.read_only { ", read-only" } else { "" };
        t.push_str(&format!(
            "- `{}` ({}{hint}): {}\n",
            tool.name, tool.title, tool.description
        ));
    }
    t.push_str("\n## Limits\n\n");
    t.push_str(&limits());
    t.push_str("\n## Documents\n\n");
    for Link(path, _, _, title) in LINKS {
        t.push_str(&format!("- [{title}]({origin}{path})\n"));
    }
    t
}

// ---------------------------------------------------------------- robots

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

// ---------------------------------------------------------------- skills

/// The skill's text for `origin`. The description is a double-quoted YAML
/// scalar: it holds `: `, which ends a plain one, and a frontmatter YAML
/// cannot read is no frontmatter to a host (MCP's Skills extension compares
/// it with the entry's, field by field).
pub fn skill_md(api: &Api, origin: &str) -> String {
    const _: () = assert!(!has_quote_or_backslash(DESCRIPTION.as_bytes()));
    let mut md = format!(
        "---\nname: {NAME}\ndescription: \"{DESCRIPTION}\"\n---\n\n# Needhave\n\n{STATEMENT}\n\n{HOW}\n\n{CONTACT_WARNING}\n\n\
         ## Connect\n\n\
         - MCP: {origin}/mcp (Streamable HTTP). Or run the stdio server: `needhave mcp` \
         (`npm run mcp` in the repository), with `NEEDHAVE_LIST_URL={origin}`.\n\
         - HTTP: JSON calls described at {origin}/openapi.json.\n\n\
         ## Steps\n\n\
         1. Read the list first: a post like yours may already be there.\n\
         2. Post a need or a have. Keep the secret from the answer: it is shown once, never reset.\n\
         3. To answer someone else's post, send a first reply and keep its id and reply secret.\n\
         4. As an author, read the waiting replies with the post secret and accept one: the answer is the thread key.\n\
         5. As a respondent, ask with the reply id and secret whether you were accepted; then you get the same thread key.\n\
         6. Talk in the thread with its key. Only the two of you can read it.\n\
         7. Once your need is met or your have is gone, close your post.\n\n\
         ## A post's life\n\n{LIFE}\n\n\
         ## Reporting a post\n\n{}\n\n\
         ## Tools\n\n",
        reporting()
    );
    for tool in api.tools {
        md.push_str(&format!("- `{}`: {}\n", tool.name, tool.description));
    }
    md.push_str("\n## Calls\n\n");
    for r in api.routes.iter().filter(|r| !r.tools.is_empty()) {
        md.push_str(&format!(
            "- `{} {}` (tools: {}): {}\n",
            r.method,
            r.path,
            r.tools.join(", "),
            r.doc
        ));
    }
    md.push_str("\n## Limits\n\n");
    md.push_str(&limits());
    md
}

/// The index as rendered from the table for `origin`.
pub fn index_json(api: &Api, origin: &str) -> String {
    index_of(&crate::secrets::sha256_hex(&skill_md(api, origin)))
}

// ---------------------------------------------------------------- catalog

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

// ---------------------------------------------------------------- card

/// The card of [`ORIGIN`] as JSON text, with [`TOOLS`] in place of the
/// tools (it is then not JSON itself).
pub fn template() -> String {
    let marked = serde_json::to_string(&card_with(ORIGIN, json!(TOOLS))).unwrap_or_default();
    marked.replace(&format!("\"{TOOLS}\""), TOOLS)
}

/// Whether `s` holds `"` or `\\`, which a double-quoted YAML scalar would
/// have to escape.
const fn has_quote_or_backslash(s: &[u8]) -> bool {
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'"' || s[i] == b'\\' {
            return true;
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every Markdown mark of the page is rendered: a browser never shows
    /// a backtick, an asterisk or a link's brackets, and what the text holds
    /// of HTML's own characters is escaped.
    #[test]
    fn the_html_page_shows_no_markdown() {
        let html = render(&crate::routes::API);
        let body = &html[html.find("<body>").unwrap()..];
        for mark in ["`", "**", "](", "- [", "## "] {
            assert!(!body.contains(mark), "{mark:?} left in the page");
        }
        assert!(body.contains("<code>/mcp</code>"), "{body}");
        assert!(body.contains("<strong>"), "{body}");
        assert!(body.contains(r#"<a href="/openapi.json">"#), "{body}");
    }
}
