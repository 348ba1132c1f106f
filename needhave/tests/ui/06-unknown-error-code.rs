//! An error code that is not a `crate::error::Code` variant: rustc's error
//! points at the code in the table.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// One post.
    GET "/posts/:id" => posts::read -> 200 Post, 404 [not_fuond];
}

fn main() {}
