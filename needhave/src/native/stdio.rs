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
//!
//! Redirects are never followed, on a read or a write. The list's calls
//! never answer one, so a 3xx means `NEEDHAVE_LIST_URL` names something
//! else: an `http://` address upgraded to `https://`, a moved host, a proxy's
//! login page. Following it would turn a write into a `GET` of whatever is
//! there (a `POST` answered 301 or 302 is re-sent as a `GET`, and the public
//! list read back looked like a success), and on a read it would carry the
//! bookmark to another origin, or hide a wrong address that the operator
//! should mend once. So a redirect is an `isError` result naming the URL, the
//! status and where it points; for a write it says that nothing was written.
//!
//! An answer is held to the tool's output schema, the one `tools/list`
//! gives clients: a `2xx` that is not of the tool's shape (`{"posts": 5}`,
//! a JSON page of some other service) is an `isError` result, not
//! structured content a client would trust. Fields the schema does not name
//! are accepted and left out of the result: a newer list may answer more
//! (`created_at`), and clients check structured content against the
//! advertised schema, which allows no other field. One small walk over the
//! checked-in schemas both checks and keeps (`conform`); they use only
//! `type`, `enum`, `properties`, `required`, `items` and `anyOf`, and a
//! keyword it does not know fails every answer, so the tests catch a new one.
//!
//! The list has no accounts, so a `NEEDHAVE_LIST_URL` with credentials in it
//! (`https://user:pass@host`) is refused at start rather than used for Basic
//! auth: the URL is named in logs, error results and the served skill, and
//! a list client has no use for them. Wherever a URL is shown (the refusal,
//! a redirect's target) its userinfo is masked (`redact`).

use std::io::{BufRead, Write};
use std::time::Duration;

use serde_json::Value;

use crate::api::Tool;
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
    /// `base` as errors and logs show it: `redact`ed.
    shown: String,
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
            .max_redirects(0)
            .user_agent(concat!("needhave-mcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let base = base.trim_end_matches('/').to_string();
        HttpExec {
            shown: redact(&base),
            base,
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
            result.map_err(|e| format!("could not reach the list at {}: {e}", self.shown))?;
        let status = resp.status().as_u16();
        if (300..400).contains(&status) {
            let to = resp.headers().get("location").and_then(|v| v.to_str().ok());
            return Err(self.redirected(method, path, status, to));
        }
        self.keep_bookmark(resp.headers().get(BOOKMARK).and_then(|v| v.to_str().ok()));
        let text = resp
            .body_mut()
            .with_config()
            .limit(4 * 1024 * 1024)
            .read_to_string()
            .map_err(|e| {
                format!(
                    "could not read the answer of the list at {}: {e}",
                    self.shown
                )
            })?;
        let value = serde_json::from_str(&text).map_err(|_| {
            format!(
                "the list at {} answered {status} with something that is not JSON",
                self.shown
            )
        })?;
        Ok((status, value))
    }

    /// The cause for a redirect the list answered, which is never followed
    /// (see the module doc).
    fn redirected(&self, method: &str, path: &str, status: u16, to: Option<&str>) -> String {
        let to = to.map_or_else(|| "nowhere".to_string(), |l| redact(l.trim()));
        let what = if method == "GET" {
            "not followed"
        } else {
            "a write is never sent on, so nothing was written"
        };
        format!(
            "the list at {} answered {method} {path} with {status}, a redirect to {to}: {what}; \
             set NEEDHAVE_LIST_URL to the address the list answers at",
            self.shown
        )
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

    fn answer(&self, tool: &Tool, body: Value) -> Result<Value, String> {
        let tools = crate::mcp::documents::get("tools/list")["tools"].as_array();
        let schema = tools
            .into_iter()
            .flatten()
            .find(|t| t["name"] == tool.name)
            .and_then(|t| t.get("outputSchema"));
        let kept = schema.map_or(Err(String::from("no output schema")), |s| conform(s, &body));
        kept.map_err(|why| {
            format!(
                "the list at {} answered {} with something that is not its answer ({why})",
                self.shown, tool.name
            )
        })
    }
}

/// `value` as `schema` describes it: `Ok` with only the fields the schema
/// names (at every depth), or `Err` saying where it does not fit. Fields
/// the schema does not name are dropped, not refused (see the module doc).
fn conform(schema: &Value, value: &Value) -> Result<Value, String> {
    let Some(schema) = schema.as_object() else {
        return Err("a schema that is not an object".into());
    };
    for key in schema.keys() {
        if !matches!(
            key.as_str(),
            "type"
                | "enum"
                | "properties"
                | "required"
                | "items"
                | "anyOf"
                | "description"
                | "additionalProperties"
        ) {
            return Err(format!("schema keyword `{key}` not understood"));
        }
    }
    if let Some(ty) = schema.get("type").and_then(Value::as_str) {
        if !crate::mcp::tools::is_of_type(value, ty) {
            return Err(format!("{value} is not of type {ty}"));
        }
    }
    if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
        if !choices.contains(value) {
            return Err(format!(
                "{value} is not one of {}",
                Value::from(choices.clone())
            ));
        }
    }
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        // The branch that keeps the most of the answer: a thread read after
        // acceptance fits the thread's branch too, which lacks `accepted`.
        let kept_fields = |v: &Value| v.as_object().map_or(0, serde_json::Map::len);
        let mut best: Option<Value> = None;
        let mut why = Vec::new();
        for branch in branches {
            match conform(branch, value) {
                Ok(kept)
                    if best
                        .as_ref()
                        .is_none_or(|b| kept_fields(&kept) > kept_fields(b)) =>
                {
                    best = Some(kept)
                }
                Ok(_) => {}
                Err(e) => why.push(e),
            }
        }
        return best.ok_or_else(|| why.join("; or "));
    }
    if let Some(object) = value.as_object() {
        let required = schema.get("required").and_then(Value::as_array);
        for name in required.into_iter().flatten().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                return Err(format!("`{name}` is missing"));
            }
        }
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return Ok(value.clone());
        };
        let mut kept = serde_json::Map::new();
        for (name, field) in object {
            if let Some(property) = properties.get(name) {
                let v = conform(property, field).map_err(|e| format!("`{name}`: {e}"))?;
                kept.insert(name.clone(), v);
            }
        }
        return Ok(Value::Object(kept));
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        let kept = array.iter().map(|v| conform(items, v));
        return kept.collect::<Result<Vec<_>, _>>().map(Value::Array);
    }
    Ok(value.clone())
}

