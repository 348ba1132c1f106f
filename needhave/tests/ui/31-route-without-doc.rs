//! A route without a doc comment: the OpenAPI document would describe nothing.
#![allow(unused)]
use needhave::{error, http, pages, platform, table, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    GET "/posts" => posts::list -> 200 PostList;
}

fn main() {}
