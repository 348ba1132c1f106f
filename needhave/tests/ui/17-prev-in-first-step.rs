//! `prev.` in a first step: there is no previous result.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// One post.
    GET "/posts/:id" => posts::read -> 200 Post, 404 [not_found];

    /// Read a post.
    tool read_post "Read a post" [read_only] {} => GET "/posts/:id" { id: prev.id };
}

fn main() {}
