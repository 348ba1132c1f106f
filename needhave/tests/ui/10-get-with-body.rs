//! A GET route with a request body.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// One post.
    GET "/posts/:id" (NewPost) => posts::reply -> 200 Post, 404 [not_found];
}

fn main() {}
