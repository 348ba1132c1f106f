//! The connection policy of `needhave serve`, in front of [`crate::handle`]:
//! deadlines, connection caps, and bounded memory per connection. The Worker
//! has Cloudflare in front of it and needs none of this; everything behind
//! this layer is shared.
//!
//! What it holds against: a client that sends headers and then
//! trickles (or never sends) the body; a client that never reads its
//! answer; one address opening connections until the process runs out of
//! file descriptors and `accept` fails for everyone.
//!
//! - A request must arrive whole (headers and body) within
//!   `request_timeout` of its first byte. hyper's header timeout (the same
//!   value, started when the connection waits for a request, so it also
//!   closes idle keep-alive connections) covers the headers; [`Clock`] says
//!   when the first byte came, and the body is read against that deadline.
//! - An answer must be taken by the client (written into the socket) within
//!   `write_timeout` of the first moment the socket could not take more of
//!   it, or the connection is dropped: a non-reader pins its answer's
//!   memory for that long at most.
//! - At most `max_connections` at once (derived from `RLIMIT_NOFILE`,
//!   leaving room for the database, the logs and the runtime), and at most
//!   `max_connections_per_ip` from one address (IPv6: one /64, what one
//!   customer usually holds), so one address can never hold what others
//!   need. A connection over a cap is accepted and closed at once: left in
//!   the kernel's backlog it would stall everyone behind it.
//! - At the overall cap, a crowd of addresses could still hold every
//!   place, each within its own cap. So a newcomer whose address holds
//!   fewer connections than the address holding the most makes room: the
//!   oldest connection of that address that is not writing an answer (a
//!   request still arriving, or an idle keep-alive) is closed, else its
//!   oldest. An address with few connections is always let in; one that
//!   holds as many as the most is refused.
//! - An answer holds its bytes in the [`super::budget`] until the client
//!   has taken the last of them ([`Owed`]).

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use futures_util::task::AtomicWaker;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::budget::Held;

/// File descriptors kept out of the connection cap: the listener, the
/// database and its WAL and shm (and a backup's), stdio, the runtime's
/// epoll and wakers, the blocking pool's files.
pub const RESERVED_FDS: u64 = 64;

/// The connection cap when the file-descriptor limit cannot be read.
pub const FALLBACK_MAX_CONNECTIONS: usize = 1024 - RESERVED_FDS as usize;

#[derive(Clone, Debug)]
pub struct Limits {
    /// Headers and body, from the request's first byte.
    pub request_timeout: Duration,
    /// An answer's bytes into the socket, from the first time the socket
    /// could not take more.
    pub write_timeout: Duration,
    pub max_connections: usize,
    /// `0`: no per-address cap (behind a proxy every connection is the
    /// proxy's).
    pub max_connections_per_ip: usize,
    /// Bytes of answers held for clients at once ([`super::budget`]).
    pub answer_budget: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            request_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(30),
            max_connections: default_max_connections(),
            max_connections_per_ip: 64,
            answer_budget: super::budget::DEFAULT_BUDGET,
        }
    }
}

/// The process's soft `RLIMIT_NOFILE`, when it can be read.
pub fn fd_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one rlimit into the struct it is given.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
        // rlim_t is u64 on Linux, not on every unix.
        #[allow(clippy::unnecessary_cast)]
        (ok && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur as u64)
    }
    #[cfg(not(unix))]
    None
}

/// The file-descriptor limit less [`RESERVED_FDS`] (and never below 16).
pub fn default_max_connections() -> usize {
    fd_limit().map_or(FALLBACK_MAX_CONNECTIONS, |n| {
        n.saturating_sub(RESERVED_FDS).clamp(16, 1 << 20) as usize
    })
}

/// Which cap refused a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    Total,
    PerIp,
}

/// Counts open connections, overall and per address, and closes the
/// oldest of the address holding the most to make room at the cap.
pub struct Gate {
    limits: Limits,
    open: Mutex<Open>,
    next_id: AtomicU64,
}

#[derive(Default)]
struct Open {
    total: usize,
    per_ip: HashMap<IpAddr, Vec<Slot>>,
}

