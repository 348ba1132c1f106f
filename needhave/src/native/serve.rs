//! `needhave serve`: the list over HTTP/1.1 (hyper) on an SQLite file.
//!
//! The client IP is the TCP peer address, unless the operator names a header
//! set by their own proxy (`--client-ip-header`, see `client_ip.rs`):
//! trusting a header by default would let anyone pick their IP and skip the
//! per-IP limits. Deadlines and connection caps are `conn.rs`, in front of
//! [`crate::handle`].

use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::Either;
use futures_util::FutureExt;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use super::budget::{self, Budget};
use super::client_ip::{self, client_ip};
use super::conn::{Admitted, Clock, Gate, Guarded, HeadTimer, Limits, Owed, Refused};
use crate::api::Ctx;
use crate::conditional::{self, LIST_CACHE};
use crate::config::Config;
use crate::error::Code;
use crate::handlers::posts::{LIST, LIST_TAG};
use crate::http::{Request, Response};
use crate::store::sqlite::{Caller, ReadPolicy, SqliteStore};
use crate::store::Consistency;
use crate::store::Store;
use crate::{routes, rules};

pub struct Options {
    pub addr: SocketAddr,
    pub db: String,
    pub client_ip_header: Option<String>,
    /// The origin every document names (`--public-url`).
    pub public_url: Option<String>,
    /// Where to write about abuse, on the home page (`--abuse-contact`).
    pub abuse_contact: Option<String>,
    pub allowed_origins: Vec<String>,
    /// Extra host names `POST /mcp` answers to; `*` turns the check off.
    pub allowed_hosts: Vec<String>,
    pub ip_salt: Option<String>,
    pub limits: Limits,
    /// Where a group commit closes (`store/sqlite/group.rs`).
    pub group: crate::store::sqlite::GroupPolicy,
    /// Where reads run, their budget and their shares
    /// (`store/sqlite/reads.rs`).
    pub reads: ReadPolicy,
    /// How long a stop lets the requests in flight finish.
    pub drain: Duration,
    /// Where the Prometheus metrics listener binds, if anywhere.
    pub metrics_addr: Option<SocketAddr>,
    /// Also stop when stdin closes: a test harness's child dies with it.
    pub exit_with_stdin: bool,
}

/// How connections are taken: whom to believe about the client's address,
/// and the deadlines and caps.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// A header set by the operator's own proxy (any case).
    pub client_ip_header: Option<String>,
    pub limits: Limits,
    /// How long a stop lets the requests in flight finish ([`DRAIN`] when
    /// `None`).
    pub drain: Option<Duration>,
    /// Every request through the shared pipeline, [`kept_list`] off: for the
    /// tests that compare the two paths' bytes.
    #[doc(hidden)]
    pub general_only: bool,
}

/// How long a stop waits for the requests in flight, by default: more than
/// any answer takes, less than a service manager's own stop timeout
/// (systemd's is 90 s).
pub const DRAIN: Duration = Duration::from_secs(10);

struct State {
    store: Arc<dyn Store>,
    config: Arc<Config>,
    client_ip_header: Option<String>,
    request_timeout: Duration,
    budget: Arc<Budget>,
    /// Whether reads count against their client's share: not when every
    /// connection is one proxy's and no header names the client.
    read_share: bool,
    /// Whether `GET /posts` may be answered from the memo before the shared
    /// request is made ([`kept_list`]): the store has no sessions, so the
    /// request's own store serves the list, with no bookmark to resume or
    /// to answer.
    kept_list: bool,
}

