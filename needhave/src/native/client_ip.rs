//! Who is asking, on the native server: the TCP peer, or, when the operator
//! names a header set by their own proxy (`--client-ip-header`), the address
//! that proxy put there.
//!
//! The right-most address, never the left-most: a client may send its own
//! `X-Forwarded-For: 1.2.3.4` and a proxy appends the peer it saw, so only
//! the last element is the proxy's word; the left-most lets anyone pick an
//! IP and skip the per-IP limits. `Forwarded` (RFC 7239) likewise: the last
//! element's `for=`. A value that is not an IP address (`unknown`, an
//! obfuscated `_node`) falls back to the peer.

use std::net::{IpAddr, SocketAddr};

use crate::http::Request;

/// The client's address: from `header` (lowercase name) when set and it
/// holds one, else the peer's.
pub fn client_ip(req: &Request, peer: SocketAddr, header: Option<&str>) -> IpAddr {
    header
        .and_then(|h| from_header(req, h))
        .unwrap_or_else(|| peer.ip())
}

/// The address as `Display` writes it, an IPv4 one digit by digit: the
/// formatting machinery took a twentieth of a `GET /posts`'s own
/// instructions (callgrind), for text that only a write's hash reads.
pub fn text(ip: IpAddr) -> String {
    let IpAddr::V4(v4) = ip else {
        return ip.to_string();
    };
    let mut s = String::with_capacity(15);
    for (i, o) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            s.push('.');
        }
        if o >= 100 {
            s.push(char::from(b'0' + o / 100));
        }
        if o >= 10 {
            s.push(char::from(b'0' + o / 10 % 10));
        }
        s.push(char::from(b'0' + o % 10));
    }
    s
}

fn from_header(req: &Request, name: &str) -> Option<IpAddr> {
    // Repeated header lines make one list, in order: the last line's last
    // element is the right-most.
    let line = req
        .headers
        .iter()
        .rev()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())?;
    let last = line.rsplit(',').next()?.trim();
    let value = if name.eq_ignore_ascii_case("forwarded") {
        last.split(';').find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            k.trim().eq_ignore_ascii_case("for").then_some(v.trim())
        })?
    } else {
        last
    };
    parse_addr(value)
}

/// `192.0.2.1`, `192.0.2.1:4711`, `"[2001:db8::1]:4711"`, `2001:db8::1`.
fn parse_addr(value: &str) -> Option<IpAddr> {
    let v = value.trim().trim_matches('"');
    if let Ok(ip) = v.parse() {
        return Some(ip);
    }
    if let Some(rest) = v.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    // IPv4 with a port: exactly one colon.
    match v.split_once(':') {
        Some((ip, port)) if !port.contains(':') => ip.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip_of(headers: &[(&str, &str)], header: Option<&str>) -> String {
        let mut r = Request::new("POST", "/posts");
        r.headers = headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        client_ip(&r, "10.9.9.9:5000".parse().unwrap(), header).to_string()
    }

    #[test]
    fn the_peer_unless_told() {
        assert_eq!(ip_of(&[("x-forwarded-for", "1.2.3.4")], None), "10.9.9.9");
    }

    #[test]
    fn x_forwarded_for_right_most() {
        let h = Some("x-forwarded-for");
        assert_eq!(
            ip_of(&[("x-forwarded-for", "6.6.6.6, 203.0.113.7")], h),
            "203.0.113.7"
        );
        assert_eq!(
            ip_of(&[("x-forwarded-for", " 203.0.113.7 ")], h),
            "203.0.113.7"
        );
        assert_eq!(
            ip_of(&[("x-forwarded-for", "6.6.6.6,203.0.113.7:5555")], h),
            "203.0.113.7"
        );
        assert_eq!(
            ip_of(&[("x-forwarded-for", "1.1.1.1, 2001:db8::7")], h),
            "2001:db8::7"
        );
        // Two header lines: the proxy's is the last.
        assert_eq!(
            ip_of(
                &[
                    ("x-forwarded-for", "6.6.6.6"),
                    ("X-Forwarded-For", "7.7.7.7, 203.0.113.8")
                ],
                h
            ),
            "203.0.113.8"
        );
        // Missing, empty, or not an address: the peer.
        assert_eq!(ip_of(&[], h), "10.9.9.9");
        assert_eq!(ip_of(&[("x-forwarded-for", "1.2.3.4, ")], h), "10.9.9.9");
        assert_eq!(
            ip_of(&[("x-forwarded-for", "1.2.3.4, unknown")], h),
            "10.9.9.9"
        );
    }

    #[test]
    fn forwarded_last_for() {
        let h = Some("forwarded");
        assert_eq!(
            ip_of(
                &[(
                    "forwarded",
                    "for=6.6.6.6, for=192.0.2.60;proto=http;by=203.0.113.43"
                )],
                h
            ),
            "192.0.2.60"
        );
        assert_eq!(
            ip_of(
                &[(
                    "forwarded",
                    r#"for=6.6.6.6, proto=https;For="[2001:db8:cafe::17]:4711""#
                )],
                h
            ),
            "2001:db8:cafe::17"
        );
        assert_eq!(
            ip_of(&[("forwarded", r#"for="192.0.2.61:8080""#)], h),
            "192.0.2.61"
        );
        assert_eq!(
            ip_of(&[("forwarded", "for=6.6.6.6, for=_hidden")], h),
            "10.9.9.9"
        );
        assert_eq!(
            ip_of(&[("forwarded", "for=6.6.6.6, proto=http")], h),
            "10.9.9.9"
        );
    }

    #[test]
    fn text_as_display_writes_it() {
        for ip in [
            "0.0.0.0",
            "9.10.99.100",
            "127.0.0.1",
            "255.255.255.255",
            "10.200.3.45",
            "2001:db8::1",
            "::ffff:192.0.2.1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(text(ip), ip.to_string());
        }
        for n in 0..=255u8 {
            let ip = IpAddr::from([n, n / 3, n / 10, 255 - n]);
            assert_eq!(text(ip), ip.to_string());
        }
    }

    #[test]
    fn a_single_value_header() {
        assert_eq!(
            ip_of(&[("x-real-ip", "198.51.100.4")], Some("x-real-ip")),
            "198.51.100.4"
        );
    }
}
