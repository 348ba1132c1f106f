//! A mark written twice is a slip worth pointing at.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// One post.
    GET "/posts/:id" => posts::read replica replica -> 200 Post, 404 [not_found];
}

fn main() {}
