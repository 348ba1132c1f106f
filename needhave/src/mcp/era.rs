//! The two eras of MCP, as envelopes around one JSON-RPC core.
//!
//! What a tool is and does is the same in every revision; what differs is
//! the envelope, and all of it is here: how a request says which revision
//! it speaks (an `initialize` handshake and, over HTTP, a version header for
//! 2024-11-05 … 2025-11-25; `_meta` on every request, mirrored in headers,
//! for 2026-07-28), which methods exist (`initialize` and `ping` only in the
//! first, `server/discover` only in the second), how a result is wrapped
//! (`resultType`, the server's identity in `_meta`, caching hints) and which
//! HTTP status an error travels with. `server.rs` asks this module and
//! never looks at the era itself, so no tool code knows about eras.
//!
//! A request is 2026-07-28 when it says so: its `_meta` or its
//! `MCP-Protocol-Version` header names that revision, or it calls a method
//! only that revision has. Anything else is served as 2025, exactly as
//! before, so that older clients see no change.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::identity::{server_info, MODERN_VERSIONS, PROTOCOL_VERSIONS};

// Macros, so that the error messages can name them with `concat!`: a
// message known at compile time costs no formatting code.
macro_rules! meta_version {
    () => {
        "io.modelcontextprotocol/protocolVersion"
    };
}
macro_rules! meta_capabilities {
    () => {
        "io.modelcontextprotocol/clientCapabilities"
    };
}
const META_VERSION: &str = meta_version!();
const META_CAPABILITIES: &str = meta_capabilities!();
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// How long a client may keep `server/discover` and the lists: all are
/// compiled into the server, the same for everyone, and change only with a
/// new release.
pub const TTL_MS: u64 = 3_600_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Era {
    /// 2024-11-05 … 2025-11-25: `initialize`, then plain requests.
    Legacy,
    /// 2026-07-28: stateless, every request carries its version in `_meta`.
    Modern,
}

/// The request headers MCP mirrors from the body (Streamable HTTP only).
#[derive(Default, Clone, Copy)]
pub struct Headers<'a> {
    pub protocol_version: Option<&'a str>,
    pub method: Option<&'a str>,
    pub name: Option<&'a str>,
    /// One of these headers sent more than once (its name): refused
    /// unread, since which line to believe would be a guess the client
    /// did not make.
    pub repeated: Option<&'static str>,
}

/// Where a message came from: over HTTP its headers are checked against
/// its body; stdio has none.
#[derive(Clone, Copy)]
pub enum Transport<'a> {
    Http(Headers<'a>),
    Stdio,
}

impl Transport<'_> {
    fn headers(&self) -> Option<&Headers<'_>> {
        match self {
            Transport::Http(h) => Some(h),
            Transport::Stdio => None,
        }
    }
}

/// A JSON-RPC error, with the HTTP status it travels with.
#[derive(Debug)]
pub struct RpcError {
    pub status: u16,
    pub code: i64,
    pub message: Cow<'static, str>,
    pub data: Option<Value>,
}

impl RpcError {
    /// An error of the JSON-RPC core: HTTP 200 in both eras, so that
    /// clients keep the code.
    pub fn new(code: i64, message: impl Into<Cow<'static, str>>) -> Self {
        RpcError {
            status: 200,
            code,
            message: message.into(),
            data: None,
        }
    }

    fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// The JSON-RPC error object (`error` of a response).
    pub fn to_value(&self) -> Value {
        let mut e = Map::new();
        e.insert("code".into(), self.code.into());
        e.insert("message".into(), self.message.as_ref().into());
        if let Some(d) = &self.data {
            e.insert("data".into(), d.clone());
        }
        Value::Object(e)
    }
}

/// -32601: no such method (in the era asked, or at all).
pub fn method_not_found(method: &str) -> RpcError {
    RpcError::new(-32601, ["Method not found: ", method].concat())
}

/// A version this server does not speak: 400, -32022, with every version it
/// does speak (2025 ones included), so a client can choose one and retry,
/// or fall back to `initialize`.
pub fn unsupported(requested: &str) -> RpcError {
    let mut e = RpcError::new(-32022, "Unsupported protocol version").with_status(400);
    let mut data = Map::new();
    data.insert("requested".into(), requested.into());
    // PROTOCOL_VERSIONS, as `server/discover` lists them.
    let supported = super::documents::get("server/discover")["supportedVersions"].clone();
    data.insert("supported".into(), supported);
    e.data = Some(Value::Object(data));
    e
}

