//! Every branch has an `if`: a call without those arguments has no plan.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};
#[path = "support/mod.rs"]
mod support;
use support::*;

needhave_macros::routes! {
    /// Waiting replies.
    POST "/posts/:id/waiting" (Secret) => posts::waiting -> 200 PostList, 404 [not_found];

    /// Read the waiting replies.
    tool waiting "Waiting replies" [read_only] {
        /// The post id.
        id: String,
        /// The post secret.
        secret: Option<String>,
    } => if secret POST "/posts/:id/waiting" { id, secret };
}

fn main() {}
