//! The load driver: 64 keep-alive connections (by default), each on its own
//! loopback source address, running either the write flow (create a post,
//! then a first reply to it) or the mixed load (reads, creates, replies,
//! waiting, accepts, callbacks, thread reads and writes, MCP calls).
//!
//! Every 201 the clients see goes into the ledger, which `check` compares
//! with the rows in the database afterwards. The limits' answers (409
//! duplicate, 429 rate_limited / too_many, 409 already_accepted) are
//! expected and counted apart; a 5xx, any other status, or a transport
//! error is a failure.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::client::{random_hex, Conn, Ips, Rng};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Create a post, then a first reply to it; 10 flows per source address.
    Writes,
    /// Create posts only, with the notes named; a new source address when
    /// one's quota is spent.
    Creates(Notes),
    /// Everything the list does, MCP included.
    Mixed,
}

/// The notes of a create-only run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notes {
    /// `corpus::note`: one template of a dozen words,
    /// nine of them in every note, each note's own `x…q` among them.
    Search,
    /// The first dozen words of an ordinary note (`notes::Ordinary`: a
    /// 5,000-word vocabulary drawn by Zipf's law), so about the search
    /// notes' length, with a vocabulary a young list is still learning.
    Ordinary,
}

impl Notes {
    pub fn parse(name: &str) -> Option<Notes> {
        match name {
            "search" => Some(Notes::Search),
            "ordinary" => Some(Notes::Ordinary),
            _ => None,
        }
    }
}

/// What the clients were told was written.
#[derive(Default, Debug)]
pub struct Ledger {
    /// Post id and the source address that created it.
    pub posts: Vec<(String, Ipv4Addr)>,
    /// First-message id.
    pub firsts: Vec<String>,
    /// Accepted first-message ids.
    pub accepts: Vec<String>,
    /// Later-message ids.
    pub laters: Vec<String>,
}

impl Ledger {
    fn merge(&mut self, other: Ledger) {
        self.posts.extend(other.posts);
        self.firsts.extend(other.firsts);
        self.accepts.extend(other.accepts);
        self.laters.extend(other.laters);
    }
}

#[derive(Default, Debug)]
pub struct Report {
    pub requests: u64,
    pub elapsed: Duration,
    /// (operation, status) → count.
    pub statuses: BTreeMap<(&'static str, u16), u64>,
    /// 5xx answers.
    pub server_errors: u64,
    /// A status the contract does not give for that operation and load.
    pub unexpected: Vec<String>,
    pub transport_errors: u64,
    /// The first few transport errors, for the log.
    pub transport_samples: Vec<String>,
    pub ledger: Ledger,
    pub addresses: u32,
    /// Microseconds from send to answer of every request answered 201.
    pub acked_us: Vec<u32>,
}

impl Report {
    pub fn rate(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Writes answered 201 per second.
    pub fn acked_rate(&self) -> f64 {
        self.acked_us.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    pub fn count(&self, op: &str, status: u16) -> u64 {
        self.statuses
            .iter()
            .filter(|((o, s), _)| *o == op && *s == status)
            .map(|(_, n)| *n)
            .sum()
    }

    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} requests in {:.1} s ({:.0} req/s) from {} source addresses; 5xx {}, unexpected {}, transport errors {}\n",
            self.requests,
            self.elapsed.as_secs_f64(),
            self.rate(),
            self.addresses,
            self.server_errors,
            self.unexpected.len(),
            self.transport_errors
        );
        for ((op, status), n) in &self.statuses {
            s += &format!("  {op:<14} {status} × {n}\n");
        }
        for u in self.unexpected.iter().take(10) {
            s += &format!("  unexpected: {u}\n");
        }
        for t in &self.transport_samples {
            s += &format!("  transport: {t}\n");
        }
        s
    }
}

/// Posts, first messages and thread keys the clients learned, shared so that
/// one client answers another's post. Bounded rings.
#[derive(Default)]
struct Pools {
    posts: Vec<(String, String)>,
    /// (post id, message id, reply secret)
    firsts: Vec<(String, String, String)>,
    keys: Vec<String>,
    notes: Vec<String>,
}

const RING: usize = 4096;

