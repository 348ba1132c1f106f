//! Mistakes in `#[schema]`: each one its own error.
#![allow(unused)]
use needhave_macros::{schema, ToJson};
use serde::Serialize;

/// An argument it does not take.
#[schema(deserialize)]
#[derive(ToJson)]
pub struct Unknown {
    pub id: String,
}

/// `serialize` where serde's `Serialize` is derived on every target.
#[schema(serialize)]
#[derive(Serialize)]
pub struct Twice {
    pub id: String,
}

/// `JsonSchema` derived by hand as well.
#[schema]
#[derive(Serialize, schemars::JsonSchema)]
pub struct ByHand {
    pub id: String,
}

/// Not a type a schema describes.
#[schema]
pub fn handler() {}

/// A union.
#[schema]
pub union Bits {
    pub a: u32,
    pub b: f32,
}

fn main() {}
