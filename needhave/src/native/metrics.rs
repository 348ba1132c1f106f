//! Prometheus metrics of `needhave serve`, on a listener of their own
//! (`--metrics-addr`): the public port never answers `/metrics`, so the
//! list's traffic figures are the operator's alone.
//!
//! `prometheus-client`, the Prometheus project's own Rust client: typed label
//! sets, OpenMetrics text that `promtool check metrics` accepts, and no
//! global registry or thread of its own. The metrics exist only once the
//! listener is asked for ([`install`]); until then every `record` is one
//! load of an empty `OnceLock`, so a server without `--metrics-addr` pays
//! nothing measurable.
//!
//! Families (docs/operating.md says what each means):
//! `needhave_http_requests_total{method,route,status}`,
//! `needhave_http_request_duration_seconds{method,route}`,
//! `needhave_connections_open`, `needhave_connections_refused_total{reason}`,
//! `needhave_limit_refusals_total{code}`, `needhave_group_commit_batches`,
//! `needhave_group_commit_fsync_seconds`,
//! `needhave_statements_interrupted_total{route}`,
//! `needhave_reads_refused_total{route}`, `needhave_log_lines_dropped_total`,
//! `needhave_database_bytes`, `needhave_wal_bytes`, `needhave_build_info`,
//! `needhave_reports_total{reason}`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::{Registry, Unit};
use tokio::net::TcpListener;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    /// The table's pattern (`/posts/:id`), never the path: ids would make a
    /// series per post. `-` for a path the table does not have.
    route: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteOnly {
    route: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: &'static str,
}

/// The latency buckets' upper bounds: 50 µs to about 3.3 s, a memoized
/// list read to a write behind a slow fsync and a full group; then +Inf.
const LATENCY_BUCKETS: usize = 17;
const LATENCY_FIRST_NS: u64 = 50_000;

fn latency_histogram() -> Latency {
    Latency(Mutex::new(LatencyCounts {
        sum: 0.0,
        count: 0,
        buckets: exponential_buckets(LATENCY_FIRST_NS as f64 / 1e9, 2.0, LATENCY_BUCKETS as u16)
            .chain(std::iter::once(f64::MAX))
            .map(|bound| (bound, 0))
            .collect(),
    }))
}

/// A latency histogram that also takes whole bucket counts, which is how
/// the shards' counts reach it at a scrape. Encoded as the client's own
/// `Histogram` is.
#[derive(Debug)]
struct Latency(Mutex<LatencyCounts>);

#[derive(Debug)]
struct LatencyCounts {
    sum: f64,
    count: u64,
    /// (upper bound in seconds, observations in this bucket alone).
    buckets: Vec<(f64, u64)>,
}

impl Latency {
    fn counts(&self) -> std::sync::MutexGuard<'_, LatencyCounts> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn observe(&self, nanos: u64) {
        let mut c = self.counts();
        c.sum += nanos as f64 / 1e9;
        c.count += 1;
        c.buckets[bucket(nanos)].1 += 1;
    }
}

