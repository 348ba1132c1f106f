//! The MCP tools: their listing and the runner of their plans, the same in
//! every protocol revision (the envelopes in `era.rs` wrap what this makes).
//!
//! Everything about a tool comes from the table's tools (`Api::tools`). Its
//! input schema comes from its argument type, its output schema from the
//! answer types of the routes its plan calls (schemars, native only), both
//! tidied for MCP clients, checked in as `needhave/tool-schemas.json` (and
//! `.min.json`, for people and tests) and served from inside
//! `needhave/mcp.min.json` (see `documents.rs`), like the OpenAPI document:
//! the Worker links no schema library.

#[cfg(not(target_arch = "wasm32"))]
use serde_json::json;
use serde_json::{Map, Value};

use crate::api::{Api, Source, Step, Tool};
use crate::platform::{BoxFuture, MaybeSend};

/// The checked-in schemas: `{tool: {"inputSchema": …, "outputSchema": …}}`,
/// without whitespace (`tool-schemas.json` is the same, for people). What
/// is served is `tools/list` in `mcp.min.json`, made from the same.
pub const SCHEMAS: &str = include_str!("../../tool-schemas.min.json");

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

    /// `scheme://host[:port]` of the list these calls reach: what the
    /// documents served there name (the skill's text, its digest).
    fn origin(&self) -> String {
        super::WEBSITE.to_string()
    }
}

/// A tool's input schema, as `tools/list` gives it to clients.
fn input_schema(tool: &str) -> Option<&'static Value> {
    let tools = super::documents::get("tools/list")["tools"].as_array()?;
    let entry = tools.iter().find(|t| t["name"] == tool)?;
    entry.get("inputSchema")
}

/// Checks a call's arguments against the tool's input schema, the same
/// document `tools/list` gives clients: only the listed properties
/// (`additionalProperties: false`), each `required` one present and not
/// null, each present one of its `type` (an optional one may be null), and
/// the arguments that go together (`dependentRequired`) given together.
/// One small checker over the checked-in schemas instead of a serde
/// deserializer per tool: about 10 KB less code in the Worker. The error
/// names what is wrong, for the model to mend its call.
pub fn check_args(tool: &Tool, args: &Map<String, Value>) -> Result<(), String> {
    let schema = input_schema(tool.name);
    let field = |key: &str| schema.and_then(|s| s.get(key));
    let properties = field("properties").and_then(Value::as_object);
    let required = field("required").and_then(Value::as_array);
    let is_required = |name: &str| required.is_some_and(|r| r.iter().any(|n| n == name));
    for (name, value) in args {
        let Some(property) = properties.and_then(|p| p.get(name)) else {
            return Err(["unknown argument `", name, "`"].concat());
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
            return Err(["argument `", name, "` must be a ", ty].concat());
        }
    }
    let given = |name: &str| args.get(name).is_some_and(|v| !v.is_null());
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if !given(name) {
            return Err(["missing argument `", name, "`"].concat());
        }
    }
    let together = field("dependentRequired").and_then(Value::as_object);
    for (name, others) in together.into_iter().flatten() {
        let others = others.as_array().into_iter().flatten();
        if let Some(other) = others.filter_map(Value::as_str).find(|o| !given(o)) {
            if given(name) {
                return Err(["argument `", name, "` needs `", other, "` as well"].concat());
            }
        }
    }
    Ok(())
}

/// The `tools/list` result, in table order: the checked-in one (see
/// `documents.rs`), which `generate_list` makes from the table, with each
/// tool's description from the table, which holds them for the other
/// documents too (in the file as well, they would ship twice).
pub fn list(api: &Api) -> Value {
    let mut list = super::documents::get("tools/list").clone();
    let tools = list["tools"].as_array_mut().into_iter().flatten();
    for entry in tools {
        if let Some(tool) = entry["name"].as_str().and_then(|n| api.tool(n)) {
            entry["description"] = tool.description.into();
        }
    }
    list
}

