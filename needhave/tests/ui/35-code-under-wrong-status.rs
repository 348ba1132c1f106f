//! An error code listed under a status that is not its own: a compile-time
//! assertion fails, pointing at the code.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// One post.
    GET "/posts/:id" => posts::read -> 200 Post, 400 [not_found];
}

fn main() {}
