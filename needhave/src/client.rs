//! Who a client is, for the per-client limits: the key of an address (an
//! IPv4 address, or the /64 of an IPv6 one), the key of its site (the /48
//! of an IPv6 address), and the salted hashes kept of both in place of the
//! address.
//!
//! One host usually holds a whole IPv6 /64, so a client is its /64; a
//! site that owns a /48 holds 65,536 of those, so the /48 is counted too,
//! at ten times each per-client rate (`rules`). IPv4 (also when mapped
//! into IPv6) is counted per address and has no site.

use std::net::Ipv6Addr;

use crate::secrets::digest_hex;

/// The salted hash kept in place of a client's address: what every row
/// keeps for the per-client limits (`ip_hash`).
pub fn ip_hash(salt: &str, ip: &str) -> String {
    salted(salt, &client_key(ip.trim()))
}

/// The salted hash of the client's site (its IPv6 /48), kept beside
/// [`ip_hash`] for the per-site limits; `None` for an IPv4 client.
pub fn site_hash(salt: &str, ip: &str) -> Option<String> {
    site_key(ip.trim()).map(|key| salted(salt, &key))
}

/// Salt, a zero byte, the key: the framing every kept row depends on. A
/// site key (`…/48`) never equals a client key (`…/64` or an IPv4).
fn salted(salt: &str, key: &str) -> String {
    digest_hex(&[salt.as_bytes(), &[0], key.as_bytes()])
}

/// What a client is counted by: an IPv6 address's /64 as `std::net` prints
/// it (`2001:db8:1:2::/64`), a v4-mapped one as its IPv4, anything else (an
/// IPv4, which is kept as it came) as it is.
pub fn client_key(ip: &str) -> String {
    match ip.parse::<Ipv6Addr>() {
        Err(_) => ip.to_string(),
        Ok(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("{}/64", prefix(v6, 4)),
        },
    }
}

/// What a client's site is counted by: an IPv6 address's /48 as `std::net`
/// prints it (`2001:db8:1::/48`); `None` for an IPv4 address (also mapped
/// into IPv6) and for anything that is not an IPv6 address.
pub fn site_key(ip: &str) -> Option<String> {
    let v6 = ip.parse::<Ipv6Addr>().ok()?;
    match v6.to_ipv4_mapped() {
        Some(_) => None,
        None => Some(format!("{}/48", prefix(v6, 3))),
    }
}

/// The address with only its first `groups` groups kept, the rest zero.
fn prefix(v6: Ipv6Addr, groups: usize) -> Ipv6Addr {
    let mut seg = v6.segments();
    seg[groups..].fill(0);
    Ipv6Addr::from(seg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::sha256_hex;

    #[test]
    fn hashes() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(ip_hash("a", "1.2.3.4"), ip_hash("b", "1.2.3.4"));
        assert_ne!(ip_hash("a", "1.2.3.4"), sha256_hex("1.2.3.4"));
        assert_ne!(ip_hash("a", "1.2.3.4"), ip_hash("a", "1.2.3.5"));
        // The framing kept rows depend on: salt, a zero byte, the key.
        assert_eq!(ip_hash("a", " 1.2.3.4 "), sha256_hex("a\u{0}1.2.3.4"));
        assert_eq!(
            ip_hash("s", "2001:db8:1:2:aaaa::1"),
            sha256_hex("s\u{0}2001:db8:1:2::/64")
        );
    }

    #[test]
    fn ipv6_counts_per_64() {
        let h = |ip| ip_hash("s", ip);
        assert_eq!(h("2001:db8:1:2:aaaa::1"), h("2001:db8:1:2:ffff:1:2:3"));
        assert_ne!(h("2001:db8:1:2::1"), h("2001:db8:1:3::1"));
        assert_eq!(h("::ffff:192.0.2.1"), h("192.0.2.1"));
        assert_ne!(h("::ffff:192.0.2.1"), h("192.0.2.2"));
    }

    /// The keys of addresses in each spelling: the /64 and /48 as
    /// `std::net` prints them, IPv4 (also mapped) as its address, anything
    /// that is not an IPv6 address as it came and without a site.
    #[test]
    fn keys() {
        for (ip, key, site) in [
            (
                "2001:db8:1:2:aaaa::1",
                "2001:db8:1:2::/64",
                Some("2001:db8:1::/48"),
            ),
            (
                "2001:0DB8:0001:0002:0:0:0:1",
                "2001:db8:1:2::/64",
                Some("2001:db8:1::/48"),
            ),
            ("::1", "::/64", Some("::/48")),
            ("::", "::/64", Some("::/48")),
            ("0:0:1::", "0:0:1::/64", Some("0:0:1::/48")),
            ("1:0:0:1::", "1:0:0:1::/64", Some("1::/48")),
            ("1:0:1:0:1::", "1:0:1::/64", Some("1:0:1::/48")),
            ("::ffff:192.0.2.1", "192.0.2.1", None),
            ("::ffff:c000:201", "192.0.2.1", None),
            ("::192.0.2.1", "::/64", Some("::/48")),
            ("192.0.2.1", "192.0.2.1", None),
            ("01.2.3.4", "01.2.3.4", None),
            ("fe80::1%eth0", "fe80::1%eth0", None),
            ("1::2::3", "1::2::3", None),
            ("1:2:3:4:5:6:7", "1:2:3:4:5:6:7", None),
            ("::ffff:1.2.3.04", "::ffff:1.2.3.04", None),
            ("", "", None),
        ] {
            assert_eq!(client_key(ip), key, "{ip:?}");
            assert_eq!(site_key(ip).as_deref(), site, "{ip:?}");
        }
    }

    #[test]
    fn a_site_is_its_48() {
        let s = |ip| site_hash("s", ip);
        assert_eq!(s("2001:db8:1:2::1"), s("2001:db8:1:ffff:1:2:3:4"));
        assert_ne!(s("2001:db8:1::1"), s("2001:db8:2::1"));
        assert_eq!(s("192.0.2.1"), None);
        assert_eq!(s("::ffff:192.0.2.1"), None);
        assert_eq!(
            s(" 2001:db8:1:2::1 "),
            Some(sha256_hex("s\u{0}2001:db8:1::/48"))
        );
        // Never a client's hash, whatever the address.
        assert_ne!(s("2001:db8:1::"), Some(ip_hash("s", "2001:db8:1::")));
    }
}
