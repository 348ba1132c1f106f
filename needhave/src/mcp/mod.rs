//! MCP: the list's tools over JSON-RPC, in the 2025 revisions and in
//! 2026-07-28 at once.
//!
//! `server.rs` is the JSON-RPC core (methods, batches) for both transports;
//! `era.rs` is the envelope of each revision (how a request says its
//! version, which methods exist, how a result is wrapped, which status an
//! error gets); `tools.rs` lists the table's tools and runs their plans
//! through an [`Exec`](tools::Exec): in process here, over HTTP in the
//! stdio server. This file is the `POST /mcp` endpoint: stateless
//! Streamable HTTP with JSON responses, and the HTTP-only checks (Origin,
//! Host). `card.rs` is the server card, served beside the endpoint; it and
//! `skills.rs` fill their documents as `crate::pages` does.

pub mod batch;
pub mod card;
pub mod documents;
pub mod era;
pub mod identity;
pub mod server;
pub mod skills;
pub mod tools;

pub use identity::{
    icons, server_info, DESCRIPTION, ICON, LEGACY_VERSIONS, MODERN_VERSIONS, PROTOCOL_VERSIONS,
    WEBSITE,
};

use needhave_macros::schema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::Ctx;
use crate::http::{Request, Response, JSON};
use crate::platform::BoxFuture;

/// A JSON-RPC 2.0 request or notification (or an array of them: a batch).
#[schema]
#[derive(Deserialize)]
pub struct JsonRpcRequest {
    /// Always "2.0".
    pub jsonrpc: String,
    /// Absent in a notification.
    #[serde(default)]
    pub id: Option<Value>,
    /// `initialize`, `notifications/initialized`, `tools/list`, `tools/call`, `ping` (2025), or `server/discover`, `tools/list`, `tools/call` (2026-07-28).
    pub method: String,
    #[serde(default)]
    pub params: Option<Value>,
}

/// A JSON-RPC 2.0 response (or an array of them, for a batch).
#[schema]
#[derive(Serialize)]
pub struct JsonRpcResponse {
    pub jsonrpc: String,
    pub id: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// What `POST /mcp` takes: one message, or a batch of at most 20.
#[schema]
#[derive(Deserialize)]
#[serde(untagged)]
pub enum JsonRpcPayload {
    One(JsonRpcRequest),
    Batch(Vec<JsonRpcRequest>),
}

/// What `POST /mcp` answers with 200: one response, or a batch's responses.
#[schema]
#[derive(Serialize)]
#[serde(untagged)]
pub enum JsonRpcReply {
    One(JsonRpcResponse),
    Batch(Vec<JsonRpcResponse>),
}

/// Tool plans call routes through the dispatcher, in process: the same
/// handlers, limits and client IP as the HTTP calls, and no network hop.
struct InProcess<'a> {
    ctx: &'a Ctx,
    req: &'a Request,
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
            let resp = self.ctx.api.dispatch(&req, self.ctx).await;
            let value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
            Ok((resp.status, value))
        })
    }

    fn origin(&self) -> String {
        crate::origin::serving(self.req, &self.ctx.config)
    }
}

/// A refusal before the body is handled, with the request's id when the
/// body has one.
fn refuse(req: &Request, status: u16, code: i64, message: &'static str) -> Response {
    let e = era::RpcError::new(code, message);
    Response::new(status, JSON, server::refuse(&req.body, &e))
}

pub async fn endpoint(req: &Request, ctx: &Ctx) -> Response {
    if let Some(allowed) = &ctx.config.allowed_hosts {
        let ok = req
            .header("host")
            .is_some_and(|h| crate::hosts::host_allowed(h, allowed));
        if !ok {
            return refuse(req, 403, -32600, "Host not allowed");
        }
    }
    if let Some(origin) = req.header("origin") {
        if !crate::origin::origin_allowed(req, &ctx.config, origin) {
            return refuse(req, 403, -32600, "Origin not allowed");
        }
    }
    // An `Mcp-Session-Id` is ignored: there are no sessions in any era.
    let headers = era::Headers {
        protocol_version: req.header("mcp-protocol-version"),
        method: req.header("mcp-method"),
        name: req.header("mcp-name"),
        repeated: ["MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"]
            .into_iter()
            .find(|name| {
                let lines = req
                    .headers
                    .iter()
                    .filter(|(n, _)| n.eq_ignore_ascii_case(name));
                lines.count() > 1
            }),
    };
    let transport = era::Transport::Http(headers);
    match server::handle_payload(ctx.api, transport, &req.body, &InProcess { ctx, req }).await {
        server::Outcome::Reply { status, body } => Response::new(status, JSON, body),
        server::Outcome::Accepted => Response::empty(202),
    }
}
