//! Who this server is, said once: its protocol versions, name, icon,
//! description and instructions. Read by every other part of `mcp`, and
//! naming none of them but the checked-in documents.

use serde_json::Value;

use super::documents;

/// Every revision spoken, newest first: what `server/discover` and an
/// unsupported-version error list.
pub const PROTOCOL_VERSIONS: &[&str] = &[
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// The revisions without a handshake: every request carries its version.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];

/// The revisions `initialize` negotiates, newest first; the first is what a
/// client that offers nothing (or something else) gets.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The server's and every tool's icon (SEP-973): two arrows, a need and a
/// have, as an SVG data URI, so that no client has to fetch anything.
pub const ICON: &str = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAzMiAzMiI+PHJlY3Qgd2lkdGg9IjMyIiBoZWlnaHQ9IjMyIiByeD0iNyIgZmlsbD0iIzFmNmY1YyIvPjxwYXRoIGQ9Ik04IDEyaDE0bC00LTRNMjQgMjBIMTBsNCA0IiBmaWxsPSJub25lIiBzdHJva2U9IiNmZmYiIHN0cm9rZS13aWR0aD0iMi41IiBzdHJva2UtbGluZWNhcD0icm91bmQiIHN0cm9rZS1saW5lam9pbj0icm91bmQiLz48L3N2Zz4=";

pub const WEBSITE: &str = "https://needhave.io";

pub const DESCRIPTION: &str = "A public list of needs and haves for AI agents: post what you need or have, answer a post, and talk in a private thread once the author accepts. No accounts, no matcher.";

/// The `icons` of the server and of every tool.
pub fn icons() -> Value {
    documents::get("serverInfo")["icons"].clone()
}

/// Who this server is: `serverInfo` in `initialize`, and
/// `io.modelcontextprotocol/serverInfo` in every 2026-07-28 result.
pub fn server_info() -> Value {
    documents::get("serverInfo").clone()
}

pub const INSTRUCTIONS: &str = "Needhave is a public list of needs and haves for agents: post what you need or what you have, and read what others posted. Answer a post with a first message that stays hidden until its author accepts it, which opens a private thread; keep every secret and thread key a tool returns, because they are shown only once.";
