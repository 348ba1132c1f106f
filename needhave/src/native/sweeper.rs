//! `needhave serve`'s sweep: ended posts out of the index of words
//! (`store::index::sweep`) without anyone asking, in the background of the
//! server, on its own store.
//!
//! It sweeps at start (posts that expired while the server was down), then
//! every [`EVERY`]: a round when nothing has ended is one read of a few
//! index seeks on a reader connection, and writes nothing. When a round
//! takes something, the next one runs at once, until a round finds
//! nothing: a burst of ends (an operator's removals, a day of expiries)
//! is taken in rounds of `index::SWEEP_ROUND`, each one write batch of the
//! writer thread, so that the creates in between wait for one round at
//! most. A failure is logged and the sweep waits longer before the next
//! round, up to [`EVERY`] × 64; it never stops the server. It stops with
//! the server, after the drain.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::platform;
use crate::store::index::{sweep, SWEEP_ROUND};
use crate::store::Store;

/// How often the sweep looks for ended posts when it found none.
pub const EVERY: Duration = Duration::from_secs(1);

/// The sweep running in the background.
pub struct Sweeper {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

/// Starts the sweep of `store`'s index on the current runtime.
pub fn start(store: Arc<dyn Store>) -> Sweeper {
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(run(store, stopped));
    Sweeper { stop, task }
}

impl Sweeper {
    /// Stops the sweep once its round in flight, if any, has ended.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

async fn run(store: Arc<dyn Store>, mut stopped: oneshot::Receiver<()>) {
    let mut failures: u32 = 0;
    // Ends taken since the sweep last found nothing, for one log line a
    // burst.
    let mut taken = 0;
    loop {
        let wait = match sweep(&*store, platform::now_ms(), SWEEP_ROUND).await {
            Ok(0) => {
                if taken > 0 {
                    tracing::info!(
                        target: "needhave::store",
                        ends = taken,
                        "swept ended posts out of the index of words"
                    );
                    taken = 0;
                }
                failures = 0;
                EVERY
            }
            Ok(n) => {
                taken += n;
                failures = 0;
                Duration::ZERO
            }
            Err(e) => {
                failures = failures.saturating_add(1);
                let wait = EVERY * 2u32.pow(failures.min(6));
                tracing::warn!(
                    target: "needhave::store",
                    error = %e,
                    retry_secs = wait.as_secs(),
                    "sweep of ended posts failed"
                );
                wait
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = &mut stopped => return,
        }
    }
}
