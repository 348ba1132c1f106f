//! A tool step reading an argument the tool does not declare.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// Reply to a post.
    POST "/posts/:id/replies" (NewPost) => posts::reply -> 201 Post, 404 [not_found];

    /// Reply to a post.
    tool reply "Reply" {
        /// The post id.
        post_id: String,
        /// The reply.
        text: String,
    } => POST "/posts/:id/replies" { id: post_id, note: txt };
}

fn main() {}
