//! `needhave mcp`: a stdio MCP server that is a client of a live list.
//!
//! Newline-delimited JSON-RPC on stdin/stdout, logs on stderr only, exit on
//! stdin EOF. It holds no rows: every tool call is the table's plan made as
//! HTTP calls to `NEEDHAVE_LIST_URL`. A list that cannot be reached becomes
//! an `isError` result naming the URL and the cause. It speaks both eras
//! through the same core as `POST /mcp` (`mcp::server`), with no headers.
//!
//! Read-your-writes: the Worker may answer a read from a D1 replica that has
//! not seen a write yet, and names how far each answer had seen in an
//! `x-d1-bookmark` header. This server keeps the last one and sends it with
//! the next call, so its client reads its own writes (a post it just
//! created, a reply it just accepted) without knowing about replicas.

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

/// The header the list names its D1 bookmark in, both ways.
pub const BOOKMARK: &str = "x-d1-bookmark";

pub struct HttpExec {
    base: String,
    agent: ureq::Agent,
    /// The newest bookmark the list answered with.
    bookmark: std::sync::Mutex<Option<String>>,
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
            bookmark: std::sync::Mutex::new(None),
        }
    }

    /// The bookmark to send with the next call, if the list gave one.
    pub fn bookmark(&self) -> Option<String> {
        self.bookmark.lock().ok().and_then(|b| b.clone())
    }

    /// Keeps a bookmark the list answered with: a short header-safe token,
    /// or nothing (a list that sends garbage gets nothing sent back).
    fn keep_bookmark(&self, value: Option<&str>) {
        let Some(v) = value.map(str::trim) else {
            return;
        };
        let safe = !v.is_empty() && v.len() <= 1024 && v.bytes().all(|b| b.is_ascii_graphic());
        if let (true, Ok(mut b)) = (safe, self.bookmark.lock()) {
            *b = Some(v.to_string());
        }
    }

    fn call_blocking(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value), String> {
        let url = format!("{}{}", self.base, path);
        let bookmark = self.bookmark();
        let result = match (method, body) {
            ("GET", _) => {
                let mut req = self.agent.get(&url);
                if let Some(b) = &bookmark {
                    req = req.header(BOOKMARK, b);
                }
                req.call()
            }
            (_, body) => {
                let mut req = self.agent.post(&url);
                if let Some(b) = &bookmark {
                    req = req.header(BOOKMARK, b);
                }
                match body {
                    Some(b) => req
                        .header("content-type", "application/json")
                        .send(b.to_string().as_bytes()),
                    None => req.send_empty(),
                }
            }
        };
        let mut resp =
            result.map_err(|e| format!("could not reach the list at {}: {e}", self.base))?;
        let status = resp.status().as_u16();
        self.keep_bookmark(resp.headers().get(BOOKMARK).and_then(|v| v.to_str().ok()));
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

    /// The list this server is a client of: the skill it serves is the
    /// one that list serves at its well-known path.
    fn origin(&self) -> String {
        self.base.clone()
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
        stdout.write_all(&reply)?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
    }
}
