//! An answer asks serde for something `ToJson` would not write alike (a
//! renamed member): the derive refuses it, at the attribute, rather than
//! answer other bytes than serde would.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};

#[derive(needhave_macros::ToJson)]
pub struct Answer {
    #[serde(rename = "postId")]
    pub post_id: String,
}

fn main() {}
