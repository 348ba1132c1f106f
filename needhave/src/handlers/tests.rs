//! The answer types, each written as serde_json writes it.

use super::life::{Closed, Reported, Status};
use super::messages::{FirstCreated, MessageView, NoMessages, ThreadKey, Waiting};
use super::posts::{Kind, PostCreated, PostView};
use super::threads::{Callback, LaterCreated, Thread};
use crate::json::ToJson;

/// Every answer type is written as serde_json writes it, tricky strings
/// and left-out members included.
#[test]
fn answers_as_serde_json_writes_them() {
    fn same<T: ToJson + serde::Serialize>(v: T) {
        assert_eq!(
            String::from_utf8(v.to_json()).unwrap(),
            serde_json::to_string(&v).unwrap()
        );
    }
    let s = |v: &str| v.to_string();
    let odd = "\"q\" \\ \n\t\r\u{0}\u{1f}\u{7f}\u{2028}\u{2029} é 日本 🚲 \u{feff}";
    let m = |id: &str, text: &str| MessageView {
        id: s(id),
        text: s(text),
    };
    for kind in [Kind::Need, Kind::Have] {
        for expires_at in [None, Some(s("2026-12-06T04:12:33.120Z"))] {
            same(PostCreated {
                id: s("a"),
                kind,
                note: s(odd),
                secret: s("s"),
                created_at: Some(s("2026-12-06T04:12:33.120Z")),
                expires_at,
            });
        }
        for (status, expires_at, ended_at) in [
            (Status::Open, None, None),
            (Status::Open, Some(s("e")), None),
            (Status::Closed, None, Some(s("c"))),
            (Status::Expired, Some(s("e")), Some(s("e"))),
        ] {
            same(PostView {
                id: s(odd),
                kind,
                note: s(""),
                created_at: Some(s("t")),
                status: Some(status),
                expires_at,
                ended_at,
            });
        }
        same(vec![
            PostView {
                id: s("1"),
                kind,
                note: s(odd),
                created_at: Some(s("t")),
                status: Some(Status::Open),
                expires_at: None,
                ended_at: None,
            },
            PostView {
                id: s("2"),
                kind,
                note: s("n"),
                created_at: Some(s("t")),
                status: Some(Status::Open),
                expires_at: Some(s("e")),
                ended_at: None,
            },
        ]);
    }
    same(FirstCreated {
        id: s("i"),
        post_id: s(odd),
        hidden: true,
        secret: s("s"),
    });
    same(NoMessages { messages: vec![] });
    same(Waiting { messages: vec![] });
    same(Waiting {
        messages: vec![m("1", odd), m(odd, "")],
    });
    same(ThreadKey {
        thread_key: s(odd),
        status: None,
        ended_at: None,
    });
    same(ThreadKey {
        thread_key: s(odd),
        status: Some(Status::Closed),
        ended_at: Some(s("c")),
    });
    same(Closed {
        id: s("i"),
        status: Status::Closed,
        ended_at: s("c"),
    });
    same(Reported {});
    same(Callback {
        accepted: false,
        thread_key: None,
    });
    same(Callback {
        accepted: true,
        thread_key: Some(s(odd)),
    });
    same(Thread {
        post_id: s("p"),
        messages: vec![m("1", odd)],
    });
    same(Thread {
        post_id: s(odd),
        messages: vec![],
    });
    same(LaterCreated {
        id: s(odd),
        post_id: s("p"),
    });
}
