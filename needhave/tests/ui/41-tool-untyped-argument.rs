//! A tool argument without a type that feeds no query parameter.
#![allow(unused)]
use needhave::{api, error, http, json, pages, platform, query, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// One post.
    GET "/posts/:id" => posts::read -> 200 Post, 404 [not_found];

    /// Read a post.
    tool read_post "Read a post" [read_only] {
        /// The id.
        id,
    } => GET "/posts/:id" { id };
}

fn main() {}
