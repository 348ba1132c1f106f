//! A tool step that does not give the route's path parameter.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// One post.
    GET "/posts/:id" => posts::read -> 200 Post, 404 [not_found];

    /// Read a post.
    tool read_post "Read a post" [read_only] {
        /// The post id.
        post_id: String,
    } => GET "/posts/:id" { post_id };
}

fn main() {}
