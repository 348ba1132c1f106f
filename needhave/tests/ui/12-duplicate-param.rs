//! One parameter name twice in a path.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// A reply.
    POST "/posts/:id/replies/:id" (NewPost) => posts::reply -> 201 Post, 404 [not_found];
}

fn main() {}