/// One open connection as the gate sees it, oldest first in its address's
/// list.
struct Slot {
    id: u64,
    opened: Instant,
    conn: Arc<Shared>,
}

/// What the gate and the connection share: whether it is writing an
/// answer, and the signal that closes it.
#[derive(Default)]
pub struct Shared {
    writing: AtomicBool,
    /// Set once by the gate; `woken` is told. A flag and a waker rather
    /// than a `Notify`: the connection's task checks it at every wake-up,
    /// and a `Notify` takes its lock each time.
    closing: AtomicBool,
    woken: AtomicWaker,
}

/// How a connection was let in.
#[derive(Debug, PartialEq, Eq)]
pub enum Admitted {
    /// There was room.
    Room,
    /// At the cap: another address's connection was closed for it.
    Evicted,
}

/// One admitted connection; dropping it frees its place.
pub struct Permit {
    gate: Arc<Gate>,
    key: IpAddr,
    id: u64,
    conn: Arc<Shared>,
}

impl Permit {
    /// Completes when the gate closed this connection to make room.
    pub fn closed(&self) -> Closed<'_> {
        Closed(&self.conn)
    }

    fn shared(&self) -> Arc<Shared> {
        self.conn.clone()
    }
}

/// [`Permit::closed`].
pub struct Closed<'a>(&'a Shared);

impl Future for Closed<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.closing.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        self.0.woken.register(cx.waker());
        // Again: the gate may have closed it before the waker was there.
        if self.0.closing.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// The address a per-IP cap counts: IPv6 by its /64.
fn key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

impl Gate {
    pub fn new(limits: Limits) -> Arc<Gate> {
        Arc::new(Gate {
            limits,
            open: Mutex::new(Open::default()),
            next_id: AtomicU64::new(0),
        })
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        // Only counters and lists are behind it: a panic cannot leave them
        // half-set.
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<(Permit, Admitted), Refused> {
        let key = key(peer);
        let mut open = self.open();
        let mine = open.per_ip.get(&key).map_or(0, Vec::len);
        let per_ip = self.limits.max_connections_per_ip;
        if per_ip > 0 && mine >= per_ip {
            return Err(Refused::PerIp);
        }
        let admitted = if open.total >= self.limits.max_connections {
            if !evict_for(&mut open, mine) {
                return Err(Refused::Total);
            }
            Admitted::Evicted
        } else {
            Admitted::Room
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Shared::default());
        open.per_ip.entry(key).or_default().push(Slot {
            id,
            opened: Instant::now(),
            conn: conn.clone(),
        });
        open.total += 1;
        Ok((
            Permit {
                gate: self.clone(),
                key,
                id,
                conn,
            },
            admitted,
        ))
    }

    /// Open connections: overall, and from `peer`'s address.
    pub fn open_count(&self, peer: IpAddr) -> (usize, usize) {
        let open = self.open();
        (open.total, open.per_ip.get(&key(peer)).map_or(0, Vec::len))
    }
}

/// Closes one connection of the address holding the most, when that is
/// more than `mine` (the newcomer's address's count): among those
/// addresses, the oldest connection not writing an answer, else the
/// oldest. Its place is free at once; the connection goes as soon as its
/// task sees the signal.
fn evict_for(open: &mut Open, mine: usize) -> bool {
    let most = open.per_ip.values().map(Vec::len).max().unwrap_or(0);
    if most <= mine {
        return false;
    }
    let pick = |prefer_idle: bool| {
        open.per_ip
            .iter()
            .filter(|(_, slots)| slots.len() == most)
            .flat_map(|(ip, slots)| slots.iter().enumerate().map(move |(i, s)| (*ip, i, s)))
            .filter(|(_, _, s)| !prefer_idle || !s.conn.writing.load(Ordering::Relaxed))
            .min_by_key(|(_, _, s)| s.opened)
            .map(|(ip, i, _)| (ip, i))
    };
    let Some((ip, i)) = pick(true).or_else(|| pick(false)) else {
        return false;
    };
    let Some(slots) = open.per_ip.get_mut(&ip) else {
        return false;
    };
    let slot = slots.remove(i);
    if slots.is_empty() {
        open.per_ip.remove(&ip);
    }
    open.total -= 1;
    slot.conn.closing.store(true, Ordering::Release);
    slot.conn.woken.wake();
    true
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut open = self.gate.open();
        let Some(slots) = open.per_ip.get_mut(&self.key) else {
            return;
        };
        // Gone already when the gate closed it to make room.
        let Some(i) = slots.iter().position(|s| s.id == self.id) else {
            return;
        };
        slots.remove(i);
        if slots.is_empty() {
            open.per_ip.remove(&self.key);
        }
        open.total -= 1;
    }
}

