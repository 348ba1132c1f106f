//! A request body is read member by member, by field name: a tuple struct
//! has none to read.
#![allow(unused)]
use needhave::{api, error, http, json, platform, Ctx};

#[derive(needhave_macros::FromBody)]
pub struct Body(String);

fn main() {}
