//! Child processes: `needhave serve`, the hello-world baseline, wrk.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

pub struct Server {
    child: Child,
    /// Closing it stops a child started with `--exit-with-stdin`.
    stdin: Option<ChildStdin>,
    _stdout: BufReader<ChildStdout>,
    pub addr: SocketAddr,
}

impl Server {
    /// Starts `program args…` and reads the address from its first stdout
    /// line (`…serving http://ADDR…`).
    pub fn start(program: &str, args: &[&str]) -> Result<Server, String> {
        Server::start_logged(program, args, None)
    }

    /// [`start`](Self::start), its stderr into `log` (at `NEEDHAVE_LOG=`
    /// the level given with it) instead of the bench's.
    pub fn start_logged(
        program: &str,
        args: &[&str],
        log: Option<(&std::path::Path, &str)>,
    ) -> Result<Server, String> {
        let (stderr, level) = match log {
            Some((path, level)) => (
                Stdio::from(
                    std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?,
                ),
                level.to_string(),
            ),
            None => (
                Stdio::inherit(),
                std::env::var("NEEDHAVE_LOG").unwrap_or_else(|_| "warn".into()),
            ),
        };
        let mut child = Command::new(program)
            .args(args)
            .env("NEEDHAVE_LOG", level)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut line = String::new();
        stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|a| a.parse().ok());
        let Some(addr) = addr else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{program} printed no address: {line:?}"));
        };
        Ok(Server {
            child,
            stdin,
            _stdout: stdout,
            addr,
        })
    }

    /// `needhave serve` on `db`, on a free port, stopped by [`Server::stop`].
    pub fn needhave(bin: &str, db: &str) -> Result<Server, String> {
        Server::needhave_under(&[], bin, db)
    }

    /// The same, run by `wrapper` (`strace -f -c …`, which runs the rest of
    /// its arguments): the address is still the server's first line.
    pub fn needhave_under(wrapper: &[&str], bin: &str, db: &str) -> Result<Server, String> {
        let serve = [
            bin,
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--db",
            db,
            "--exit-with-stdin",
        ];
        let mut line: Vec<&str> = wrapper.iter().chain(&serve).copied().collect();
        let program = line.remove(0);
        Server::start(program, &line)
    }

    /// [`needhave`](Self::needhave) with more `serve` arguments.
    pub fn needhave_with(bin: &str, db: &str, extra: &[&str]) -> Result<Server, String> {
        let mut args = vec![
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--db",
            db,
            "--exit-with-stdin",
        ];
        args.extend_from_slice(extra);
        Server::start(bin, &args)
    }

    /// `callgrind_control FLAG PID` on this server (run under callgrind):
    /// `-z` zeroes its counters, `-d` dumps them.
    pub fn callgrind_control(&self, flag: &str) -> Result<std::process::Output, String> {
        std::process::Command::new("callgrind_control")
            .args([flag, &self.pid().to_string()])
            .output()
            .map_err(|e| format!("callgrind_control: {e}"))
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Peak resident set (VmHWM) so far, in KiB.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    }

    /// kill -9.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes stdin and waits up to 10 s for a clean exit, then kills.
    pub fn stop(mut self) {
        self.stdin = None;
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub struct Wrk {
    pub rps: f64,
    pub non_2xx: u64,
    pub socket_errors: u64,
}

/// wrk with 2 threads at `conns` connections for `secs` seconds.
pub fn wrk(url: &str, conns: usize, secs: u64) -> Result<Wrk, String> {
    wrk_with(url, conns, secs, &[])
}

/// [`wrk`], each request with `headers` (`Name: value`).
pub fn wrk_with(url: &str, conns: usize, secs: u64, headers: &[&str]) -> Result<Wrk, String> {
    let mut args = vec![
        "-t2".to_string(),
        format!("-c{conns}"),
        format!("-d{secs}s"),
    ];
    for h in headers {
        args.extend(["-H".to_string(), h.to_string()]);
    }
    args.push(url.to_string());
    let out = Command::new("wrk")
        .args(&args)
        .output()
        .map_err(|e| format!("wrk: {e} (apt-get install wrk)"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |prefix: &str| -> Option<String> {
        text.lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .map(|l| l.trim_start()[prefix.len()..].trim().to_string())
    };
    let rps = field("Requests/sec:")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("wrk printed no rate:\n{text}"))?;
    let non_2xx = field("Non-2xx or 3xx responses:")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let socket_errors = field("Socket errors:")
        .map(|v| {
            v.split(',')
                .filter_map(|p| p.split_whitespace().last()?.parse::<u64>().ok())
                .sum()
        })
        .unwrap_or(0);
    Ok(Wrk {
        rps,
        non_2xx,
        socket_errors,
    })
}

/// Removes the callgrind dumps named `stem` and `stem.N` in `dir`.
pub fn remove_dumps(dir: &std::path::Path, stem: &str) -> Result<(), String> {
    for old in std::fs::read_dir(dir).map_err(|e| e.to_string())?.flatten() {
        if old.file_name().to_string_lossy().starts_with(stem) {
            let _ = std::fs::remove_file(old.path());
        }
    }
    Ok(())
}

/// The total instructions of the last dump `callgrind_control -d` asked
/// for (`stem.N`, the highest `N`), and its path.
pub fn last_dump_total(
    dir: &std::path::Path,
    stem: &str,
) -> Result<(u64, std::path::PathBuf), String> {
    let prefix = format!("{stem}.");
    let mut dumps: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .collect();
    dumps.sort_by_key(|p| {
        p.extension()
            .and_then(|e| e.to_str())
            .and_then(|e| e.parse::<u64>().ok())
            .unwrap_or(0)
    });
    let last = dumps.pop().ok_or("callgrind wrote no dump")?;
    let text = std::fs::read_to_string(&last).map_err(|e| e.to_string())?;
    let total = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .ok_or("no totals in the callgrind dump")?;
    Ok((total, last))
}
