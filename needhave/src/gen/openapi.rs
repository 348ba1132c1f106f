//! The OpenAPI 3.1 document, built from the table (`Api::routes`) and the
//! Rust types' schemas (schemars), for the checked-in `openapi.json` that
//! `pages::openapi` serves.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

use crate::api::{Api, Body, Consistency, Route};
use crate::error::Code;
use crate::store::session::BOOKMARK_HEADER;

pub struct Builder {
    gen: SchemaGenerator,
    paths: Map<String, Value>,
    /// Operation ids given so far: OpenAPI wants each unique, and one
    /// handler may serve two paths (the MCP server card's two homes).
    ids: Vec<String>,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    pub fn new() -> Self {
        let settings = SchemaSettings::draft2020_12().with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        });
        Builder {
            gen: settings.into_generator(),
            paths: Map::new(),
            ids: Vec::new(),
        }
    }

    pub fn schema<T: JsonSchema>(&mut self) -> Value {
        self.gen.subschema_for::<T>().to_value()
    }

    /// Adds one route: `body` and `typed` are the schemas of its request
    /// body and of its JSON responses; the rest is read from `route`.
    /// `query`: the schemas of the route's query parameters' types, in
    /// the table's order.
    pub fn operation(
        &mut self,
        route: &Route,
        body: Option<Value>,
        typed: Vec<(u16, Value)>,
        query: Vec<Value>,
    ) {
        let mut op = Map::new();
        let id = operation_id(route, &self.ids);
        self.ids.push(id.clone());
        op.insert("operationId".into(), json!(id));
        op.insert("summary".into(), json!(route.doc));
        let mut params: Vec<Value> = route
            .path
            .split('/')
            .filter_map(|s| s.strip_prefix(':'))
            .map(|p| {
                json!({
                    "name": p,
                    "in": "path",
                    "required": true,
                    "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"}
                })
            })
            .collect();
        for (q, schema) in route.query.iter().zip(query) {
            let mut schema = schema;
            if let Value::Object(m) = &mut schema {
                for (key, v) in [
                    ("minimum", q.min),
                    ("maximum", q.max),
                    ("default", q.default),
                ] {
                    if let Some(v) = v {
                        m.insert(key.into(), json!(v));
                    }
                }
            }
            params.push(json!({
                "name": q.name,
                "in": "query",
                "required": false,
                "description": q.doc,
                "schema": schema,
            }));
        }
        // Every call takes and answers a bookmark; the table says where
        // its reads come from.
        params.push(json!({"$ref": "#/components/parameters/Bookmark"}));
        op.insert("parameters".into(), Value::Array(params));
        let reads = match route.consistency {
            Consistency::Replica => "replica",
            Consistency::Primary => "primary",
        };
        op.insert("x-reads-from".into(), json!(reads));
        if let Some(schema) = &body {
            op.insert(
                "requestBody".into(),
                json!({"required": true, "content": {"application/json": {"schema": schema}}}),
            );
        }
        let mut responses = Map::new();
        for r in route.responses {
            let content = match &r.body {
                Body::Json(_) => {
                    let schema = typed
                        .iter()
                        .find(|(s, _)| *s == r.status)
                        .map(|(_, v)| v.clone())
                        .unwrap_or(json!({}));
                    json!({"description": describe(r.status), "content": {"application/json": {"schema": schema}}})
                }
                Body::Html => json!({
                    "description": "The home page.",
                    "content": {"text/html": {"schema": {"type": "string"}}}
                }),
                Body::Media(media) => {
                    // The parameters (`charset`, `profile`) stay: a
                    // linkset's profile is part of what it is.
                    // A JSON document of its own type (a linkset, a
                    // server card) is an object; text is a string.
                    let essence = media.split(';').next().unwrap_or("").trim();
                    let schema = if essence.ends_with("json") {
                        json!({"type": "object"})
                    } else {
                        json!({"type": "string"})
                    };
                    let mut content = Map::new();
                    content.insert((*media).into(), json!({"schema": schema}));
                    json!({"description": describe(r.status), "content": content})
                }
                Body::Empty => json!({"description": describe(r.status)}),
                Body::Errors(codes) => error_response(codes),
            };
            let content = match content {
                Value::Object(mut m) if (200..300).contains(&r.status) => {
                    m.insert(
                        "headers".into(),
                        json!({BOOKMARK_HEADER: {"$ref": "#/components/headers/Bookmark"}}),
                    );
                    Value::Object(m)
                }
                // Every 429 says when the same request would pass.
                Value::Object(mut m) if r.status == 429 => {
                    m.insert(
                        "headers".into(),
                        json!({"Retry-After": {"$ref": "#/components/headers/RetryAfter"}}),
                    );
                    Value::Object(m)
                }
                other => other,
            };
            responses.insert(r.status.to_string(), content);
        }
        if body.is_some() && !route.raw {
            responses.insert("413".into(), error_response(&[Code::TooLarge]));
        }
        // Any call the store answers (an MCP tool's, or one that can
        // find nothing) meets a database file gone from under the server
        // as 503, like 413 a response of the server, not of the route.
        if !route.tools.is_empty() || route.declares(Code::NotFound) {
            responses.insert("503".into(), error_response(&[Code::Unavailable]));
        }
        // `handle` refuses a foreign Origin on every POST before the
        // route runs (raw routes, /mcp, answer it in their own shape).
        if route.method == "POST" && !route.raw {
            let mut codes: Vec<Code> = route
                .responses
                .iter()
                .filter(|r| r.status == 403)
                .flat_map(|r| match r.body {
                    Body::Errors(codes) => codes.to_vec(),
                    _ => Vec::new(),
                })
                .collect();
            codes.push(Code::BadOrigin);
            responses.insert("403".into(), error_response(&codes));
        }
        op.insert("responses".into(), Value::Object(responses));
        if !route.tools.is_empty() {
            op.insert("x-mcp-tools".into(), json!(route.tools));
        }
        let path = openapi_path(route.path);
        let entry = self
            .paths
            .entry(path)
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = entry {
            m.insert(route.method.to_ascii_lowercase(), Value::Object(op));
        }
    }

    pub fn finish(mut self) -> Value {
        let schemas = self.gen.take_definitions(true);
        json!({
            "openapi": "3.1.0",
            "info": {
                "title": "Needhave",
                "version": env!("CARGO_PKG_VERSION"),
                "description": format!(
                    "{} Post a need or a have and keep the secret; answer a post with a first message, hidden until its author accepts it; acceptance opens a private thread, reached by its key. The same calls are MCP tools at /mcp.",
                    crate::pages::home::STATEMENT
                ),
            },
            "paths": self.paths,
            "components": {
                "schemas": schemas,
                "parameters": {"Bookmark": {
                    "name": BOOKMARK_HEADER,
                    "in": "header",
                    "required": false,
                    "description": "The x-d1-bookmark of an earlier answer: this call then reads at least as fresh as that answer saw the list (read-your-writes). Calls marked x-reads-from: replica may otherwise be answered from a read replica a moment behind; the others always read the primary. Ignored where the list keeps one copy (needhave serve).",
                    "schema": {"type": "string"}
                }},
                "headers": {"Bookmark": {
                    "description": "The newest D1 bookmark this call saw (or the one it was sent): send it back as x-d1-bookmark to read your own writes. Absent where the list keeps one copy (needhave serve).",
                    "schema": {"type": "string"}
                }, "RetryAfter": {
                    "description": "Whole seconds until the same request would be admitted: when the oldest counted row leaves its hour, or, where that is not the list's to know (a post's waiting replies), a polite interval.",
                    "required": true,
                    "schema": {"type": "integer", "minimum": 1}
                }},
            },
        })
    }
}

