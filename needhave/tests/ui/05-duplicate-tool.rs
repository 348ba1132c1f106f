//! Two tools with one name: MCP clients call tools by name.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list.
    GET "/posts" => posts::list -> 200 PostList;

    /// Read the list.
    tool list_posts "List posts" [read_only] {} => GET "/posts" {};
    /// Read the list again.
    tool list_posts "List posts again" [read_only] {} => GET "/posts" {};
}

fn main() {}
