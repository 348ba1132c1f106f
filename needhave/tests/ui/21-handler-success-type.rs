//! The handler returns another type than the table says: rustc's error
//! points at the type in the table.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// One post.
    GET "/posts/:id" => posts::read -> 200 PostList, 404 [not_found];
}

fn main() {}
