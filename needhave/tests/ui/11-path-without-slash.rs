//! A path that does not start with `/`.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list.
    GET "posts" => posts::list -> 200 PostList;
}

fn main() {}