/// -32020, a header missing or malformed.
fn header_error(message: &'static str) -> RpcError {
    RpcError::new(-32020, message).with_status(400)
}

/// -32020, a mirrored header whose value is not the body's.
fn header_mismatch(header: &str, value: &str, body: &str) -> RpcError {
    let message = [
        "Header mismatch: ",
        header,
        " header value '",
        value,
        "' does not match body value '",
        body,
        "'",
    ];
    RpcError::new(-32020, message.concat()).with_status(400)
}

/// The `MCP-Protocol-Version` header on its own, for what `read` never
/// sees (batches, notifications, a body without a version in `_meta`): a
/// version nobody here speaks is refused. When the body names a version,
/// `read` compares the two first, since a mismatch is the finding then.
pub fn check_header(transport: &Transport, body: &Value) -> Result<(), RpcError> {
    if let Some(name) = transport.headers().and_then(|h| h.repeated) {
        return Err(repeated(transport, body, name));
    }
    if body["params"]["_meta"][META_VERSION].is_string() {
        return Ok(());
    }
    match transport.headers().and_then(|h| h.protocol_version) {
        Some(v) if !PROTOCOL_VERSIONS.contains(&v.trim()) => Err(unsupported(v.trim())),
        _ => Ok(()),
    }
}

/// A mirrored header sent twice: 400, in the shape of the request's era
/// (2026-07-28's header error, -32020; else an invalid request, -32600).
fn repeated(transport: &Transport, body: &Value, name: &str) -> RpcError {
    let version = body["params"]["_meta"][META_VERSION]
        .as_str()
        .or(transport.headers().and_then(|h| h.protocol_version));
    let modern = match version {
        Some(v) => is_modern(v.trim()),
        None => body["method"]
            .as_str()
            .is_some_and(|m| MODERN_ONLY.contains(&m)),
    };
    let (code, lead) = if modern {
        (-32020, "Header mismatch: the ")
    } else {
        (-32600, "Invalid Request: the ")
    };
    let message = [lead, name, " header is sent more than once"].concat();
    RpcError::new(code, message).with_status(400)
}

fn is_modern(version: &str) -> bool {
    MODERN_VERSIONS.contains(&version)
}

/// Methods that exist only in 2026-07-28: a request for one is that era's
/// even without `_meta` (and then refused for lacking it).
const MODERN_ONLY: &[&str] = &["server/discover", "subscriptions/listen"];

/// Which era a request is, and whether its envelope is whole: for
/// 2026-07-28 its `_meta` names the version and the client's capabilities,
/// and over HTTP the mirrored headers match the body (-32020 otherwise).
/// `in_batch`: batches are a 2025-03-26 feature; a 2026-07-28 request comes
/// alone.
pub fn read(
    transport: &Transport,
    method: &str,
    params: &Map<String, Value>,
    in_batch: bool,
) -> Result<Era, RpcError> {
    let meta = params.get("_meta").and_then(Value::as_object);
    let meta_version = match meta.and_then(|m| m.get(META_VERSION)) {
        None => None,
        Some(Value::String(v)) => Some(v.as_str()),
        Some(_) => {
            return Err(RpcError::new(
                -32602,
                concat!(
                    "Invalid params: _meta[\"",
                    meta_version!(),
                    "\"] is a string"
                ),
            )
            .with_status(400))
        }
    };
    let headers = transport.headers();
    let header_version = headers.and_then(|h| h.protocol_version).map(str::trim);
    if let (Some(h), Some(m)) = (header_version, meta_version) {
        if h != m {
            return Err(header_mismatch("MCP-Protocol-Version", h, m));
        }
    }
    if let Some(v) = meta_version.filter(|v| !PROTOCOL_VERSIONS.contains(v)) {
        return Err(unsupported(v));
    }
    let modern = match meta_version.or(header_version) {
        Some(v) => is_modern(v),
        None => MODERN_ONLY.contains(&method),
    };
    if !modern {
        return Ok(Era::Legacy);
    }
    if in_batch {
        return Err(RpcError::new(
            -32600,
            "Invalid Request: a 2026-07-28 request is sent alone, not in a batch",
        ));
    }
    let has_capabilities = meta
        .and_then(|m| m.get(META_CAPABILITIES))
        .is_some_and(Value::is_object);
    if meta_version.is_none() || !has_capabilities {
        return Err(RpcError::new(
            -32602,
            concat!(
                "Invalid params: a 2026-07-28 request carries params._meta with \"",
                meta_version!(),
                "\" and \"",
                meta_capabilities!(),
                "\" (an object)"
            ),
        )
        .with_status(400));
    }
    if let Some(h) = headers {
        check_mirrored(h, method, params)?;
    }
    Ok(Era::Modern)
}

