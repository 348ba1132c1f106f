//! The MCP tools: their listing and the runner of their plans.
//!
//! Everything about a tool comes from the table's tools (`Api::tools`); input schemas
//! come from the tools' argument types (schemars), tidied for MCP clients,
//! checked in as `needhave/tool-schemas.json` and read from there on every
//! target, like the OpenAPI document.

use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use crate::platform::{BoxFuture, MaybeSend};
use crate::table::{Api, Source, Tool};

/// The checked-in input schemas, by tool name.
pub const SCHEMAS: &str = include_str!("../../tool-schemas.json");

/// How a plan's route calls are made: in process or over HTTP.
pub trait Exec: MaybeSend {
    /// `Ok((status, JSON body))`, or `Err(cause)` when the list could not be
    /// reached at all.
    fn call<'a>(
        &'a self,
        method: &'a str,
        path: &'a str,
        body: Option<Value>,
    ) -> BoxFuture<'a, Result<(u16, Value), String>>;
}

fn schemas() -> &'static Map<String, Value> {
    static PARSED: OnceLock<Map<String, Value>> = OnceLock::new();
    // From bytes, like every other JSON the list reads: `from_str` would
    // link a second copy of serde_json's parser into the Worker. As a
    // `Value`, since a typed read links serde_json's error messages (see
    // `crate::http::from_value`).
    PARSED.get_or_init(|| match serde_json::from_slice(SCHEMAS.as_bytes()) {
        Ok(Value::Object(schemas)) => schemas,
        _ => Map::new(),
    })
}

/// Checks a call's arguments against the tool's input schema, the same
/// document `tools/list` gives clients: only the listed properties
/// (`additionalProperties: false`), each `required` one present and not
/// null, and each present one of its `type` (an optional one may be null).
/// One small checker over the checked-in schemas instead of a serde
/// deserializer per tool: about 10 KB less code in the Worker.
pub fn check_args(tool: &Tool, args: &Map<String, Value>) -> Result<(), String> {
    let schema = schemas().get(tool.name);
    let field = |key: &str| schema.and_then(|s| s.get(key));
    let properties = field("properties").and_then(Value::as_object);
    let required = field("required").and_then(Value::as_array);
    let is_required = |name: &str| required.is_some_and(|r| r.iter().any(|n| n == name));
    for (name, value) in args {
        let Some(property) = properties.and_then(|p| p.get(name)) else {
            return Err(format!("unknown field `{name}`"));
        };
        if value.is_null() && !is_required(name) {
            continue;
        }
        let ty = property.get("type").and_then(Value::as_str).unwrap_or("");
        let fits = match ty {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            _ => false,
        };
        if !fits {
            return Err(format!("`{name}` is not of type {ty}"));
        }
    }
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if !args.contains_key(name) {
            return Err(format!("missing field `{name}`"));
        }
    }
    Ok(())
}

/// The `tools/list` result.
pub fn list(api: &Api) -> Value {
    let tools: Vec<Value> = api
        .tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "title": t.title,
                "description": t.description,
                "inputSchema": schemas()
                    .get(t.name)
                    .cloned()
                    .unwrap_or(json!({"type": "object", "additionalProperties": false})),
                "annotations": {
                    "title": t.title,
                    "readOnlyHint": t.read_only,
                    // Insert-only: no tool ever changes or removes a row.
                    "destructiveHint": false,
                    "idempotentHint": t.idempotent,
                    // A public list on the network, written by anyone: what
                    // a tool reads or posts is shared with other agents.
                    "openWorldHint": true,
                },
            })
        })
        .collect();
    json!({ "tools": tools })
}

/// A tool result: the JSON the HTTP call answers, as structured content and
/// as text (some clients read only the text). An error answer (a list rule)
/// is a result with `isError`, whose text names the code.
pub fn result(status: u16, body: Value) -> Value {
    // `to_string`, not `Value`'s `Display`, which would link a second copy
    // of the serializer into the Worker.
    let mut r = json!({
        "content": [{"type": "text", "text": serde_json::to_string(&body).unwrap_or_default()}],
        "isError": status >= 400,
    });
    // MCP allows only an object as structured content; every answer of the
    // list is one, but nothing else may slip through.
    if body.is_object() {
        r["structuredContent"] = body;
    }
    r
}

