//! Note and text validation on arbitrary Unicode: the pure rules (text,
//! note, key), and the same text through `POST /posts`, a first reply and a
//! thread message.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use needhave::error::Code;
use needhave::http::Request;
use needhave::rules;
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
    // Visible: something that is neither a blank nor a mark (a mark in a
    // text of blanks and marks has no letter before it).
    let visible = trimmed
        .chars()
        .any(|c| !rules::is_blank(c) && !rules::is_mark(c));
    let unreadable = |c: char| c.is_control() && !matches!(c, '\t' | '\n' | '\r');
    // Hidden: a bidirectional control, or a tag character once the three
    // tag flags are taken out (each left as its black flag, a visible base),
    // or a variation selector with nothing to vary: at the start, after a
    // blank (another selector is one), or an ideographic one after anything
    // but a CJK ideograph.
    let mut untagged = trimmed.to_string();
    for flag in rules::TAG_FLAGS {
        untagged = untagged.replace(flag, "\u{1f3f4}");
    }
    let ideograph = |c: char| matches!(c, '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}' | '\u{20000}'..='\u{3ffff}');
    let mut prev: Option<char> = None;
    let hidden = untagged.chars().any(|c| {
        let ivs = matches!(c, '\u{e0100}'..='\u{e01ef}');
        let selector = ivs || matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{180b}'..='\u{180d}' | '\u{180f}');
        let stray = selector
            && match prev {
                None => true,
                Some(p) => rules::is_blank(p) || (ivs && !ideograph(p)),
            };
        prev = Some(c);
        stray || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{e0001}' | '\u{e0020}'..='\u{e007f}')
    });
    let bad = hidden || trimmed.chars().any(unreadable);
    let rule = rules::text(raw);
    match rule {
        Ok(t) => {
            assert_eq!(t, trimmed);
            assert!((1..=500).contains(&chars));
            assert!(visible && !bad);
        }
        Err(Code::EmptyNote) => assert!(!visible),
        Err(Code::HugeNote) => assert!(visible && chars > 500),
        Err(Code::BadNote) => assert!(visible && chars <= 500 && bad),
        Err(other) => panic!("text rule gave {other:?}"),
    }
    // A post's note: the text rule, then contact details; its key.
    let note_rule = rules::note(raw);
    match (&rule, &note_rule) {
        (Ok(t), Ok(n)) => assert_eq!(*t, n.text),
        (Ok(_), Err(Code::ContactDetails)) => {}
        (Err(a), Err(b)) => assert_eq!(a, b),
        other => panic!("note rule disagrees with text rule: {other:?}"),
    }
    let key = rules::note_key(trimmed);
    if let Ok(n) = &note_rule {
        assert_eq!(n.key, key);
    }
    // Trimmed, single spaces, nothing invisible; an invisible or format
    // character or different trimming never makes a new key; a key is never
    // many times its note (NFKC's long expansions stand for themselves).
    assert_eq!(key.trim(), key);
    assert!(!key.contains("  ") && !key.chars().any(rules::is_invisible));
    assert!(key.chars().count() <= 6 * chars, "{trimmed:?}");
    if note_rule.is_ok() {
        assert!(!key.is_empty(), "{trimmed:?}");
    }
    if let Some(first) = trimmed.chars().next() {
        let at = first.len_utf8();
        let hidden = format!(
            " {}\u{200b}{}\u{feff}\u{fff9} ",
            &trimmed[..at],
            &trimmed[at..]
        );
        assert_eq!(rules::note_key(&hidden), key, "{hidden:?}");
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
    let note_error = note_rule.as_ref().err().map(|c| c.as_str());
    match note_error {
        Some(code) => assert_eq!((status, v["error"].as_str()), (400, Some(code))),
        None if status == 201 => {
            assert_eq!(v["note"], trimmed);
            let id = v["id"].as_str().expect("id");
            let (s, read) = send("GET", &format!("/posts/{id}"), Value::Null);
            assert_eq!((s, read["note"].as_str()), (200, Some(trimmed)));
            // A copy with invisible characters and other spacing is the same
            // note: refused before any rate limit.
            if chars <= 498 {
                // After the first character, or after a leading tag flag:
                // a character inside a flag would break it into hidden tags,
                // and one between a character and its variation selectors
                // would leave them selecting nothing.
                let mut at = rules::TAG_FLAGS
                    .iter()
                    .find(|f| trimmed.starts_with(**f))
                    .map_or_else(
                        || trimmed.chars().next().map_or(0, char::len_utf8),
                        |f| f.len(),
                    );
                at += trimmed[at..]
                    .chars()
                    .take_while(|c| matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{180b}'..='\u{180d}' | '\u{180f}' | '\u{e0100}'..='\u{e01ef}'))
                    .map(char::len_utf8)
                    .sum::<usize>();
                let copy = format!("\u{200b}{}\u{feff}{}  ", &trimmed[..at], &trimmed[at..]);
                let (s, v) = send("POST", "/posts", json!({"kind": "need", "note": copy}));
                assert_eq!(
                    (s, v["error"].as_str()),
                    (409, Some("duplicate_note")),
                    "{copy:?}"
                );
            }
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
        // 100 thread messages per address an hour.
        None if status == 429 => assert_eq!(v["error"], "rate_limited"),
        None => assert_eq!(status, 201, "{v}"),
    }
    if want_error.is_none() && status == 201 {
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
