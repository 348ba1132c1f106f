//! The policy of JSON-RPC batches on `POST /mcp` and stdio: how many
//! elements one may hold, how large its answer may grow, and how many are
//! built at once. `server.rs` runs them under it.

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

/// A batch stops running once its answers add up to this many bytes: the
/// elements left get an error each (and are not run), so that a request
/// of a few KB never gets much more than this back.
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
