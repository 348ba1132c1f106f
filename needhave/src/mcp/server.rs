//! JSON-RPC 2.0 for MCP, the same for `POST /mcp` and the stdio server, in
//! both eras.
//!
//! Stateless: `initialize` negotiates a version and nothing is remembered;
//! a 2026-07-28 request carries everything it needs. This is the core: it
//! reads a message, asks `era.rs` which revision it speaks and whether its
//! envelope is whole, runs the method, and has `era.rs` wrap the result.
//! List rules and arguments a tool does not take come back as tool results
//! with `isError: true`; JSON-RPC errors are kept for the protocol's own
//! failures (unknown method, unknown tool, malformed request).

use serde_json::{Map, Value};

use super::batch::{self, MAX_BATCH, MAX_BATCH_ANSWER, NOT_RUN};
use super::era::{self, RpcError, Transport};
use super::tools::{self, Exec, Ran};
use super::{documents, skills, LEGACY_VERSIONS};
use crate::api::{Api, Tool};

pub const INSTRUCTIONS: &str = "Needhave is a public list of needs and haves for agents: post what you need or what you have, and read what others posted. Answer a post with a first message that stays hidden until its author accepts it, which opens a private thread; keep every secret and thread key a tool returns, because they are shown only once.";

/// What a method answers: its result, or a JSON-RPC error.
type Answer = Result<Value, RpcError>;

pub enum Outcome {
    /// A response (object) or the responses of a batch (array), with the
    /// HTTP status it travels with (stdio ignores it).
    Reply { status: u16, body: Value },
    /// Only notifications: nothing to answer.
    Accepted,
}

/// An error response. `id` is the request's whenever it could be read;
/// `null` only when it could not (JSON-RPC 2.0 asks for `null` then).
fn error(id: Option<Value>, e: &RpcError) -> Value {
    response(id.unwrap_or(Value::Null), "error", e.to_value())
}

/// `{"jsonrpc": "2.0", "id": …, key: …}`: `key` is `result` or `error`.
fn response(id: Value, key: &str, value: Value) -> Value {
    let mut r = Map::new();
    r.insert("jsonrpc".into(), "2.0".into());
    r.insert("id".into(), id);
    r.insert(key.into(), value);
    Value::Object(r)
}

fn reply(status: u16, body: Value) -> Outcome {
    Outcome::Reply { status, body }
}

/// The id of a message, when it has a valid one.
fn id_of(msg: &Value) -> Option<Value> {
    match msg.get("id") {
        Some(v @ (Value::String(_) | Value::Number(_))) => Some(v.clone()),
        _ => None,
    }
}

/// The id of a raw request body, for answers given before the body is
/// handled (Origin and Host refusals): the request's when it has one.
pub fn request_id(payload: &[u8]) -> Option<Value> {
    serde_json::from_slice::<Value>(payload)
        .ok()
        .and_then(|v| id_of(&v))
}

/// An error answer to a payload as a whole, with its id when it is one
/// request with one.
pub fn refuse(payload: &[u8], e: &RpcError) -> Value {
    error(request_id(payload), e)
}

pub async fn handle_payload<E: Exec + ?Sized>(
    api: &Api,
    transport: Transport<'_>,
    payload: &[u8],
    exec: &E,
) -> Outcome {
    let Ok(value) = serde_json::from_slice::<Value>(payload) else {
        return reply(400, error(None, &RpcError::new(-32700, "Parse error")));
    };
    if let Err(e) = era::check_header(&transport, &value) {
        return reply(e.status, error(id_of(&value), &e));
    }
    match value {
        Value::Array(items) => batch(api, transport, items, exec).await,
        other => match handle_message(api, &transport, other, exec, false).await {
            Some((status, r)) => reply(status, r),
            None => Outcome::Accepted,
        },
    }
}

/// A batch (2025-03-26): element by element, in order, each tool call
/// counted against the caller's limits exactly as it would be alone. Batch
/// elements mirror no headers, so only the version header applies to them.
async fn batch<E: Exec + ?Sized>(
    api: &Api,
    transport: Transport<'_>,
    items: Vec<Value>,
    exec: &E,
) -> Outcome {
    if items.is_empty() {
        let e = RpcError::new(-32600, "Invalid Request: empty batch");
        return reply(200, error(None, &e));
    }
    if items.len() > MAX_BATCH {
        let e = RpcError::new(-32600, batch::TOO_MANY);
        return reply(200, error(None, &e));
    }
    let element = match transport {
        Transport::Http(h) => Transport::Http(era::Headers {
            protocol_version: h.protocol_version,
            ..Default::default()
        }),
        Transport::Stdio => Transport::Stdio,
    };
    // Held until the answer is built (not while it is sent): bounds how
    // many half-built answers the process holds at once.
    let _turn = batch::turn().await;
    let mut replies = Vec::new();
    let mut size = 0;
    for item in items {
        if size >= MAX_BATCH_ANSWER {
            // Not run: nothing is written that the caller would not hear of.
            if let Some(id) = id_of(&item) {
                let e = RpcError::new(NOT_RUN, batch::NOT_RUN_MESSAGE);
                replies.push(error(Some(id), &e));
            }
            continue;
        }
        if let Some((_, r)) = handle_message(api, &element, item, exec, true).await {
            size += serde_json::to_vec(&r).map_or(0, |b| b.len());
            replies.push(r);
        }
        // An element's answer is CPU work that need not wait on anything;
        // others' requests go first between elements.
        crate::platform::yield_now().await;
    }
    if replies.is_empty() {
        Outcome::Accepted
    } else {
        reply(200, Value::Array(replies))
    }
}

