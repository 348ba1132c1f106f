//! Ids, secrets, thread keys and the hashes kept of them.
//!
//! Ids are 16 random bytes, secrets and thread keys 32, all lowercase hex.
//! Only SHA-256 hex of secrets is stored; a client's address is kept only
//! as a salted SHA-256 (see `client`).

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
    hex::encode(bytes)
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
pub fn digest_hex(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for part in parts {
        h.update(part);
    }
    hex::encode(h.finalize())
}

pub fn sha256_hex(text: &str) -> String {
    digest_hex(&[text.as_bytes()])
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
    }
}
