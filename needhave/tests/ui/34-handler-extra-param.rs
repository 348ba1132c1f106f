//! The handler takes a parameter the path does not have: rustc's arity
//! error points at the handler in the table.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// One post, by mistake without its parameter.
    GET "/posts" => posts::read -> 200 Post;
}

fn main() {}
