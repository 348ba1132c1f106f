//! A slow read cannot stall `needhave serve`, black-box: reads run off the
//! async threads, each under a budget past which it is answered 503 `busy`,
//! and one client holds at most its share of the readers.
//!
//! A read is made slow by the server's test switch
//! (`NEEDHAVE_TEST_SLOW_READS=MATCH`): every read with a statement that
//! searches the index of words first runs a statement that counts until
//! its budget stops it. The servers run on two async threads
//! (`TOKIO_WORKER_THREADS`), fewer than the slow reads sent at once, as on
//! a machine of two cores.

mod common;

use std::process::Child;
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// How long a cheap read may take while the slow ones run: far more than
/// it takes on a loaded machine (a few ms), far less than the slow reads
/// (their budget).
const BOUND: Duration = Duration::from_secs(1);

/// A `needhave serve` on a file of its own whose searches are slow, with
/// `extra` flags; its metrics listener's address too.
struct Slow {
    child: Child,
    server: Server,
    metrics: Server,
    dir: std::path::PathBuf,
}

impl Slow {
    fn spawn(extra: &[&str]) -> Slow {
        let dir = scratch("reads");
        let metrics = free_port();
        let mut cmd = serve_command("127.0.0.1:0", dir.join("list.db"));
        cmd.env("NEEDHAVE_TEST_SLOW_READS", "MATCH")
            .env("TOKIO_WORKER_THREADS", "2")
            .args(["--exit-with-stdin", "--metrics-addr", &metrics])
            .args(extra);
        let (child, url) = start(&mut cmd);
        Slow {
            child,
            server: Server::at(&url),
            metrics: Server::at(&format!("http://{metrics}")),
            dir,
        }
    }

    async fn get(&self, ip: std::net::Ipv4Addr, path: &str) -> Resp {
        answered(path, send_to(&self.server, ip, "GET", path, None, &[])).await
    }

    /// A slow search from `ip`, sent now, answered whenever it is.
    fn search(&self, ip: std::net::Ipv4Addr) -> tokio::task::JoinHandle<(Resp, Duration)> {
        let server = Server::at(&self.server.base);
        tokio::spawn(async move {
            let t = Instant::now();
            let path = "/posts?q=anything";
            let r = answered(path, send_to(&server, ip, "GET", path, None, &[])).await;
            (r, t.elapsed())
        })
    }

    /// A post to read back.
    async fn post(&self) -> String {
        let r = create_on(&self.server, "have", &fresh_note("reads")).await;
        assert_eq!(r.status, 201, "{}", r.text());
        r.json()["id"].as_str().unwrap().to_string()
    }

    /// The metrics' value of `series` now (0 when absent).
    async fn metric(&self, series: &str) -> f64 {
        scrape(&self.metrics)
            .await
            .get(series)
            .copied()
            .unwrap_or(0.0)
    }
}

impl Drop for Slow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The answer to `path`, which must come within [`HANG`].
async fn answered(path: &str, r: impl std::future::Future<Output = Resp>) -> Resp {
    tokio::time::timeout(HANG, r)
        .await
        .unwrap_or_else(|_| panic!("{path}: no answer within {HANG:?}"))
}

/// Longer than any budget these tests set, by far.
const HANG: Duration = Duration::from_secs(60);

#[track_caller]
fn assert_busy(r: &Resp) {
    r.expect_error(503, "busy");
    assert_eq!(r.header("retry-after"), Some("1"), "{:?}", r.headers);
}

/// Four slow searches from four addresses, more than the server's async
/// threads: while they run, `/healthz`, a post, a kind page and the bare
/// list are each answered within [`BOUND`].
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_slow_read_does_not_delay_the_cheap_ones() {
    let slow = Slow::spawn(&["--statement-budget-ms", "6000"]);
    let id = slow.post().await;
    // The bare list once, so that the memo holds it.
    assert_eq!(slow.get(fresh_ip(), "/posts").await.status, 200);
    let searches: Vec<_> = (0..4).map(|_| slow.search(fresh_ip())).collect();
    // Every search is running.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let me = fresh_ip();
    for path in [
        "/healthz".to_string(),
        format!("/posts/{id}"),
        "/posts?kind=have".to_string(),
        "/posts".to_string(),
    ] {
        let t = Instant::now();
        let r = slow.get(me, &path).await;
        let took = t.elapsed();
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert!(took < BOUND, "{path} took {took:?} beside four slow reads");
    }
    // They were still running then: the cheap reads did not just come after.
    assert!(searches.iter().all(|s| !s.is_finished()));
    for s in searches {
        let (r, _) = s.await.unwrap();
        assert_busy(&r);
    }
}