fn push_ring<T>(v: &mut Vec<T>, item: T, rng: &mut Rng) {
    if v.len() < RING {
        v.push(item);
    } else {
        let i = rng.below(RING);
        v[i] = item;
    }
}

struct Shared {
    server: SocketAddr,
    ips: Ips,
    pools: Mutex<Pools>,
    deadline: Instant,
    stop: Arc<AtomicBool>,
    requests: AtomicU64,
    run: String,
    /// The vocabulary of [`Notes::Ordinary`], when the run writes them.
    ordinary: Option<crate::notes::Ordinary>,
}

struct Worker {
    shared: Arc<Shared>,
    rng: Rng,
    conn: Option<Conn>,
    creates_left: i32,
    replies_left: i32,
    laters_left: i32,
    used: u32,
    report: Report,
    seq: u64,
    id: usize,
}

pub struct Options {
    pub server: SocketAddr,
    pub mode: Mode,
    pub conns: usize,
    pub duration: Duration,
    /// First source address index of this run.
    pub ip_base: u32,
    /// Set from outside to stop early (the crash test kills the server).
    pub stop: Arc<AtomicBool>,
}

pub async fn run(opts: Options) -> Report {
    let started = Instant::now();
    let shared = Arc::new(Shared {
        server: opts.server,
        ips: Ips::new(opts.ip_base),
        pools: Mutex::new(Pools::default()),
        deadline: started + opts.duration,
        stop: opts.stop.clone(),
        requests: AtomicU64::new(0),
        run: random_hex(4),
        ordinary: (opts.mode == Mode::Creates(Notes::Ordinary)).then(crate::notes::Ordinary::new),
    });
    let mut tasks = Vec::new();
    for id in 0..opts.conns {
        let shared = shared.clone();
        let mode = opts.mode;
        tasks.push(tokio::spawn(async move {
            let mut w = Worker {
                rng: Rng::new(id as u64 + 1 + started.elapsed().as_nanos() as u64),
                shared,
                conn: None,
                creates_left: 0,
                replies_left: 0,
                laters_left: 0,
                used: 0,
                report: Report::default(),
                seq: 0,
                id,
            };
            w.run(mode).await;
            w.report
        }));
    }
    let mut total = Report::default();
    for t in tasks {
        let r = t.await.expect("load task");
        total.requests += r.requests;
        for (k, v) in r.statuses {
            *total.statuses.entry(k).or_default() += v;
        }
        total.server_errors += r.server_errors;
        total.unexpected.extend(r.unexpected);
        total.transport_errors += r.transport_errors;
        for s in r.transport_samples {
            if total.transport_samples.len() < 5 {
                total.transport_samples.push(s);
            }
        }
        total.ledger.merge(r.ledger);
        total.acked_us.extend(r.acked_us);
    }
    total.elapsed = started.elapsed();
    total.addresses = shared.ips.used();
    total
}

impl Worker {
    fn done(&self) -> bool {
        Instant::now() >= self.shared.deadline || self.shared.stop.load(Ordering::Relaxed)
    }

    /// A fresh source address (and connection) with fresh quotas.
    async fn reconnect(&mut self) -> bool {
        self.conn = None;
        while !self.done() {
            let ip = self.shared.ips.take();
            match Conn::connect(self.shared.server, ip).await {
                Ok(c) => {
                    self.conn = Some(c);
                    self.creates_left = needhave::rules::CREATES_PER_HOUR as i32;
                    self.replies_left = needhave::rules::REPLIES_PER_HOUR as i32;
                    self.laters_left = needhave::rules::THREAD_MESSAGES_PER_HOUR as i32;
                    self.used = 0;
                    return true;
                }
                Err(e) => self.transport(format!("connect: {e}")),
            }
        }
        false
    }

    fn transport(&mut self, e: String) {
        if self.shared.stop.load(Ordering::Relaxed) {
            return; // the crash test killed the server: expected.
        }
        self.report.transport_errors += 1;
        if self.report.transport_samples.len() < 5 {
            self.report.transport_samples.push(e);
        }
    }

