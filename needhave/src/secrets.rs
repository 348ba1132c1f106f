//! Ids, secrets, thread keys and the hashes kept of them.
//!
//! Ids are 16 random bytes, secrets and thread keys 32, all lowercase hex.
//! Only SHA-256 hex of secrets is stored; a client IP is stored as a salted
//! SHA-256 so that the per-IP limits work without keeping the address.

use sha2::{Digest, Sha256};

fn random_hex(bytes: &mut [u8]) -> String {
    // The OS (or Web Crypto on the Worker) never fails to give randomness in
    // practice; if it did, serving predictable secrets would be worse than
    // failing the request, so this panics and the server answers 500. (A
    // plain message: `expect` would link the error's `Debug` into the
    // Worker.)
    if getrandom::fill(bytes).is_err() {
        panic!("system randomness is unavailable");
    }
    to_hex(bytes)
}

/// A post or message id: 32 hex characters.
pub fn new_id() -> String {
    random_hex(&mut [0; 16])
}

/// A post secret, reply secret or thread key: 64 hex characters.
pub fn new_secret() -> String {
    random_hex(&mut [0; 32])
}

/// SHA-256 hex of the parts, one after the other: one copy of the hashing
/// serves every hash the list keeps.
/// SHA-256 of the parts one after the other, in hex.
pub fn digest_hex(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for part in parts {
        h.update(part);
    }
    to_hex(&h.finalize())
}

/// Lowercase hex, as `hex::encode` writes it: one loop for every caller
/// (the hashes, the migration's keys, SQLite blobs) rather than the crate's
/// iterator, instantiated for each input type.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

pub fn sha256_hex(text: &str) -> String {
    digest_hex(&[text.as_bytes()])
}

/// The salted hash kept in place of a client IP.
///
/// An IPv6 client is counted by its /64: one subscriber usually holds a
/// whole /64 and could otherwise walk the per-IP limits through it. IPv4
/// (also when mapped into IPv6) counts per address.
pub fn ip_hash(salt: &str, ip: &str) -> String {
    digest_hex(&[salt.as_bytes(), &[0], ip_key(ip.trim()).as_bytes()])
}

/// What an IP is counted by: an IPv6 address's /64 as `std::net` prints it
/// (`2001:db8:1:2::/64`), a v4-mapped one as its IPv4, anything else (an
/// IPv4, which the parser takes only in its one spelling) as it is.
///
/// By hand rather than through `std::net`, whose parser and printer cost
/// the Worker about 5 KB; the tests hold it to `std::net` on every input.
/// Printed digit by digit rather than with `format!` and `join`, which
/// would instantiate the formatting of each number for this one key.
fn ip_key(ip: &str) -> String {
    let Some(g) = parse_ipv6(ip) else {
        return ip.to_string();
    };
    let mut key = String::new();
    if g[..5] == [0; 5] && g[5] == 0xffff {
        for (i, octet) in [g[6] >> 8, g[6] & 0xff, g[7] >> 8, g[7] & 0xff]
            .into_iter()
            .enumerate()
        {
            if i > 0 {
                key.push('.');
            }
            push_digits(&mut key, octet, 10);
        }
        return key;
    }
    // The last four groups are zero, and that run is the longest (RFC 5952
    // compresses the first of equal runs, and any zero run before it joins
    // it): the groups before it, then `::`.
    let kept = g[..4].iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
    for (i, &group) in g[..kept].iter().enumerate() {
        if i > 0 {
            key.push(':');
        }
        push_digits(&mut key, group, 16);
    }
    key.push_str("::/64");
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

    #[test]
    fn shapes() {
        let id = new_id();
        assert_eq!(id.len(), 32);
        assert!(id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        assert_eq!(new_secret().len(), 64);
        assert_ne!(new_secret(), new_secret());
    }

    #[test]
    fn hex_is_the_crates() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(to_hex(&bytes), hex::encode(&bytes));
        assert_eq!(to_hex(&[]), "");
    }

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

    /// The key as `std::net` made it before `ip_key` was written by hand.
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
            assert_eq!(ip_key(ip), std_key(ip), "{ip:?}");
        }
    }
}
