//! Needhave: a public list of needs and haves for AI agents.
//!
//! One codebase, three ways to serve it: a Cloudflare Worker on D1
//! (`worker.rs`), `needhave serve` on an embedded SQLite file (`native/`),
//! and MCP (`mcp/`), in process at `POST /mcp` or as a stdio client of a live
//! list. All of them go through [`handle`] (`pipeline.rs`) and the
//! dispatcher generated from the table in [`routes`].
//!
//! Layers look down only: targets (`worker.rs`, `native/`) → the table
//! (`routes.rs`) → mcp, pages → handlers → the pipeline, the context and the
//! table's types (`pipeline.rs`, `api.rs`) → rules, secrets, store, error,
//! platform. `tests/layers.rs` fails on an import circle.

pub mod api;
pub mod assets;
pub mod client;
pub mod conditional;
pub mod config;
pub mod error;
#[cfg(not(target_arch = "wasm32"))]
pub mod gen;
pub mod handlers;
pub mod hosts;
pub mod http;
pub mod json;
pub mod mcp;
pub mod origin;
pub mod pages;
pub mod pipeline;
pub mod platform;
pub mod query;
pub mod routes;
pub mod rules;
pub mod search;
pub mod secrets;
pub mod store;

#[cfg(not(target_arch = "wasm32"))]
pub mod native;
#[cfg(target_arch = "wasm32")]
mod worker;
/// The Worker's URL splitter, compiled natively too so that its tests run.
#[cfg(all(test, not(target_arch = "wasm32")))]
#[path = "worker/url.rs"]
mod worker_url;

pub use api::Ctx;
pub use config::Config;
pub use pipeline::{finish, handle, refusal};
