//! The router/dispatcher on arbitrary method, path and body.
//!
//! Input: byte 0 picks the method, byte 1 the client IP; then the path up to
//! the first newline, then the body. `{P}`, `{M}`, `{S}`, `{K}` … in the
//! path or body stand for the seeded world's ids and secrets.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use needhave::http::Request;

const METHODS: [&str; 8] = [
    "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "get",
];

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let w = common::world();
    let method = METHODS[data[0] as usize % METHODS.len()];
    let rest = &data[2..];
    let (path, body) = match rest.iter().position(|b| *b == b'\n') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    // Over HTTP a path always starts with '/' (hyper's `uri.path()`).
    let mut path = w.expand(&String::from_utf8_lossy(path));
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    let body = match std::str::from_utf8(body) {
        Ok(s) => w.expand(s).into_bytes(),
        Err(_) => body.to_vec(),
    };
    let mut req = Request::new(method, &path);
    req.headers.push(("host".into(), "127.0.0.1".into()));
    req.body = body;
    let resp = common::block_on(needhave::handle(&req, &w.ctx(data[1])));
    common::check_answer(&req, &resp);
    w.check_secrets(&req, &resp);
});
