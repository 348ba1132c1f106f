//! Ids, secrets, thread keys and the hashes kept of them.
//!
//! Ids are 16 random bytes, secrets and thread keys 32, all lowercase hex.
//! Only SHA-256 hex of secrets is stored; a client IP is stored as a salted
//! SHA-256 so that the per-IP limits work without keeping the address.

use sha2::{Digest, Sha256};

fn random_hex<const N: usize>() -> String {
    let mut bytes = [0u8; N];
    // The OS (or Web Crypto on the Worker) never fails to give randomness in
    // practice; if it did, serving predictable secrets would be worse than
    // failing the request, so this panics and the server answers 500.
    getrandom::fill(&mut bytes).expect("system randomness is available");
    hex::encode(bytes)
}

/// A post or message id: 32 hex characters.
pub fn new_id() -> String {
    random_hex::<16>()
}

/// A post secret, reply secret or thread key: 64 hex characters.
pub fn new_secret() -> String {
    random_hex::<32>()
}

pub fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The salted hash kept in place of a client IP.
///
/// An IPv6 client is counted by its /64: one subscriber usually holds a
/// whole /64 and could otherwise walk the per-IP limits through it. IPv4
/// (also when mapped into IPv6) counts per address.
pub fn ip_hash(salt: &str, ip: &str) -> String {
    let key = match ip.trim().parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let mut seg = v6.segments();
                seg[4..].fill(0);
                format!("{}/64", std::net::Ipv6Addr::from(seg))
            }
        },
        Ok(v4) => v4.to_string(),
        Err(_) => ip.trim().to_string(),
    };
    let mut h = Sha256::new();
    h.update(salt.as_bytes());
    h.update([0u8]);
    h.update(key.as_bytes());
    hex::encode(h.finalize())
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
    fn hashes() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(ip_hash("a", "1.2.3.4"), ip_hash("b", "1.2.3.4"));
        assert_ne!(ip_hash("a", "1.2.3.4"), sha256_hex("1.2.3.4"));
        assert_ne!(ip_hash("a", "1.2.3.4"), ip_hash("a", "1.2.3.5"));
    }

    #[test]
    fn ipv6_counts_per_64() {
        let h = |ip| ip_hash("s", ip);
        assert_eq!(h("2001:db8:1:2:aaaa::1"), h("2001:db8:1:2:ffff:1:2:3"));
        assert_ne!(h("2001:db8:1:2::1"), h("2001:db8:1:3::1"));
        assert_eq!(h("::ffff:192.0.2.1"), h("192.0.2.1"));
        assert_ne!(h("::ffff:192.0.2.1"), h("192.0.2.2"));
    }
}