/// The budget an answer holds until the client has taken its bytes: set by
/// the service once the answer is built, paid off by the socket as it
/// writes, released when paid or when the connection closes.
#[derive(Clone, Default)]
pub struct Owed(Arc<Mutex<Option<(usize, Held)>>>);

impl Owed {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(usize, Held)>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The answer about to be written: `bytes` of it, holding `held`.
    pub fn set(&self, bytes: usize, held: Held) {
        *self.lock() = Some((bytes, held));
    }

    fn paid(&self, n: usize) {
        let mut owed = self.lock();
        if let Some((left, _)) = owed.as_mut() {
            *left = left.saturating_sub(n);
            if *left == 0 {
                *owed = None;
            }
        }
    }
}

/// When the request being read on a connection sent its first byte: the
/// socket wrapper sets it, the service reads the body against it.
#[derive(Clone)]
pub struct Clock(Arc<Mutex<Instant>>);

impl Clock {
    fn new() -> Self {
        Clock(Arc::new(Mutex::new(Instant::now())))
    }

    pub fn request_started(&self) -> Instant {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn start(&self, at: Instant) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = at;
    }
}

/// hyper's timer, for its header-read deadline: one tokio timer per
/// connection. hyper asks for a new sleep for every request it waits for
/// and drops it once the head is in; a tokio sleep for each would be put
/// into the runtime's timer wheel and taken out again on every request.
/// Here a request's sleep only holds its deadline, and the connection's
/// timer, once armed, stays armed: when it fires before the deadline of
/// the request now awaited it is set again to that deadline, and when it
/// would fire after it, it is moved back to it. So the head is still
/// refused at its own deadline, as with a timer of its own.
#[derive(Clone)]
pub struct HeadTimer(Arc<Mutex<Pin<Box<Sleep>>>>);

impl HeadTimer {
    pub fn new() -> Self {
        // Not in the wheel until a head is awaited (a sleep registers when
        // first polled); moved back to that head's deadline then.
        HeadTimer(Arc::new(Mutex::new(Box::pin(tokio::time::sleep(
            Duration::from_secs(86_400 * 365),
        )))))
    }
}

impl Default for HeadTimer {
    fn default() -> Self {
        HeadTimer::new()
    }
}

impl hyper::rt::Timer for HeadTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(std::time::Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(HeadSleep {
            deadline: Instant::from_std(deadline),
            timer: self.0.clone(),
        })
    }
}

/// One awaited head's deadline, on its connection's [`HeadTimer`].
struct HeadSleep {
    deadline: Instant,
    timer: Arc<Mutex<Pin<Box<Sleep>>>>,
}

impl hyper::rt::Sleep for HeadSleep {}

impl Future for HeadSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut timer = self.timer.lock().unwrap_or_else(|e| e.into_inner());
        if timer.deadline() > self.deadline {
            timer.as_mut().reset(self.deadline);
        }
        loop {
            ready!(timer.as_mut().poll(cx));
            if timer.deadline() >= self.deadline {
                return Poll::Ready(());
            }
            // An earlier head's deadline: this one's is later.
            timer.as_mut().reset(self.deadline);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Reading,
    Writing,
}

