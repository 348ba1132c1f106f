//! The MCP tools' schemas and their `tools/list`, as the table says: each
//! input schema from its argument type, each output schema from the answer
//! types of the routes its plan calls (schemars), tidied for MCP clients,
//! for the checked-in `tool-schemas.json` and `mcp.min.json` that
//! `mcp::tools` serves.

use serde_json::{json, Map, Value};

use crate::api::{Api, Source, Tool};

/// The `tools/list` result as the table says, for `generate.rs`.
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

/// Makes a schemars schema what MCP clients accept: no `$schema` or
/// `title`, no `$ref`/`$defs` (subschemas are written in place), and an
/// optional field typed as its own type rather than `["string", "null"]`,
/// which several clients reject.
pub fn tidy(schema: schemars::Schema) -> Value {
    fn strip_null(v: &mut Value) {
        match v {
            Value::Object(m) => {
                // An optional enum lists `null` among its values too.
                if let Some(Value::Array(values)) = m.get_mut("enum") {
                    values.retain(|v| !v.is_null());
                }
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
            // A query parameter is a filter of its own: it goes with no
            // other argument.
            let filters = step
                .args
                .iter()
                .filter(|(name, _)| !step.query.contains(name));
            for (_, source) in filters {
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
