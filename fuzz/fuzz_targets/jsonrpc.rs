//! The JSON-RPC endpoint (`POST /mcp`) on arbitrary bytes and batches.
//!
//! Byte 0 picks the client IP; the rest is the body. `{P}`, `{S}`, `{K}` …
//! stand for the seeded world's ids and secrets.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use needhave::http::Request;

fuzz_target!(|data: &[u8]| {
    let Some((&ip, body)) = data.split_first() else {
        return;
    };
    let w = common::world();
    let body = match std::str::from_utf8(body) {
        Ok(s) => w.expand(s).into_bytes(),
        Err(_) => body.to_vec(),
    };
    let mut req = Request::new("POST", "/mcp");
    req.headers.push(("host".into(), "127.0.0.1:8787".into()));
    req.headers
        .push(("content-type".into(), "application/json".into()));
    req.body = body;
    let resp = common::block_on(needhave::handle(&req, &w.ctx(ip)));
    common::check_answer(&req, &resp);
    w.check_secrets(&req, &resp);
    let parsed = serde_json::from_slice::<serde_json::Value>(&req.body);
    match (&parsed, resp.status) {
        (Err(_), s) => assert!(s == 400 || s == 413, "unparseable body answered {s}"),
        (Ok(serde_json::Value::Array(a)), 200) if a.len() > 20 || a.is_empty() => {
            let v: serde_json::Value = serde_json::from_slice(&resp.body).unwrap();
            assert_eq!(v["error"]["code"], -32600, "{v}");
        }
        _ => {}
    }
});