/// The list could not be reached: a result with `isError` naming the cause.
pub fn failure(cause: &str) -> Value {
    json!({
        "content": [{"type": "text", "text": cause}],
        "isError": true,
    })
}

/// Percent-encodes a path segment so that an argument can never reach
/// another route (`../threads`); the dispatcher then answers `not_found`.
fn segment(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Runs a tool's plan: picks the branch, makes each call, merges the answers
/// (later fields win). The first error answer ends the plan and is the result.
pub async fn run<E: Exec + ?Sized>(
    tool: &Tool,
    args: &Map<String, Value>,
    exec: &E,
) -> Result<(u16, Value), String> {
    let present = |name: &str| args.get(name).is_some_and(|v| !v.is_null());
    let Some(branch) = tool.branches.iter().find(|b| b.when.is_none_or(&present)) else {
        return Ok((400, json!({"error": "bad_request"})));
    };
    let mut merged = Map::new();
    let mut status = 200;
    for step in branch.steps {
        if let Some(field) = step.when_prev {
            if merged.get(field) != Some(&Value::Bool(true)) {
                break;
            }
        }
        let mut path = step.path.to_string();
        let mut body = Map::new();
        for (name, source) in step.args {
            let value = match source {
                Source::Arg(a) => args.get(*a).cloned(),
                Source::Lit(l) => Some(Value::String(l.to_string())),
                Source::Prev(p) => merged.get(*p).cloned(),
            };
            let placeholder = format!(":{name}");
            if path.split('/').any(|s| s == placeholder) {
                let Some(Value::String(v)) = value else {
                    // A path needs this argument, and it is missing.
                    return Ok((400, json!({"error": "bad_request"})));
                };
                path = path
                    .split('/')
                    .map(|s| {
                        if s == placeholder {
                            segment(&v)
                        } else {
                            s.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("/");
            } else if let Some(v) = value.filter(|v| !v.is_null()) {
                body.insert((*name).to_string(), v);
            }
        }
        let body = (step.method != "GET").then_some(Value::Object(body));
        let (s, answer) = exec.call(step.method, &path, body).await?;
        if s >= 400 {
            return Ok((s, answer));
        }
        status = s;
        if let Value::Object(m) = answer {
            merged.extend(m);
        }
    }
    Ok((status, Value::Object(merged)))
}

/// Makes a schemars schema what MCP clients accept: no `$schema` or
/// `title`, no `$ref`/`$defs`, and an optional field typed as its own type
/// rather than `["string", "null"]`, which several clients reject.
#[cfg(not(target_arch = "wasm32"))]
pub fn tidy(schema: schemars::Schema) -> Value {
    fn strip_null(v: &mut Value) {
        if let Value::Object(m) = v {
            if let Some(Value::Array(types)) = m.get("type") {
                let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                if rest.len() == 1 {
                    m.insert("type".into(), rest[0].clone());
                } else {
                    m.insert("type".into(), Value::Array(rest));
                }
            }
            for (_, child) in m.iter_mut() {
                strip_null(child);
            }
        }
    }
    let mut v = schema.to_value();
    if let Value::Object(m) = &mut v {
        m.remove("$schema");
        m.remove("title");
        m.entry("properties").or_insert(json!({}));
        if let Some(Value::Object(props)) = m.get_mut("properties") {
            for (_, p) in props.iter_mut() {
                strip_null(p);
            }
        }
    }
    v
}

/// The input schemas as the table's types say, for the checked-in file.
#[cfg(not(target_arch = "wasm32"))]
pub fn generate_schemas() -> Value {
    let map: Map<String, Value> = crate::routes::tool_input_schemas()
        .into_iter()
        .map(|(name, s)| (name.to_string(), tidy(s)))
        .collect();
    Value::Object(map)
}
