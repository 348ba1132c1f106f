//! Validation against the MCP specification's own schemas, and of tool
//! answers against the tools' output schemas.
//!
//! The schema files are copies (see `tests/mcp-schema/README.md`). A
//! definition is validated by pointing a `$ref` at it from a copy of the
//! whole document, so that its own `$ref`s resolve.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Value};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Rev {
    /// 2026-07-28.
    Modern,
    /// 2025-11-25 (what every 2025 answer must also be valid as).
    Legacy,
}

fn document(rev: Rev) -> &'static Value {
    static MODERN: OnceLock<Value> = OnceLock::new();
    static LEGACY: OnceLock<Value> = OnceLock::new();
    let (cell, text) = match rev {
        Rev::Modern => (&MODERN, include_str!("../mcp-schema/2026-07-28.json")),
        Rev::Legacy => (&LEGACY, include_str!("../mcp-schema/2025-11-25.json")),
    };
    cell.get_or_init(|| serde_json::from_str(text).expect("schema file"))
}

type Cache<K, V> = OnceLock<Mutex<HashMap<K, V>>>;

fn validator(rev: Rev, def: &str) -> Arc<jsonschema::Validator> {
    static CACHE: Cache<(Rev, String), Arc<jsonschema::Validator>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap();
    cache
        .entry((rev, def.to_string()))
        .or_insert_with(|| {
            let doc = document(rev);
            assert!(doc["$defs"].get(def).is_some(), "no {def} in {rev:?}");
            let mut schema = doc.clone();
            schema["$ref"] = json!(format!("#/$defs/{def}"));
            Arc::new(jsonschema::validator_for(&schema).expect("schema compiles"))
        })
        .clone()
}

/// Asserts that `value` is a valid `def` of revision `rev`.
#[track_caller]
pub fn assert_valid(rev: Rev, def: &str, value: &Value) {
    let v = validator(rev, def);
    let errors: Vec<String> = v
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid {def} of {rev:?}: {errors:?}\n{value}"
    );
}

/// Whether `result_def` knows the method.
pub fn knows(method: &str) -> bool {
    matches!(
        method,
        "initialize"
            | "ping"
            | "server/discover"
            | "tools/list"
            | "tools/call"
            | "prompts/list"
            | "resources/list"
            | "resources/read"
            | "resources/templates/list"
    )
}

/// The result type of a method, in the schema's names.
pub fn result_def(method: &str) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "ping" => "EmptyResult",
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/list" => "ListPromptsResult",
        "resources/list" => "ListResourcesResult",
        "resources/read" => "ReadResourceResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        other => panic!("no result type known for {other}"),
    }
}

/// Asserts a JSON-RPC response (one, not a batch) to a request for
/// `method` is valid in `rev`: a result of the method's type, or an error
/// response (which then carries the request's id). Tool answers are also
/// checked against the tool's output schema.
#[track_caller]
pub fn assert_response(rev: Rev, method: &str, request: &Value, response: &Value) {
    if response.get("error").is_some() {
        assert_valid(rev, "JSONRPCErrorResponse", response);
        assert_eq!(response["id"], request["id"], "{response}");
        return;
    }
    assert_valid(rev, "JSONRPCResultResponse", response);
    assert_valid(rev, result_def(method), &response["result"]);
    if method == "tools/call" {
        if let Some(name) = request["params"]["name"].as_str() {
            assert_answer(name, &response["result"]);
        }
    }
}

fn output_validator(tool: &str) -> Option<Arc<jsonschema::Validator>> {
    static CACHE: Cache<String, Option<Arc<jsonschema::Validator>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap();
    cache
        .entry(tool.to_string())
        .or_insert_with(|| {
            let file: Value = serde_json::from_str(needhave::mcp::tools::SCHEMAS).unwrap();
            let schema = file.get(tool)?.get("outputSchema")?;
            Some(Arc::new(
                jsonschema::validator_for(schema).expect("output schema compiles"),
            ))
        })
        .clone()
}

/// A tool result's structured content against the tool's output schema
/// (every successful one must have it); an `isError` result has none.
#[track_caller]
pub fn assert_answer(tool: &str, result: &Value) {
    let Some(v) = output_validator(tool) else {
        return;
    };
    if result["isError"] == true {
        assert!(result.get("structuredContent").is_none(), "{result}");
        return;
    }
    let content = &result["structuredContent"];
    let errors: Vec<String> = v.iter_errors(content).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "{tool}: structuredContent does not fit its outputSchema: {errors:?}\n{content}"
    );
}
