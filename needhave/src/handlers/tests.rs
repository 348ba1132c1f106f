//! The answer types, each written as serde_json writes it.

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
        same(PostCreated {
            id: s("a"),
            kind,
            note: s(odd),
            secret: s("s"),
        });
        same(PostView {
            id: s(odd),
            kind,
            note: s(""),
        });
        same(vec![
            PostView {
                id: s("1"),
                kind,
                note: s(odd),
            },
            PostView {
                id: s("2"),
                kind,
                note: s("n"),
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
    same(ThreadKey { thread_key: s(odd) });
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
