//! The path has a parameter the handler does not take: rustc's arity error
//! points at the handler in the table.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list, by mistake under a parameter.
    GET "/posts/:id" => posts::list -> 200 PostList;
}

fn main() {}
