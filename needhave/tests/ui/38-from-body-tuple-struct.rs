//! A request body is read member by member, by field name: a tuple struct
//! has none to read.
#![allow(unused)]
use needhave::{error, http, pages, platform, table, Ctx};

#[derive(needhave_macros::FromBody)]
pub struct Body(String);

fn main() {}
