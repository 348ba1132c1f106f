//! A path with more parameters than the matcher carries.
#![allow(unused)]
use needhave::{api, error, http, json, pages, platform, query, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// A post's message's reaction.
    GET "/posts/:id/messages/:message/reactions/:reaction" => posts::read -> 200 Post, 404 [not_found];
}

fn main() {}
