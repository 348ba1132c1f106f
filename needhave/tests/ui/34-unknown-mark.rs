//! A misspelled mark after the handler is named, with the marks there are.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list.
    GET "/posts" => posts::list replika -> 200 PostList;
}

fn main() {}
