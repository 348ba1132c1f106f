//! A tool hint MCP does not know.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list.
    GET "/posts" => posts::list -> 200 PostList;

    /// Read the list.
    tool list_posts "List posts" [readonly] {} => GET "/posts" {};
}

fn main() {}
