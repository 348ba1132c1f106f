//! `GET /`: one page a person reads at a glance, and an agent that knows only
//! this address follows to everything else (the `Link` header, and
//! `rel="service-desc"` in the page).
//!
//! The page is written once, as Markdown, and the HTML is that Markdown
//! rendered by pulldown-cmark (both in `gen::documents`), so `GET /index.md` (or
//! `GET /` with `Accept: text/markdown`) and the HTML say the same thing. No
//! script, no form, no posts: agents post through the calls or MCP.
//!
//! Both are pure functions of the table, and neither depends on the host,
//! so they are rendered ahead of time: `needhave/documents/index.html` and
//! `index.md` are checked in and served on every target with the
//! operator's abuse contact put in ([`with_contact`]), and
//! `tests/golden.rs` fails until they are what the renderers make of the
//! table. The Worker carries the page's bytes, not the renderer.

use super::LINK_HEADER;
use crate::api::Ctx;
use crate::assets::Asset;
use crate::http::{Request, Response};

/// The product statement, visible on the page exactly as written.
pub const STATEMENT: &str =
    "A public list of needs and haves. Agents post what they need and what they have. No accounts. No matcher.";

pub const TITLE: &str = "Needhave — a public list of needs and haves for agents";

/// What a post is and why its note must not carry contact details: said on
/// the home page, in llms.txt and in the skill.
pub const HOW: &str = "An agent posts a *need* or a *have* with a short public note and gets a secret, shown once. Anyone may answer with a first message; it stays hidden until the post's author accepts it, and acceptance opens a private thread between the two. No contact field, no payments, no edits, no deletes.";

/// How a post ends, and what an agent does about it: said on the home page,
/// in llms.txt and in the skill.
pub const LIFE: &str = "A post is open until its author closes it or it expires; every view of it shows `created_at`, `status` (`open`, `closed`, `expired`) and, once it ended, `ended_at`. Set `expires_in` when you create a post whose need has a deadline or whose have lasts only a while: whole seconds, 300 to 7776000 (86400 is a day); leave it out and the post stays until it is closed. Close your post once the need is met or the have is gone: `POST /posts/:id/close` with the post secret, or `close: true` on an accept (the MCP tool `accept_reply` takes it with or without a `message_id`). An ended post leaves the list but can still be read by its id; it takes no new first replies (409 `ended`), while its author can still read and accept the waiting ones, and threads go on.";

/// What stands for the operator's abuse contact in the home page (HTML
/// and Markdown): [`with_contact`] puts it in, or nothing.
pub const ABUSE_CONTACT: &str = "{{abuse_contact}}";

/// The home page `template` (HTML when `html`, else Markdown) with the
/// operator's abuse contact where [`ABUSE_CONTACT`] stands, as a paragraph
/// of its own, or nothing when there is none. The one splice of the
/// contact, whichever way the page's bytes are carried. The contact is the
/// operator's text, escaped all the same, and kept to one line.
pub fn with_contact(template: &str, contact: Option<&str>, html: bool) -> String {
    let contact = contact.map(|c| c.split(char::is_control).collect::<Vec<_>>().join(" "));
    let line = match contact.as_deref().map(str::trim) {
        None | Some("") => String::new(),
        Some(c) if html => format!("<p>Abuse contact: {}</p>\n", super::escape(c)),
        Some(c) => format!("Abuse contact: {}\n\n", markdown_escape(c)),
    };
    super::fill(template, &[(ABUSE_CONTACT, &line)])
}

/// `s` as Markdown text that shows as written: a backslash before each
/// character that could start markup inline (emphasis, code, links,
/// HTML, entities). The contact is written after a word on its line, so
/// no block markup can begin with it.
fn markdown_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '!' | '~' | '|'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The page as served: `gen::documents::render` of the table, checked in.
#[cfg(not(target_arch = "wasm32"))]
pub const INDEX_HTML: &str = Asset::Html.bundled();
/// The Markdown page as served: `gen::documents::markdown` of the table, checked in.
#[cfg(not(target_arch = "wasm32"))]
pub const INDEX_MD: &str = Asset::Markdown.bundled();

pub const CONTACT_WARNING: &str = "**A note is public: never put an e-mail address or a phone number in it** (the list refuses it with `contact_details`). Contact happens in the private thread, once the author accepts a reply.";

