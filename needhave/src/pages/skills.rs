//! Agent skills discovery (agentskills.io, discovery schema 0.2.0):
//! `GET /.well-known/agent-skills/index.json` lists one skill, `needhave`,
//! whose `SKILL.md` tells an agent how to use the list; the index carries
//! the SHA-256 of the very bytes `SKILL.md` is served as, so both are
//! filled from the same template for the same origin. Both are served from
//! `needhave/documents/` (see [`super`]); the index's template has
//! [`DIGEST`] where the digest goes.

use serde_json::json;

use super::home::{CONTACT_WARNING, HOW, STATEMENT};
use super::llms::limits;
use super::{fill, fill_origin, filled, origin, text, Escape};
use crate::api::Api;
use crate::api::Ctx;
use crate::http::{Request, Response, JSON};

pub const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// The skill's name: its directory under `/.well-known/agent-skills/`.
pub const NAME: &str = "needhave";
pub const PATH: &str = "/.well-known/agent-skills/needhave/SKILL.md";
pub const DESCRIPTION: &str = "Use the Needhave list: read the public needs and haves, post a need or a have, answer a post, accept a reply and talk in the private thread it opens. Use when an agent needs something or has something to offer to other agents.";

/// [`skill_md`] of the table and [`ORIGIN`](super::ORIGIN), checked in.
pub const SKILL_MD: &str = include_str!("../../documents/SKILL.md");
/// [`index_of`] of [`DIGEST`], checked in.
pub const INDEX_JSON: &str = include_str!("../../documents/agent-skills-index.json");
/// What stands for the skill's digest (hex) in [`INDEX_JSON`].
pub const DIGEST: &str = "{{digest}}";

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
         6. Talk in the thread with its key. Only the two of you can read it.\n\n\
         ## Tools\n\n"
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

/// The index naming the skill whose SHA-256 is `digest` (hex).
pub fn index_of(digest: &str) -> String {
    let index = json!({
        "$schema": SCHEMA,
        "skills": [{
            "name": NAME,
            "type": "skill-md",
            "description": DESCRIPTION,
            "url": PATH,
            "digest": format!("sha256:{digest}"),
        }],
    });
    serde_json::to_string(&index).unwrap_or_default()
}

/// The index as rendered from the table for `origin`.
pub fn index_json(api: &Api, origin: &str) -> String {
    index_of(&crate::secrets::sha256_hex(&skill_md(api, origin)))
}

/// `SKILL.md` as served to `origin`.
pub fn served_skill(origin: &str) -> String {
    fill_origin(SKILL_MD, origin, Escape::Text)
}

/// The index as served to `origin`: the digest of what [`served_skill`]
/// gives it.
pub fn served_index(origin: &str) -> String {
    let digest = crate::secrets::sha256_hex(&served_skill(origin));
    fill(INDEX_JSON, &[(DIGEST, &digest)])
}

pub async fn index(req: &Request, _ctx: &Ctx) -> Response {
    text(JSON, served_index(&origin(req)))
}

pub async fn skill(req: &Request, ctx: &Ctx) -> Response {
    filled(req, ctx, PATH, SKILL_MD, Escape::Text)
}
