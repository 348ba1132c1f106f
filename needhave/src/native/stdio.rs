//! `needhave mcp`: a stdio MCP server that is a client of a live list.
//!
//! Newline-delimited JSON-RPC on stdin/stdout, logs on stderr only, exit on
//! stdin EOF. It holds no rows: every tool call is the table's plan made as
//! HTTP calls to `NEEDHAVE_LIST_URL`. A list that cannot be reached becomes
//! an `isError` result naming the URL and the cause.

use std::io::{BufRead, Write};
use std::time::Duration;

use serde_json::Value;

use crate::mcp::era::Transport;
use crate::mcp::server::{handle_payload, Outcome};
use crate::mcp::tools::Exec;
use crate::platform::BoxFuture;

pub const DEFAULT_LIST_URL: &str = "https://needhave.io";

/// The longest a whole HTTP call to the list may take, in seconds; the
/// `NEEDHAVE_LIST_TIMEOUT` environment variable may shorten or lengthen it.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

pub struct HttpExec {
    base: String,
    agent: ureq::Agent,
}

impl HttpExec {
    pub fn new(base: &str) -> Self {
        Self::with_timeout(base, Duration::from_secs(DEFAULT_TIMEOUT_SECS))
    }

    /// `timeout` bounds each call as a whole; connecting gets at most 10 s of it.
    pub fn with_timeout(base: &str, timeout: Duration) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_connect(Some(timeout.min(Duration::from_secs(10))))
            .timeout_global(Some(timeout))
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

fn timeout_from_env() -> Duration {
    std::env::var("NEEDHAVE_LIST_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(Duration::from_secs(DEFAULT_TIMEOUT_SECS), |s| {
            Duration::from_secs_f64(s.min(3600.0))
        })
}

/// Serves stdin until EOF.
pub fn run(base: &str) -> std::io::Result<()> {
    let exec = HttpExec::with_timeout(base, timeout_from_env());
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    tracing::info!("needhave mcp: a client of {base}");
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout();
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bytes, not `lines()`: a line that is not UTF-8 is a parse error to
        // answer, not a reason to stop serving.
        if stdin.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let outcome = handle_payload(&crate::routes::API, Transport::Stdio, &line, &exec);
        let reply = match runtime.block_on(outcome) {
            Outcome::Reply { body, .. } => body,
            Outcome::Accepted => continue,
        };
        writeln!(stdout, "{reply}")?;
        stdout.flush()?;
    }
}
