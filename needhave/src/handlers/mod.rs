//! The list's calls, by resource. Each handler takes typed input (`Ctx`, path
//! ids, the parsed body) and returns a typed answer or an `ApiError`; the
//! dispatcher generated from `routes.rs` does the HTTP around it.
//!
//! Each handler makes exactly one store round trip, and each limit is a
//! condition of the `INSERT … SELECT … WHERE` that writes, so concurrent
//! requests cannot both pass a check. A read in the same batch, run first,
//! only serves to name the error when the insert wrote nothing; both are
//! made from one list of guards per write (`guard`).

// LIMITs are written into the SQL, not bound: the bundled SQLite is built
// with STAT4, which re-prepares a statement on every run when a bound value
// reaches a LIMIT that the planner uses (measured: one re-prepare per call,
// the parser then the larger part of a list read). These keep the literals
// in step with the rules.
const _: () = assert!(crate::rules::LIST_SIZE == 100);
const _: () = assert!(crate::rules::THREAD_SIZE == 100);
const _: () = assert!(crate::rules::WAITING_CAP == 20);

mod guard;
pub mod health;
pub mod life;
pub mod messages;
pub mod posts;
pub mod threads;

#[cfg(test)]
mod tests;
