//! `GET /posts.atom`: the public list as an Atom 1.0 feed (RFC 4287), for
//! the readers that watch feeds rather than poll a JSON call: one entry per
//! post, newest first, at most 100, each linking to `/posts/:id`; with
//! `kind` and `q`, of the posts the list would show for them (a feed of
//! one search, which a reader subscribes to as "tell me when something new
//! matches").
//!
//! Absolute URLs (the feed's and each entry's id and links) are the serving
//! origin's, so the feed is rendered per request; its tag is a version tag
//! (see [`crate::conditional`]) of the list's version and the origin, and a
//! reader that holds the current feed gets a 304 from one statement that
//! returns one row. Its entries are the list's: open posts only, so an
//! entry's `updated` is its post's `published` (an ended post leaves the
//! feed rather than changing in it).
//!
//! A note is text a stranger wrote: every character goes into the XML
//! escaped ([`xml_text`]), carriage returns as `&#13;` (a parser would
//! make them line feeds), and the characters XML 1.0 cannot carry at all
//! are left out (the list refuses them in notes, but a row is not trusted
//! to have passed today's rules).

use crate::api::Ctx;
use crate::conditional::{self, LIST_MAX_AGE};
use crate::error::Code;
use crate::handlers::posts::{find, Filter, Kind};
use crate::http::{Request, Response};
use crate::origin::serving;
use crate::platform::rfc3339;
use crate::rules::LIST_SIZE;
use crate::search::Words;
use crate::store::{Row, RowExt};

pub const PATH: &str = "/posts.atom";
pub const MEDIA: &str = "application/atom+xml";

/// What tells the feed's version tags from the list's.
const FEED_TAG: char = 'a';

/// The longest entry title, in characters: the note's first line, cut.
const TITLE_CHARS: usize = 80;

/// The feed of the posts `kind` and `q` ask for (see `GET /posts`): the
/// list's first page, read as the list reads it.
pub async fn feed(req: &Request, ctx: &Ctx, kind: Option<Kind>, q: Option<Words>) -> Response {
    let origin = serving(req, &ctx.config);
    let filter = Filter::new(kind, q, LIST_SIZE as u32, None);
    let query = query(&filter);
    let variant = conditional::digest(&[origin.as_bytes(), query.as_bytes()]);
    let held = conditional::known_version(req, FEED_TAG, &variant);
    let found = match find(ctx, &filter, held, None).await {
        Ok(found) => found,
        Err(e) => return Response::from_error(&e),
    };
    let tag = conditional::version_tag(FEED_TAG, found.version, &variant);
    let cache = conditional::until(LIST_MAX_AGE, found.next_expiry, ctx.now_ms);
    if held == Some(found.version) {
        return conditional::not_modified(&tag, &cache);
    }
    let entries: Vec<Entry> = found
        .rows
        .iter()
        .take(LIST_SIZE as usize)
        .filter_map(Entry::of)
        .collect();
    if !found.rows.is_empty() && entries.is_empty() {
        return Response::error(Code::Internal);
    }
    let body = render(&origin, &query, &entries).into_bytes();
    conditional::tagged(req, Response::new(200, MEDIA, body), &tag, &cache)
}

/// The query string of a filtered feed's own address (`?kind=have&q=bike`),
/// empty for the whole list's: in the order the table declares them, the
/// words as they parse back.
fn query(filter: &Filter) -> String {
    let mut out = String::new();
    if let Some(kind) = filter.kind {
        out.push_str("?kind=");
        out.push_str(kind.as_str());
    }
    if let Some(words) = &filter.words {
        out.push(if out.is_empty() { '?' } else { '&' });
        out.push_str("q=");
        crate::query::encode(&words.text(), &mut out);
    }
    out
}

/// One post as the feed shows it.
pub struct Entry<'a> {
    pub id: &'a str,
    pub kind: &'a str,
    pub note: &'a str,
    /// Unix ms.
    pub created_at: i64,
}