/// The `tools/list` result as the table says, for `documents::generate`.
#[cfg(not(target_arch = "wasm32"))]
pub fn generate_list(api: &Api, icons: &Value) -> Value {
    let schemas = generate_schemas(api);
    let tools: Vec<Value> = api
        .tools
        .iter()
        .map(|t| {
            let schema_of = |which: &str| schemas.get(t.name).and_then(|s| s.get(which));
            let mut tool = json!({
                "name": t.name,
                "title": t.title,
                "description": t.description,
                "icons": icons,
                "inputSchema": schema_of("inputSchema")
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
            });
            if let Some(output) = schema_of("outputSchema") {
                tool["outputSchema"] = output.clone();
            }
            tool
        })
        .collect();
    json!({ "tools": tools })
}

/// A tool result: the JSON the HTTP call answers, as structured content and
/// as text (some clients read only the text). An error answer (a list rule)
/// is a result with `isError` whose text is the `{"error": CODE}`, and no
/// structured content: the output schema describes answers, and TypeScript
/// SDK 1.x validates an error's structured content against it too.
pub fn result(status: u16, body: Value) -> Value {
    // `to_string`, not `Value`'s `Display`, which would link a second copy
    // of the serializer into the Worker.
    let text = serde_json::to_string(&body).unwrap_or_default();
    let mut r = text_result(text, status >= 400);
    // MCP 2025 allows only an object as structured content; every answer of
    // the list is one, but nothing else may slip through.
    if status < 400 && body.is_object() {
        r.insert("structuredContent".into(), body);
    }
    Value::Object(r)
}

/// `{"content": [{"type": "text", "text": …}], "isError": …}`, written
/// once for every kind of result.
fn text_result(text: String, is_error: bool) -> Map<String, Value> {
    let mut content = Map::new();
    content.insert("text".into(), Value::String(text));
    content.insert("type".into(), "text".into());
    let mut r = Map::new();
    r.insert("content".into(), Value::Array(vec![Value::Object(content)]));
    r.insert("isError".into(), is_error.into());
    r
}

/// Arguments the tool does not take (SEP-1303): an `isError` result, so
/// that the model reads what to mend, with the code `bad_request` the
/// HTTP call would answer and a sentence naming the argument.
pub fn bad_arguments(tool: &Tool, why: &str) -> Value {
    let mut body = Map::new();
    body.insert("error".into(), "bad_request".into());
    body.insert("message".into(), [tool.name, ": ", why].concat().into());
    result(400, Value::Object(body))
}

/// The list could not be reached: a result with `isError` naming the cause.
pub fn failure(cause: &str) -> Value {
    Value::Object(text_result(cause.to_string(), true))
}

/// Whether `path` has the segment `:name`.
fn has_param(path: &str, name: &str) -> bool {
    path.split('/').any(|s| s.strip_prefix(':') == Some(name))
}

/// `path` with its `:name` segment replaced by `value`, percent-encoded so
/// that an argument can never reach another route (`../threads`); the
/// dispatcher then answers `not_found`.
fn fill(path: &str, name: &str, value: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::new();
    for (i, s) in path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        if s.strip_prefix(':') != Some(name) {
            out.push_str(s);
            continue;
        }
        for b in value.bytes() {
            if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
                out.push(b as char);
            } else {
                out.push('%');
                out.push(HEX[usize::from(b >> 4)] as char);
                out.push(HEX[usize::from(b & 15)] as char);
            }
        }
    }
    out
}

/// The sentence for a path argument the call lacks, naming the branches'
/// arguments that would have done instead.
fn missing(tool: &Tool, arg: &str) -> String {
    let mut why = String::from("missing argument `");
    why.push_str(arg);
    why.push('`');
    let mut sep = " (or give `";
    for when in tool.branches.iter().filter_map(|b| b.when) {
        why.push_str(sep);
        why.push_str(when);
        why.push('`');
        sep = " or `";
    }
    if sep != " (or give `" {
        why.push(')');
    }
    why
}

/// What a plan ended with.
pub enum Ran {
    /// The last answer (or the first error answer) of the list, merged.
    Answer(u16, Value),
    /// A route's path needs this argument, and the call lacks it: the
    /// sentence names it and the branches that would have done without.
    Missing(String),
}

