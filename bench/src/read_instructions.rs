//! `needhave-bench read-instructions`: callgrind's instructions per
//! `GET /posts` answered 200 and per 304, for `needhave serve` and for the
//! hello-world that sends the same bytes. Load-independent, unlike the
//! rates of `reads`: the server's own instructions per request (the
//! kernel's are not counted), so a change to the read path can be judged
//! on a busy machine.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::procs::{self, Server};
use crate::Args;

/// Each server under `valgrind --tool=callgrind`: a warm-up of each kind of
/// request, then for the 200 and the 304 in turn the counters zeroed,
/// `--requests` keep-alive requests over `--conns` connections, the
/// counters dumped. Keeps each dump in `--work` for `callgrind_annotate`.
pub async fn run(args: &Args) -> Result<(), String> {
    let bin = args.needhave();
    let work = args.work();
    let conns = args.num("conns", 8).max(1) as usize;
    let requests = args.num("requests", 4000).max(conns as u64) as usize;
    let me = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .to_string_lossy()
        .into_owned();
    let name = "read-instructions";
    let (server, hello, etag, _) = crate::list_and_hello(&bin, &me, &work, name).await?;
    server.stop();
    hello.stop();
    let db = work
        .join(format!("{name}.db"))
        .to_string_lossy()
        .into_owned();
    let inm = format!("If-None-Match: {etag}\r\n");
    println!(
        "| server (callgrind, {requests} keep-alive requests over {conns} connections) | per 200 | per 304 |"
    );
    println!("|---|---|---|");
    let mut figures = Vec::new();
    for side in ["needhave serve", "hello-world"] {
        let stem = if side == "hello-world" {
            "callgrind-hello.out"
        } else {
            "callgrind-serve.out"
        };
        procs::remove_dumps(&work, stem)?;
        let out = format!("--callgrind-out-file={}", work.join(stem).to_string_lossy());
        let wrapper = ["valgrind", "--tool=callgrind", "--dump-instr=no", &out];
        let server = if side == "hello-world" {
            let file = |kind: &str| {
                work.join(format!("{name}-{kind}.http"))
                    .to_string_lossy()
                    .into_owned()
            };
            let (ok, nm) = (file("200"), file("304"));
            let mut line: Vec<&str> = wrapper.to_vec();
            line.extend([me.as_str(), "hello", "--answer", &ok, "--not-modified", &nm]);
            let program = line.remove(0);
            Server::start(program, &line)?
        } else {
            Server::needhave_under(&wrapper, &bin, &db)?
        };
        let control = |flag: &str| server.callgrind_control(flag);
        let mut per = Vec::new();
        for (status, extra) in [(200, ""), (304, inm.as_str())] {
            keep_alive(server.addr, conns, requests / 4, extra, status).await?;
            control("-z")?;
            let answered = keep_alive(server.addr, conns, requests, extra, status).await?;
            control("-d")?;
            let (total, _) = procs::last_dump_total(&work, stem)?;
            per.push(total as f64 / answered as f64);
        }
        server.stop();
        println!("| {side} | {:.0} | {:.0} |", per[0], per[1]);
        figures.push(per);
    }
    println!(
        "| needhave / hello-world | {:.2}× | {:.2}× |",
        figures[0][0] / figures[1][0],
        figures[0][1] / figures[1][1]
    );
    Ok(())
}

/// `requests` `GET /posts` (with `extra` header lines) over `conns`
/// keep-alive connections, each answer read whole and checked to be
/// `status`; how many were answered.
async fn keep_alive(
    addr: SocketAddr,
    conns: usize,
    requests: usize,
    extra: &str,
    status: u16,
) -> Result<usize, String> {
    let request = format!("GET /posts HTTP/1.1\r\nHost: {addr}\r\n{extra}\r\n");
    let mut tasks = Vec::new();
    for c in 0..conns {
        let n = requests / conns + usize::from(c < requests % conns);
        let request = request.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
            let _ = s.set_nodelay(true);
            let mut buf = Vec::with_capacity(32 * 1024);
            for _ in 0..n {
                s.write_all(request.as_bytes())
                    .await
                    .map_err(|e| e.to_string())?;
                read_answer(&mut s, &mut buf, status).await?;
            }
            Ok::<usize, String>(n)
        }));
    }
    let mut answered = 0;
    for t in tasks {
        answered += t.await.map_err(|e| e.to_string())??;
    }
    Ok(answered)
}

/// One answer, head and body (by its `content-length`), off `s`.
async fn read_answer(s: &mut TcpStream, buf: &mut Vec<u8>, status: u16) -> Result<(), String> {
    buf.clear();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            if !head.starts_with(&format!("HTTP/1.1 {status} ")) {
                return Err(format!("expected {status}, got {:?}", head.lines().next()));
            }
            let length = crate::hello::content_length(&head);
            if buf.len() - end - 4 >= length {
                return Ok(());
            }
        }
        let n = s.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}
