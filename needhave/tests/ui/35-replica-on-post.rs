//! Only a public GET may read from a replica: a POST writes, or reads behind
//! a secret, and must see what was just written.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// Create a post.
    POST "/posts" (NewPost) => posts::create replica -> 201 Post;
    /// The author reads the waiting replies.
    POST "/posts/:id/waiting" (Secret) => posts::waiting replica -> 200 PostList, 403 [bad_secret];
}

fn main() {}