/// Runs a tool's plan: picks the branch, makes each call, merges the answers
/// (later fields win). The first error answer ends the plan and is the result.
pub async fn run<E: Exec + ?Sized>(
    tool: &Tool,
    args: &Map<String, Value>,
    exec: &E,
) -> Result<Ran, String> {
    let present = |name: &str| args.get(name).is_some_and(|v| !v.is_null());
    let Some(branch) = tool.branches.iter().find(|b| b.when.is_none_or(&present)) else {
        return Ok(Ran::Answer(400, error_body("bad_request")));
    };
    let mut merged = Map::new();
    let mut status = 200;
    for step in branch.steps {
        if let Some(field) = step.when_prev {
            if merged.get(field) != Some(&Value::Bool(true)) {
                break;
            }
        }
        let (path, body) = match request(tool, step, args, &merged) {
            Ok(request) => request,
            Err(ran) => return Ok(ran),
        };
        let (s, answer) = exec.call(step.method, &path, body).await?;
        if s >= 400 {
            return Ok(Ran::Answer(s, answer));
        }
        status = s;
        if let Value::Object(m) = answer {
            merged.extend(m);
        }
    }
    Ok(Ran::Answer(status, Value::Object(merged)))
}

/// One step's call: its path with the path arguments filled in, and its
/// JSON body of the others (none for a `GET`). Out of `run`'s future, which
/// holds only what lives across the call. `Err` ends the plan.
#[inline(never)]
fn request(
    tool: &Tool,
    step: &Step,
    args: &Map<String, Value>,
    merged: &Map<String, Value>,
) -> Result<(String, Option<Value>), Ran> {
    let mut path = step.path.to_string();
    let mut body = Map::new();
    for (name, source) in step.args {
        let value = match source {
            Source::Arg(a) => args.get(*a).cloned(),
            Source::Lit(l) => Some(Value::String(l.to_string())),
            Source::Prev(p) => merged.get(*p).cloned(),
        };
        if has_param(&path, name) {
            let Some(Value::String(v)) = value else {
                let (Source::Arg(arg) | Source::Prev(arg) | Source::Lit(arg)) = source;
                return Err(Ran::Missing(missing(tool, arg)));
            };
            if v.is_empty() {
                // Not an id; and `/posts/` would be `/posts` (the
                // dispatcher forgives a trailing slash): another route.
                return Err(Ran::Answer(404, error_body("not_found")));
            }
            path = fill(&path, name, &v);
        } else if let Some(v) = value.filter(|v| !v.is_null()) {
            body.insert((*name).to_string(), v);
        }
    }
    Ok((path, (step.method != "GET").then_some(Value::Object(body))))
}

/// `{"error": code}`, as the list answers a rule.
fn error_body(code: &str) -> Value {
    let mut body = Map::new();
    body.insert("error".into(), code.into());
    Value::Object(body)
}

