//! Log lines that can never stall serving.
//!
//! Written synchronously, a log line blocks the request that emits it when
//! stderr is a pipe nobody reads (about 600 requests in, the pipe is full
//! and every request waits). Here lines go through a bounded queue to a
//! writer thread (`tracing-appender`'s non-blocking writer, lossy): when the
//! sink blocks, the queue fills and further lines are dropped and counted,
//! and a watcher logs how many were lost as soon as a line can get through.

use std::sync::OnceLock;
use std::time::Duration;

use tracing_appender::non_blocking::{ErrorCounter, NonBlocking, NonBlockingBuilder, WorkerGuard};

/// Lines held while the sink is blocked: a few MB at most, then lines are
/// dropped.
pub const QUEUE_LINES: usize = 8192;

/// How often the watcher looks at the drop count.
const WATCH_EVERY: Duration = Duration::from_secs(5);

static DROPPED: OnceLock<ErrorCounter> = OnceLock::new();

/// A non-blocking, lossy stderr. Keep the guard until exit: dropping it
/// flushes what is queued (waiting a bounded time on a blocked sink).
pub fn stderr() -> (NonBlocking, WorkerGuard) {
    let (writer, guard) = NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(QUEUE_LINES)
        .thread_name("needhave-log")
        .finish(std::io::stderr());
    if DROPPED.set(writer.error_counter()).is_ok() {
        std::thread::Builder::new()
            .name("needhave-log-watch".into())
            .spawn(watch)
            .ok();
    }
    (writer, guard)
}

/// Lines dropped so far (0 before [`stderr`] is set up).
pub fn dropped() -> usize {
    DROPPED.get().map_or(0, ErrorCounter::dropped_lines)
}

/// Logs the drop count whenever it grew. The warning itself may be dropped
/// while the sink is still blocked; the count is cumulative, so the next
/// one that gets through says it all.
fn watch() {
    let mut reported = 0;
    loop {
        std::thread::sleep(WATCH_EVERY);
        let now = dropped();
        if now > reported {
            tracing::warn!(
                dropped = now,
                "log lines dropped: the log sink was not being read"
            );
            reported = now;
        }
    }
}
