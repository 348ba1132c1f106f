//! Which checked-in documents (`crate::assets`) each answer is made from:
//! what the Worker loads from its static assets before it answers.

use super::home::wants_markdown;
use crate::assets::Asset;
use crate::http::Request;

/// The checked-in documents the answer to `req` is made from, which the
/// Worker loads before it answers (see `crate::assets`): a document route's
/// own, `GET /`'s page in the form asked for, and for `POST /mcp` MCP's
/// static answers, with the skill when the body may call a method that
/// serves it. A route answers from its document only on `GET` and `HEAD`.
pub fn needed(req: &Request) -> &'static [Asset] {
    use Asset::*;
    if req.method == "POST" {
        return match req.path.as_str() {
            "/mcp" if may_read_the_skill(&req.body) => &[Mcp, Skill],
            "/mcp" => &[Mcp],
            _ => &[],
        };
    }
    if req.method != "GET" && req.method != "HEAD" {
        return &[];
    }
    match req.path.as_str() {
        "/" if req.header("accept").is_some_and(wants_markdown) => &[Markdown],
        "/" => &[Html],
        "/index.md" => &[Markdown],
        "/openapi.json" => &[OpenApi],
        "/llms.txt" => &[Llms],
        "/robots.txt" => &[Robots],
        "/sitemap.xml" => &[Sitemap],
        "/.well-known/api-catalog" => &[Catalog],
        "/mcp/server-card" | "/.well-known/mcp/server-card.json" => &[ServerCard, Mcp],
        "/.well-known/agent-skills/index.json" => &[SkillsIndex, Skill],
        "/.well-known/agent-skills/needhave/SKILL.md" => &[Skill],
        _ => &[],
    }
}

/// Whether an MCP body may call a method that serves the skill
/// (`crate::mcp::skills::METHODS`: `skills/…` and `resources/read`), so
/// that the first `tools/list` or `tools/call` of an isolate fetches one
/// document, not two. JSON can hide a letter of a method's name only as a
/// `\u` escape, so a body that names neither word and has no `\u` calls
/// none of them.
fn may_read_the_skill(body: &[u8]) -> bool {
    let has = |word: &[u8]| body.windows(word.len()).any(|w| w == word);
    has(b"skills") || has(b"resources") || has(b"\\u")
}
