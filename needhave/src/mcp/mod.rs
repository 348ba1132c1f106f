//! MCP: the list's tools over JSON-RPC.
//!
//! `server.rs` speaks JSON-RPC (initialize, tools/list, tools/call, ping,
//! batches) for both transports; `tools.rs` runs the table's tool plans
//! through an [`Exec`](tools::Exec): in process here, over HTTP in the stdio
//! server. This file is the `POST /mcp` endpoint: stateless Streamable HTTP
//! with JSON responses, and the HTTP-only checks (Origin, Host, protocol
//! version header).

pub mod server;
pub mod tools;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::http::{Request, Response};
use crate::platform::BoxFuture;
use crate::Ctx;

/// Newest first; the first is what a client that offers nothing gets.
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// A JSON-RPC 2.0 request or notification (or an array of them: a batch).
#[derive(Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct JsonRpcRequest {
    /// Always "2.0".
    pub jsonrpc: String,
    /// Absent in a notification.
    #[serde(default)]
    pub id: Option<Value>,
    /// `initialize`, `notifications/initialized`, `tools/list`, `tools/call` or `ping`.
    pub method: String,
    #[serde(default)]
    pub params: Option<Value>,
}

/// A JSON-RPC 2.0 response (or an array of them, for a batch).
#[derive(Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct JsonRpcResponse {
    pub jsonrpc: String,
    pub id: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// What `POST /mcp` takes: one message, or a batch of at most 20.
#[derive(Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum JsonRpcPayload {
    One(JsonRpcRequest),
    Batch(Vec<JsonRpcRequest>),
}

/// What `POST /mcp` answers with 200: one response, or a batch's responses.
#[derive(Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum JsonRpcReply {
    One(JsonRpcResponse),
    Batch(Vec<JsonRpcResponse>),
}

/// Tool plans call routes through the dispatcher, in process: the same
/// handlers, limits and client IP as the HTTP calls, and no network hop.
struct InProcess<'a> {
    ctx: &'a Ctx,
}

impl tools::Exec for InProcess<'_> {
    fn call<'b>(
        &'b self,
        method: &'b str,
        path: &'b str,
        body: Option<Value>,
    ) -> BoxFuture<'b, Result<(u16, Value), String>> {
        Box::pin(async move {
            let mut req = Request::new(method, path);
            if let Some(b) = body {
                req.body = serde_json::to_vec(&b).unwrap_or_default();
            }
            // Handed down (and boxed): the dispatcher is what called this
            // endpoint.
            let resp = (self.ctx.api.dispatch)(&req, self.ctx).await;
            let value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
            Ok((resp.status, value))
        })
    }
}

fn rpc_error(status: u16, code: i64, message: &str) -> Response {
    Response::json(
        status,
        &json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}),
    )
}

pub async fn endpoint(req: &Request, ctx: &Ctx) -> Response {
    if let Some(allowed) = &ctx.config.allowed_hosts {
        let ok = req
            .header("host")
            .is_some_and(|h| crate::origin::host_allowed(h, allowed));
        if !ok {
            return rpc_error(403, -32600, "Host not allowed");
        }
    }
    if let Some(origin) = req.header("origin") {
        if !crate::origin::origin_allowed(req, &ctx.config, origin) {
            return rpc_error(403, -32600, "Origin not allowed");
        }
    }
    if let Some(v) = req.header("mcp-protocol-version") {
        if !PROTOCOL_VERSIONS.contains(&v.trim()) {
            return rpc_error(400, -32600, "Unsupported MCP-Protocol-Version");
        }
    }
    match server::handle_payload(ctx.api, &req.body, &InProcess { ctx }).await {
        server::Outcome::Reply(v) => Response::json(200, &v),
        server::Outcome::ParseError(v) => Response::json(400, &v),
        server::Outcome::Accepted => Response::empty(202),
    }
}
