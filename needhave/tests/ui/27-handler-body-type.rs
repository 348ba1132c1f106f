//! The handler takes another body than the table says: rustc's error
//! points at the body type in the table.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// Waiting replies.
    POST "/posts/:id/waiting" (NewPost) => posts::waiting -> 200 PostList, 404 [not_found];
}

fn main() {}
