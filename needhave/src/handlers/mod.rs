//! The list's calls, by resource. Each handler takes typed input (`Ctx`, path
//! ids, the parsed body) and returns a typed answer or an `ApiError`; the
//! dispatcher generated from `routes.rs` does the HTTP around it.
//!
//! Each handler makes exactly one store round trip, and each limit is a
//! condition of the `INSERT … SELECT … WHERE` that writes, so concurrent
//! requests cannot both pass a check. A read in the same batch, run first,
//! only serves to name the error when the insert wrote nothing.

pub mod messages;
pub mod posts;
pub mod threads;

use crate::store::{Row, RowExt};

/// A SQL boolean (`0`/`1`) column of a row.
fn flag(row: &Row, col: &str) -> bool {
    row.int(col).unwrap_or(0) != 0
}