/// Why a request was not answered: the connection is closed instead.
#[derive(Debug)]
struct Dropped(&'static str);

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Dropped {}

/// The test switch that moves the server's clock: whole seconds ahead.
pub const CLOCK_OFFSET_VAR: &str = "NEEDHAVE_TEST_NOW_OFFSET_S";

/// Reads [`CLOCK_OFFSET_VAR`] once, at start-up, and moves the clock of
/// everything the server does by it (a post's times, expiry, the rate
/// windows, how long an answer may be kept): a test restarts a server on
/// the same file "later" and sees its posts expire. Anything but a whole
/// number of seconds is refused; a set value is logged as a warning, since
/// a server whose clock is wrong gives wrong times to everyone.
fn clock_offset() -> Result<(), String> {
    let text = match std::env::var(CLOCK_OFFSET_VAR) {
        Err(std::env::VarError::NotPresent) => return Ok(()),
        Ok(text) if text.is_empty() => return Ok(()),
        Ok(text) => text,
        Err(std::env::VarError::NotUnicode(_)) => String::from("(not UTF-8)"),
    };
    let seconds: i64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{CLOCK_OFFSET_VAR}={text:?} is not a whole number of seconds"))?;
    tracing::warn!(
        seconds,
        "{CLOCK_OFFSET_VAR} is set: this server's clock runs {seconds} s ahead (a test switch)"
    );
    crate::platform::set_clock_offset_s(seconds);
    Ok(())
}

/// The operator's salt of the client-IP hashes, refused when empty; `None`
/// when one is to be kept beside the database ([`kept_salt`]).
fn given_salt(opts: &Options) -> Result<Option<String>, String> {
    match &opts.ip_salt {
        // An empty salt makes each hash a plain SHA-256 of an address,
        // which a list of all IPv4 addresses undoes in minutes.
        Some(s) if s.trim().is_empty() => Err(EMPTY_SALT.to_string()),
        Some(s) => Ok(Some(s.clone())),
        None => Ok(None),
    }
}

/// The salt kept beside the database (`<db>.salt`), so that the per-IP
/// limits survive a restart; made on first start.
fn kept_salt(db: &str) -> Result<String, String> {
    if db == ":memory:" {
        return Ok(crate::secrets::new_secret());
    }
    let path = format!("{db}.salt");
    match std::fs::read_to_string(&path) {
        Ok(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        _ => {
            let keep = || -> std::io::Result<String> {
                let salt = crate::secrets::new_secret();
                // Created 0600, so the salt is never readable by others,
                // even for a moment.
                let mut options = std::fs::OpenOptions::new();
                options.write(true).create(true).truncate(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
                std::io::Write::write_all(&mut options.open(&path)?, salt.as_bytes())?;
                Ok(salt)
            };
            keep().map_err(|e| format!("cannot keep the IP salt in {path}: {e}"))
        }
    }
}

pub const EMPTY_SALT: &str = "the IP salt (--ip-salt or NEEDHAVE_IP_SALT) is empty, which would leave the client-IP hashes unsalted: unset it to keep a random salt beside the database, or set a long random value";

/// Binds, opens the database, prints the URL it serves on, and serves
/// until Ctrl-C (or SIGTERM).
///
/// Each refusal names what it is about; nothing is created before the
/// address is bound, and a database file this start created is removed
/// again if a later step fails.
pub async fn run(opts: Options) -> Result<(), String> {
    clock_offset()?;
    let given_salt = given_salt(&opts)?;
    let listener = TcpListener::bind(opts.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", opts.addr))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    let metrics = match opts.metrics_addr {
        Some(addr) => Some(super::metrics::bind(addr).await?),
        None => None,
    };
    let store = SqliteStore::open_with(&opts.db, opts.group)
        .map_err(|e| e.to_string())?
        .with_reads(opts.reads);
    let ip_salt = match given_salt.map_or_else(|| kept_salt(&opts.db), Ok) {
        Ok(salt) => salt,
        Err(e) => {
            store.discard();
            return Err(e);
        }
    };
    let config = Config {
        ip_salt,
        allowed_origins: opts.allowed_origins.clone(),
        allowed_hosts: crate::hosts::allowed_hosts(local, &opts.allowed_hosts),
        public_url: opts.public_url.clone(),
        // The proxy opt-in: whoever sets the client's address also says
        // how it was reached.
        trust_forwarded: opts.client_ip_header.is_some(),
        abuse_contact: opts.abuse_contact.clone(),
    };
    // The one line on stdout, for a script to read the address from; the
    // log (stderr) has it too.
    println!("needhave: serving http://{local} (database {})", opts.db);
    tracing::info!(addr = %local, db = %opts.db, "serving");
    if let Some(metrics) = metrics {
        let at = metrics.local_addr().map_err(|e| e.to_string())?;
        super::metrics::install(&opts.db);
        tokio::spawn(super::metrics::serve(metrics));
        tracing::info!(addr = %at, "metrics at http://{at}/metrics");
    }
    let exit_with_stdin = opts.exit_with_stdin;
    let stop = async move {
        if exit_with_stdin {
            tokio::select! {
                _ = shutdown_signal() => {}
                _ = stdin_closed() => {}
            }
        } else {
            shutdown_signal().await
        }
    };
    let store = Arc::new(store);
    serve(
        listener,
        store.clone(),
        config,
        Policy {
            client_ip_header: opts.client_ip_header,
            limits: opts.limits,
            drain: Some(opts.drain),
            general_only: false,
        },
        stop,
    )
    .await;
    // A clean stop leaves nothing in the WAL: the .db alone holds it all.
    store
        .checkpoint()
        .map_err(|e| format!("checkpoint of {} at stop: {e}", opts.db))?;
    let stats = store.group_stats();
    let load = std::sync::atomic::Ordering::Relaxed;
    // A target of its own, so that it can be asked for without the
    // per-request lines (`NEEDHAVE_LOG=warn,needhave::store=info`).
    tracing::info!(
        target: "needhave::store",
        commits = stats.commits.load(load),
        writes = stats.batches.load(load),
        largest_group = stats.largest.load(load),
        running_us = stats.running_us.load(load),
        committing_us = stats.committing_us.load(load),
        "checkpointed {}",
        opts.db
    );
    Ok(())
}

/// Serves `listener` with any store until `shutdown` completes, then
/// drains: the listener is closed at once, every request in flight gets its
/// whole answer, and each keep-alive connection is closed once it is between
/// requests (hyper's graceful shutdown), for up to `policy.drain`; what is
/// still open then is dropped. Tests call this directly to put a
/// failing or panicking store behind a real socket.
pub async fn serve(
    listener: TcpListener,
    store: Arc<dyn Store>,
    config: Config,
    policy: Policy,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let limits = policy.limits;
    let drain = policy.drain.unwrap_or(DRAIN);
    let memo_list = !policy.general_only && store.session(Consistency::Replica).is_none();
    let state = Arc::new(State {
        kept_list: memo_list,
        read_share: limits.max_connections_per_ip > 0 || policy.client_ip_header.is_some(),
        store,
        config: Arc::new(config),
        client_ip_header: policy.client_ip_header.map(|h| h.to_ascii_lowercase()),
        request_timeout: limits.request_timeout,
        budget: Budget::new(limits.answer_budget),
    });
    let gate = Gate::new(limits.clone());
    let mut cap_log = CapLog::default();
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of file descriptors and the like: back off, go on.
                        tracing::warn!("accept: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let permit = match gate.admit(peer.ip()) {
                    Ok((p, how)) => {
                        if how == Admitted::Evicted {
                            cap_log.note(false, limits.max_connections);
                        }
                        p
                    }
                    Err(cap) => {
                        // Closed at once (dropped): in the backlog it would
                        // stall the clients queued behind it.
                        tracing::debug!(?cap, "connection over the cap");
                        super::metrics::refused(match cap {
                            Refused::Total => "total",
                            Refused::PerIp => "per_ip",
                        });
                        if cap == Refused::Total {
                            cap_log.note(true, limits.max_connections);
                        }
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let io = Guarded::new(stream, limits.write_timeout, Some(&permit));
                let clock = io.clock();
                let owed = io.owed();
                let state = state.clone();
                let service = service_fn(move |req: hyper::Request<Incoming>| {
                    // Only the log line and the metrics read the time a
                    // request took.
                    let timed = super::metrics::on() || tracing::enabled!(tracing::Level::INFO);
                    let started = timed.then(Instant::now);
                    if let Some(answer) = kept_list(&req, &state, &owed, started) {
                        return Either::Left(std::future::ready(Ok(answer)));
                    }
                    // The head is copied out now, not in the answer's
                    // future: hyper's request shares its read buffer, and
                    // hyper reads the socket again before it polls the
                    // answer, so a request still held then would make it
                    // allocate a new read buffer for every request.
                    let head = own_head(req);
                    // Boxed: the general path's future is kilobytes, and
                    // hyper moves the service's future into place for
                    // every request, the memo's answer too.
                    Either::Right(Box::pin(serve_one(
                        head,
                        started,
                        peer,
                        clock.clone(),
                        owed.clone(),
                        state.clone(),
                    )))
                });
                let conn = http1::Builder::new()
                    .timer(HeadTimer::new())
                    .header_read_timeout(limits.request_timeout)
                    // Memory per connection: the read buffer (and with it
                    // the headers) at most this; bodies are capped at
                    // MAX_BODY below.
                    .max_buf_size(MAX_BUF)
                    // The header cap is checked in `own_head`: hyper's own
                    // (`max_headers`) fills a list of that many empty
                    // headers for every request it parses (twice); without
                    // it hyper parses into an uninitialized array of 100 on
                    // the stack.
                    .serve_connection(TokioIo::new(io), service);
                let conn = graceful.watch(conn);
                super::metrics::connection(1);
                tokio::spawn(async move {
                    // Until it ends, or the gate closes it to make room.
                    tokio::select! {
                        _ = conn => {}
                        _ = permit.closed() => {}
                    }
                    drop(permit);
                    super::metrics::connection(-1);
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    tracing::info!(
        drain_secs = drain.as_secs_f64(),
        "stopping: no new connections; letting the requests in flight finish"
    );
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(drain) => {
            tracing::warn!(
                drain_secs = drain.as_secs_f64(),
                "connections still open at the end of the drain; closing them"
            );
        }
    }
}

/// The "connection cap reached" line, at most once per [`CapLog::EVERY`]
/// with the counts since the last: a crowd at the cap would otherwise write
/// thousands a second.
#[derive(Default)]
struct CapLog {
    last: Option<Instant>,
    refused: u64,
    made_room: u64,
}

impl CapLog {
    const EVERY: Duration = Duration::from_secs(10);

    fn note(&mut self, refused: bool, max: usize) {
        if refused {
            self.refused += 1;
        } else {
            self.made_room += 1;
        }
        if self.last.is_some_and(|t| t.elapsed() < Self::EVERY) {
            return;
        }
        self.last = Some(Instant::now());
        tracing::warn!(
            max,
            refused = self.refused,
            made_room = self.made_room,
            "connection cap reached (counts since the last such line)"
        );
        self.refused = 0;
        self.made_room = 0;
    }
}

/// hyper's read buffer: headers must fit, body chunks stream through it.
const MAX_BUF: usize = 64 * 1024;
/// More than any client sends; each parsed header costs memory. A request
/// with more is answered 431 and its connection closed, as hyper does past
/// its own limit of 100.
const MAX_HEADERS: usize = 64;

async fn stdin_closed() {
    use tokio::io::AsyncReadExt;
    let mut stdin = tokio::io::stdin();
    let mut buf = [0u8; 64];
    while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

async fn serve_one(
    head: Option<(Request, Incoming)>,
    started: Option<Instant>,
    peer: SocketAddr,
    clock: Clock,
    owed: Owed,
    state: Arc<State>,
) -> Result<hyper::Response<Full<Bytes>>, Dropped> {
    let Some((mut request, body)) = head else {
        return Ok(too_many_headers());
    };
    // The request's reads stopped at their budget, and refused a place.
    let mut reads = (0, 0);
    // The whole request, headers included, within the deadline from its
    // first byte; a body still trickling in then is dropped unanswered. A
    // request without a body (every GET) has nothing to wait for: no timer
    // is set for it.
    let collected = if hyper::body::Body::is_end_stream(&body) {
        Ok(Bytes::new())
    } else {
        let deadline = clock.request_started() + state.request_timeout;
        let Ok(collected) =
            tokio::time::timeout_at(deadline, Limited::new(body, rules::MAX_BODY).collect()).await
        else {
            tracing::debug!("request body past the deadline; connection dropped");
            return Err(Dropped("request body past the deadline"));
        };
        collected.map(|c| c.to_bytes())
    };
    let response = match collected {
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            crate::refusal(&request, &state.config, Code::TooLarge)
        }
        Err(_) => crate::refusal(&request, &state.config, Code::BadRequest),
        Ok(bytes) => 'answer: {
            // Its own buffer when the body came in one piece: no copy.
            request.body = Vec::from(bytes);
            // An MCP call may carry many pages (a batch up to its bound):
            // its room is taken before it runs, so that a crowd of them is
            // told `busy` without being built, and never after it ran,
            // since it may have written.
            let mcp = request.method == "POST" && request.path == "/mcp";
            let mut held = None;
            if mcp {
                let most = crate::mcp::batch::MAX_BATCH_ANSWER;
                match state.budget.take(most, true, budget::WAIT).await {
                    Some(h) => held = Some(h),
                    None => break 'answer busy(&request, &state.config),
                }
            }
            let ip = client_ip::text(client_ip(&request, peer, state.client_ip_header.as_deref()));
            let ctx = Ctx::new(&routes::API, state.store.clone(), state.config.clone(), &ip);
            // Its reads count against its client's share of the readers
            // (`store::sqlite::reads`), the client as the per-IP limits
            // count it; none when every peer is one proxy.
            let caller = if state.read_share {
                Caller::new(&crate::client::client_key(&ip))
            } else {
                Caller::default()
            };
            // A handler panic must not take the connection, or the server,
            // with it: it is caught where it unwinds and becomes a 500. (A
            // task of its own per request did the same at the cost of a
            // spawn and a cross-thread wake-up on every call.) The store's
            // locks recover from poisoning, so nothing the panic interrupted
            // is left half-held.
            let handled = AssertUnwindSafe(crate::handle(&request, &ctx)).catch_unwind();
            let response = match caller.clone().scope(handled).await {
                Ok(r) => r,
                Err(_) => crate::refusal(&request, &state.config, Code::Internal),
            };
            reads = (caller.interrupted(), caller.refused());
            let bytes = response.body.len();
            let held = match held {
                Some(mut h) => {
                    h.resize(bytes);
                    h
                }
                // Reads may wait, and be told `busy`: nothing is lost.
                None if matches!(request.method.as_str(), "GET" | "HEAD" | "OPTIONS") => {
                    match state.budget.take(bytes, false, budget::WAIT).await {
                        Some(h) => h,
                        None => break 'answer busy(&request, &state.config),
                    }
                }
                // A write's answer is never refused once it has written.
                None => state.budget.force(bytes),
            };
            owed.set(bytes, held);
            response
        }
    };
    if let Some(started) = started {
        record(
            &request.method,
            &request.path,
            response.status,
            started,
            &response.body,
        );
        if response.status == 202 && super::metrics::on() {
            super::metrics::report_of(&request.method, &request.path, &request.body);
        }
    }
    if reads != (0, 0) {
        super::metrics::reads_declined(&request.method, &request.path, reads);
    }
    Ok(to_hyper(response))
}

/// The request's log line and its metrics.
fn record(method: &str, path: &str, status: u16, started: Instant, body: &[u8]) {
    let metrics = super::metrics::on();
    let api = &crate::routes::API;
    let found = match (api.resolve)(method, path) {
        crate::api::Resolved::Route { index, .. } => api.routes.get(index).map(|r| (index, r)),
        _ => None,
    };
    let route = found.map_or("-", |(_, r)| r.path);
    if metrics {
        super::metrics::request(method, found, status, started.elapsed(), body);
    }
    // Never the path itself (it may hold an id), a body, a secret or an
    // IP. A probe that succeeds every few seconds would drown the rest:
    // it is a debug line.
    if route == "/healthz" && status == 200 {
        tracing::debug!(
            method = %Cut(method),
            route,
            status,
            micros = started.elapsed().as_micros() as u64,
        );
    } else {
        tracing::info!(
            method = %Cut(method),
            route,
            status,
            micros = started.elapsed().as_micros() as u64,
        );
    }
}

/// A client-chosen token (an extension method) as a log line carries it:
/// its first [`Cut::MAX`] bytes and `…` when it is longer, so that no client
/// writes long lines into the operator's log.
struct Cut<'a>(&'a str);

impl Cut<'_> {
    const MAX: usize = 32;
}

impl std::fmt::Display for Cut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.len() <= Self::MAX {
            return f.write_str(self.0);
        }
        let end = (0..=Self::MAX)
            .rev()
            .find(|&i| self.0.is_char_boundary(i))
            .unwrap_or(0);
        f.write_str(&self.0[..end])?;
        f.write_str("…")
    }
}

/// 503 `busy`: the answers held for clients are at the budget; come back
/// after `Retry-After`.
fn busy(req: &Request, config: &crate::Config) -> Response {
    let mut resp = Response::from_error(&crate::error::ApiError::retry_after(
        crate::error::Code::Busy,
        budget::RETRY_AFTER_SECS,
    ));
    crate::origin::decorate(req, config, &mut resp);
    crate::finish(req, &mut resp);
    resp
}

/// The request as the list reads it, and its body; `None` past
/// [`MAX_HEADERS`].
fn own_head(req: hyper::Request<Incoming>) -> Option<(Request, Incoming)> {
    let (parts, body) = req.into_parts();
    if parts.headers.len() > MAX_HEADERS {
        return None;
    }
    let mut request = Request::new(parts.method.as_str(), parts.uri.path());
    request.query = parts.uri.query().unwrap_or("").to_string();
    request.headers = Vec::with_capacity(parts.headers.len());
    request.headers.extend(parts.headers.iter().map(|(n, v)| {
        (
            n.as_str().to_string(),
            String::from_utf8_lossy(v.as_bytes()).into_owned(),
        )
    }));
    Some((request, body))
}

/// `GET /posts`, the bare list, answered from the memo while the memo
/// vouches for it, before the shared [`Request`] is made: the list is most
/// of the reads, and building the request (a `String` per method, path,
/// header name and value), the context and the dispatcher's boxed future
/// cost more than the rest of its answer. The answer is the one
/// [`crate::handle`] gives (the same status, headers in the same order,
/// body), with the same budget taken and the same log line and metrics.
/// `None`, and the request goes the general way, whenever anything could
/// make the general path answer otherwise: another method, path or query,
/// a body, too many headers, a bookmark, an `If-None-Match` that is not
/// UTF-8, a memo that does not vouch for its list (or a post it shows
/// expires within the answer's max-age), no room in the budget
/// now, or a panic.
fn kept_list<B: hyper::body::Body>(
    req: &hyper::Request<B>,
    state: &State,
    owed: &Owed,
    started: Option<Instant>,
) -> Option<hyper::Response<Full<Bytes>>> {
    if !state.kept_list
        || req.method() != hyper::Method::GET
        || req.uri().path() != "/posts"
        || !req.uri().query().is_none_or(str::is_empty)
        || req.headers().len() > MAX_HEADERS
        || !hyper::body::Body::is_end_stream(req.body())
    {
        return None;
    }
    // A panic (the memo's clock, say) is the general path's to answer.
    std::panic::catch_unwind(AssertUnwindSafe(|| {
        // A name made once, not parsed from text for every request.
        const BOOKMARK: hyper::header::HeaderName =
            hyper::header::HeaderName::from_static(crate::store::session::BOOKMARK_HEADER);
        // One pass over the few headers a request has, rather than a
        // lookup by hash for each name. The first `If-None-Match` is the
        // one the shared request's `header` finds.
        let mut inm = None;
        for (name, value) in req.headers() {
            if name == hyper::header::IF_NONE_MATCH {
                inm = inm.or(Some(value));
            } else if name == BOOKMARK {
                return None;
            }
        }
        let now = crate::platform::now_ms();
        let (version, json, until) = state.store.memo()?.current(LIST, now)?;
        // Its headers say `LIST_CACHE`: only while no post it shows
        // expires sooner (then the general path says less).
        if until - now < i64::from(conditional::LIST_MAX_AGE) * 1000 {
            return None;
        }
        LIST_SHAPE.with_borrow_mut(|shape| {
            // Made again for another version, or another server in this
            // process (its own memo's text, its own configuration).
            if !shape.as_ref().is_some_and(|s| {
                s.version == version
                    && Arc::ptr_eq(&s.json, &json)
                    && Arc::ptr_eq(&s.config, &state.config)
            }) {
                *shape = Some(ListShape::new(version, json, &state.config)?);
            }
            let shape = shape.as_ref()?;
            let not_modified = match inm {
                None => false,
                // The current tag as it was sent, as a client that
                // revalidates sends it: a match, read no further.
                Some(v) if v.as_bytes() == shape.tag.as_bytes() => true,
                Some(v) => {
                    let v = Some(std::str::from_utf8(v.as_bytes()).ok()?);
                    conditional::known_version_in(v, LIST_TAG, "") == Some(version)
                        || conditional::matches_in(v, &shape.tag)
                }
            };
            let (status, headers, body) = if not_modified {
                (304, &shape.not_modified, Bytes::new())
            } else {
                (200, &shape.ok, shape.body.clone())
            };
            let held = state.budget.try_take(body.len(), false)?;
            owed.set(body.len(), held);
            if let Some(started) = started {
                record("GET", "/posts", status, started, &body);
            }
            let mut out = hyper::Response::new(Full::new(body));
            *out.status_mut() = if not_modified {
                hyper::StatusCode::NOT_MODIFIED
            } else {
                hyper::StatusCode::OK
            };
            *out.headers_mut() = headers.clone();
            Some(out)
        })
    }))
    .ok()
    .flatten()
}

/// The bare list's answers at one version of the memo, made by the shared
/// pipeline's own steps, for [`kept_list`] to clone.
struct ListShape {
    version: crate::store::Version,
    json: Arc<str>,
    config: Arc<Config>,
    tag: String,
    body: Bytes,
    ok: hyper::HeaderMap,
    not_modified: hyper::HeaderMap,
}

impl ListShape {
    /// The answers [`crate::handle`] gives `GET /posts` at `version`: the
    /// handler's 200 or 304 ([`crate::handlers::posts::list`]), then the
    /// headers every answer of a `GET` carries.
    fn new(
        version: crate::store::Version,
        json: Arc<str>,
        config: &Arc<Config>,
    ) -> Option<ListShape> {
        let req = Request::new("GET", "/posts");
        let tag = conditional::version_tag(LIST_TAG, version, "");
        let ok = Response::new(
            200,
            crate::http::JSON,
            crate::http::Body::Kept(json.clone()),
        );
        let mut ok = conditional::tagged(&req, ok, &tag, LIST_CACHE);
        let mut not_modified = conditional::not_modified(&tag, LIST_CACHE);
        for resp in [&mut ok, &mut not_modified] {
            crate::origin::decorate(&req, config.as_ref(), resp);
            crate::finish(&req, resp);
        }
        Some(ListShape {
            version,
            config: config.clone(),
            tag,
            body: Bytes::from_owner(Kept(json.clone())),
            json,
            ok: header_map(ok.headers)?,
            not_modified: header_map(not_modified.headers)?,
        })
    }
}

thread_local! {
    /// This thread's [`ListShape`], made again when the memo's list moves.
    static LIST_SHAPE: std::cell::RefCell<Option<ListShape>> =
        const { std::cell::RefCell::new(None) };
}

/// 431 with the connection closed, as hyper answers a request over its own
/// header limit.
fn too_many_headers() -> hyper::Response<Full<Bytes>> {
    let mut r = hyper::Response::new(Full::new(Bytes::new()));
    *r.status_mut() = hyper::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE;
    r.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    r
}

fn to_hyper(resp: Response) -> hyper::Response<Full<Bytes>> {
    let body = match resp.body {
        crate::http::Body::Own(v) => Bytes::from(v),
        // The list's kept text goes out as it is kept: no copy per answer.
        crate::http::Body::Kept(text) => Bytes::from_owner(Kept(text)),
    };
    let mut out = hyper::Response::new(Full::new(body));
    let Some(headers) = header_map(resp.headers) else {
        return internal();
    };
    match hyper::StatusCode::from_u16(resp.status) {
        Ok(status) => {
            *out.status_mut() = status;
            *out.headers_mut() = headers;
            out
        }
        Err(_) => internal(),
    }
}

thread_local! {
    /// The header names of this thread's last answer, and a map of them
    /// (values left as placeholders): the next answer with the same names,
    /// as every answer of one route nearly is, clones the map and sets its
    /// values instead of hashing and placing each name again.
    static SHAPE: std::cell::RefCell<(Vec<&'static str>, hyper::HeaderMap)> =
        std::cell::RefCell::new((Vec::new(), hyper::HeaderMap::new()));
}

/// An answer's headers as hyper's map, in their order; `None` when one
/// cannot be written as HTTP (a bug, never a client's doing).
fn header_map(list: Vec<(&'static str, String)>) -> Option<hyper::HeaderMap> {
    let cloned = SHAPE.with_borrow(|(names, map)| {
        (names.len() == list.len() && names.iter().zip(&list).all(|(a, (b, _))| a == b))
            .then(|| map.clone())
    });
    if let Some(mut map) = cloned {
        // The names are distinct (see below), so the map's values come in
        // the list's order.
        for (slot, (_, value)) in map.values_mut().zip(list) {
            *slot = header_value(value).ok()?;
        }
        return Some(map);
    }
    let mut map = hyper::HeaderMap::with_capacity(list.len());
    let mut names = Vec::with_capacity(list.len());
    for (name, value) in list {
        names.push(name);
        map.append(header_name(name)?, header_value(value).ok()?);
    }
    if map.keys_len() == map.len() {
        let mut shape = map.clone();
        for slot in shape.values_mut() {
            *slot = const { hyper::header::HeaderValue::from_static("") };
        }
        SHAPE.set((names, shape));
    }
    Some(map)
}

/// A kept text as the bytes of an answer's body.
struct Kept(std::sync::Arc<str>);

impl AsRef<[u8]> for Kept {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// The header names answers carry, as hyper's own constants: parsing the
/// name of each header of each answer is work on every answer for names
/// that never change. Others are parsed.
fn header_name(name: &'static str) -> Option<hyper::header::HeaderName> {
    use hyper::header::{self, HeaderName};
    Some(match name {
        "content-type" => header::CONTENT_TYPE,
        "etag" => header::ETAG,
        "cache-control" => header::CACHE_CONTROL,
        "access-control-allow-origin" => header::ACCESS_CONTROL_ALLOW_ORIGIN,
        "access-control-expose-headers" => header::ACCESS_CONTROL_EXPOSE_HEADERS,
        "x-content-type-options" => header::X_CONTENT_TYPE_OPTIONS,
        "vary" => header::VARY,
        "link" => header::LINK,
        "allow" => header::ALLOW,
        "retry-after" => header::RETRY_AFTER,
        _ => return HeaderName::from_bytes(name.as_bytes()).ok(),
    })
}

/// The header values most answers carry, as constants (checked once, when
/// compiled): turning each value's `String` into hyper's `HeaderValue`,
/// checked byte by byte and then freed as `Bytes`, is work on every
/// answer for values that never change. Others are checked.
fn header_value(
    value: String,
) -> Result<hyper::header::HeaderValue, hyper::header::InvalidHeaderValue> {
    use crate::conditional::{LIST_CACHE, READ_CACHE};
    use crate::origin::EXPOSE_HEADERS;
    use hyper::header::HeaderValue;
    Ok(match value.as_str() {
        crate::http::JSON => const { HeaderValue::from_static(crate::http::JSON) },
        LIST_CACHE => const { HeaderValue::from_static(LIST_CACHE) },
        READ_CACHE => const { HeaderValue::from_static(READ_CACHE) },
        "*" => const { HeaderValue::from_static("*") },
        EXPOSE_HEADERS => const { HeaderValue::from_static(EXPOSE_HEADERS) },
        "nosniff" => const { HeaderValue::from_static("nosniff") },
        "no-store" => const { HeaderValue::from_static("no-store") },
        _ => return HeaderValue::try_from(value),
    })
}

/// The answer when ours cannot be written as HTTP (a header with a control
/// character): a bug, never a client's doing.
fn internal() -> hyper::Response<Full<Bytes>> {
    let mut r = hyper::Response::new(Full::new(Bytes::from_static(b"{\"error\":\"internal\"}")));
    *r.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(store: SqliteStore) -> State {
        State {
            store: Arc::new(store),
            config: Arc::new(Config::default()),
            client_ip_header: None,
            request_timeout: Duration::from_secs(10),
            budget: Budget::new(budget::DEFAULT_BUDGET),
            read_share: true,
            kept_list: true,
        }
    }

    fn get(
        target: &str,
        headers: &[(&str, &[u8])],
        body: &'static str,
    ) -> hyper::Request<Full<Bytes>> {
        let mut b = hyper::Request::get(target);
        for (n, v) in headers {
            b = b.header(*n, *v);
        }
        b.body(Full::new(Bytes::from_static(body.as_bytes())))
            .unwrap()
    }

    /// Which requests the memo's path takes: the bare list's `GET`, with
    /// or without a tag, once the memo holds it; every other request, and
    /// every request that could be answered otherwise, goes the general
    /// way (`tests/kept_list.rs` compares the two paths' bytes).
    #[tokio::test]
    async fn the_memo_path_takes_the_bare_list_only() {
        let s = state(SqliteStore::open(":memory:").unwrap());
        let owed = Owed::default();
        let bare = get("/posts", &[], "");
        assert!(kept_list(&bare, &s, &owed, None).is_none(), "an empty memo");
        let ctx = Ctx::new(&routes::API, s.store.clone(), s.config.clone(), "");
        let first = crate::handle(&Request::new("GET", "/posts"), &ctx).await;
        let tag = first.header("etag").unwrap().to_string();
        let ok = kept_list(&bare, &s, &owed, Some(Instant::now())).expect("the memo's list");
        assert_eq!(ok.status(), 200);
        assert_eq!(
            hyper::body::Body::size_hint(ok.body()).exact(),
            Some(first.body.len() as u64)
        );
        for target in ["/posts?", "http://h/posts"] {
            assert!(
                kept_list(&get(target, &[], ""), &s, &owed, None).is_some(),
                "{target}"
            );
        }
        let inm = get("/posts", &[("if-none-match", tag.as_bytes())], "");
        assert_eq!(kept_list(&inm, &s, &owed, None).unwrap().status(), 304);
        let handed_on = [
            get("/posts?kind=", &[], ""),
            get("/posts/", &[], ""),
            get("/posts.atom", &[], ""),
            get("/posts", &[], "{}"),
            get("/posts", &[("x-d1-bookmark", b"0")], ""),
            get("/posts", &[("if-none-match", b"\"p1\xff\"")], ""),
        ];
        for req in &handed_on {
            assert!(kept_list(req, &s, &owed, None).is_none(), "{:?}", req.uri());
        }
        let mut head = get("/posts", &[], "");
        *head.method_mut() = hyper::Method::HEAD;
        assert!(kept_list(&head, &s, &owed, None).is_none());
        let many: Vec<(String, Vec<u8>)> = (0..=MAX_HEADERS)
            .map(|i| (format!("x-{i}"), vec![b'1']))
            .collect();
        let many: Vec<(&str, &[u8])> = many
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        assert!(kept_list(&get("/posts", &many, ""), &s, &owed, None).is_none());
        // Off when the server is told so.
        let off = State {
            kept_list: false,
            ..state(SqliteStore::open(":memory:").unwrap())
        };
        assert!(kept_list(&bare, &off, &owed, None).is_none());
        // A write: the memo no longer vouches for its list.
        s.store.memo().unwrap().wrote();
        assert!(kept_list(&bare, &s, &owed, None).is_none());
    }
}
