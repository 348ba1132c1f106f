//! The native targets: `needhave serve` (hyper on SQLite) and `needhave mcp`
//! (a stdio MCP server that is a client of a live list).

pub mod budget;
pub mod cli;
pub mod client_ip;
pub mod conn;
pub mod logs;
pub mod metrics;
pub mod serve;
pub mod stdio;
pub mod sweeper;
