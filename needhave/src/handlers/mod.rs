//! The list's calls, by resource. Each handler takes typed input (`Ctx`, path
//! ids, the parsed body) and returns a typed answer or an `ApiError`; the
//! dispatcher generated from `routes.rs` does the HTTP around it.
//!
//! Each handler makes exactly one store round trip, and each limit is a
//! condition of the `INSERT … SELECT … WHERE` that writes, so concurrent
//! requests cannot both pass a check. A read in the same batch, run first,
//! only serves to name the error when the insert wrote nothing; both are
//! made from one list of guards per write (`guard`).

// LIMITs are written into the SQL, not bound: the bundled SQLite is built
// with STAT4, which re-prepares a statement on every run when a bound value
// reaches a LIMIT that the planner uses (measured: one re-prepare per call,
// the parser then the larger part of a list read). These keep the literals
// in step with the rules.
const _: () = assert!(crate::rules::LIST_SIZE == 100);
const _: () = assert!(crate::rules::THREAD_SIZE == 100);
const _: () = assert!(crate::rules::WAITING_CAP == 20);

mod guard;
pub mod health;
pub mod messages;
pub mod posts;
pub mod threads;

use crate::store::{Row, RowExt};

/// A SQL boolean (`0`/`1`) column of a row.
fn flag(row: &Row, col: &str) -> bool {
    row.int(col).unwrap_or(0) != 0
}

#[cfg(test)]
mod tests {
    use super::messages::{FirstCreated, MessageView, NoMessages, ThreadKey, Waiting};
    use super::posts::{Kind, PostCreated, PostView};
    use super::threads::{Callback, LaterCreated, Thread};
    use crate::http::ToJson;

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
}