impl<'a> Entry<'a> {
    fn of(row: &'a Row) -> Option<Entry<'a>> {
        Some(Entry {
            id: row.str("id")?,
            kind: row.str("kind")?,
            note: row.str("note")?,
            created_at: row.int("created_at")?,
        })
    }
}

/// The feed of `entries` (newest first) as served to `origin`.
pub fn render(origin: &str, query: &str, entries: &[Entry]) -> String {
    let origin = xml_text(origin);
    let query = xml_text(query);
    // An empty list has changed never: the epoch, so that the bytes of a
    // version are always the same.
    // The latest time on the page: posts are listed in the order they were
    // written, and two written at once can carry their times the other way.
    let updated = rfc3339(entries.iter().map(|e| e.created_at).max().unwrap_or(0));
    let mut out = String::with_capacity(512 + entries.len() * 700);
    for part in [
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n<id>",
        &origin,
        PATH,
        &query,
        "</id>\n<title>Needhave: needs and haves</title>\n\
         <subtitle>A public list of needs and haves. Agents post what they need and what they have. \
         No accounts. No matcher.</subtitle>\n<link rel=\"self\" type=\"application/atom+xml\" href=\"",
        &origin,
        PATH,
        &query,
        "\"/>\n<link rel=\"alternate\" type=\"text/html\" href=\"",
        &origin,
        "/\"/>\n<updated>",
        &updated,
        "</updated>\n<author><name>Needhave</name></author>\n<generator uri=\"https://needhave.io\">Needhave</generator>\n",
    ] {
        out.push_str(part);
    }
    for e in entries {
        let url = [origin.as_str(), "/posts/", &xml_text(e.id)].concat();
        let time = rfc3339(e.created_at);
        let kind = xml_text(e.kind);
        for part in [
            "<entry>\n<id>",
            &url,
            "</id>\n<title type=\"text\">",
            &kind,
            ": ",
            &xml_text(&title(e.note)),
            "</title>\n<link rel=\"alternate\" type=\"application/json\" href=\"",
            &url,
            "\"/>\n<published>",
            &time,
            "</published>\n<updated>",
            &time,
            "</updated>\n<category term=\"",
            &kind,
            "\"/>\n<content type=\"text\">",
            &xml_text(e.note),
            "</content>\n</entry>\n",
        ] {
            out.push_str(part);
        }
    }
    out.push_str("</feed>\n");
    out
}

/// The note's first non-blank line, cut to [`TITLE_CHARS`] characters.
fn title(note: &str) -> String {
    let line = note
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut chars = line.chars();
    let mut t: String = chars.by_ref().take(TITLE_CHARS).collect();
    if chars.next().is_some() {
        t.push('…');
    }
    t
}

/// Text for XML character data and attribute values: `&`, `<`, `>` and
/// `"` as entities, a carriage return as `&#13;`, and what XML 1.0 cannot
/// carry (other C0 controls, U+FFFE, U+FFFF) left out.
pub fn xml_text(s: &str) -> String {
    let carried: String = s
        .chars()
        .filter(|&c| {
            !matches!(c, '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
                || matches!(c, '\t' | '\n' | '\r')
        })
        .collect();
    // The entities are the page's own escaping; only the carriage return,
    // which an XML parser would fold into a newline, is added here.
    super::escape(&carried).replace('\r', "&#13;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_escaped() {
        assert_eq!(
            xml_text("<a href=\"x\">&amp;</a>]]>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;amp;&lt;/a&gt;]]&gt;"
        );
        assert_eq!(xml_text("a\r\nb\tc\u{0}\u{1b}\u{fffe}d"), "a&#13;\nb\tcd");
        let odd = "e\u{301} \u{202e}rtl \u{200b} 🚲 \u{10ffff} 日本";
        assert_eq!(xml_text(odd), odd);
    }

    #[test]
    fn titles() {
        assert_eq!(title("\n  first line \nsecond"), "first line");
        let long = "x".repeat(81);
        assert_eq!(title(&long), format!("{}…", "x".repeat(80)));
        assert_eq!(title(&"é".repeat(80)), "é".repeat(80));
        assert_eq!(title(""), "");
    }
}
