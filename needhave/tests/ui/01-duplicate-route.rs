//! The same method and path twice, even with another parameter name: the
//! dispatcher could never reach the second.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// A post.
    GET "/posts/:id" => posts::read -> 200 Post, 404 [not_found];
    /// The same post again.
    GET "/posts/:post" => posts::read -> 200 Post, 404 [not_found];
    /// The list.
    GET "/posts" => posts::list -> 200 PostList;
    /// The list again.
    GET "/posts" => posts::list -> 200 PostList;
}

fn main() {}
