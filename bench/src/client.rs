//! A minimal HTTP/1.1 keep-alive client over one TCP connection whose
//! source address is chosen: the server sees each `127.x.y.z` as its own
//! client IP, so the per-IP limits spread over many addresses.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU32, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpSocket;

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Hands out distinct loopback source addresses, never 127.0.0.1 and never
/// an address ending in .0 or .255.
pub struct Ips {
    next: AtomicU32,
    /// Distinguishes runs against one database, so that a rerun starts on
    /// fresh addresses (their hour-long limits would otherwise carry over).
    base: u32,
}

impl Ips {
    pub fn new(base: u32) -> Self {
        Ips {
            next: AtomicU32::new(0),
            base,
        }
    }

    /// The n-th address of this run: 127.a.b.c with a in 1..=254, c in 1..=254.
    pub fn nth(&self, n: u32) -> Ipv4Addr {
        let n = self.base.wrapping_add(n) % (254 * 256 * 254);
        let c = 1 + (n % 254) as u8;
        let b = ((n / 254) % 256) as u8;
        let a = 1 + ((n / (254 * 256)) % 254) as u8;
        Ipv4Addr::new(127, a, b, c)
    }

    pub fn take(&self) -> Ipv4Addr {
        self.nth(self.next.fetch_add(1, Ordering::Relaxed))
    }

    pub fn used(&self) -> u32 {
        self.next.load(Ordering::Relaxed)
    }
}

pub struct Conn {
    sender: SendRequest<Full<Bytes>>,
    host: String,
    pub ip: Ipv4Addr,
}

impl Conn {
    pub async fn connect(server: SocketAddr, ip: Ipv4Addr) -> Result<Conn, Error> {
        let sock = TcpSocket::new_v4()?;
        sock.bind(SocketAddr::new(ip.into(), 0))?;
        let stream = sock.connect(server).await?;
        stream.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Conn {
            sender,
            host: server.to_string(),
            ip,
        })
    }

    /// One request; the status and the whole body.
    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<(u16, Bytes), Error> {
        self.sender.ready().await?;
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", &self.host);
        if body.is_some() {
            req = req.header("content-type", "application/json");
        }
        let req = req.body(Full::new(Bytes::copy_from_slice(body.unwrap_or(b""))))?;
        let resp = self.sender.send_request(req).await?;
        let status = resp.status().as_u16();
        let body = resp.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }

    pub async fn json(
        &mut self,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<(u16, serde_json::Value), Error> {
        let raw = body.map(|b| b.to_string().into_bytes());
        let (status, bytes) = self.send(method, path, raw.as_deref()).await?;
        let value = if bytes.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_slice(&bytes)?
        };
        Ok((status, value))
    }
}

/// A small fast PRNG for picking actions (not for secrets).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

pub fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    getrandom::fill(&mut b).expect("randomness");
    hex::encode(b)
}
