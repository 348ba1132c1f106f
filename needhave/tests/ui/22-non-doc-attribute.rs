//! An attribute other than a doc comment before an entry: it would be
//! silently dropped.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list.
    #[deprecated]
    GET "/posts" => posts::list -> 200 PostList;

    /// Read the list.
    #[allow(unused)]
    tool list_posts "List posts" [read_only] {} => GET "/posts" {};
}

fn main() {}
