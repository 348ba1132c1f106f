//! The read baseline: a hyper hello-world (same hyper, same tokio runtime
//! shape as `needhave serve`) that serves the very bytes `needhave serve`
//! answered, so that a read comparison measures the server and not the
//! answer.
//!
//! Byte-identical on the wire: the bench captures one live answer of
//! `needhave serve` to the request wrk sends (`GET /posts`, and the same
//! with `If-None-Match` of the current tag, the 304) and hands both to this
//! server as files ([`Answer::read`]); it answers every request with the
//! captured status line, header names and values in their order, and body
//! (the 304 to any request that carries `If-None-Match`, the 200 to all
//! others). Only `date`, which hyper writes into both servers' answers, and
//! `content-length`, which hyper writes from the body for both, are left to
//! hyper. Before any round, [`same_bytes`] asks both servers again and
//! compares the answers byte for byte apart from `date`: the bench refuses
//! to run when they differ, so the comparison cannot drift as the list's
//! headers change.
//!
//! The headers are parsed once, at start, and cloned per answer: the
//! cheapest way hyper serves fixed headers.

use std::convert::Infallible;
use std::io::{Read, Write};
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::StatusCode;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// One answer as it went over the wire: status, headers (without `date`
/// and `content-length`), body.
#[derive(Clone)]
pub struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    /// An answer from its raw bytes (status line, headers, empty line,
    /// body), as [`exchange`] returns them.
    pub fn parse(raw: &[u8]) -> Result<Answer, String> {
        let (head, body) = split(raw)?;
        let head = std::str::from_utf8(head).map_err(|e| e.to_string())?;
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|c| c.parse::<u16>().ok())
            .and_then(|c| StatusCode::from_u16(c).ok())
            .ok_or_else(|| format!("no status line in {head:?}"))?;
        let mut headers = HeaderMap::new();
        for line in lines {
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| format!("not a header line: {line:?}"))?;
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| e.to_string())?;
            if name == hyper::header::DATE || name == hyper::header::CONTENT_LENGTH {
                continue;
            }
            // Leaked once per server: every answer clones a static value.
            let value: &'static str = Box::leak(value.trim().to_string().into_boxed_str());
            headers.append(name, HeaderValue::from_static(value));
        }
        Ok(Answer {
            status,
            headers,
            body: Bytes::copy_from_slice(body),
        })
    }

    pub fn read(path: &str) -> Result<Answer, String> {
        Answer::parse(&std::fs::read(path).map_err(|e| format!("{path}: {e}"))?)
    }

    fn to_hyper(&self) -> hyper::Response<Full<Bytes>> {
        let mut r = hyper::Response::new(Full::new(self.body.clone()));
        *r.status_mut() = self.status;
        *r.headers_mut() = self.headers.clone();
        r
    }
}

/// Head and body of a raw answer.
/// The `content-length` an answer's head declares (0 without one).
pub fn content_length(head: &str) -> usize {
    head.split("\r\n")
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0)
}

fn split(raw: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let at = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("an answer without the end of its head")?;
    Ok((&raw[..at], &raw[at + 4..]))
}

/// The raw bytes of the answer to `GET path` (with `extra` header lines,
/// each ending in `\r\n`), sent as wrk sends it (HTTP/1.1, `Host`,
/// keep-alive): read up to the end of its body by its `content-length`.
pub fn exchange(addr: SocketAddr, path: &str, extra: &str) -> Result<Vec<u8>, String> {
    let mut s = std::net::TcpStream::connect(addr).map_err(|e| e.to_string())?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}\r\n").map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        if let Ok((head, body)) = split(&raw) {
            let length = content_length(std::str::from_utf8(head).unwrap_or(""));
            if body.len() >= length {
                return Ok(raw);
            }
        }
        let n = s.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(format!(
                "{addr} closed before its answer to GET {path} ended"
            ));
        }
        raw.extend_from_slice(&buf[..n]);
    }
}

/// A raw answer without its `date` line.
fn undated(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut rest = raw;
    let mut in_head = true;
    while in_head {
        let Some(end) = rest.windows(2).position(|w| w == b"\r\n") else {
            break;
        };
        let line = &rest[..end + 2];
        in_head = end > 0;
        if !(line.len() > 5 && line[..5].eq_ignore_ascii_case(b"date:")) {
            out.extend_from_slice(line);
        }
        rest = &rest[end + 2..];
    }
    out.extend_from_slice(rest);
    out
}

/// Whether `ours` and `hello` answer `GET path` (with `extra`) with the same
/// bytes apart from `date`; the two answers in the error when not.
pub fn same_bytes(
    ours: SocketAddr,
    hello: SocketAddr,
    path: &str,
    extra: &str,
) -> Result<(), String> {
    let a = undated(&exchange(ours, path, extra)?);
    let b = undated(&exchange(hello, path, extra)?);
    if a == b {
        return Ok(());
    }
    let head =
        |raw: &[u8]| String::from_utf8_lossy(split(raw).map_or(raw, |(h, _)| h)).into_owned();
    Err(format!(
        "the hello-world does not answer GET {path} {extra:?}with the bytes needhave serve does \
         ({} B against {} B, date aside):\n--- needhave serve\n{}\n--- hello-world\n{}",
        a.len(),
        b.len(),
        head(&a),
        head(&b)
    ))
}

pub async fn serve(
    addr: SocketAddr,
    ok: Answer,
    not_modified: Option<Answer>,
) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    println!("hello: serving http://{}", listener.local_addr()?);
    let stop = async {
        use tokio::io::AsyncReadExt;
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 64];
        while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
    };
    let mut stop = std::pin::pin!(stop);
    let answers = std::sync::Arc::new((ok, not_modified));
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let answers = answers.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let (ok, not_modified) = &*answers;
                        let answer = not_modified
                            .as_ref()
                            .filter(|_| req.headers().contains_key(hyper::header::IF_NONE_MATCH))
                            .unwrap_or(ok);
                        let r = answer.to_hyper();
                        async move { Ok::<_, Infallible>(r) }
                    });
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
            _ = &mut stop => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAW: &[u8] = b"HTTP/1.1 304 Not Modified\r\netag: \"p1\"\r\nx-content-type-options: nosniff\r\ndate: Thu, 03 Dec 2026 13:02:15 GMT\r\n\r\n";

    #[test]
    fn only_the_date_is_left_out_of_the_comparison() {
        let other = b"HTTP/1.1 304 Not Modified\r\netag: \"p1\"\r\nx-content-type-options: nosniff\r\ndate: Fri, 04 Dec 2026 00:00:00 GMT\r\n\r\n";
        assert_eq!(undated(RAW), undated(other));
        let moved =
            b"HTTP/1.1 304 Not Modified\r\nx-content-type-options: nosniff\r\netag: \"p1\"\r\n\r\n";
        assert_ne!(undated(RAW), undated(moved));
    }

    #[test]
    fn an_answer_keeps_its_headers_in_order_without_date_and_length() {
        let a = Answer::parse(RAW).unwrap();
        assert_eq!(a.status, StatusCode::NOT_MODIFIED);
        let names: Vec<_> = a.headers.keys().map(|n| n.as_str()).collect();
        assert_eq!(names, ["etag", "x-content-type-options"]);
        assert_eq!(a.headers["etag"], "\"p1\"");
    }
}
