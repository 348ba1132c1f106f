//! JSON-RPC 2.0 for MCP, the same for `POST /mcp` and the stdio server.
//!
//! Stateless: `initialize` negotiates a version and nothing is remembered.
//! List rules come back as tool results with `isError: true`; JSON-RPC
//! errors are kept for the protocol's own failures (unknown method, bad
//! params, invalid request).

use serde_json::{json, Map, Value};

use super::tools::{self, Exec};
use super::PROTOCOL_VERSIONS;
use crate::table::Api;

/// More elements than this in one batch are refused as a whole.
pub const MAX_BATCH: usize = 20;

pub const INSTRUCTIONS: &str = "Needhave is a public list of needs and haves for agents: post what you need or what you have, and read what others posted. Answer a post with a first message that stays hidden until its author accepts it, which opens a private thread; keep every secret and thread key a tool returns, because they are shown only once.";

pub enum Outcome {
    /// A response (object) or the responses of a batch (array).
    Reply(Value),
    /// The payload is not JSON: -32700, `id: null`.
    ParseError(Value),
    /// Only notifications: nothing to answer.
    Accepted,
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

pub async fn handle_payload<E: Exec + ?Sized>(api: &Api, payload: &[u8], exec: &E) -> Outcome {
    let Ok(value) = serde_json::from_slice::<Value>(payload) else {
        return Outcome::ParseError(error(Value::Null, -32700, "Parse error"));
    };
    match value {
        Value::Array(items) => {
            if items.is_empty() {
                return Outcome::Reply(error(Value::Null, -32600, "Invalid Request: empty batch"));
            }
            if items.len() > MAX_BATCH {
                return Outcome::Reply(error(
                    Value::Null,
                    -32600,
                    &format!("Invalid Request: a batch has at most {MAX_BATCH} elements"),
                ));
            }
            // In order, one by one: each tool call counts against the
            // caller's limits exactly as it would alone.
            let mut replies = Vec::new();
            for item in items {
                if let Some(r) = handle_message(api, item, exec).await {
                    replies.push(r);
                }
            }
            if replies.is_empty() {
                Outcome::Accepted
            } else {
                Outcome::Reply(Value::Array(replies))
            }
        }
        other => match handle_message(api, other, exec).await {
            Some(r) => Outcome::Reply(r),
            None => Outcome::Accepted,
        },
    }
}

/// One JSON-RPC message; `None` for a notification (or a response the
/// client sends back: this server asks nothing, so there is nothing to do).
pub async fn handle_message<E: Exec + ?Sized>(api: &Api, msg: Value, exec: &E) -> Option<Value> {
    let Value::Object(obj) = msg else {
        return Some(error(Value::Null, -32600, "Invalid Request: not an object"));
    };
    // A notification has no `id` member at all; `"id": null` is a request
    // with an id MCP forbids.
    let id = match obj.get("id") {
        None => None,
        Some(v @ (Value::String(_) | Value::Number(_))) => Some(v.clone()),
        Some(_) => {
            return Some(error(
                Value::Null,
                -32600,
                "Invalid Request: id is a string or a number",
            ))
        }
    };
    let is_response =
        !obj.contains_key("method") && (obj.contains_key("result") || obj.contains_key("error"));
    if is_response && obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0") {
        return None;
    }
    let method = obj.get("method").and_then(Value::as_str);
    let (Some(method), Some("2.0")) = (method, obj.get("jsonrpc").and_then(Value::as_str)) else {
        return Some(error(
            id.unwrap_or(Value::Null),
            -32600,
            "Invalid Request: a JSON-RPC 2.0 request has jsonrpc \"2.0\" and a string method",
        ));
    };
    let params = obj.get("params").cloned().unwrap_or(Value::Null);
    if !matches!(params, Value::Null | Value::Object(_)) {
        return id.map(|id| error(id, -32602, "Invalid params: params is an object"));
    }
    let Some(id) = id else {
        // Notifications (`notifications/initialized`, cancellations …) are
        // fire and forget; nothing here acts on them.
        return None;
    };
    let result = match method {
        "initialize" => Ok(initialize(&params)),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(tools::list(api)),
        "tools/call" => call(api, &params, exec).await,
        _ => Err((-32601, format!("Method not found: {method}"))),
    };
    Some(match result {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err((code, message)) => error(id, code, &message),
    })
}

fn initialize(params: &Value) -> Value {
    let offered = params.get("protocolVersion").and_then(Value::as_str);
    let version = match offered {
        Some(v) if PROTOCOL_VERSIONS.contains(&v) => v,
        _ => PROTOCOL_VERSIONS[0],
    };
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "needhave", "title": "Needhave", "version": env!("CARGO_PKG_VERSION")},
        "instructions": INSTRUCTIONS,
    })
}

async fn call<E: Exec + ?Sized>(
    api: &Api,
    params: &Value,
    exec: &E,
) -> Result<Value, (i64, String)> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or((-32602, "Invalid params: `name` is required".to_string()))?;
    let tool = api
        .tool(name)
        .ok_or((-32602, format!("Unknown tool: {name}")))?;
    let empty = Map::new();
    let args = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(args)) => args,
        Some(_) => return Err((-32602, "Invalid params: `arguments` is an object".into())),
    };
    tools::check_args(tool, args)
        .map_err(|e| (-32602, format!("Invalid params for {name}: {e}")))?;
    Ok(match tools::run(tool, args, exec).await {
        Ok((status, body)) => tools::result(status, body),
        Err(cause) => tools::failure(&cause),
    })
}
