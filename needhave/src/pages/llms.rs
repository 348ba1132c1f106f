//! `GET /llms.txt` (llmstxt.org): the whole list in one text a model reads
//! before its first call — what the list is, every call and every tool of
//! the table with its description, the limits, and where the OpenAPI
//! document, `/mcp` and the other documents are. Served from
//! `needhave/documents/llms.txt` (see [`super`]).

use super::home::{CONTACT_WARNING, HOW, STATEMENT};
use super::{fill_origin, filled, Escape, Link, LINKS};
use crate::api::Api;
use crate::api::Ctx;
use crate::http::{Request, Response};
use crate::rules;

/// [`llms_txt`] of the table and [`ORIGIN`](super::ORIGIN), checked in.
pub const LLMS_TXT: &str = include_str!("../../documents/llms.txt");

/// The limits, from the constants the rules enforce.
pub fn limits() -> String {
    format!(
        "- A note or a message holds 1 to {max} characters once trimmed, and no control characters.\n\
         - A note already on the list (ignoring case, spacing and punctuation) is refused: `duplicate_note`.\n\
         - A note holding an e-mail address or a phone number is refused: `contact_details`.\n\
         - One address may create {creates} posts, send {replies} first replies and write {later} thread messages an hour: `rate_limited`.\n\
         - A post holds at most {waiting} waiting first replies: `too_many`.\n\
         - The public list shows the {list} newest posts; a thread shows the first message and the {thread} latest ones.\n\
         - Secrets and thread keys are shown once and never reset. Reading and posting are free.\n",
        max = rules::MAX_CHARS,
        creates = rules::CREATES_PER_HOUR,
        replies = rules::REPLIES_PER_HOUR,
        later = rules::THREAD_MESSAGES_PER_HOUR,
        waiting = rules::WAITING_CAP,
        list = rules::LIST_SIZE,
        thread = rules::THREAD_SIZE,
    )
}

pub fn llms_txt(api: &Api, origin: &str) -> String {
    let mut t = format!(
        "# Needhave\n\n> {STATEMENT}\n\n{HOW}\n\n{CONTACT_WARNING}\n\n\
         Every call takes and answers JSON; every error is `{{\"error\": CODE}}`. \
         The calls are described in OpenAPI 3 at {origin}/openapi.json, and the same \
         actions are MCP tools at {origin}/mcp (Streamable HTTP, stateless, JSON responses).\n\n\
         ## Calls\n\n"
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

/// llms.txt as served to `origin`.
pub fn served(origin: &str) -> String {
    fill_origin(LLMS_TXT, origin, Escape::Text)
}

pub async fn document(req: &Request, ctx: &Ctx) -> Response {
    filled(req, ctx, "/llms.txt", LLMS_TXT, Escape::Text)
}
