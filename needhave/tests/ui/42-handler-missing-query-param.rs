//! A handler that does not take the route's query parameters: rustc's
//! error, at the handler.
#![allow(unused)]
use needhave::{api, error, http, json, pages, platform, query, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list.
    GET "/posts" ?{
        /// Posts per page.
        limit: u32 in 1..=100 = 100 else bad_request,
    } => posts::list -> 200 PostList, 400 [bad_request];
}

fn main() {}
