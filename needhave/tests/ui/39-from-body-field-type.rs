//! A body field of a type no JSON member is read as (only strings, required
//! or optional, are): rustc's error points at the field's type.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};

#[derive(needhave_macros::FromBody)]
pub struct Body {
    pub note: String,
    pub count: u32,
}

fn main() {}
