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

/// How log lines are written (`--log-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One human-readable line per event.
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, and the
    /// event's fields (`message`, and a request's `method`, `route`,
    /// `status`, `micros`) at the top level.
    Json,
}

/// The level names `NEEDHAVE_LOG` may use, alone or as `target=LEVEL`.
const LEVELS: [&str; 6] = ["trace", "debug", "info", "warn", "error", "off"];

/// Reads `NEEDHAVE_LOG` (default `info`): comma-separated directives, each a
/// level or `target=level`. Anything else is refused with a message: the
/// filter syntax would take a mistyped level (`NEEDHAVE_LOG=bogus`) as the
/// name of a target and silently log nothing.
pub fn filter(spec: Option<&str>) -> Result<tracing_subscriber::EnvFilter, String> {
    let spec = spec
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or("info");
    for directive in spec.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let level = directive.rsplit('=').next().unwrap_or(directive);
        if !LEVELS.contains(&level.to_ascii_lowercase().as_str()) {
            return Err(format!(
                "NEEDHAVE_LOG={spec:?}: {directive:?} is not a level; use one of {} (or target=level, comma-separated)",
                LEVELS.join(", ")
            ));
        }
    }
    tracing_subscriber::EnvFilter::builder()
        .parse(spec)
        .map_err(|e| format!("NEEDHAVE_LOG={spec:?}: {e}"))
}

/// Sets up logging to stderr in `format`, filtered by `NEEDHAVE_LOG`;
/// keep the guard until exit.
pub fn init(format: Format) -> Result<WorkerGuard, String> {
    let filter = filter(std::env::var("NEEDHAVE_LOG").ok().as_deref())?;
    let (writer, guard) = stderr();
    let builder = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_env_filter(filter);
    match format {
        Format::Text => builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        Format::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .init(),
    }
    Ok(guard)
}

#[cfg(test)]
mod tests {
    use super::filter;

    #[test]
    fn levels_and_targets_pass_anything_else_is_refused() {
        for ok in [
            None,
            Some(""),
            Some("debug"),
            Some("WARN"),
            Some("warn,needhave::store=debug"),
            Some("off"),
        ] {
            assert!(filter(ok).is_ok(), "{ok:?}");
        }
        for bad in ["bogus_level", "needhave", "info,verbose", "needhave=loud"] {
            let e = filter(Some(bad)).unwrap_err();
            assert!(e.contains("is not a level") && e.contains(bad), "{e}");
        }
    }
}
