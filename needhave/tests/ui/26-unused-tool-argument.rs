//! A tool argument that no step uses: a model would pass it for nothing.
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
        id: String,
        /// Whether to include replies.
        replies: Option<bool>,
    } => GET "/posts/:id" { id };
}

fn main() {}
