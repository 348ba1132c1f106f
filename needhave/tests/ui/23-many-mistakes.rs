//! Several mistakes in one table are all reported at once.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list.
    FETCH "/posts" => posts::list -> 200 PostList;
    /// One post.
    GET "posts/:id" => posts::read -> 200 Post, 404 Post;
    /// Reply to a post.
    POST "/posts/:id/replies" (NewPost) => posts::reply -> 201 Post, 200 [not_found];

    tool read_post "Read a post" [read_only, cheap] {
        /// The post id.
        id: String,
    } => GET "/posts/:id" { id: prev.id };
}

fn main() {}
