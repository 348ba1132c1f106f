//! A route without a doc comment: the OpenAPI document would describe nothing.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    GET "/posts" => posts::list -> 200 PostList;
}

fn main() {}
