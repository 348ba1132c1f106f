//! Who a client is, for the per-client limits: the key of an address (an
//! IPv4 address, or the /64 of an IPv6 one), the key of its site (the /48
//! of an IPv6 address), and the salted hashes kept of both in place of the
//! address.
//!
//! One host usually holds a whole IPv6 /64, so a client is its /64; a
//! site that owns a /48 holds 65,536 of those, so the /48 is counted too,
//! at ten times each per-client rate (`rules`). IPv4 (also when mapped
//! into IPv6) is counted per address and has no site.

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
/// IPv4, which the parser takes only in its one spelling) as it is.
///
/// By hand rather than through `std::net`, whose parser and printer cost
/// the Worker 1,680 B gzip (bench/worker-size.sh), which its 1.75x size
/// gate has no room for; the tests hold it to `std::net` on every input.
pub fn client_key(ip: &str) -> String {
    match parse_ipv6(ip) {
        None => ip.to_string(),
        Some(g) => match mapped_v4(&g) {
            Some(v4) => v4,
            None => prefix(&g, 4, "::/64"),
        },
    }
}

/// What a client's site is counted by: an IPv6 address's /48 as `std::net`
/// prints it (`2001:db8:1::/48`); `None` for an IPv4 address (also mapped
/// into IPv6) and for anything that is not an IPv6 address.
pub fn site_key(ip: &str) -> Option<String> {
    let g = parse_ipv6(ip)?;
    match mapped_v4(&g) {
        Some(_) => None,
        None => Some(prefix(&g, 3, "::/48")),
    }
}

/// The IPv4 of a v4-mapped address (`::ffff:a.b.c.d`), printed.
///
/// Printed digit by digit rather than with `format!` and `join`, which
/// would instantiate the formatting of each number for this one key.
fn mapped_v4(g: &[u16; 8]) -> Option<String> {
    if g[..5] != [0; 5] || g[5] != 0xffff {
        return None;
    }
    let mut key = String::new();
    for (i, octet) in [g[6] >> 8, g[6] & 0xff, g[7] >> 8, g[7] & 0xff]
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            key.push('.');
        }
        push_digits(&mut key, octet, 10);
    }
    Some(key)
}

/// The first `groups` groups of an address, the rest zero, as `std::net`
/// prints it, then `suffix` (`::/64`). The groups after the prefix are
/// zero, and that run is the longest (RFC 5952 compresses the first of
/// equal runs, and any zero run before it joins it): the groups before
/// it, then `::`.
fn prefix(g: &[u16; 8], groups: usize, suffix: &str) -> String {
    let mut key = String::new();
    let kept = g[..groups]
        .iter()
        .rposition(|&x| x != 0)
        .map_or(0, |i| i + 1);
    for (i, &group) in g[..kept].iter().enumerate() {
        if i > 0 {
            key.push(':');
        }
        push_digits(&mut key, group, 16);
    }
    key.push_str(suffix);
    key
}

/// `n` in `radix` (lowercase), without leading zeros.
fn push_digits(out: &mut String, n: u16, radix: u16) {
    let mut digits = ['0'; 16];
    let mut len = 0;
    let mut n = n;
    loop {
        digits[len] = char::from_digit(u32::from(n % radix), u32::from(radix)).unwrap_or('0');
        len += 1;
        n /= radix;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[..len].iter().rev());
}

/// The eight groups of an IPv6 address, with the grammar of
/// `std::net::Ipv6Addr`'s parser: groups of 1 to 4 hex digits, at most one
/// `::` standing for at least one zero group, and optionally an IPv4 as the
/// last two groups.
fn parse_ipv6(s: &str) -> Option<[u16; 8]> {
    fn groups(part: &str, out: &mut Vec<u16>) -> Option<()> {
        if part.is_empty() {
            return Some(());
        }
        let mut items = part.split(':').peekable();
        while let Some(item) = items.next() {
            if items.peek().is_none() && item.as_bytes().contains(&b'.') {
                let v4 = parse_ipv4(item)?;
                out.push(u16::from_be_bytes([v4[0], v4[1]]));
                out.push(u16::from_be_bytes([v4[2], v4[3]]));
            } else if (1..=4).contains(&item.len()) {
                out.push(digits(item, 16)?);
            } else {
                return None;
            }
        }
        Some(())
    }
    let mut head = Vec::new();
    let mut tail = Vec::new();
    // `::` found byte by byte: a `&str` pattern links the two-way searcher.
    let double = |s: &str| s.as_bytes().windows(2).position(|w| w == b"::");
    match double(s).and_then(|i| Some((s.get(..i)?, s.get(i + 2..)?))) {
        Some((h, t)) => {
            groups(h, &mut head)?;
            groups(t, &mut tail)?;
            // An IPv4 only ends the address; `::` stands for one group or more.
            let v4_in_head = h.as_bytes().contains(&b'.');
            if v4_in_head || double(t).is_some() || head.len() + tail.len() > 7 {
                return None;
            }
        }
        None => {
            groups(s, &mut head)?;
            if head.len() != 8 {
                return None;
            }
        }
    }
    let mut out = [0u16; 8];
    out[..head.len()].copy_from_slice(&head);
    out[8 - tail.len()..].copy_from_slice(&tail);
    Some(out)
}

