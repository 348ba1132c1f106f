//! MCP's Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): the
//! list's one skill, `needhave`, served over MCP as well as at
//! `/.well-known/agent-skills/needhave/SKILL.md`.
//!
//! The skill is one file, its `SKILL.md`, exposed as the resource
//! [`URI`]: `resources/list` names it, `resources/read` returns it, and
//! `skills/list` / `skills/get` give its entry: the frontmatter as JSON and
//! the SHA-256 digest and size of the very bytes `resources/read` returns.
//! Those bytes are the ones the well-known path serves to the same origin
//! (the host of `POST /mcp`, or the list `needhave mcp` is a client of), so
//! a host that fetched the skill either way verifies it against the same
//! digest. The extension is declared with no settings (`{}`): with a single
//! file there is no directory to read, so `resources/directory/read` is not
//! offered.

use serde_json::{Map, Value};

use super::era::RpcError;
use crate::pages::skills::{served_skill, DESCRIPTION, NAME};

/// The extension's identifier, the key under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The skill's `SKILL.md` as a resource: `skill://<skill-path>/SKILL.md`,
/// the path being the skill's name.
pub const URI: &str = "skill://needhave/SKILL.md";

pub const MIME_TYPE: &str = "text/markdown";

/// The methods [`answer`] answers: the extension's, and the resource read,
/// whose answers depend on the serving origin.
pub const METHODS: &[&str] = &["skills/list", "skills/get", "resources/read"];

/// The answer of one of [`METHODS`] to a client of `origin`.
pub fn answer(method: &str, params: &Map<String, Value>, origin: &str) -> Result<Value, RpcError> {
    let uri = || params.get("uri").and_then(Value::as_str);
    match method {
        "skills/list" => Ok(object(vec![(
            "skills",
            Value::Array(vec![entry(&served_skill(origin))]),
        )])),
        "skills/get" => match uri() {
            Some(URI) => Ok(object(vec![("skill", entry(&served_skill(origin)))])),
            Some(other) => Err(unknown("No skill is served at ", other)),
            None => Err(RpcError::new(-32602, "Invalid params: `uri` is required")),
        },
        "resources/read" => match uri() {
            Some(URI) => Ok(object(vec![(
                "contents",
                Value::Array(vec![object(vec![
                    ("uri", URI.into()),
                    ("mimeType", MIME_TYPE.into()),
                    ("text", served_skill(origin).into()),
                ])]),
            )])),
            Some(other) => Err(unknown("Resource not found: ", other)),
            None => Err(RpcError::new(-32602, "Invalid params: `uri` is required")),
        },
        _ => Err(super::era::method_not_found(method)),
    }
}

/// -32602 for a URI nothing is served at, naming it in `data.uri`.
fn unknown(message: &str, uri: &str) -> RpcError {
    let mut e = RpcError::new(-32602, [message, uri].concat());
    e.data = Some(object(vec![("uri", uri.into())]));
    e
}

/// The skill's entry, for `text` as served: its frontmatter exactly as
/// `SKILL.md` writes it, and its one file with digest and size.
fn entry(text: &str) -> Value {
    let digest = ["sha256:", &crate::secrets::sha256_hex(text)].concat();
    object(vec![
        ("uri", URI.into()),
        (
            "frontmatter",
            object(vec![
                ("name", NAME.into()),
                ("description", DESCRIPTION.into()),
            ]),
        ),
        (
            "resources",
            Value::Array(vec![object(vec![
                ("uri", URI.into()),
                ("digest", digest.into()),
                ("size", text.len().into()),
            ])]),
        ),
    ])
}

/// A JSON object of `members`, built with serde_json's own `Map`. Not
/// `json!`: it turns every value into a `Value` through
/// `to_value(..).unwrap()`, whose failure arm links serde_json's error
/// `Debug` (and `str`'s debug escaping) into the Worker for values that are
/// `Value`s, strings and a length already: 1.2 KB gzip of the .wasm
/// (bench/worker-size.sh).
fn object(members: Vec<(&str, Value)>) -> Value {
    let mut map = Map::new();
    for (name, value) in members {
        map.insert(name.to_string(), value);
    }
    Value::Object(map)
}
