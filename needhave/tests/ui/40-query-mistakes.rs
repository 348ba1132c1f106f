//! Mistakes in query parameter declarations: each one its own error.
#![allow(unused)]
use needhave::{api, error, http, json, pages, platform, query, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// The list.
    GET "/posts" ?{
        /// A code the route does not list.
        kind: String else bad_kind,
        /// Bounds on a type that checks its own.
        q: String in 1..=8 else bad_request,
        /// Empty bounds, and a default outside them.
        limit: u32 in 100..=1 = 500 else bad_request,
        /// No code at all.
        before: String,
        /// Twice.
        limit: u32 else bad_request,
        undocumented: u32 else bad_request,
    } => posts::list -> 200 PostList, 400 [bad_request];

    /// Query parameters on a POST.
    POST "/posts" ?{
        /// A note.
        note: String else bad_request,
    } (NewPost) => posts::create -> 201 Post, 400 [bad_request];
}

fn main() {}
