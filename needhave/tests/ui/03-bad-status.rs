//! Statuses that are not HTTP statuses.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list.
    GET "/posts" => posts::list -> 999 PostList;
    /// One post.
    GET "/posts/:id" => posts::read -> 200 Post, 42 [not_found];
}

fn main() {}
