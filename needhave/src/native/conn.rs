//! The connection policy of `needhave serve`, in front of [`crate::handle`]:
//! deadlines, connection caps, and bounded memory per connection. The Worker
//! has Cloudflare in front of it and needs none of this; everything behind
//! this layer is shared.
//!
//! What it holds against (issue 10): a client that sends headers and then
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
//!   `write_timeout` of its first byte, or the connection is dropped: a
//!   non-reader pins its answer's memory for that long at most.
//! - At most `max_connections` at once (derived from `RLIMIT_NOFILE`,
//!   leaving room for the database, the logs and the runtime), and at most
//!   `max_connections_per_ip` from one address (IPv6: one /64, what one
//!   customer usually holds), so one address can never hold what others
//!   need. A connection over a cap is accepted and closed at once: left in
//!   the kernel's backlog it would stall everyone behind it.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

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
    /// An answer's bytes into the socket, from its first byte.
    pub write_timeout: Duration,
    pub max_connections: usize,
    /// `0`: no per-address cap (behind a proxy every connection is the
    /// proxy's).
    pub max_connections_per_ip: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            request_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(30),
            max_connections: default_max_connections(),
            max_connections_per_ip: 64,
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

/// Counts open connections, overall and per address.
pub struct Gate {
    limits: Limits,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    total: usize,
    per_ip: HashMap<IpAddr, usize>,
}

/// One admitted connection; dropping it frees its place.
pub struct Permit {
    gate: Arc<Gate>,
    key: IpAddr,
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
        })
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        // Only counters are behind it: a panic cannot leave them half-set.
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Permit, Refused> {
        let key = key(peer);
        let mut open = self.open();
        if open.total >= self.limits.max_connections {
            return Err(Refused::Total);
        }
        let per_ip = self.limits.max_connections_per_ip;
        let count = open.per_ip.entry(key).or_insert(0);
        if per_ip > 0 && *count >= per_ip {
            return Err(Refused::PerIp);
        }
        *count += 1;
        open.total += 1;
        Ok(Permit {
            gate: self.clone(),
            key,
        })
    }

    /// Open connections: overall, and from `peer`'s address.
    pub fn open_count(&self, peer: IpAddr) -> (usize, usize) {
        let open = self.open();
        (
            open.total,
            open.per_ip.get(&key(peer)).copied().unwrap_or(0),
        )
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut open = self.gate.open();
        open.total -= 1;
        if let Some(n) = open.per_ip.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.per_ip.remove(&self.key);
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Reading,
    Writing,
}

/// A socket with the request clock and the write deadline.
pub struct Guarded<T> {
    inner: T,
    phase: Phase,
    clock: Clock,
    write_timeout: Duration,
    write_deadline: Pin<Box<Sleep>>,
    /// Held for as long as the connection is.
    _permit: Option<Permit>,
}

impl<T> Guarded<T> {
    pub fn new(inner: T, write_timeout: Duration, permit: Option<Permit>) -> Self {
        Guarded {
            inner,
            phase: Phase::Idle,
            clock: Clock::new(),
            write_timeout,
            write_deadline: Box::pin(tokio::time::sleep(write_timeout)),
            _permit: permit,
        }
    }

    pub fn clock(&self) -> Clock {
        self.clock.clone()
    }

    fn begin_write(&mut self) {
        if self.phase != Phase::Writing {
            self.phase = Phase::Writing;
            let at = Instant::now() + self.write_timeout;
            self.write_deadline.as_mut().reset(at);
        }
    }

    /// A write that cannot proceed: wait, unless the answer is overdue.
    fn stalled<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
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
            self.phase = Phase::Reading;
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
        assert_eq!(gate.admit(b).err(), Some(Refused::Total));
        drop(a1);
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
    fn the_cap_leaves_room_below_the_fd_limit() {
        if let Some(n) = fd_limit() {
            assert!((default_max_connections() as u64) < n);
        }
    }
}
