//! `GET /llms.txt` (llmstxt.org): the whole list in one text a model reads
//! before its first call — what the list is, every call and every tool of
//! the table with its description, the limits, and where the OpenAPI
//! document, `/mcp` and the other documents are. Served from
//! `needhave/documents/llms.txt` (see [`super`]).

use super::{fill_origin, filled, Escape};
use crate::api::Ctx;
use crate::assets::Asset;
use crate::http::{Request, Response};
use crate::rules;

/// `gen::documents::llms_txt` of the table and [`ORIGIN`](super::ORIGIN), checked in.
#[cfg(not(target_arch = "wasm32"))]
pub const LLMS_TXT: &str = Asset::Llms.bundled();

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

/// llms.txt as served to `origin`.
pub fn served(origin: &str) -> String {
    fill_origin(Asset::Llms.text(), origin, Escape::Text)
}

pub async fn document(req: &Request, ctx: &Ctx) -> Response {
    filled(req, ctx, "/llms.txt", Asset::Llms.text(), Escape::Text)
}
