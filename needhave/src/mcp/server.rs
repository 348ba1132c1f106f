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
use super::identity::LEGACY_VERSIONS;
use super::tools::{self, Exec, Ran};
use super::{documents, skills};
use crate::api::{Api, Tool};

/// What a method answers: its result, or a JSON-RPC error.
type Answer = Result<Value, RpcError>;

pub enum Outcome {
    /// A response (object) or the responses of a batch (array), as the
    /// bytes sent, with the HTTP status they travel with (stdio ignores it).
    Reply { status: u16, body: Vec<u8> },
    /// Only notifications: nothing to answer.
    Accepted,
}

/// A request's id as the client wrote it: the raw JSON text of a string or
/// a number, echoed byte for byte (`1E2` stays `1E2`, a 20-digit number
/// keeps its digits), which a round trip through [`Value`] would not do.
type Id<'a> = Option<&'a str>;

/// An error response. `id` is the request's whenever it could be read;
/// `null` only when it could not (JSON-RPC 2.0 asks for `null` then).
fn error(id: Id, e: &RpcError) -> Vec<u8> {
    response(id, "error", &e.to_value())
}

/// `{"id": …, "jsonrpc": "2.0", key: …}` (`key` is `result` or `error`),
/// written out in the order serde_json writes an object's keys.
fn response(id: Id, key: &str, value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    if key == "error" {
        out.extend_from_slice(b"{\"error\":");
        write_value(&mut out, value);
        out.extend_from_slice(b",\"id\":");
        out.extend_from_slice(id.unwrap_or("null").as_bytes());
        out.extend_from_slice(b",\"jsonrpc\":\"2.0\"}");
    } else {
        out.extend_from_slice(b"{\"id\":");
        out.extend_from_slice(id.unwrap_or("null").as_bytes());
        out.extend_from_slice(b",\"jsonrpc\":\"2.0\",\"");
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        write_value(&mut out, value);
        out.push(b'}');
    }
    out
}

fn write_value(out: &mut Vec<u8>, value: &Value) {
    // Writing a Value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, value);
}

fn reply(status: u16, body: Vec<u8>) -> Outcome {
    Outcome::Reply { status, body }
}