/// A read past its budget is stopped and answered 503 `busy` with
/// `Retry-After`, through the JSON calls, the feed and MCP alike; each is
/// counted by route, and the server goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_past_its_budget_is_busy_and_counted() {
    let slow = Slow::spawn(&["--statement-budget-ms", "300"]);
    let interrupted =
        |route: &str| format!("needhave_statements_interrupted_total{{route=\"{route}\"}}");
    let t = Instant::now();
    let r = slow.get(fresh_ip(), "/posts?q=anything").await;
    let took = t.elapsed();
    assert_busy(&r);
    assert!(took >= Duration::from_millis(300), "stopped after {took:?}");
    assert_busy(&slow.get(fresh_ip(), "/posts.atom?q=anything").await);
    let call = tool_call(1, "list_posts", json!({"query": "anything"})).to_string();
    let v = answered(
        "/mcp",
        send_to(
            &slow.server,
            fresh_ip(),
            "POST",
            "/mcp",
            Some(call.into_bytes()),
            &[("accept", "application/json, text/event-stream")],
        ),
    )
    .await
    .json();
    tool_err(&v["result"], "busy");
    assert_eq!(slow.metric(&interrupted("/posts")).await, 1.0);
    assert_eq!(slow.metric(&interrupted("/posts.atom")).await, 1.0);
    assert_eq!(slow.metric(&interrupted("/mcp")).await, 1.0);
    assert_eq!(
        slow.metric("needhave_limit_refusals_total{code=\"busy\"}")
            .await,
        2.0,
        "the two HTTP answers (MCP's is a 200 with an error result)"
    );
    // Still serving, reads and writes.
    let id = slow.post().await;
    assert_eq!(
        slow.get(fresh_ip(), &format!("/posts/{id}")).await.status,
        200
    );
    assert_eq!(slow.get(fresh_ip(), "/healthz").await.status, 200);
    assert_eq!(slow.get(fresh_ip(), "/posts?kind=have").await.status, 200);
}

/// One client's third slow search at once waits for its share of two and
/// is refused `busy`, while another client's search gets a reader and its
/// cheap read is answered at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_gets_its_share_of_the_readers() {
    let slow = Slow::spawn(&[
        "--statement-budget-ms",
        "4000",
        "--reads-per-client",
        "2",
        "--readers",
        "8",
    ]);
    let id = slow.post().await;
    let (a, b) = (fresh_ip(), fresh_ip());
    let held: Vec<_> = (0..2).map(|_| slow.search(a)).collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let third = slow.search(a);
    let other = slow.search(b);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = Instant::now();
    let r = slow.get(b, &format!("/posts/{id}")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(t.elapsed() < BOUND, "took {:?}", t.elapsed());
    // The third was refused while the two ran: it is answered first.
    let (r, _) = third.await.unwrap();
    assert_busy(&r);
    assert!(held.iter().all(|s| !s.is_finished()));
    assert!(!other.is_finished());
    assert_eq!(
        slow.metric("needhave_reads_refused_total{route=\"/posts\"}")
            .await,
        1.0
    );
    // The others ran until their budget.
    for s in held.into_iter().chain([other]) {
        let (r, took) = s.await.unwrap();
        assert_busy(&r);
        assert!(took >= Duration::from_secs(3), "{took:?}");
    }
    assert_eq!(
        slow.metric("needhave_statements_interrupted_total{route=\"/posts\"}")
            .await,
        3.0
    );
    assert_eq!(
        slow.metric("needhave_reads_refused_total{route=\"/posts\"}")
            .await,
        1.0
    );
}
