//! The MCP tools: their listing and the runner of their plans, the same in
//! every protocol revision (the envelopes in `era.rs` wrap what this makes).
//!
//! Everything about a tool comes from the table's tools (`Api::tools`). Its
//! input schema comes from its argument type, its output schema from the
//! answer types of the routes its plan calls (schemars, native only), both
//! tidied for MCP clients, checked in as `needhave/tool-schemas.json` (and
//! `.min.json`, for people and tests) and served from inside
//! `needhave/documents/mcp.min.json` (see `documents.rs`), like the OpenAPI document:
//! the Worker links no schema library.

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
        super::identity::WEBSITE.to_string()
    }

    /// What a tool's plan answered, as its result carries it, or `Err(cause)`
    /// when it is not of the tool's shape. In process the answer is the
    /// handlers' own and taken as it is; a client of a list over HTTP (the
    /// stdio server) holds it to the tool's output schema.
    fn answer(&self, _tool: &Tool, body: Value) -> Result<Value, String> {
        Ok(body)
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
        if !is_of_type(value, ty) {
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

/// Whether `value` is of the JSON Schema `type` named `ty` (one name; an
/// unknown one fits nothing).
pub fn is_of_type(value: &Value, ty: &str) -> bool {
    match ty {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => false,
    }
}

/// The `tools/list` result, in table order: the checked-in one (see
/// `documents.rs`), which `generate_list` makes from the table, with each
/// tool's description from `api` where it has one (a test's table may
/// differ from the file's); the Worker's table has none (`crate::api::doc`)
/// and answers the file's.
pub fn list(api: &Api) -> Value {
    let mut list = super::documents::get("tools/list").clone();
    let tools = list["tools"].as_array_mut().into_iter().flatten();
    for entry in tools {
        if let Some(tool) = entry["name"].as_str().and_then(|n| api.tool(n)) {
            if !tool.description.is_empty() {
                entry["description"] = tool.description.into();
            }
        }
    }
    list
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
    // An argument picks its branch when given, and not `false`: an
    // optional boolean (`close`) asks for its branch only when true.
    let given = |name: &str| {
        args.get(name)
            .is_some_and(|v| !v.is_null() && *v != Value::Bool(false))
    };
    let Some(branch) = tool.branches.iter().find(|b| b.when.is_none_or(&given)) else {
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
    let answer = exec.answer(tool, Value::Object(merged))?;
    Ok(Ran::Answer(status, answer))
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
    let mut query = String::new();
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
        } else if step.query.contains(name) {
            // The route's declared parameter, checked by the dispatcher as
            // an HTTP client's would be: a string as it is, a number or a
            // boolean as JSON writes it.
            let text = match value {
                None | Some(Value::Null) => continue,
                Some(Value::String(v)) => v,
                Some(v) => serde_json::to_string(&v).unwrap_or_default(),
            };
            query.push(if query.is_empty() { '?' } else { '&' });
            query.push_str(name);
            query.push('=');
            crate::query::encode(&text, &mut query);
        } else if let Some(v) = value.filter(|v| !v.is_null()) {
            body.insert((*name).to_string(), v);
        }
    }
    path.push_str(&query);
    Ok((path, (step.method != "GET").then_some(Value::Object(body))))
}

/// `{"error": code}`, as the list answers a rule.
fn error_body(code: &str) -> Value {
    let mut body = Map::new();
    body.insert("error".into(), code.into());
    Value::Object(body)
}