/// Where the JSON value that starts at `i` ends. `b` is known to be valid
/// JSON (it parsed as a `Value` first), so this only skips strings and
/// counts brackets. By hand rather than typed serde parsing: a typed
/// visitor links serde's error messages, float formatting among them,
/// which is 16 KB gzip of the Worker's .wasm (bench/worker-size.sh, with
/// and without this scanner).
fn value_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                if depth == 0 {
                    return i;
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    i
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The members of the object or the elements of the array `b` holds, as
/// written: `(key, value)` pairs, the key `None` for array elements.
fn members(b: &[u8]) -> Vec<(Option<&[u8]>, &[u8])> {
    let mut out = Vec::new();
    let mut i = skip_ws(b, 0);
    let object = match b.get(i) {
        Some(b'{') => true,
        Some(b'[') => false,
        _ => return out,
    };
    i += 1;
    loop {
        i = skip_ws(b, i);
        if matches!(b.get(i), None | Some(b'}') | Some(b']')) {
            return out;
        }
        let mut key = None;
        if object {
            let end = value_end(b, i);
            key = b.get(i + 1..end.saturating_sub(1));
            i = skip_ws(b, end);
            i = skip_ws(b, i + 1); // the colon
        }
        let end = value_end(b, i);
        out.push((key, b.get(i..end).unwrap_or_default()));
        i = skip_ws(b, end);
        if b.get(i) == Some(&b',') {
            i += 1;
        }
    }
}

/// The `id` of the object `text`, as written (its last one, as a `Value`
/// reads a repeated key); `None` when it is not written plainly.
fn raw_id(text: &[u8]) -> Option<&str> {
    let (_, id) = members(text)
        .into_iter()
        .rfind(|(k, _)| *k == Some(&b"id"[..]))?;
    std::str::from_utf8(id).ok()
}

/// The id of a message (`msg`, as parsed from `text`), when it has a valid
/// one: its raw text when `text` gives it, else as serde_json writes it.
fn id_of<'a>(msg: &Value, text: &'a [u8], written: &'a mut String) -> Id<'a> {
    if !matches!(msg.get("id"), Some(Value::String(_) | Value::Number(_))) {
        return None;
    }
    // An object whose `id` is repeated is read with its last one, as the
    // Value was.
    match raw_id(text) {
        Some(raw) => Some(raw),
        None => {
            // `to_string`, not Value's `Display`: Display links two more
            // copies of Value's serializer (plain and `{:#}`).
            *written = serde_json::to_string(&msg["id"]).unwrap_or_default();
            Some(written.as_str())
        }
    }
}

/// An error answer to a payload as a whole (Origin and Host refusals,
/// given before the body is handled), with its id when it is one request
/// with one.
pub fn refuse(payload: &[u8], e: &RpcError) -> Vec<u8> {
    let mut written = String::new();
    let id = match serde_json::from_slice::<Value>(payload) {
        Ok(v) => id_of(&v, payload, &mut written),
        Err(_) => None,
    };
    error(id, e)
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
    let mut written = String::new();
    if let Err(e) = era::check_header(&transport, &value) {
        return reply(e.status, error(id_of(&value, payload, &mut written), &e));
    }
    match value {
        Value::Array(items) => {
            // The elements as written, for their ids: the array parsed
            // once already, so this cannot fail.
            let texts: Vec<&[u8]> = members(payload).into_iter().map(|(_, v)| v).collect();
            batch(api, transport, items, &texts, exec).await
        }
        other => match handle_message(api, &transport, other, payload, exec, false).await {
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
    texts: &[&[u8]],
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
    let text = |i: usize| texts.get(i).copied().unwrap_or_default();
    // What each element is answered if it is not run, so that the room
    // they need is known before any element runs.
    let not_run: Vec<Option<Vec<u8>>> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let mut written = String::new();
            let id = id_of(item, text(i), &mut written)?;
            Some(error(
                Some(id),
                &RpcError::new(NOT_RUN, batch::NOT_RUN_MESSAGE),
            ))
        })
        .collect();
    // Room the elements after each one need for their not-run answers and
    // a comma each.
    let mut after = vec![0; items.len()];
    for i in (0..items.len().saturating_sub(1)).rev() {
        after[i] = after[i + 1] + not_run[i + 1].as_ref().map_or(0, |e| e.len() + 1);
    }
    // The answer as sent, counted as it is written: `[`, the answers, their
    // commas, `]`.
    let mut out = vec![b'['];
    let mut stopped = false;
    for (i, item) in items.into_iter().enumerate() {
        let comma = usize::from(out.len() > 1);
        // Whether `len` more bytes fit with what the later elements need
        // and the closing `]`.
        let fits = |out: &Vec<u8>, len: usize| {
            out.len() + comma + len + after[i] + b"]".len() <= MAX_BATCH_ANSWER
        };
        // A write runs only where its answer is sure to fit: once run, its
        // answer (a secret, a thread key) must reach the caller.
        if !stopped && !batch::reads_only(api, &item) && !fits(&out, batch::WRITE_ROOM) {
            stopped = true;
        }
        let answer = if stopped {
            None
        } else {
            let answer = handle_message(api, &element, item, text(i), exec, true).await;
            // An element's answer is CPU work that need not wait on
            // anything; others' requests go first between elements.
            crate::platform::yield_now().await;
            match answer {
                Some((_, r)) if !fits(&out, r.len()) => {
                    stopped = true;
                    None
                }
                Some((_, r)) => Some(r),
                None => continue,
            }
        };
        // Not run, or its answer dropped: the caller hears of it.
        if let Some(r) = answer.or_else(|| not_run[i].clone()) {
            if comma == 1 {
                out.push(b',');
            }
            out.extend_from_slice(&r);
        }
    }
    if out.len() == 1 {
        Outcome::Accepted
    } else {
        out.push(b']');
        reply(200, out)
    }
}

/// One JSON-RPC message; `None` for a notification (or a response the
/// client sends back: this server asks nothing, so there is nothing to do).
pub async fn handle_message<E: Exec + ?Sized>(
    api: &Api,
    transport: &Transport<'_>,
    msg: Value,
    text: &[u8],
    exec: &E,
    in_batch: bool,
) -> Option<(u16, Vec<u8>)> {
    let invalid = |id: Id, why: &'static str| {
        let e = RpcError::new(-32600, why);
        Some((e.status, error(id, &e)))
    };
    let Some(obj) = msg.as_object() else {
        return invalid(None, "Invalid Request: not an object");
    };
    // A notification has no `id` member at all; `"id": null` is a request
    // with an id MCP forbids.
    let mut written = String::new();
    let id = match obj.get("id") {
        None => None,
        Some(Value::String(_) | Value::Number(_)) => id_of(&msg, text, &mut written),
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
        Ok(r) => (200, response(Some(id), "result", &r)),
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
