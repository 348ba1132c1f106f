//! Latency at two sizes, side by side: two servers, one on a 1 k-post and
//! one on a 1 M-post database, and one client that alternates between them
//! call by call, so that the machine's noise falls on both alike.

use std::net::SocketAddr;
use std::time::Instant;

use serde_json::json;

use crate::client::{Conn, Error, Ips};
use crate::seed;

/// The list twice: after a create (read and kept again), then unchanged
/// (answered from the kept copy).
pub const OPS: [&str; 6] = [
    "list, changed",
    "list, unchanged",
    "create",
    "first reply",
    "waiting",
    "thread read",
];

/// Ops that write, and so need a client IP of their own now and then.
const CREATE: usize = 2;
const REPLY: usize = 3;

pub struct Side {
    #[allow(dead_code)]
    pub posts: u64,
    /// Per op, microseconds of each sample.
    pub samples: [Vec<u64>; 6],
    pub failures: Vec<String>,
}

struct Client {
    server: SocketAddr,
    posts: u64,
    ips: Ips,
    read: Option<Conn>,
    create: Option<(Conn, u32)>,
    reply: Option<(Conn, u32)>,
    side: Side,
}

impl Client {
    async fn conn(
        server: SocketAddr,
        ips: &Ips,
        slot: &mut Option<(Conn, u32)>,
        per_ip: u32,
    ) -> Result<(), Error> {
        if slot.as_ref().is_none_or(|(_, n)| *n >= per_ip) {
            *slot = Some((Conn::connect(server, ips.take()).await?, 0));
        }
        Ok(())
    }

    async fn one(&mut self, op: usize, k: u64, run: &str) -> Result<(), Error> {
        let n = self.posts;
        if self.read.is_none() {
            self.read = Some(Conn::connect(self.server, self.ips.take()).await?);
        }
        Self::conn(self.server, &self.ips, &mut self.create, 10).await?;
        Self::conn(self.server, &self.ips, &mut self.reply, 20).await?;
        let (method, path, body, want) = match op {
            0 | 1 => ("GET", "/posts".to_string(), None, 200),
            CREATE => (
                "POST",
                "/posts".to_string(),
                Some(json!({"kind": "have", "note": format!("scale {run} {n} {k}")})),
                201,
            ),
            REPLY => (
                "POST",
                format!("/posts/{}/messages", seed::post_id(seed::quiet_post(k, n))),
                Some(json!({"text": format!("scale reply {k}")})),
                201,
            ),
            4 => {
                let i = seed::waiting_post(k, n);
                (
                    "POST",
                    format!("/posts/{}/waiting", seed::post_id(i)),
                    Some(json!({"secret": seed::post_secret(i)})),
                    200,
                )
            }
            _ => (
                "POST",
                "/threads".to_string(),
                Some(json!({"thread_key": seed::thread_key(seed::thread_post(k, n))})),
                200,
            ),
        };
        let conn = match op {
            CREATE => &mut self.create.as_mut().expect("connected").0,
            REPLY => &mut self.reply.as_mut().expect("connected").0,
            _ => self.read.as_mut().expect("connected"),
        };
        let started = Instant::now();
        let (status, value) = conn.json(method, &path, body.as_ref()).await?;
        let micros = started.elapsed().as_micros() as u64;
        match op {
            CREATE => self.create.as_mut().expect("connected").1 += 1,
            REPLY => self.reply.as_mut().expect("connected").1 += 1,
            _ => {}
        }
        if status != want {
            self.side
                .failures
                .push(format!("{} at {n}: {status} {value}", OPS[op]));
        }
        self.side.samples[op].push(micros);
        Ok(())
    }
}

/// `samples` rounds of every op against both servers, alternating which
/// goes first.
pub async fn run(
    a: (SocketAddr, u64),
    b: (SocketAddr, u64),
    samples: u64,
    ip_base: u32,
) -> (Side, Side) {
    let mk = |(server, posts): (SocketAddr, u64), base: u32| Client {
        server,
        posts,
        ips: Ips::new(base),
        read: None,
        create: None,
        reply: None,
        side: Side {
            posts,
            samples: Default::default(),
            failures: vec![],
        },
    };
    let mut ca = mk(a, ip_base);
    let mut cb = mk(b, ip_base + 500_000);
    let run = crate::client::random_hex(4);
    for k in 0..samples {
        for (op, _) in OPS.iter().enumerate() {
            let order: [&mut Client; 2] = if k % 2 == 0 {
                [&mut ca, &mut cb]
            } else {
                [&mut cb, &mut ca]
            };
            for c in order {
                if let Err(e) = c.one(op, k, &run).await {
                    c.side.failures.push(format!("{}: {e}", OPS[op]));
                    c.read = None;
                    c.create = None;
                    c.reply = None;
                }
            }
        }
    }
    (ca.side, cb.side)
}

pub fn percentile(samples: &[u64], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let mut s = samples.to_vec();
    s.sort_unstable();
    let i = ((s.len() as f64 - 1.0) * p).round() as usize;
    s[i] as f64
}