/// A socket with the request clock, the write deadline, and what its
/// answer owes the budget.
pub struct Guarded<T> {
    inner: T,
    phase: Phase,
    clock: Clock,
    write_timeout: Duration,
    write_deadline: Pin<Box<Sleep>>,
    /// Whether `write_deadline` is set for the answer being written: only
    /// once the socket could not take all of it.
    armed: bool,
    owed: Owed,
    /// Tells the gate whether an answer is being written.
    shared: Option<Arc<Shared>>,
}

impl<T> Guarded<T> {
    /// `permit`: the gate's place of this connection, which the caller
    /// keeps for as long as the connection is open.
    pub fn new(inner: T, write_timeout: Duration, permit: Option<&Permit>) -> Self {
        Guarded {
            inner,
            phase: Phase::Idle,
            clock: Clock::new(),
            write_timeout,
            write_deadline: Box::pin(tokio::time::sleep(write_timeout)),
            armed: false,
            owed: Owed::default(),
            shared: permit.map(Permit::shared),
        }
    }

    pub fn clock(&self) -> Clock {
        self.clock.clone()
    }

    pub fn owed(&self) -> Owed {
        self.owed.clone()
    }

    fn set_phase(&mut self, phase: Phase) {
        self.phase = phase;
        if let Some(s) = &self.shared {
            s.writing.store(phase == Phase::Writing, Ordering::Relaxed);
        }
    }

    fn begin_write(&mut self) {
        if self.phase != Phase::Writing {
            self.set_phase(Phase::Writing);
            self.armed = false;
        }
    }

    /// A write that cannot proceed: wait, unless the answer is overdue.
    /// The deadline is set at the answer's first such wait: an answer the
    /// socket takes at once (nearly every one) reads no clock and resets
    /// no timer, and the time before that wait is the server's own
    /// writing, not the client's.
    fn stalled<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        if !self.armed {
            self.armed = true;
            let at = Instant::now() + self.write_timeout;
            self.write_deadline.as_mut().reset(at);
        }
        match self.write_deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not read its answer in time",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        if buf.filled().len() > before && self.phase != Phase::Reading {
            self.set_phase(Phase::Reading);
            self.clock.start(Instant::now());
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.begin_write();
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Pending => self.stalled(cx),
            Poll::Ready(Ok(n)) => {
                self.owed.paid(n);
                Poll::Ready(Ok(n))
            }
            done => done,
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.begin_write();
        match Pin::new(&mut self.inner).poll_write_vectored(cx, bufs) {
            Poll::Pending => self.stalled(cx),
            Poll::Ready(Ok(n)) => {
                self.owed.paid(n);
                Poll::Ready(Ok(n))
            }
            done => done,
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_flush(cx) {
            Poll::Pending if self.phase == Phase::Writing => self.stalled(cx),
            done => done,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_shutdown(cx) {
            Poll::Pending if self.phase == Phase::Writing => self.stalled(cx),
            done => done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(total: usize, per_ip: usize) -> Limits {
        Limits {
            max_connections: total,
            max_connections_per_ip: per_ip,
            ..Limits::default()
        }
    }

    #[test]
    fn caps_overall_and_per_address() {
        let gate = Gate::new(limits(3, 2));
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let a1 = gate.admit(a).unwrap();
        let _a2 = gate.admit(a).unwrap();
        assert_eq!(gate.admit(a).err(), Some(Refused::PerIp));
        let _b1 = gate.admit(b).unwrap();
        // At the cap, b (one) makes room from a (two).
        let (b2, how) = gate.admit(b).unwrap();
        assert_eq!(how, Admitted::Evicted);
        assert_eq!(gate.open_count(a), (3, 1));
        // Now both hold two at most: no one makes room for an equal.
        assert_eq!(gate.admit(b).err(), Some(Refused::PerIp));
        drop(a1);
        drop(b2);
        assert_eq!(gate.open_count(a), (2, 1));
        assert!(gate.admit(a).is_ok());
    }

    #[test]
    fn ipv6_counts_by_its_64_and_mapped_v4_as_v4() {
        let gate = Gate::new(limits(10, 1));
        let _p = gate.admit("2001:db8:1:2::1".parse().unwrap()).unwrap();
        assert_eq!(
            gate.admit("2001:db8:1:2:ffff::9".parse().unwrap()).err(),
            Some(Refused::PerIp)
        );
        assert!(gate.admit("2001:db8:1:3::1".parse().unwrap()).is_ok());
        let _v4 = gate.admit("192.0.2.1".parse().unwrap()).unwrap();
        assert_eq!(
            gate.admit("::ffff:192.0.2.1".parse().unwrap()).err(),
            Some(Refused::PerIp)
        );
    }

    #[test]
    fn zero_per_ip_means_no_per_address_cap() {
        let gate = Gate::new(limits(3, 0));
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let _p: Vec<_> = (0..3).map(|_| gate.admit(a).unwrap()).collect();
        assert_eq!(gate.admit(a).err(), Some(Refused::Total));
    }

    #[test]
    fn room_is_made_from_the_oldest_idle_of_the_biggest_holder() {
        let gate = Gate::new(limits(6, 0));
        let ip = |n: u8| IpAddr::from([10, 0, 0, n]);
        let mut held = Vec::new();
        for n in [1, 1, 1, 2, 2, 3] {
            held.push(gate.admit(ip(n)).unwrap().0);
        }
        // The oldest of 10.0.0.1 is writing an answer: its second goes.
        held[0].conn.writing.store(true, Ordering::Relaxed);
        let (_new, how) = gate.admit(ip(9)).unwrap();
        assert_eq!(how, Admitted::Evicted);
        assert_eq!(gate.open_count(ip(1)), (6, 2));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(1), held[1].closed())
                .await
                .expect("the evicted connection is told")
        });
        // Its permit, dropped later, frees nothing twice.
        held.remove(1);
        assert_eq!(gate.open_count(ip(1)), (6, 2));
        // 10.0.0.1 and 10.0.0.2 hold two each, the most: a third address
        // with one still gets in; one with two does not.
        let _kept = gate.admit(ip(3)).unwrap();
        assert_eq!(gate.admit(ip(2)).err(), Some(Refused::Total));
    }