    /// Sends one request and books its status against `expected`; `None`
    /// on a transport error (the connection is then replaced).
    async fn call(
        &mut self,
        op: &'static str,
        method: &str,
        path: &str,
        body: Option<Value>,
        expected: &[u16],
    ) -> Option<(u16, Value)> {
        let conn = self.conn.as_mut()?;
        let sent = Instant::now();
        let result = conn.json(method, path, body.as_ref()).await;
        self.used += 1;
        match result {
            Ok((status, value)) => {
                if status == 201 {
                    let us = sent.elapsed().as_micros();
                    self.report.acked_us.push(us.min(u32::MAX as u128) as u32);
                }
                self.report.requests += 1;
                self.shared.requests.fetch_add(1, Ordering::Relaxed);
                *self.report.statuses.entry((op, status)).or_default() += 1;
                if status >= 500 {
                    self.report.server_errors += 1;
                }
                if !expected.contains(&status) {
                    self.report
                        .unexpected
                        .push(format!("{op} {method} {path} → {status} {value}"));
                }
                Some((status, value))
            }
            Err(e) => {
                self.transport(format!("{op}: {e}"));
                self.conn = None;
                None
            }
        }
    }

    fn note(&mut self) -> String {
        self.seq += 1;
        format!(
            "bench {} w{} n{} — {}",
            self.shared.run,
            self.id,
            self.seq,
            random_hex(6)
        )
    }

    async fn run(&mut self, mode: Mode) {
        while !self.done() {
            if self.conn.is_none() && !self.reconnect().await {
                break;
            }
            match mode {
                Mode::Writes => self.write_flow().await,
                Mode::Creates(notes) => {
                    self.seq += 1;
                    self.create(Some(notes)).await;
                }
                Mode::Mixed => self.mixed_step().await,
            }
        }
    }

    /// Create a post, then answer it: 10 flows per address, then a new one.
    async fn write_flow(&mut self) {
        let Some(id) = self.create(None).await else {
            return;
        };
        let path = format!("/posts/{id}/messages");
        if let Some((201, m)) = self
            .call(
                "first_reply",
                "POST",
                &path,
                Some(json!({"text": "a first reply"})),
                &[201],
            )
            .await
        {
            self.replies_left -= 1;
            self.report
                .ledger
                .firsts
                .push(m["id"].as_str().unwrap_or_default().to_string());
        }
    }

    /// Creates a post (a new source address when this one's creates are
    /// spent); its id once answered 201. `words`: a note of a dozen words
    /// ([`Notes`]) rather than the short run-tagged one.
    async fn create(&mut self, words: Option<Notes>) -> Option<String> {
        if self.creates_left <= 0 && !self.reconnect().await {
            return None;
        }
        let kind = if self.seq.is_multiple_of(2) {
            "need"
        } else {
            "have"
        };
        let i = ((self.id as u64) << 32) | self.seq;
        let note = match (words, &self.shared.ordinary) {
            // The notes the search bench seeds: a dozen words, each post's
            // own `x…q` among them (so no two are duplicates).
            (Some(Notes::Search), _) => crate::corpus::note(i).1,
            (Some(Notes::Ordinary), Some(ordinary)) => {
                let note = ordinary.note(i);
                note.split(' ').take(12).collect::<Vec<_>>().join(" ")
            }
            _ => self.note(),
        };
        let ip = self.conn.as_ref().map(|c| c.ip);
        let Some((201, post)) = self
            .call(
                "create",
                "POST",
                "/posts",
                Some(json!({"kind": kind, "note": note})),
                &[201],
            )
            .await
        else {
            return None;
        };
        self.creates_left -= 1;
        let id = post["id"].as_str().unwrap_or_default().to_string();
        if let Some(ip) = ip {
            self.report.ledger.posts.push((id.clone(), ip));
        }
        Some(id)
    }

    fn pick_post(&mut self) -> Option<(String, String)> {
        let pools = self.shared.pools.lock().unwrap();
        let n = pools.posts.len();
        (n > 0).then(|| pools.posts[self.rng.below(n)].clone())
    }

    fn pick_first(&mut self) -> Option<(String, String, String)> {
        let pools = self.shared.pools.lock().unwrap();
        let n = pools.firsts.len();
        (n > 0).then(|| pools.firsts[self.rng.below(n)].clone())
    }

    fn pick_key(&mut self) -> Option<String> {
        let pools = self.shared.pools.lock().unwrap();
        let n = pools.keys.len();
        (n > 0).then(|| pools.keys[self.rng.below(n)].clone())
    }