/// A dotted IPv4 as `std::net::Ipv4Addr` reads it: four decimal numbers up
/// to 255, without leading zeros.
fn parse_ipv4(s: &str) -> Option<[u8; 4]> {
    let mut out = [0u8; 4];
    let mut parts = s.split('.');
    for slot in &mut out {
        let p = parts.next()?;
        if !(1..=3).contains(&p.len()) || (p.len() > 1 && p.starts_with('0')) {
            return None;
        }
        *slot = u8::try_from(digits(p, 10)?).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// The number `s` spells in `radix`, digit by digit (no sign, no
/// overflow past `u16`): the callers check the length, and this the
/// digits, without `from_str_radix`'s error type.
fn digits(s: &str, radix: u32) -> Option<u16> {
    s.chars().try_fold(0u16, |n, c| {
        let d = c.to_digit(radix)?;
        n.checked_mul(radix as u16)?.checked_add(d as u16)
    })
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

    /// The key as `std::net` made it before `client_key` was written by hand.
    fn std_key(ip: &str) -> String {
        match ip.parse::<std::net::IpAddr>() {
            Ok(std::net::IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
                Some(v4) => v4.to_string(),
                None => {
                    let mut seg = v6.segments();
                    seg[4..].fill(0);
                    format!("{}/64", std::net::Ipv6Addr::from(seg))
                }
            },
            Ok(v4) => v4.to_string(),
            Err(_) => ip.to_string(),
        }
    }

    #[test]
    fn ip_key_is_std_nets() {
        let listed = "
            :: : ::: ::1 1:: 1:2:3:4:5:6:7:8 1:2:3:4:5:6:7:: ::2:3:4:5:6:7:8
            1:2:3:4:5:6:7:8:: ::1:2:3:4:5:6:7:8 1:2:3:4:5:6:7 0:0:0:0:1:: 0:0:0:1::
            0:0:: a:0:b:: 0:a:: ABCD:EF01::1 12345:: 1::2::3 1:::2 1::2: :1::2
            ::ffff:1.2.3.4 ::ffff:102:304 ::1.2.3.4 1:2:3:4:5:6:1.2.3.4
            1:2:3:4:5:1.2.3.4 1:2:3:4:5:6:7:1.2.3.4 ::1.2.3.4:5 1.2.3.4:: 1.2.3.4
            01.2.3.4 1.2.3.256 1.2.3 1.2.3.4.5 ::ffff:1.2.3.04 fe80::1%eth0
            2001:db8::/64 +1:: ::+1 1:2:3:4::5:6:7 1:2:3:4::5:6:7:8
            2001:db8:1:2:aaaa::1 0000:0000::0000 ::ffff:0:0 0:0:0:0:0:ffff::
            ::ffff:1.2.3.4.5 ::ffff:1..2.3 é::1 1:2:3:4:5:6:7:8:9";
        let mut cases: Vec<String> = listed.split_whitespace().map(String::from).collect();
        cases.push(String::new());
        // And many random strings over the grammar's characters.
        let alphabet = b"0123456789abcdefABF:.:::.";
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..200_000 {
            let mut s = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 24) as usize;
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push(alphabet[(seed % alphabet.len() as u64) as usize] as char);
            }
            cases.push(s);
        }
        for ip in &cases {
            assert_eq!(client_key(ip), std_key(ip), "{ip:?}");
        }
    }

    /// The site key as `std::net` makes it: the /48 of an IPv6 address that
    /// is not v4-mapped.
    fn std_site(ip: &str) -> Option<String> {
        match ip.parse::<std::net::IpAddr>() {
            Ok(std::net::IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_none() => {
                let mut seg = v6.segments();
                seg[3..].fill(0);
                Some(format!("{}/48", std::net::Ipv6Addr::from(seg)))
            }
            _ => None,
        }
    }

    #[test]
    fn site_key_is_std_nets() {
        let listed = "
            :: ::1 1:: 1:2:3:4:5:6:7:8 0:0:1:: 0:1:: 1:0:1:: 1:0:0:1:: 2001:db8::
            2001:db8:0:1:: 2001:db8:1:2:3:4:5:6 ::ffff:1.2.3.4 ::1.2.3.4 1.2.3.4
            fe80::1%eth0 é::1 1::2::3 ABCD:EF01:2345:6789::";
        for ip in listed.split_whitespace().chain([""]) {
            assert_eq!(site_key(ip), std_site(ip), "{ip:?}");
        }
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Addresses with zero groups in every place, and their spellings.
            let mut seg = [0u16; 8];
            for (i, s) in seg.iter_mut().enumerate() {
                if (seed >> (i * 2)) & 3 != 0 {
                    *s = (seed >> (16 + i * 5)) as u16 & 0x1ff;
                }
            }
            let ip = std::net::Ipv6Addr::from(seg).to_string();
            assert_eq!(site_key(&ip), std_site(&ip), "{ip:?}");
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
