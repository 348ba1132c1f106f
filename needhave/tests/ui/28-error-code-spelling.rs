//! Error codes are written as in the JSON, once per route.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// Reply to a post.
    POST "/posts/:id/replies" (NewPost) => posts::reply -> 201 Post,
        400 [bad_request, BadRequest], 404 [not_found, not_found];
}

fn main() {}
