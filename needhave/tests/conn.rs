//! `needhave serve`'s connection policy and start-up checks, against the
//! real binary over real sockets: the request and write deadlines, the
//! per-address connection cap, the 64-header cap, `--allow-origin '*'`,
//! the right-most `X-Forwarded-For`, and the empty IP salt refused.

mod common;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// A blocking socket from `ip` (127.x.y.z) to the server.
fn connect_from(server: &Server, ip: Ipv4Addr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::new(ip.into(), 0).into()).unwrap();
    socket.connect(&server.addr.into()).unwrap();
    socket.into()
}

/// Reads until the server closes (EOF or reset) or `limit` passes; returns
/// the bytes read and whether the server closed.
fn read_until_closed(s: &mut TcpStream, limit: Duration) -> (usize, bool) {
    let end = Instant::now() + limit;
    let mut total = 0;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (total, false);
        }
        s.set_read_timeout(Some(left.min(Duration::from_millis(200))))
            .unwrap();
        match s.read(&mut buf) {
            Ok(0) => return (total, true),
            Ok(n) => total += n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return (total, true),
        }
    }
}

fn get_ok(server: &Server, ip: Ipv4Addr) -> bool {
    let mut s = connect_from(server, ip);
    let req = format!(
        "GET /posts HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        server.host
    );
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut out = Vec::new();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let _ = s.read_to_end(&mut out);
    out.starts_with(b"HTTP/1.1 200")
}

#[test]
fn a_body_that_never_arrives_is_cut_at_the_deadline() {
    let server = Server::spawn(&["--request-timeout", "1"]);
    let mut s = connect_from(&server, fresh_ip());
    let head = format!(
        "POST /posts HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{",
        server.host
    );
    let sent = Instant::now();
    s.write_all(head.as_bytes()).unwrap();
    let (_, closed) = read_until_closed(&mut s, Duration::from_secs(5));
    let took = sent.elapsed();
    assert!(closed, "the connection outlived the deadline");
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(3),
        "cut after {took:?}, the deadline is 1 s"
    );
    // Trickled headers are cut at the same deadline, from their first byte.
    let mut s = connect_from(&server, fresh_ip());
    let started = Instant::now();
    let mut cut = false;
    for b in
        b"GET /posts HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            .iter()
    {
        if s.write_all(&[*b]).is_err() {
            cut = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        if started.elapsed() > Duration::from_secs(4) {
            break;
        }
    }
    if !cut {
        cut = read_until_closed(&mut s, Duration::from_millis(500)).1;
    }
    assert!(cut, "trickled headers were not cut");
    assert!(started.elapsed() < Duration::from_secs(4));
    // Meanwhile (and after) others are served.
    assert!(get_ok(&server, fresh_ip()));
}

#[test]
fn a_client_that_does_not_read_is_dropped_after_the_write_deadline() {
    let server = Server::spawn(&["--write-timeout", "1", "--request-timeout", "30"]);
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    sock.bind(&SocketAddr::new(fresh_ip().into(), 0).into())
        .unwrap();
    sock.connect(&server.addr.into()).unwrap();
    let mut s: TcpStream = sock.into();
    // Pipelined requests for far more than the socket buffers hold, never read.
    let one = format!(
        "GET /openapi.json HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.host
    );
    let n = 2000;
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let sent = Instant::now();
    for _ in 0..n {
        if s.write_all(one.as_bytes()).is_err() {
            break;
        }
    }
    std::thread::sleep(Duration::from_secs(3));
    let answer_len = {
        let mut c = connect_from(&server, fresh_ip());
        let req = format!(
            "GET /openapi.json HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            server.host
        );
        c.write_all(req.as_bytes()).unwrap();
        read_until_closed(&mut c, Duration::from_secs(5)).0
    };
    let (got, closed) = read_until_closed(&mut s, Duration::from_secs(10));
    assert!(closed, "the non-reader was never dropped");
    assert!(
        got < n * answer_len,
        "all {n} answers were delivered ({got} bytes): the non-reader was not dropped"
    );
    assert!(sent.elapsed() < Duration::from_secs(15));
}