impl TypedMetric for Latency {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Latency {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let c = self.counts();
        encoder.encode_histogram::<NoLabelSet>(c.sum, c.count, &c.buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

/// The latency bucket of `nanos`: the first whose bound is at least it.
fn bucket(nanos: u64) -> usize {
    (0..LATENCY_BUCKETS)
        .find(|&i| nanos <= LATENCY_FIRST_NS << i)
        .unwrap_or(LATENCY_BUCKETS)
}

struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Latency, fn() -> Latency>,
    open: Gauge,
    refused: Family<ReasonLabels, Counter>,
    limits: Family<CodeLabels, Counter>,
    group_size: Histogram,
    fsync: Histogram,
    interrupted: Family<RouteOnly, Counter>,
    reads_refused: Family<RouteOnly, Counter>,
    dropped: Counter,
    db_bytes: Gauge<i64, AtomicI64>,
    wal_bytes: Gauge<i64, AtomicI64>,
    reports: Family<ReasonLabels, Counter>,
    /// The database file, for the sizes (`None` for `:memory:`).
    db: Option<String>,
}

static METRICS: OnceLock<Metrics> = OnceLock::new();

impl Metrics {
    fn new(db: Option<String>) -> Metrics {
        let mut registry = Registry::with_prefix("needhave");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by method, route pattern and status",
            requests.clone(),
        );
        let latency = Family::<RouteLabels, Latency, fn() -> Latency>::new_with_constructor(
            latency_histogram,
        );
        registry.register_with_unit(
            "http_request_duration",
            "Time from a request's arrival whole to its answer, by method and route pattern",
            Unit::Seconds,
            latency.clone(),
        );
        let open = Gauge::default();
        registry.register(
            "connections_open",
            "Client connections open now",
            open.clone(),
        );
        let refused = Family::<ReasonLabels, Counter>::default();
        registry.register(
            "connections_refused",
            "Connections closed on arrival, by the cap they met (total, per_ip)",
            refused.clone(),
        );
        let limits = Family::<CodeLabels, Counter>::default();
        registry.register(
            "limit_refusals",
            "Answers that refused for a limit (413, 429, 503), by error code",
            limits.clone(),
        );
        let group_size = Histogram::new(exponential_buckets(1.0, 2.0, 10));
        registry.register(
            "group_commit_batches",
            "Write batches per group commit (one fsync each)",
            group_size.clone(),
        );
        let fsync = Histogram::new(exponential_buckets(0.000_05, 2.0, 16));
        registry.register_with_unit(
            "group_commit_fsync",
            "Time of each group's COMMIT, which is the WAL fsync",
            Unit::Seconds,
            fsync.clone(),
        );
        let interrupted = Family::<RouteOnly, Counter>::default();
        registry.register(
            "statements_interrupted",
            "Reads stopped at their statement budget and answered 503 busy, by route pattern",
            interrupted.clone(),
        );
        let reads_refused = Family::<RouteOnly, Counter>::default();
        registry.register(
            "reads_refused",
            "Reads answered 503 busy for want of a reader: their client's share or every reader taken for the whole wait, by route pattern",
            reads_refused.clone(),
        );
        let dropped = Counter::default();
        registry.register(
            "log_lines_dropped",
            "Log lines lost because the log sink was not being read",
            dropped.clone(),
        );
        let db_bytes = Gauge::<i64, AtomicI64>::default();
        registry.register_with_unit(
            "database",
            "Size of the database file",
            Unit::Bytes,
            db_bytes.clone(),
        );
        let wal_bytes = Gauge::<i64, AtomicI64>::default();
        registry.register_with_unit(
            "wal",
            "Size of the database's write-ahead log (-wal)",
            Unit::Bytes,
            wal_bytes.clone(),
        );
        // A gauge at 1 rather than an OpenMetrics info: the Prometheus text
        // format (and promtool) know no info type.
        let build = Family::<BuildLabels, Gauge>::default();
        build
            .get_or_create(&BuildLabels {
                version: env!("CARGO_PKG_VERSION"),
            })
            .set(1);
        registry.register("build_info", "The running build: its version", build);
        let reports = Family::<ReasonLabels, Counter>::default();
        // Each reason from the start, at 0: a rate over a series that
        // appears with its first report misses that report.
        for reason in crate::rules::Reason::ALL {
            drop(reports.get_or_create(&ReasonLabels {
                reason: reason.as_str(),
            }));
        }
        registry.register(
            "reports",
            "Reports of posts answered 202, by reason (a client's report of the same post again included)",
            reports.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            open,
            refused,
            limits,
            group_size,
            fsync,
            interrupted,
            reads_refused,
            dropped,
            db_bytes,
            wal_bytes,
            reports,
            db,
        }
    }

