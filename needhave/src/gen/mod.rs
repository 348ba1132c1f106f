//! What is generated at build time, natively, and never served as code:
//! the OpenAPI document (`openapi`), the MCP tools' schemas and listing
//! (`tools`), the fixed MCP answers and the server card's tools (`mcp`),
//! the home page and the discovery documents (`documents`).
//!
//! Their outputs are checked in (`needhave/openapi.json`, `mcp.min.json`,
//! `tool-schemas.json`, `documents/`) and served from those files on every
//! target, so the Worker links no schema library and carries no renderer;
//! `tests/golden.rs` and `tests/mcp_bytes.rs` fail when a checked-in file
//! drifts from what these make of the table. Nothing at runtime imports
//! this module: it sits above `pages` and `mcp`, whose served constants it
//! reads, and takes the table as a parameter.

pub mod documents;
pub mod mcp;
pub mod openapi;
pub mod tools;