#[test]
fn one_address_cannot_hold_more_than_its_share() {
    let server = Server::spawn(&["--max-connections-per-ip", "4"]);
    let hog = fresh_ip();
    let held: Vec<TcpStream> = (0..4).map(|_| connect_from(&server, hog)).collect();
    // Give the server the time to accept them.
    std::thread::sleep(Duration::from_millis(300));
    // A fifth from the same address is closed unanswered...
    let mut fifth = connect_from(&server, hog);
    let _ =
        fifth.write_all(format!("GET /posts HTTP/1.1\r\nHost: {}\r\n\r\n", server.host).as_bytes());
    let (got, closed) = read_until_closed(&mut fifth, Duration::from_secs(2));
    assert!(
        closed && got == 0,
        "the fifth connection was served ({got} bytes)"
    );
    // ...while every other address is served.
    for _ in 0..5 {
        assert!(get_ok(&server, fresh_ip()));
    }
    // A freed place is the address's again.
    drop(held);
    std::thread::sleep(Duration::from_millis(300));
    assert!(get_ok(&server, hog));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_origin_star_allows_every_origin() {
    let server: &'static Server = Box::leak(Box::new(Server::spawn(&["--allow-origin", "*"])));
    let body = json!({"kind": "need", "note": fresh_note("star")}).to_string();
    let r = send_to(
        server,
        fresh_ip(),
        "POST",
        "/posts",
        Some(body.into_bytes()),
        &[
            ("origin", "https://app.example"),
            ("content-type", "text/plain"),
        ],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("https://app.example")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_forwarded_for_counts_the_right_most_address() {
    let server: &'static Server = Box::leak(Box::new(Server::spawn(&[
        "--client-ip-header",
        "X-Forwarded-For",
    ])));
    let create = |forged: String| async move {
        let body = json!({"kind": "have", "note": fresh_note("xff")}).to_string();
        let xff = format!("{forged}, 203.0.113.77");
        send_to(
            server,
            fresh_ip(),
            "POST",
            "/posts",
            Some(body.into_bytes()),
            &[("x-forwarded-for", &xff)],
        )
        .await
        .status
    };
    // A forged left-most address changes nothing: the proxy's is counted.
    for i in 0..10 {
        assert_eq!(create(format!("198.51.100.{i}")).await, 201);
    }
    assert_eq!(create("198.51.100.99".into()).await, 429);
}

#[test]
fn an_empty_ip_salt_is_refused_at_start() {
    for (flag, env) in [(Some(""), None), (None, Some("")), (Some("   "), None)] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_needhave"));
        cmd.args(["serve", "--addr", "127.0.0.1:0", "--db", ":memory:"]);
        if let Some(f) = flag {
            cmd.args(["--ip-salt", f]);
        }
        match env {
            Some(e) => cmd.env("NEEDHAVE_IP_SALT", e),
            None => cmd.env_remove("NEEDHAVE_IP_SALT"),
        };
        let out = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert!(!out.status.success(), "started with an empty salt");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("IP salt") && stderr.contains("empty"),
            "{stderr}"
        );
        assert!(!String::from_utf8_lossy(&out.stdout).contains("serving"));
    }
}

/// stderr a pipe nobody reads: requests go on (lines are dropped, not
/// waited for), and once the pipe is read again the drop count is logged.
#[test]
fn a_log_sink_nobody_reads_never_stalls_serving() {
    use std::io::BufRead;
    let (mut child, url) = start(
        serve_command("127.0.0.1:0", ":memory:")
            .arg("--exit-with-stdin")
            .env("NEEDHAVE_LOG", "info")
            .stderr(Stdio::piped()),
    );
    let server = Server::at(&url);
    // One log line a request: far more than the pipe (about 600) and the
    // writer's queue (QUEUE_LINES) hold.
    let n = needhave::native::logs::QUEUE_LINES + 3000;
    let started = Instant::now();
    let mut s = connect_from(&server, fresh_ip());
    let req = format!(
        "GET /posts/{} HTTP/1.1\r\nHost: {}\r\n\r\n",
        "0".repeat(32),
        server.host
    );
    let mut buf = vec![0u8; 4096];
    for i in 0..n {
        s.write_all(req.as_bytes()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        // A signal that lands during the read (EINTR) is no stall.
        let n = loop {
            match s.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => break r.unwrap_or_else(|e| panic!("request {i} stalled: {e}")),
            }
        };
        assert!(buf[..n].starts_with(b"HTTP/1.1 404"), "request {i}");
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "request {i}: too slow"
        );
    }
    // Read again, the sink tells how many lines it lost.
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if line.contains("log lines dropped") {
                let _ = tx.send(line);
                return;
            }
        }
    });
    let said = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("no drop count logged");
    assert!(said.contains("dropped="), "{said}");
    let _ = child.kill();
    let _ = child.wait();
}

/// A body over 64 KiB is refused by the server before `handle`; a browser
/// app must still be able to read that answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_large_carries_cors_for_an_allowed_origin() {
    let server: &'static Server = Box::leak(Box::new(Server::spawn(&[
        "--allow-origin",
        "https://app.example",
    ])));
    let body = vec![b' '; 70 * 1024];
    let r = send_to(
        server,
        fresh_ip(),
        "POST",
        "/posts",
        Some(body),
        &[("origin", "https://app.example")],
    )
    .await;
    r.expect_error(413, "too_large");
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("https://app.example")
    );
}

#[test]
fn a_request_past_64_headers_is_refused_431_and_its_connection_closed() {
    let server = Server::spawn(&[]);
    // `n` header lines in all: Host, Connection and filler.
    let status = |n: usize| {
        let mut s = connect_from(&server, fresh_ip());
        let mut req = format!(
            "GET /posts HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            server.host
        );
        for i in 2..n {
            req.push_str(&format!("x-filler-{i}: 1\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).unwrap();
        let (mut out, start) = (Vec::new(), Instant::now());
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = s.read_to_end(&mut out);
        assert!(start.elapsed() < Duration::from_secs(5), "not closed");
        String::from_utf8_lossy(&out[..12.min(out.len())]).into_owned()
    };
    assert_eq!(status(64), "HTTP/1.1 200");
    assert_eq!(status(65), "HTTP/1.1 431");
    assert_eq!(status(101), "HTTP/1.1 431");
}
