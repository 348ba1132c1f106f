//! A tool step calling a route that is not in the table.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list.
    GET "/posts" => posts::list -> 200 PostList;

    /// Post a need.
    tool create_need "Post a need" {
        /// The note.
        note: String,
    } => POST "/posts" { kind: "need", note };
}

fn main() {}