/// Makes a schemars schema what MCP clients accept: no `$schema` or
/// `title`, no `$ref`/`$defs` (subschemas are written in place), and an
/// optional field typed as its own type rather than `["string", "null"]`,
/// which several clients reject.
#[cfg(not(target_arch = "wasm32"))]
pub fn tidy(schema: schemars::Schema) -> Value {
    fn strip_null(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Array(types)) = m.get("type") {
                    let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                    if rest.len() == 1 {
                        m.insert("type".into(), rest[0].clone());
                    } else {
                        m.insert("type".into(), Value::Array(rest));
                    }
                }
                // A type's title (its Rust name) says nothing to a model. Only
                // a string: in a `properties` map, `title` would be a field.
                if m.get("title").is_some_and(Value::is_string) {
                    m.remove("title");
                }
                for (_, child) in m.iter_mut() {
                    strip_null(child);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(strip_null),
            _ => {}
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

/// A route's answer type as a schema with every subschema in place, for
/// the tools' output schemas (called by the code `routes!` generates).
#[cfg(not(target_arch = "wasm32"))]
pub fn answer_schema<T: schemars::JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut v = tidy(generator.into_root_schema_for::<T>());
    // Answers are closed: with `anyOf` over a plan's branches, a closed
    // object says which branch answered, and a field that is not in the
    // type is a bug the tests catch.
    if let Value::Object(m) = &mut v {
        m.insert("additionalProperties".into(), Value::Bool(false));
    }
    v
}

/// Two answers merged as a plan merges them: every field of both; the
/// later's description of a shared field wins, as its value does.
#[cfg(not(target_arch = "wasm32"))]
fn merge_answers(a: &Value, b: &Value) -> Value {
    let mut out = a.clone();
    let props = b.get("properties").and_then(Value::as_object);
    for (k, v) in props.into_iter().flatten() {
        out["properties"][k] = v.clone();
    }
    let mut required: Vec<Value> = a["required"].as_array().cloned().unwrap_or_default();
    for r in b["required"].as_array().into_iter().flatten() {
        if !required.contains(r) {
            required.push(r.clone());
        }
    }
    required.sort_by(|x, y| x.as_str().cmp(&y.as_str()));
    out["required"] = Value::Array(required);
    out
}

/// A tool's output schema from its plan: each branch can end after its
/// last step, or before any step that runs only on the previous answer's
/// say-so; each such ending is one answer shape (the steps so far, merged).
/// One shape is the schema; several are `anyOf` under `type: object`
/// (2025-11-25 asks for an object at the root).
#[cfg(not(target_arch = "wasm32"))]
pub fn output_schema(branches: &[Vec<(bool, Value)>]) -> Value {
    let mut shapes: Vec<Value> = Vec::new();
    for steps in branches {
        let mut so_far: Option<Value> = None;
        for (i, (_, schema)) in steps.iter().enumerate() {
            let merged = match &so_far {
                None => schema.clone(),
                Some(prev) => merge_answers(prev, schema),
            };
            let ends_here = steps.get(i + 1).is_none_or(|(conditional, _)| *conditional);
            if ends_here && !shapes.contains(&merged) {
                shapes.push(merged.clone());
            }
            so_far = Some(merged);
        }
    }
    match shapes.len() {
        1 => shapes.remove(0),
        _ => json!({"type": "object", "anyOf": shapes}),
    }
}

/// The arguments one branch uses and the schema leaves optional go
/// together: `read_thread`'s `message_id` and `secret`. Said from the plan
/// as `dependentRequired`, which clients read and `check_args` enforces.
#[cfg(not(target_arch = "wasm32"))]
fn together(tool: &Tool, input: &Value) -> Map<String, Value> {
    let required: Vec<&str> = input["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut out = Map::new();
    for branch in tool.branches {
        let mut used: Vec<&str> = Vec::new();
        for step in branch.steps {
            for (_, source) in step.args {
                if let Source::Arg(a) = source {
                    if !required.contains(a) && Some(*a) != branch.when && !used.contains(a) {
                        used.push(a);
                    }
                }
            }
        }
        if used.len() > 1 {
            for a in &used {
                let others: Vec<Value> = used
                    .iter()
                    .filter(|o| *o != a)
                    .map(|o| Value::String((*o).to_string()))
                    .collect();
                out.insert((*a).to_string(), Value::Array(others));
            }
        }
    }
    out
}

/// The schemas as the table's types say, for the checked-in file.
#[cfg(not(target_arch = "wasm32"))]
pub fn generate_schemas(api: &Api) -> Value {
    let inputs = (api.tool_input_schemas)();
    let outputs = (api.tool_output_schemas)();
    let mut map = Map::new();
    for tool in api.tools {
        let mut input = inputs
            .iter()
            .find(|(n, _)| *n == tool.name)
            .map_or(json!({"type": "object"}), |(_, s)| tidy(s.clone()));
        let together = together(tool, &input);
        if !together.is_empty() {
            input["dependentRequired"] = Value::Object(together);
        }
        let mut entry = json!({"inputSchema": input});
        if let Some((_, branches)) = outputs.iter().find(|(n, _)| *n == tool.name) {
            entry["outputSchema"] = output_schema(branches);
        }
        map.insert(tool.name.to_string(), entry);
    }
    Value::Object(map)
}