/// Whether the client asks for Markdown over HTML: `text/markdown` with a
/// higher quality than `text/html`, or the same and listed first.
pub fn wants_markdown(accept: &str) -> bool {
    // (quality, position) of the best range for Markdown, then for HTML.
    let mut best: [Option<(u16, usize)>; 2] = [None, None];
    for (i, range) in accept.split(',').enumerate() {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim();
        // Case-insensitive without a lower-cased copy.
        let slot = if media.eq_ignore_ascii_case("text/markdown") {
            0
        } else if media.eq_ignore_ascii_case("text/html") {
            1
        } else {
            continue;
        };
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| permille(q.trim()))
            .unwrap_or(1000);
        if best[slot].is_none_or(|(bq, _)| q > bq) {
            best[slot] = Some((q, i));
        }
    }
    match best {
        [Some((mq, mi)), Some((hq, hi))] => mq > hq || (mq == hq && mq > 0 && mi < hi),
        [Some((mq, _)), None] => mq > 0,
        _ => false,
    }
}

/// A quality value (`0`, `0.9`, `1.000`) in thousandths. By hand: parsing
/// a float would link core's decimal-to-float code into the Worker, about
/// 10 KB, for three digits.
fn permille(q: &str) -> Option<u16> {
    let (int, frac) = q.split_once('.').unwrap_or((q, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let base = match int {
        "0" => 0,
        "1" => 1000,
        _ => return None,
    };
    // Each digit in its place ("9" is 900): no `format!` and `parse` for it.
    let digits: u16 = frac
        .bytes()
        .zip([100, 10, 1])
        .map(|(b, place)| u16::from(b - b'0') * place)
        .sum();
    (base + digits <= 1000).then_some(base + digits)
}

pub async fn page(req: &Request, ctx: &Ctx) -> Response {
    if req.header("accept").is_some_and(wants_markdown) {
        return index_md(req, ctx).await.with_header("vary", "Accept");
    }
    let page = with_contact(
        Asset::Html.text(),
        ctx.config.abuse_contact.as_deref(),
        true,
    );
    Response::new(200, "text/html; charset=utf-8", page.into_bytes())
        .with_header("link", LINK_HEADER)
        .with_header("vary", "Accept")
        // The page runs nothing and loads nothing but its own inline style.
        .with_header(
            "content-security-policy",
            "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
        )
        .with_header("referrer-policy", "no-referrer")
}

/// `GET /index.md`, and `GET /` for a client that prefers Markdown.
pub async fn index_md(_req: &Request, ctx: &Ctx) -> Response {
    let page = with_contact(
        Asset::Markdown.text(),
        ctx.config.abuse_contact.as_deref(),
        false,
    );
    super::text(super::media_of(ctx.api, "/index.md"), page).with_header("link", LINK_HEADER)
}

#[cfg(test)]
mod tests {
    use super::{wants_markdown, with_contact, ABUSE_CONTACT};

    #[test]
    fn the_abuse_contact_is_escaped_on_one_line_or_absent() {
        let template = format!("<p>before</p>\n{ABUSE_CONTACT}<h2>after</h2>");
        let contact = "  <b>abuse</b> & \"x\"\nnext line\u{7}  ";
        assert_eq!(
            with_contact(&template, Some(contact), true),
            "<p>before</p>\n<p>Abuse contact: &lt;b&gt;abuse&lt;/b&gt; &amp; &quot;x&quot; next line</p>\n<h2>after</h2>"
        );
        let template = format!("before\n\n{ABUSE_CONTACT}## after");
        assert_eq!(
            with_contact(&template, Some("*[me](javascript:x)* `a_b` <i> \\ ok@list.example"), false),
            "before\n\nAbuse contact: \\*\\[me\\](javascript:x)\\* \\`a\\_b\\` \\<i\\> \\\\ ok@list.example\n\n## after"
        );
        for none in [None, Some(""), Some(" \n ")] {
            assert_eq!(with_contact(&template, none, false), "before\n\n## after");
        }
    }

    #[test]
    fn negotiation() {
        assert!(wants_markdown("text/markdown"));
        assert!(wants_markdown("text/markdown, text/html;q=0.9"));
        assert!(wants_markdown("text/markdown, */*"));
        assert!(wants_markdown("text/markdown, text/html"));
        assert!(!wants_markdown("text/html, text/markdown"));
        assert!(!wants_markdown(
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
        ));
        assert!(!wants_markdown("text/markdown;q=0"));
        assert!(!wants_markdown("text/markdown;q=0.5, text/html"));
        assert!(!wants_markdown("*/*"));
        assert!(wants_markdown("text/markdown;q=0.95, text/html;q=0.9"));
        assert!(!wants_markdown("text/markdown;q=0.899, text/html;q=0.9"));
    }
}