fn error_response(codes: &[Code]) -> Value {
    let names: Vec<&str> = codes.iter().map(|c| c.as_str()).collect();
    json!({
        "description": names.join(", "),
        "content": {"application/json": {"schema": {
            "type": "object",
            "required": ["error"],
            "properties": {"error": {"type": "string", "enum": names}}
        }}}
    })
}

fn describe(status: u16) -> &'static str {
    match status {
        200 => "OK.",
        201 => "Created.",
        202 => "Accepted: a notification, no body.",
        400 => "A JSON-RPC parse error or an unsupported MCP-Protocol-Version.",
        403 => "An Origin or Host that is not allowed.",
        _ => "See the operation.",
    }
}

fn openapi_path(path: &str) -> String {
    path.split('/')
        .map(|s| match s.strip_prefix(':') {
            Some(p) => format!("{{{p}}}"),
            None => s.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The handler's path (`posts::create` → `posts_create`); a second
/// route of the same handler also names its path
/// (`mcp_card_document_well_known_mcp_server_card_json`).
fn operation_id(route: &Route, taken: &[String]) -> String {
    let id = route.handler.replace("::", "_");
    if !taken.contains(&id) {
        return id;
    }
    let path: Vec<String> = route
        .path
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    format!("{id}_{}", path.join("_"))
}

/// The whole document, from the table.
pub fn generate(api: &Api) -> Value {
    let mut b = Builder::new();
    // A route the generated schemas do not cover (one a test adds)
    // still gets its operation, without types.
    let mut schemas = (api.openapi_schemas)(&mut b.gen).into_iter();
    for route in api.routes {
        let s = schemas.next().unwrap_or_default();
        b.operation(route, s.body, s.typed, s.query);
    }
    b.finish()
}
