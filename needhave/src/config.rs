//! What the operator decides, shared by every request: plain data, read by
//! the request's context and by the browser rules in `origin.rs`.

/// What the operator decides, shared by every request.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Salt of the client-IP hash kept for the per-IP limits.
    pub ip_salt: String,
    /// Browser origins allowed besides the serving host's own (`*`: all);
    /// see `origin.rs`.
    pub allowed_origins: Vec<String>,
    /// Host names (without port) `POST /mcp` answers to; `None` answers any.
    /// A server bound to loopback sets the loopback names: DNS-rebinding
    /// protection.
    pub allowed_hosts: Option<Vec<String>>,
}
