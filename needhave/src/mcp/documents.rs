//! The static parts of MCP answers, said once as JSON text.
//!
//! Everything but the echoed version in `initialize`, `server/discover`,
//! `tools/list` and the server's identity is known when the server is
//! built. Built per request as `json!` trees, each key was an insert and an
//! allocation in code, here they are one
//! checked-in document, `needhave/documents/mcp.min.json`, generated natively from
//! the table (`generate.rs`) and held to it by `tests/golden.rs`, parsed once
//! on every target. Answers clone from it, so what clients read is the
//! same, byte for byte.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::assets::Asset;

/// The results of the methods whose answer never changes, under the
/// method's name (`ping`, `server/discover`, the empty lists), and the
/// parts of the others: `tools/list`'s result without the tools'
/// descriptions (`tools::list` adds them), `initialize`'s without
/// `protocolVersion`, and `serverInfo`, as `generate` writes them. The
/// Worker reads it from its assets (see `crate::assets`).
#[cfg(not(target_arch = "wasm32"))]
pub const DOCUMENT: &str = Asset::Mcp.bundled();

/// The part of the document named `key`, or `null` (never, while the
/// golden test holds and, in the Worker, once the document is loaded).
pub fn get(key: &str) -> &'static Value {
    static PARSED: OnceLock<Map<String, Value>> = OnceLock::new();
    static NULL: Value = Value::Null;
    // Parsed once it is there: the Worker holds it only once it has
    // fetched it, and an empty parse must not stay.
    if PARSED.get().is_none() && !Asset::Mcp.is_loaded() {
        return &NULL;
    }
    // From bytes, like every other JSON the list reads: `from_str` would
    // link a second copy of serde_json's parser into the Worker. As a
    // `Value`, since a typed read links serde_json's error messages (see
    // `crate::json::json_body`).
    let parsed =
        PARSED.get_or_init(
            || match serde_json::from_slice(Asset::Mcp.text().as_bytes()) {
                Ok(Value::Object(m)) => m,
                _ => Map::new(),
            },
        );
    parsed.get(key).unwrap_or(&NULL)
}
