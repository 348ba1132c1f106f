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
    /// `scheme://host[:port]` every document names as the list's origin,
    /// whatever the request says (`--public-url`).
    pub public_url: Option<String>,
    /// Whether `X-Forwarded-Proto` and `X-Forwarded-Host` are the
    /// operator's proxy speaking (the native server's `--client-ip-header`
    /// opt-in); otherwise any client could write them into documents that
    /// caches keep.
    pub trust_forwarded: bool,
    /// Where to write about abuse, shown on the home page when set
    /// (`--abuse-contact`, the Worker's `ABUSE_CONTACT`).
    pub abuse_contact: Option<String>,
}
