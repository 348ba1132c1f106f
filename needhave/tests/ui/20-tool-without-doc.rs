//! A tool without a doc comment: a model would get no description.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list.
    GET "/posts" => posts::list -> 200 PostList;

    tool list_posts "List posts" [read_only] {} => GET "/posts" {};
}

fn main() {}
