//! `needhave mcp`: a stdio MCP server that is a client of a live list.
//!
//! Newline-delimited JSON-RPC on stdin/stdout, logs on stderr only, exit on
//! stdin EOF. It holds no rows: every tool call is the table's plan made as
//! HTTP calls to `NEEDHAVE_LIST_URL`. A list that cannot be reached becomes
//! an `isError` result naming the URL and the cause.

use std::io::{BufRead, Write};
use std::time::Duration;

use serde_json::Value;

use crate::mcp::server::{handle_payload, Outcome};
use crate::mcp::tools::Exec;
use crate::platform::BoxFuture;

pub const DEFAULT_LIST_URL: &str = "https://needhave.io";

pub struct HttpExec {
    base: String,
    agent: ureq::Agent,
}

impl HttpExec {
    pub fn new(base: &str) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(Duration::from_secs(30)))
            .http_status_as_error(false)
            .user_agent(concat!("needhave-mcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        HttpExec {
            base: base.trim_end_matches('/').to_string(),
            agent,
        }
    }

    fn call_blocking(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value), String> {
        let url = format!("{}{}", self.base, path);
        let result = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            (_, Some(b)) => self
                .agent
                .post(&url)
                .header("content-type", "application/json")
                .send(b.to_string().as_bytes()),
            (_, None) => self.agent.post(&url).send_empty(),
        };
        let mut resp =
            result.map_err(|e| format!("could not reach the list at {}: {e}", self.base))?;
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .with_config()
            .limit(4 * 1024 * 1024)
            .read_to_string()
            .map_err(|e| {
                format!(
                    "could not read the answer of the list at {}: {e}",
                    self.base
                )
            })?;
        let value = serde_json::from_str(&text).map_err(|_| {
            format!(
                "the list at {} answered {status} with something that is not JSON",
                self.base
            )
        })?;
        Ok((status, value))
    }
}

impl Exec for HttpExec {
    fn call<'a>(
        &'a self,
        method: &'a str,
        path: &'a str,
        body: Option<Value>,
    ) -> BoxFuture<'a, Result<(u16, Value), String>> {
        // The stdio server answers one line at a time; blocking here is the
        // simplest correct thing.
        let result = self.call_blocking(method, path, body);
        Box::pin(async move { result })
    }
}

/// Serves stdin until EOF.
pub fn run(base: &str) -> std::io::Result<()> {
    let exec = HttpExec::new(base);
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    tracing::info!("needhave mcp: a client of {base}");
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match runtime.block_on(handle_payload(line.as_bytes(), &exec)) {
            Outcome::Reply(v) | Outcome::ParseError(v) => v,
            Outcome::Accepted => continue,
        };
        writeln!(stdout, "{reply}")?;
        stdout.flush()?;
    }
    Ok(())
}
