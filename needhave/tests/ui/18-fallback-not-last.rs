//! A branch without `if` before another branch: the later one never runs.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// Waiting replies.
    POST "/posts/:id/waiting" (Secret) => posts::waiting -> 200 PostList, 404 [not_found];
    /// One post.
    GET "/posts/:id" => posts::read -> 200 Post, 404 [not_found];

    /// Read a post, or its waiting replies with the secret.
    tool read_post "Read a post" [read_only] {
        /// The post id.
        id: String,
        /// The post secret.
        secret: Option<String>,
    } => GET "/posts/:id" { id }
       | if secret POST "/posts/:id/waiting" { id, secret };
}

fn main() {}