/// One JSON-RPC message; `None` for a notification (or a response the
/// client sends back: this server asks nothing, so there is nothing to do).
pub async fn handle_message<E: Exec + ?Sized>(
    api: &Api,
    transport: &Transport<'_>,
    msg: Value,
    exec: &E,
    in_batch: bool,
) -> Option<(u16, Value)> {
    let invalid = |id: Option<Value>, why: &'static str| {
        let e = RpcError::new(-32600, why);
        Some((e.status, error(id, &e)))
    };
    let Value::Object(obj) = msg else {
        return invalid(None, "Invalid Request: not an object");
    };
    // A notification has no `id` member at all; `"id": null` is a request
    // with an id MCP forbids.
    let id = match obj.get("id") {
        None => None,
        Some(v @ (Value::String(_) | Value::Number(_))) => Some(v.clone()),
        Some(_) => return invalid(None, "Invalid Request: id is a string or a number"),
    };
    let is_response =
        !obj.contains_key("method") && (obj.contains_key("result") || obj.contains_key("error"));
    if is_response && obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0") {
        return None;
    }
    let method = obj.get("method").and_then(Value::as_str);
    let (Some(method), Some("2.0")) = (method, obj.get("jsonrpc").and_then(Value::as_str)) else {
        return invalid(
            id,
            "Invalid Request: a JSON-RPC 2.0 request has jsonrpc \"2.0\" and a string method",
        );
    };
    let empty = Map::new();
    let params = match obj.get("params") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(p)) => p,
        Some(_) => {
            let e = RpcError::new(-32602, "Invalid params: params is an object");
            return id.map(|id| (e.status, error(Some(id), &e)));
        }
    };
    // Notifications (`notifications/initialized`, cancellations …) are
    // fire and forget; nothing here acts on them.
    let id = id?;
    let result = match era::read(transport, method, params, in_batch) {
        Err(e) => Err(e),
        Ok(era) if !era.speaks(method) => Err(era.unknown_method(method)),
        Ok(era) => {
            // The one method that waits on anything: the others answer
            // without a future of their own (one level less of state).
            let result = match method {
                "tools/call" => match tool_call(api, params, &empty) {
                    Ok((tool, args)) => Ok(called(tool, tools::run(tool, args, exec).await)),
                    Err(answer) => answer,
                },
                m if skills::METHODS.contains(&m) => skills::answer(m, params, &exec.origin()),
                _ => answer(api, method, params),
            };
            result.map(|r| era.wrap(method, r))
        }
    };
    Some(match result {
        Ok(r) => (200, response(id, "result", r)),
        Err(e) => (e.status, error(Some(id), &e)),
    })
}

/// The methods but `tools/call`, one body each whatever the era (`era.rs`
/// has said whether the era has the method, and wraps what it answers).
fn answer(api: &Api, method: &str, params: &Map<String, Value>) -> Answer {
    match method {
        "initialize" => Ok(initialize(params)),
        "tools/list" => Ok(tools::list(api)),
        // The answers that never change (`ping`, `server/discover`, the
        // empty lists: the list offers tools only) are in the document
        // under their method's name.
        _ => match documents::get(method) {
            Value::Null => Err(era::method_not_found(method)),
            answer => Ok(answer.clone()),
        },
    }
}

/// The handshake of 2024-11-05 … 2025-11-25: echoes the client's version
/// when it is one of these, else answers the newest (a server never claims
/// a version it does not implement; 2026-07-28 has no handshake).
fn initialize(params: &Map<String, Value>) -> Value {
    let offered = params.get("protocolVersion").and_then(Value::as_str);
    let version = match offered {
        Some(v) if LEGACY_VERSIONS.contains(&v) => v,
        _ => LEGACY_VERSIONS[0],
    };
    let mut result = documents::get("initialize").clone();
    result["protocolVersion"] = version.into();
    result
}

/// The tool a `tools/call` names and its arguments (`empty` when it has
/// none), or the answer when the call is malformed or its arguments do not
/// fit.
fn tool_call<'a>(
    api: &Api,
    params: &'a Map<String, Value>,
    empty: &'a Map<String, Value>,
) -> Result<(&'static Tool, &'a Map<String, Value>), Answer> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| Err(RpcError::new(-32602, "Invalid params: `name` is required")))?;
    let tool = api
        .tool(name)
        .ok_or_else(|| Err(RpcError::new(-32602, ["Unknown tool: ", name].concat())))?;
    let args = match params.get("arguments") {
        None | Some(Value::Null) => empty,
        Some(Value::Object(args)) => args,
        Some(_) => {
            return Err(Err(RpcError::new(
                -32602,
                "Invalid params: `arguments` is an object",
            )))
        }
    };
    if let Err(why) = tools::check_args(tool, args) {
        return Err(Ok(tools::bad_arguments(tool, &why)));
    }
    Ok((tool, args))
}

/// A tool call's result from how its plan ended.
fn called(tool: &Tool, ran: Result<Ran, String>) -> Value {
    match ran {
        Ok(Ran::Answer(status, body)) => tools::result(status, body),
        Ok(Ran::Missing(why)) => tools::bad_arguments(tool, &why),
        Err(cause) => tools::failure(&cause),
    }
}
