//! A typed body under a 4xx: a typed route answers errors as
//! `{"error": CODE}`; only a `raw` handler builds its own.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// One post.
    GET "/posts/:id" => posts::read -> 200 Post, 404 Post;
}

fn main() {}
