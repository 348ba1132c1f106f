//! Two success responses for a typed route: the handler returns one.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// One post.
    GET "/posts/:id" => posts::read -> 200 Post, 204 empty, 404 [not_found];
}

fn main() {}
