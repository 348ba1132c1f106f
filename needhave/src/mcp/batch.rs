//! The policy of JSON-RPC batches on `POST /mcp` and stdio: how many
//! elements one may hold, how large its answer may grow, and how many are
//! built at once. `server.rs` runs them under it.

use serde_json::Value;

use crate::api::Api;

// Macros, so that the messages can name the limits with `concat!`: a
// message known at compile time costs no formatting code.
macro_rules! max_batch {
    () => {
        20
    };
}
macro_rules! max_batch_answer {
    () => {
        2097152
    };
}

/// More elements than this in one batch are refused as a whole.
pub const MAX_BATCH: usize = max_batch!();

/// A batch's answer is at most this many bytes as sent, counted as they are
/// written: an element whose answer would pass it (with the room the later
/// elements' errors take) gets an error instead, as do the elements after
/// it (not run), so that a request of a few KB never gets more back.
pub const MAX_BATCH_ANSWER: usize = max_batch_answer!(); // 2 MiB

/// What a batch of more than [`MAX_BATCH`] elements is told.
pub const TOO_MANY: &str = concat!(
    "Invalid Request: a batch has at most ",
    max_batch!(),
    " elements"
);

/// What an element that was not run is told.
pub const NOT_RUN_MESSAGE: &str = concat!(
    "Not run: this batch's answers reached ",
    max_batch_answer!(),
    " bytes; send this request again on its own"
);

/// The JSON-RPC code for elements of a batch that were not run: the
/// implementation-defined range, since no standard code says "later".
pub const NOT_RUN: i64 = -32000;

/// How many MCP batches one `needhave serve` builds at once. A batch's
/// answer is up to 2 MiB, and about three times that as values while it is
/// built; batches that yield to each other ([`crate::platform::yield_now`])
/// would otherwise all be half-built at once. More wait their turn, parked,
/// at no cost to other requests.
pub const BATCHES_AT_ONCE: usize = 4;

/// A turn to build an MCP batch, held while it is built.
#[cfg(not(target_arch = "wasm32"))]
pub struct BatchTurn(#[allow(dead_code)] Option<tokio::sync::SemaphorePermit<'static>>);
#[cfg(target_arch = "wasm32")]
pub struct BatchTurn;

/// Waits for a turn ([`BATCHES_AT_ONCE`]); on the Worker, where an
/// invocation builds one request's answer, at once.
pub async fn turn() -> BatchTurn {
    #[cfg(not(target_arch = "wasm32"))]
    {
        static TURNS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(BATCHES_AT_ONCE);
        // Never closed, so acquiring cannot fail (and would only mean no wait).
        BatchTurn(TURNS.acquire().await.ok())
    }
    #[cfg(target_arch = "wasm32")]
    BatchTurn
}

/// Room kept for a write's answer: a tool that writes runs in a batch only
/// while this much fits under [`MAX_BATCH_ANSWER`], since once it has run
/// its answer (a secret, a thread key) must reach the caller. A write
/// answers a few KB at most (its note or text, escaped, twice).
pub const WRITE_ROOM: usize = 64 * 1024;

/// Whether a batch element can be run and its answer then dropped without
/// losing anything: every method but a `tools/call` of a tool that writes.
pub fn reads_only(api: &Api, msg: &Value) -> bool {
    if msg["method"] != "tools/call" {
        return true;
    }
    match msg["params"]["name"].as_str().and_then(|n| api.tool(n)) {
        Some(tool) => tool.read_only,
        // An unknown tool is answered with an error and nothing else.
        None => true,
    }
}
