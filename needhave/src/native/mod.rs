//! The native targets: `needhave serve` (hyper on SQLite), `needhave mcp`
//! (a stdio MCP server that is a client of a live list), and the
//! operator's commands beside them (`needhave remove`, `needhave reports`).

pub mod budget;
pub mod cli;
pub mod client_ip;
pub mod conn;
pub mod logs;
pub mod metrics;
pub mod operator;
pub mod serve;
pub mod stdio;