    fn learn_post(&mut self, v: &Value) {
        if let (Some(id), Some(secret), Some(note)) =
            (v["id"].as_str(), v["secret"].as_str(), v["note"].as_str())
        {
            if let Some(c) = &self.conn {
                self.report.ledger.posts.push((id.to_string(), c.ip));
            }
            let mut pools = self.shared.pools.lock().unwrap();
            push_ring(
                &mut pools.posts,
                (id.to_string(), secret.to_string()),
                &mut self.rng,
            );
            push_ring(&mut pools.notes, note.to_string(), &mut self.rng);
        }
    }

    fn learn_first(&mut self, v: &Value) {
        if let (Some(id), Some(post), Some(secret)) = (
            v["id"].as_str(),
            v["post_id"].as_str(),
            v["secret"].as_str(),
        ) {
            self.report.ledger.firsts.push(id.to_string());
            let mut pools = self.shared.pools.lock().unwrap();
            push_ring(
                &mut pools.firsts,
                (post.to_string(), id.to_string(), secret.to_string()),
                &mut self.rng,
            );
        }
    }

    fn learn_key(&mut self, key: &str) {
        let mut pools = self.shared.pools.lock().unwrap();
        push_ring(&mut pools.keys, key.to_string(), &mut self.rng);
    }

    async fn mixed_step(&mut self) {
        // A new address now and then, so that the load spreads over many.
        if self.used >= 200 {
            self.reconnect().await;
            return;
        }
        let roll = self.rng.below(100);
        match roll {
            0..=29 => {
                self.call("list", "GET", "/posts", None, &[200]).await;
            }
            30..=36 => {
                let id = self.pick_post().map_or_else(|| random_hex(16), |p| p.0);
                let exp: &[u16] = &[200, 404];
                self.call("read", "GET", &format!("/posts/{id}"), None, exp)
                    .await;
            }
            37..=46 => self.mixed_create().await,
            47..=60 => self.mixed_reply().await,
            61..=65 => {
                if let Some((id, secret)) = self.pick_post() {
                    let path = format!("/posts/{id}/waiting");
                    self.call(
                        "waiting",
                        "POST",
                        &path,
                        Some(json!({"secret": secret})),
                        &[200],
                    )
                    .await;
                }
            }
            66..=72 => self.mixed_accept().await,
            73..=76 => {
                if let Some((_, mid, secret)) = self.pick_first() {
                    let path = format!("/messages/{mid}/thread");
                    if let Some((200, v)) = self
                        .call(
                            "callback",
                            "POST",
                            &path,
                            Some(json!({"secret": secret})),
                            &[200],
                        )
                        .await
                    {
                        if let Some(k) = v["thread_key"].as_str() {
                            let k = k.to_string();
                            self.learn_key(&k);
                        }
                    }
                }
            }
            77..=81 => {
                if let Some(k) = self.pick_key() {
                    self.call(
                        "thread_read",
                        "POST",
                        "/threads",
                        Some(json!({"thread_key": k})),
                        &[200],
                    )
                    .await;
                }
            }
            82..=87 => {
                if let Some(k) = self.pick_key() {
                    let body = json!({"thread_key": k, "text": "a later line"});
                    // Past the address's 100 an hour: the limit answers.
                    let expected: &[u16] = if self.laters_left > 0 { &[201] } else { &[429] };
                    if let Some((201, v)) = self
                        .call(
                            "thread_write",
                            "POST",
                            "/threads/messages",
                            Some(body),
                            expected,
                        )
                        .await
                    {
                        self.laters_left -= 1;
                        let id = v["id"].as_str().unwrap_or_default().to_string();
                        self.report.ledger.laters.push(id);
                    }
                }
            }
            _ => self.mixed_mcp().await,
        }
    }

    async fn mixed_create(&mut self) {
        let dup = self.rng.below(20) == 0;
        let note = if dup {
            let pools = self.shared.pools.lock().unwrap();
            let n = pools.notes.len();
            if n == 0 {
                return;
            }
            pools.notes[self.rng.below(n)].clone()
        } else {
            self.note()
        };
        // Past the quota, now and then, to see the limit answer; otherwise
        // move to a new address.
        if self.creates_left <= 0 && self.rng.below(4) != 0 {
            self.reconnect().await;
            return;
        }
        let expected: &[u16] = if dup {
            &[409]
        } else if self.creates_left <= 0 {
            &[429]
        } else {
            &[201]
        };
        let body = json!({"kind": "need", "note": note});
        if let Some((status, v)) = self
            .call("create", "POST", "/posts", Some(body), expected)
            .await
        {
            if status == 201 {
                self.creates_left -= 1;
                self.learn_post(&v);
            }
        }
    }

