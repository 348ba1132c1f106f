//! The Host names a server answers `POST /mcp` for: on loopback, the
//! loopback names (DNS-rebinding protection: a page on another site whose
//! name resolves to 127.0.0.1 still sends its own name as `Host`), and any
//! the operator adds.

use std::net::SocketAddr;

/// The Host names `POST /mcp` answers to, for a server listening on `local`: on loopback, the loopback names
/// (DNS-rebinding protection) and the operator's; `*` turns the check off.
pub fn allowed_hosts(local: SocketAddr, extra: &[String]) -> Option<Vec<String>> {
    if extra.iter().any(|h| h == "*") {
        None
    } else if local.ip().is_loopback() {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .map(String::from)
            .to_vec();
        hosts.extend(extra.iter().cloned());
        Some(hosts)
    } else if extra.is_empty() {
        None
    } else {
        Some(extra.to_vec())
    }
}

/// Host name without the port (`[::1]:8787` → `[::1]`).
pub fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        // Up to the `]`; without one (`[::1`), the whole, and no panic.
        host.find(']')
            .and_then(|end| host.get(..=end))
            .unwrap_or(host)
    } else {
        host.split(':').next().unwrap_or(host)
    }
}

/// Whether the Host header names an allowed host: by name (`localhost`), or
/// by name and port (`example.com:8443`) when the operator gave a port.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let host = host.trim();
    allowed
        .iter()
        .any(|a| a.eq_ignore_ascii_case(host) || a.eq_ignore_ascii_case(host_name(host)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names() {
        assert_eq!(host_name("[::1]:8787"), "[::1]");
        assert_eq!(host_name("[::1]"), "[::1]");
        assert_eq!(host_name("[::1"), "[::1");
        assert_eq!(host_name("localhost:8787"), "localhost");
        assert_eq!(host_name("example.com"), "example.com");
        assert!(host_allowed("LOCALHOST:1", &["localhost".into()]));
        assert!(!host_allowed("[::1", &["[::1]".into()]));
    }
}