/// Streamable HTTP 2026-07-28: `MCP-Protocol-Version` (already compared),
/// `Mcp-Method` on every request and `Mcp-Name` on `tools/call` are
/// required and equal to the body's values.
fn check_mirrored(h: &Headers, method: &str, params: &Map<String, Value>) -> Result<(), RpcError> {
    if h.protocol_version.is_none() {
        return Err(header_error(
            "Header mismatch: the MCP-Protocol-Version header is required",
        ));
    }
    match h.method {
        None => {
            return Err(header_error(
                "Header mismatch: the Mcp-Method header is required",
            ))
        }
        Some(m) if m.trim() != method => {
            return Err(header_mismatch("Mcp-Method", m.trim(), method))
        }
        Some(_) => {}
    }
    if method == "tools/call" {
        let body = params.get("name").and_then(Value::as_str);
        let Some(raw) = h.name else {
            return Err(header_error(
                "Header mismatch: the Mcp-Name header is required",
            ));
        };
        let Some(header) = decode_header_value(raw) else {
            return Err(header_error(
                "Header mismatch: the Mcp-Name header is not a valid value",
            ));
        };
        if Some(header.as_str()) != body {
            return Err(header_mismatch("Mcp-Name", &header, body.unwrap_or("")));
        }
    }
    Ok(())
}

/// A mirrored header's value: as written, or decoded from the
/// `=?base64?…?=` sentinel clients use for values that are not plain ASCII.
/// `None` when the sentinel does not hold Base64 of UTF-8.
fn decode_header_value(raw: &str) -> Option<String> {
    let Some(b64) = raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    else {
        return Some(raw.trim().to_string());
    };
    String::from_utf8(base64_decode(b64)?).ok()
}

/// Standard Base64 (padding optional). Twenty lines rather than a crate:
/// only `Mcp-Name` needs it, and the Worker pays for every dependency.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

impl Era {
    /// Whether this era has the method. `tools/list` and `tools/call` are
    /// in both; the handshake and `ping` were removed by 2026-07-28.
    pub fn speaks(self, method: &str) -> bool {
        match self {
            // Resources and the Skills extension's methods in both: the
            // skill is served to every client that declares resources.
            Era::Legacy => matches!(
                method,
                "initialize"
                    | "ping"
                    | "tools/list"
                    | "tools/call"
                    | "resources/list"
                    | "resources/read"
                    | "resources/templates/list"
                    | "skills/list"
                    | "skills/get"
            ),
            // The prompt list too, empty: a client (and the conformance
            // suite) may ask any list for its caching hints.
            Era::Modern => matches!(
                method,
                "server/discover"
                    | "tools/list"
                    | "tools/call"
                    | "prompts/list"
                    | "resources/list"
                    | "resources/read"
                    | "resources/templates/list"
                    | "skills/list"
                    | "skills/get"
            ),
        }
    }

    /// The unknown-method error: HTTP 200 in 2025 (clients keep the code),
    /// 404 in 2026-07-28, as its transport asks.
    pub fn unknown_method(self, method: &str) -> RpcError {
        let e = method_not_found(method);
        match self {
            Era::Legacy => e,
            Era::Modern => e.with_status(404),
        }
    }

    /// Wraps a result: unchanged for 2025; for 2026-07-28, `resultType`,
    /// the server's identity in `_meta`, and the caching hints on the
    /// results that take them.
    pub fn wrap(self, method: &str, mut result: Value) -> Value {
        if self == Era::Legacy {
            return result;
        }
        if let Value::Object(m) = &mut result {
            m.insert("resultType".into(), "complete".into());
            let meta = m.entry("_meta").or_insert_with(|| Map::new().into());
            meta[META_SERVER_INFO] = server_info();
            // Every cacheable result: the lists, discovery, and the reads
            // of the skill (its entry and its file).
            if method == "server/discover"
                || method.ends_with("/list")
                || method == "skills/get"
                || method == "resources/read"
            {
                m.insert("ttlMs".into(), TTL_MS.into());
                m.insert("cacheScope".into(), "public".into());
            }
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_sentinel_decodes() {
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(
            decode_header_value("list_posts").as_deref(),
            Some("list_posts")
        );
        assert_eq!(decode_header_value("=?base64?!!?="), None);
    }
}