    async fn mixed_reply(&mut self) {
        let Some((post, _)) = self.pick_post() else {
            return;
        };
        if self.replies_left <= 0 && self.rng.below(4) != 0 {
            self.reconnect().await;
            return;
        }
        // Over the per-address quota: rate_limited; a post with 20 waiting:
        // too_many (checked first).
        let expected: &[u16] = if self.replies_left <= 0 {
            &[429]
        } else {
            &[201, 429]
        };
        let path = format!("/posts/{post}/messages");
        let body = json!({"text": format!("a first reply {}", random_hex(4))});
        if let Some((status, v)) = self
            .call("first_reply", "POST", &path, Some(body), expected)
            .await
        {
            if status == 201 {
                self.replies_left -= 1;
                self.learn_first(&v);
            } else if status == 429 && self.replies_left > 0 && v["error"] != "too_many" {
                self.report
                    .unexpected
                    .push(format!("first_reply {path} → 429 {v} with quota left"));
            }
        }
    }

    async fn mixed_accept(&mut self) {
        // Find a first message whose post's secret we know.
        let found = {
            let pools = self.shared.pools.lock().unwrap();
            let n = pools.firsts.len();
            (0..8).find_map(|_| {
                if n == 0 {
                    return None;
                }
                let (post, mid, _) = &pools.firsts[self.rng.below(n)];
                pools
                    .posts
                    .iter()
                    .find(|(p, _)| p == post)
                    .map(|(_, s)| (post.clone(), mid.clone(), s.clone()))
            })
        };
        let Some((post, mid, secret)) = found else {
            return;
        };
        let path = format!("/posts/{post}/accept");
        let body = json!({"secret": secret, "message_id": mid});
        if let Some((201, v)) = self
            .call("accept", "POST", &path, Some(body), &[201, 409])
            .await
        {
            self.report.ledger.accepts.push(mid);
            if let Some(k) = v["thread_key"].as_str() {
                let k = k.to_string();
                self.learn_key(&k);
            }
        }
    }

    async fn mixed_mcp(&mut self) {
        let roll = self.rng.below(10);
        let (name, args) = match roll {
            0..=3 => ("list_posts", json!({})),
            4..=5 => match self.pick_post() {
                Some((id, _)) => ("read_post", json!({"id": id})),
                None => ("list_posts", json!({})),
            },
            6..=7 if self.creates_left > 0 => ("create_have", json!({"note": self.note()})),
            _ if self.replies_left > 0 => match self.pick_post() {
                Some((id, _)) => (
                    "write_first_reply",
                    json!({"post_id": id, "text": format!("via mcp {}", random_hex(4))}),
                ),
                None => ("list_posts", json!({})),
            },
            _ => ("list_posts", json!({})),
        };
        let body = json!({"jsonrpc": "2.0", "id": self.seq, "method": "tools/call",
                          "params": {"name": name, "arguments": args}});
        let Some((200, v)) = self.call("mcp", "POST", "/mcp", Some(body), &[200]).await else {
            return;
        };
        let result = &v["result"];
        let is_error = result["isError"].as_bool().unwrap_or(false);
        let content = result["structuredContent"].clone();
        if result.is_null() {
            self.report.unexpected.push(format!("mcp {name} → {v}"));
            return;
        }
        match (name, is_error) {
            ("create_have", false) => {
                self.creates_left -= 1;
                self.learn_post(&content);
            }
            ("write_first_reply", false) => {
                self.replies_left -= 1;
                self.learn_first(&content);
            }
            ("write_first_reply", true) if content["error"] == "too_many" => {}
            ("read_post", true) | ("list_posts", true) | ("create_have", true) => {
                self.report.unexpected.push(format!("mcp {name} → {v}"));
            }
            (_, true) => self.report.unexpected.push(format!("mcp {name} → {v}")),
            _ => {}
        }
    }
}
