//! Note and text validation on arbitrary Unicode: the pure rule, and the
//! same text through `POST /posts`, a first reply and a thread message.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use needhave::error::Code;
use needhave::http::Request;
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    let Some((&ip, rest)) = data.split_first() else {
        return;
    };
    let Ok(raw) = std::str::from_utf8(rest) else {
        return;
    };
    let trimmed = raw.trim();
    let chars = trimmed.chars().count();
    let rule = needhave::rules::text(raw);
    match rule {
        Ok(t) => {
            assert_eq!(t, trimmed);
            assert!((1..=500).contains(&chars));
        }
        Err(Code::EmptyNote) => assert_eq!(chars, 0),
        Err(Code::HugeNote) => assert!(chars > 500),
        Err(other) => panic!("text rule gave {other:?}"),
    }

    let w = common::world();
    let ctx = w.ctx(ip);
    let send = |method: &str, path: &str, body: Value| {
        let mut req = Request::new(method, path);
        req.body = body.to_string().into_bytes();
        let resp = common::block_on(needhave::handle(&req, &ctx));
        common::check_answer(&req, &resp);
        w.check_secrets(&req, &resp);
        let v: Value = serde_json::from_slice(&resp.body).expect("JSON");
        (resp.status, v)
    };
    let want_error = match rule {
        Ok(_) => None,
        Err(c) => Some(c.as_str()),
    };
    // A post: the stored and returned note is the trimmed one.
    let (status, v) = send("POST", "/posts", json!({"kind": "have", "note": raw}));
    match want_error {
        Some(code) => assert_eq!((status, v["error"].as_str()), (400, Some(code))),
        None if status == 201 => {
            assert_eq!(v["note"], trimmed);
            let id = v["id"].as_str().expect("id");
            let (s, read) = send("GET", &format!("/posts/{id}"), Value::Null);
            assert_eq!((s, read["note"].as_str()), (200, Some(trimmed)));
        }
        None => {
            let code = v["error"].as_str().unwrap_or("");
            assert!(
                (status == 409 && code == "duplicate_note")
                    || (status == 429 && code == "rate_limited"),
                "{status} {v}"
            );
        }
    }
    // The same rule on messages: a first reply and a thread message.
    let (status, v) = send(
        "POST",
        &format!("/posts/{}/messages", w.post_id),
        json!({"text": raw}),
    );
    match want_error {
        Some(code) => assert_eq!((status, v["error"].as_str()), (400, Some(code))),
        None => assert!(status == 201 || status == 429, "{status} {v}"),
    }
    let (status, v) = send(
        "POST",
        "/threads/messages",
        json!({"thread_key": w.thread_key, "text": raw}),
    );
    match want_error {
        Some(code) => assert_eq!((status, v["error"].as_str()), (400, Some(code))),
        None => assert_eq!(status, 201, "{v}"),
    }
    if want_error.is_none() {
        let (_, thread) = send("POST", "/threads", json!({"thread_key": w.thread_key}));
        let last = thread["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned();
        assert_eq!(
            last.and_then(|m| m["text"].as_str().map(String::from))
                .as_deref(),
            Some(trimmed)
        );
    }
});