/// `url` with the userinfo of its authority (`user:pass@`) masked as `***@`,
/// for every place a URL is shown; anything that is not a URL as it is.
pub fn redact(url: &str) -> String {
    match split_userinfo(url) {
        Some((scheme, host_on)) => format!("{scheme}://***@{host_on}"),
        None => url.to_string(),
    }
}

/// `(scheme, what follows the userinfo's @)` when `url`'s authority has
/// userinfo.
fn split_userinfo(url: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..end].rfind('@')?;
    Some((scheme, &rest[at + 1..]))
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
    if split_userinfo(base).is_some() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "NEEDHAVE_LIST_URL {} holds credentials: the list has no accounts; \
                 give its address without `user:password@`",
                redact(base)
            ),
        ));
    }
    let exec = HttpExec::with_timeout(base, timeout_from_env());
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    tracing::info!("needhave mcp: a client of {}", exec.shown);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redact_masks_userinfo_and_nothing_else() {
        for (url, shown) in [
            ("http://u:p@h:1/x", "http://***@h:1/x"),
            ("https://token@h", "https://***@h"),
            ("https://a@b:c@h/", "https://***@h/"),
            ("https://h/a@b", "https://h/a@b"),
            ("https://h?q=a@b", "https://h?q=a@b"),
            ("https://h", "https://h"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(redact(url), shown, "{url}");
        }
    }

    /// A keyword the walk does not know fails the answer rather than being
    /// passed over; every tool's schema uses only known ones.
    #[test]
    fn conform_knows_every_keyword_of_the_tools_schemas() {
        let schema = json!({"type": "object", "minProperties": 1});
        assert!(conform(&schema, &json!({"a": 1})).is_err());
        let tools = crate::mcp::documents::get("tools/list")["tools"].as_array();
        let mut nested: Vec<&Value> = tools
            .into_iter()
            .flatten()
            .map(|t| &t["outputSchema"])
            .collect();
        assert_eq!(nested.len(), 8);
        // The walk reads a node's keywords before its value: any value shows
        // whether they are known.
        while let Some(s) = nested.pop() {
            let r = conform(s, &json!(null));
            assert!(!r.is_err_and(|e| e.contains("not understood")), "{s}");
            nested.extend(
                s["properties"]
                    .as_object()
                    .into_iter()
                    .flat_map(|p| p.values()),
            );
            nested.extend(s["anyOf"].as_array().into_iter().flatten());
            nested.extend(s.get("items"));
        }
    }
}