    #[tokio::test]
    async fn a_connection_waiting_on_its_close_is_woken_by_the_gate() {
        let gate = Gate::new(limits(1, 0));
        let (first, _) = gate.admit(IpAddr::from([10, 0, 0, 1])).unwrap();
        let first = Arc::new(first);
        let waiting = tokio::spawn({
            let first = first.clone();
            async move { first.closed().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "closed before the gate said so");
        let (_second, how) = gate.admit(IpAddr::from([10, 0, 0, 2])).unwrap();
        assert_eq!(how, Admitted::Evicted);
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("the waiting connection is woken")
            .unwrap();
    }

    /// Each awaited head keeps its own deadline on the connection's one
    /// timer: a later one is not cut at an earlier one's, and an earlier
    /// one is not kept to a later one's.
    #[tokio::test]
    async fn each_head_is_cut_at_its_own_deadline() {
        use hyper::rt::Timer;
        let timer = HeadTimer::new();
        let ms = Duration::from_millis;
        let start = std::time::Instant::now();
        // Polled once (armed at 50 ms), then dropped, as hyper does when
        // the head came in.
        let mut first = timer.sleep_until(start + ms(50));
        let waker = futures_util::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(first.as_mut().poll(&mut cx).is_pending());
        drop(first);
        timer.sleep_until(start + ms(300)).await;
        let took = start.elapsed();
        assert!(took >= ms(300) && took < ms(1000), "{took:?}");
        // Armed at 300 ms and spent; a far one, then an earlier one.
        let start = std::time::Instant::now();
        let mut far = timer.sleep_until(start + Duration::from_secs(60));
        assert!(far.as_mut().poll(&mut cx).is_pending());
        timer.sleep_until(start + ms(40)).await;
        let took = start.elapsed();
        assert!(took >= ms(40) && took < ms(700), "{took:?}");
    }

    #[test]
    fn the_cap_leaves_room_below_the_fd_limit() {
        if let Some(n) = fd_limit() {
            assert!((default_max_connections() as u64) < n);
        }
    }
}