    /// The OpenMetrics text of one scrape, the sizes and the log's drop
    /// count read now.
    fn scrape(&self) -> String {
        self.fold();
        let size = |path: String| std::fs::metadata(path).map_or(0, |m| m.len() as i64);
        if let Some(db) = &self.db {
            self.db_bytes.set(size(db.clone()));
            self.wal_bytes.set(size(format!("{db}-wal")));
        }
        let dropped = super::logs::dropped() as u64;
        let counted = self.dropped.get();
        if dropped > counted {
            self.dropped.inc_by(dropped - counted);
        }
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// Turns the metrics on for this process, for the database at `db`
/// (`:memory:`: no sizes). Group commits report from then on.
pub fn install(db: &str) {
    let file = (db != ":memory:").then(|| db.to_string());
    if METRICS.set(Metrics::new(file)).is_ok() {
        crate::store::sqlite::on_commit(|batches, committing| {
            if let Some(m) = METRICS.get() {
                m.group_size.observe(batches as f64);
                m.fsync.observe(committing.as_secs_f64());
            }
        });
    }
}

/// Whether [`install`] ran: the serving path skips the work of recording.
pub fn on() -> bool {
    METRICS.get().is_some()
}

/// One answered request: `route` is the table's route (its index and
/// itself) when the path and method found one; `body` is read for the
/// error code of a limit refusal.
pub fn request(
    method: &str,
    route: Option<(usize, &'static crate::api::Route)>,
    status: u16,
    took: Duration,
    body: &[u8],
) {
    let Some(m) = METRICS.get() else { return };
    let method = known_method(method);
    let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
    let counted = match (
        shard_key(method, route),
        STATUSES.iter().position(|&s| s == status),
    ) {
        (Some(key), Some(status)) => SHARD
            .try_with(|shard| shard.record(key, status, nanos))
            .is_ok(),
        _ => false,
    };
    if !counted {
        let route = route.map_or("-", |(_, r)| r.path);
        m.requests
            .get_or_create(&RequestLabels {
                method,
                route,
                status,
            })
            .inc();
        m.latency
            .get_or_create(&RouteLabels { method, route })
            .observe(nanos);
    }
    if matches!(status, 413 | 429 | 503) {
        let code = serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|v| v.get("error").and_then(|c| c.as_str()).map(String::from))
            .unwrap_or_else(|| "-".into());
        m.limits.get_or_create(&CodeLabels { code }).inc();
    }
}

// Requests are counted where they are answered: each thread that answers
// has a shard of plain counters that no other thread writes, and a scrape
// moves what the shards hold into the families. Counting into the families
// at once took, per request, two read locks and a write lock that both
// cores kept taking from each other, and two SipHashes of the labels.

/// The statuses the shards count; a request answered with another is
/// counted in the families at once.
const STATUSES: [u16; 20] = [
    200, 201, 202, 204, 304, 400, 401, 403, 404, 405, 406, 409, 410, 413, 415, 422, 429, 500, 501,
    503,
];

/// The method labels, in the order of a shard's keys past the routes.
const METHODS: [&str; 8] = [
    "GET", "POST", "OPTIONS", "HEAD", "PUT", "DELETE", "PATCH", "other",
];

/// Latency slots per key: the buckets with +Inf, then the sum in ns.
const SLOTS: usize = LATENCY_BUCKETS + 2;

/// A request's key in a shard: the route's index in the table when it was
/// asked with the route's own method, else (no route: `-`) the routes'
/// count and the method's place in [`METHODS`].
fn shard_key(
    method: &'static str,
    route: Option<(usize, &'static crate::api::Route)>,
) -> Option<usize> {
    match route {
        Some((index, r)) => (r.method == method).then_some(index),
        None => {
            let m = METHODS.iter().position(|&k| k == method)?;
            Some(crate::routes::API.routes.len() + m)
        }
    }
}

/// The labels of shard key `key`.
fn key_labels(key: usize) -> RouteLabels {
    let routes = crate::routes::API.routes;
    match routes.get(key) {
        Some(r) => RouteLabels {
            method: known_method(r.method),
            route: r.path,
        },
        None => RouteLabels {
            method: METHODS[key - routes.len()],
            route: "-",
        },
    }
}

struct Shard {
    /// Requests, per key and status (`key * STATUSES.len() + status`).
    requests: Box<[AtomicU64]>,
    /// Latency, per key: [`SLOTS`] counters.
    latency: Box<[AtomicU64]>,
}

static SHARDS: Mutex<Vec<Arc<Shard>>> = Mutex::new(Vec::new());

thread_local! {
    static SHARD: Arc<Shard> = Shard::register();
}

impl Shard {
    /// This thread's shard, listed for the scrapes.
    fn register() -> Arc<Shard> {
        let keys = crate::routes::API.routes.len() + METHODS.len();
        let zeros = |n: usize| (0..n).map(|_| AtomicU64::new(0)).collect();
        let shard = Arc::new(Shard {
            requests: zeros(keys * STATUSES.len()),
            latency: zeros(keys * SLOTS),
        });
        shards().push(shard.clone());
        shard
    }

    fn record(&self, key: usize, status: usize, nanos: u64) {
        // Relaxed: only this thread writes, and a scrape's swap is atomic,
        // so no count is lost or counted twice.
        let add = |c: &AtomicU64, n: u64| c.fetch_add(n, Ordering::Relaxed);
        add(&self.requests[key * STATUSES.len() + status], 1);
        let slots = &self.latency[key * SLOTS..][..SLOTS];
        add(&slots[bucket(nanos)], 1);
        add(&slots[SLOTS - 1], nanos);
    }
}

fn shards() -> std::sync::MutexGuard<'static, Vec<Arc<Shard>>> {
    SHARDS.lock().unwrap_or_else(|e| e.into_inner())
}

impl Metrics {
    /// Moves what the shards counted since the last scrape into the
    /// families.
    fn fold(&self) {
        for shard in shards().iter() {
            for (i, c) in shard.requests.iter().enumerate() {
                let n = c.swap(0, Ordering::Relaxed);
                if n > 0 {
                    let RouteLabels { method, route } = key_labels(i / STATUSES.len());
                    let status = STATUSES[i % STATUSES.len()];
                    self.requests
                        .get_or_create(&RequestLabels {
                            method,
                            route,
                            status,
                        })
                        .inc_by(n);
                }
            }
            for (key, slots) in shard.latency.chunks(SLOTS).enumerate() {
                let taken: Vec<u64> = slots.iter().map(|c| c.swap(0, Ordering::Relaxed)).collect();
                let count: u64 = taken[..SLOTS - 1].iter().sum();
                if count == 0 && taken[SLOTS - 1] == 0 {
                    continue;
                }
                let family = self.latency.get_or_create(&key_labels(key));
                let mut c = family.counts();
                c.count += count;
                c.sum += taken[SLOTS - 1] as f64 / 1e9;
                for (b, n) in c.buckets.iter_mut().zip(&taken) {
                    b.1 += n;
                }
            }
        }
    }
}

/// A method as a label: the table's methods and OPTIONS, anything else one
/// value, so a client cannot mint series.
fn known_method(method: &str) -> &'static str {
    match method {
        "GET" => "GET",
        "POST" => "POST",
        "OPTIONS" => "OPTIONS",
        "HEAD" => "HEAD",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        _ => "other",
    }
}

/// A request whose reads were declined `busy`: `(interrupted, refused)`,
/// stopped at their budget and refused a reader.
pub fn reads_declined(method: &str, path: &str, (interrupted, refused): (u32, u32)) {
    let Some(m) = METRICS.get() else { return };
    let api = &crate::routes::API;
    let route = api
        .route_of((api.resolve)(method, path))
        .map_or("-", |r| r.path);
    let labels = RouteOnly { route };
    if interrupted > 0 {
        m.interrupted
            .get_or_create(&labels)
            .inc_by(u64::from(interrupted));
    }
    if refused > 0 {
        m.reads_refused
            .get_or_create(&labels)
            .inc_by(u64::from(refused));
    }
}

/// An answer of 202 to `method` `path`, the request's body `sent`: a
/// report (`POST /posts/:id/report {"reason": …}`) is counted by its
/// reason, one of the six (the 202 says it was one); MCP's 202s are not.
pub fn report_of(method: &str, path: &str, sent: &[u8]) {
    let Some(m) = METRICS.get() else { return };
    let api = &crate::routes::API;
    if api.route_of((api.resolve)(method, path)).map(|r| r.path) != Some("/posts/:id/report") {
        return;
    }
    let reason = serde_json::from_slice::<serde_json::Value>(sent)
        .ok()
        .and_then(|v| {
            v.get("reason")?
                .as_str()
                .and_then(crate::rules::Reason::parse)
        });
    if let Some(reason) = reason {
        m.reports
            .get_or_create(&ReasonLabels {
                reason: reason.as_str(),
            })
            .inc();
    }
}

/// A connection taken (`+1`) or ended (`-1`).
pub fn connection(delta: i64) {
    if let Some(m) = METRICS.get() {
        m.open.inc_by(delta);
    }
}

/// A connection closed on arrival at a cap.
pub fn refused(reason: &'static str) {
    if let Some(m) = METRICS.get() {
        m.refused.get_or_create(&ReasonLabels { reason }).inc();
    }
}

/// OpenMetrics text as the Prometheus text format (0.0.4), which the
/// Prometheus server reads when it does not ask for OpenMetrics and which
/// `promtool check metrics` lints: a counter's `HELP` and `TYPE` name its
/// samples' `_total` name, and there are no `UNIT` or `EOF` lines.
fn prometheus_text(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len());
    let mut help: Option<&str> = None;
    for line in openmetrics.lines() {
        if line.starts_with("# HELP ") {
            help = Some(line);
            continue;
        }
        if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
            let total = if kind == "counter" { "_total" } else { "" };
            if let Some(help) = help.take() {
                let text = help["# HELP ".len() + name.len()..].trim_start();
                out.push_str(&format!("# HELP {name}{total} {text}\n"));
            }
            out.push_str(&format!("# TYPE {name}{total} {kind}\n"));
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Serves `GET /metrics` on `listener` until the process ends: OpenMetrics
/// to a scraper that asks for it (`Accept`), the Prometheus text format to
/// anyone else; any other path is 404.
pub async fn serve(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let service = service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
            let mut resp = hyper::Response::new(Full::new(Bytes::new()));
            match (req.method(), req.uri().path(), METRICS.get()) {
                (&hyper::Method::GET, "/metrics", Some(m)) => {
                    let openmetrics =
                        req.headers()
                            .get_all(hyper::header::ACCEPT)
                            .iter()
                            .any(|v| {
                                v.as_bytes()
                                    .windows(19)
                                    .any(|w| w == b"application/openmet")
                            });
                    let (text, media) = if openmetrics {
                        (
                            m.scrape(),
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )
                    } else {
                        (
                            prometheus_text(&m.scrape()),
                            "text/plain; version=0.0.4; charset=utf-8",
                        )
                    };
                    *resp.body_mut() = Full::new(Bytes::from(text));
                    resp.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static(media),
                    );
                }
                _ => *resp.status_mut() = hyper::StatusCode::NOT_FOUND,
            }
            Ok::<_, std::convert::Infallible>(resp)
        });
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Binds the metrics listener; refused at start like the public one.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen for metrics on {addr}: {e}"))
}
