//! The `needhave` command line: `serve` the list, be a stdio `mcp` server,
//! `remove` a post or a message and read the `reports` (the operator's,
//! `native/operator.rs`), print the OpenAPI document the table generates,
//! or turn old D1 rows into key updates (`d1-keys`) and index inserts
//! (`d1-words`).

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "needhave",
    version,
    about = "A public list of needs and haves for AI agents."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How log lines (all on stderr) are written: text, or one JSON object a line. Their level: NEEDHAVE_LOG (default info; debug adds store and group-commit detail).
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t,
        env = "NEEDHAVE_LOG_FORMAT"
    )]
    log_format: crate::native::logs::Format,
}

#[derive(Subcommand)]
// Parsed once per process: the size of `Serve` costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Serve the list (HTTP calls, the home page, OpenAPI and MCP at /mcp) on an SQLite file.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8787")]
        addr: SocketAddr,
        /// SQLite database file (created from schema.sql), or `:memory:`.
        #[arg(long, default_value = "needhave.db")]
        db: String,
        /// Take the client IP from this header (set by your own proxy) instead of the TCP peer; X-Forwarded-Proto and X-Forwarded-Host are then believed too.
        #[arg(long, value_name = "HEADER")]
        client_ip_header: Option<String>,
        /// The list's public origin (`https://list.example`), named by every document whatever a request's Host says.
        #[arg(long, value_name = "URL", value_parser = public_url)]
        public_url: Option<String>,
        /// Where to write about abuse (an address, a page), shown on the home page.
        #[arg(long, value_name = "TEXT", env = "ABUSE_CONTACT")]
        abuse_contact: Option<String>,
        /// Also allow this browser Origin, on the JSON calls and /mcp (repeatable); `*` allows every origin.
        #[arg(long = "allow-origin", value_name = "ORIGIN")]
        allow_origins: Vec<String>,
        /// Also answer /mcp for this Host name (repeatable); `*` turns the Host check off.
        #[arg(long = "allow-host", value_name = "HOST")]
        allow_hosts: Vec<String>,
        /// Salt of the client-IP hashes (default: kept in <db>.salt).
        #[arg(long, env = "NEEDHAVE_IP_SALT", hide_env_values = true)]
        ip_salt: Option<String>,
        #[command(flatten)]
        limits: LimitArgs,
        #[command(flatten)]
        group: GroupArgs,
        #[command(flatten)]
        reads: ReadArgs,
        /// Seconds a stop (SIGTERM, Ctrl-C) lets the requests in flight finish before it closes what is left.
        #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = seconds)]
        drain_timeout: f64,
        /// Serve Prometheus metrics at http://ADDR/metrics, a listener of its own (off by default; never the public address).
        #[arg(long, value_name = "ADDR")]
        metrics_addr: Option<SocketAddr>,
        /// Stop when stdin closes (for test harnesses).
        #[arg(long, hide = true)]
        exit_with_stdin: bool,
    },
    /// A stdio MCP server that is a client of the live list at NEEDHAVE_LIST_URL.
    Mcp {
        /// The list to talk to.
        #[arg(long, env = "NEEDHAVE_LIST_URL", hide_env_values = true, default_value = crate::native::stdio::DEFAULT_LIST_URL)]
        list_url: String,
    },
    /// Write a consistent copy of the database to OUT, also while a server is writing it.
    Backup {
        /// The SQLite database file to copy.
        #[arg(long, default_value = "needhave.db")]
        db: String,
        /// The new file to write (never overwritten).
        out: String,
    },
    /// Remove a post or a message for a reason (the operator's decision, never a call of the list): a removed post answers 410 removed to every call that names it and leaves every list; a removed message leaves the waiting list and its thread. Works while `needhave serve` runs on the file. Removing twice changes nothing.
    #[command(after_help = "On D1, print the statements and run them there:\n  \
        needhave remove --sql ID --reason TEXT > remove.sql\n  \
        wrangler d1 execute DB --remote --file remove.sql")]
    Remove {
        /// The id of the post, or of a first reply or thread message.
        id: String,
        /// Why, for the record: 1 to 500 characters, stored with the decision.
        #[arg(long)]
        reason: String,
        /// SQLite database file.
        #[arg(long, default_value = "needhave.db")]
        db: String,
        /// Print the statements that remove it on D1 (for `wrangler d1 execute DB --file`) instead of removing it from --db.
        #[arg(long, conflicts_with = "db")]
        sql: bool,
    },
    /// The reported posts, most reported first (by distinct clients), each with its reports' reasons and texts, newest first. Works while `needhave serve` runs on the file.
    #[command(after_help = "On D1, the same query:\n  \
        wrangler d1 execute DB --remote --json --command \"$(needhave reports --query)\"")]
    Reports {
        /// SQLite database file.
        #[arg(long, default_value = "needhave.db")]
        db: String,
        /// Print JSON: an array of posts, each with post_id, clients and its reports.
        #[arg(long)]
        json: bool,
        /// Print the query (the same text runs on D1), and exit.
        #[arg(long, conflicts_with_all = ["db", "json"])]
        query: bool,
    },
    /// Print the OpenAPI document the table generates.
    Openapi,
    /// D1 upgrade: read `wrangler d1 execute DB --json --command "$(needhave d1-keys --query)"` on stdin (the posts without a key's digest, and those whose notes the current rule folds otherwise), print the UPDATEs that give those posts their normalized keys' digests.
    D1Keys {
        /// Print the SELECT whose --json output this command reads, and exit.
        #[arg(long)]
        query: bool,
    },
    /// D1 upgrade: read `wrangler d1 execute DB --json --command "$(needhave d1-words --query)"` on stdin (the hot set, the posts the index of words does not hold, and those whose notes the current rule folds otherwise), print the SQL that indexes them in both parts and lets the move go on. Also rebuilds the index after an import of exported tables.
    D1Words {
        /// Print the SELECTs whose --json output this command reads, and exit.
        #[arg(long)]
        query: bool,
    },
}

/// The connection policy's flags (see `native/conn.rs`).
#[derive(Args)]
struct LimitArgs {
    /// Seconds a request may take to arrive whole, headers and body (also how long an idle connection is kept).
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = seconds)]
    request_timeout: f64,
    /// Seconds a client may take to read an answer before it is dropped.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = seconds)]
    write_timeout: f64,
    /// Open connections at most [default: the file-descriptor limit less 64].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: Option<u64>,
    /// Open connections from one client address at most (IPv6: per /64); 0 for no per-address cap (when a proxy in front is the only peer).
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_connections_per_ip: usize,
    /// Bytes of answers held for clients at once, all connections together (suffix K or M for KiB, MiB); past it a request waits briefly, then gets 503 busy.
    #[arg(long, value_name = "BYTES", default_value = "64M", value_parser = bytes)]
    answer_budget: usize,
}

fn bytes(s: &str) -> Result<usize, String> {
    let (digits, unit) = match s.trim().strip_suffix(['K', 'k']) {
        Some(d) => (d, 1 << 10),
        None => match s.trim().strip_suffix('M') {
            Some(d) => (d, 1 << 20),
            None => (s.trim(), 1),
        },
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .filter(|&n| n > 0)
        .ok_or_else(|| "a number of bytes, more than 0, perhaps with K or M".into())
}

/// Group commit's flags (see `store/sqlite/group.rs`, and
/// docs/design/group-commit.md, "Where a group closes", for the sweep the
/// defaults come from).
#[derive(Args)]
struct GroupArgs {
    /// Writes one commit (one fsync) carries at most.
    #[arg(long, value_name = "N", default_value_t = crate::store::sqlite::GroupPolicy::default().max as u64,
          value_parser = clap::value_parser!(u64).range(1..=65_536))]
    group_max: u64,
    /// Microseconds a commit waits for more writes after its first (0: commit what is queued at once).
    #[arg(long, value_name = "MICROS", default_value_t = crate::store::sqlite::GroupPolicy::default().wait.as_micros() as u64,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    group_wait_us: u64,
}

impl GroupArgs {
    fn policy(&self) -> crate::store::sqlite::GroupPolicy {
        crate::store::sqlite::GroupPolicy {
            max: self.group_max as usize,
            wait: std::time::Duration::from_micros(self.group_wait_us),
        }
    }
}

/// The read path's flags (see `store/sqlite/reads.rs`).
#[derive(Args)]
struct ReadArgs {
    /// Milliseconds a read's statements may run; past it the read is stopped and answered 503 busy with Retry-After (writes have no budget).
    #[arg(long, value_name = "MS", default_value_t = crate::store::sqlite::reads::BUDGET.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    statement_budget_ms: u64,
    /// Reads of one client address (IPv6: per /64) run at once; more wait briefly in line, then get 503 busy. 0: no per-client share (also off when --max-connections-per-ip is 0 and no --client-ip-header names the client).
    #[arg(long, value_name = "N", default_value_t = crate::store::sqlite::reads::PER_CLIENT)]
    reads_per_client: usize,
    /// Reads run at once, all clients together, each on a reader connection of its own [default: four a core, 8 to 64].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    readers: Option<u64>,
    /// Reads past 10 ms that run at once; the others wait their turn, within their budget [default: one less than the cores, at least 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    slow_lanes: Option<u64>,
}

impl ReadArgs {
    fn policy(&self) -> crate::store::sqlite::ReadPolicy {
        let default = crate::store::sqlite::ReadPolicy::default();
        crate::store::sqlite::ReadPolicy {
            budget: std::time::Duration::from_millis(self.statement_budget_ms),
            per_client: self.reads_per_client,
            readers: self.readers.map_or(default.readers, |n| n as usize),
            lanes: self.slow_lanes.map_or(default.lanes, |n| n as usize),
            ..default
        }
    }
}

/// `http(s)://host[:port]`, without a trailing slash: an origin, no path.
fn public_url(s: &str) -> Result<String, String> {
    let s = s.trim().trim_end_matches('/');
    let host = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
        .unwrap_or("");
    if !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b"/?#@".contains(&b))
    {
        Ok(s.to_string())
    } else {
        Err("an origin: http:// or https://, a host and perhaps a port, no path".into())
    }
}

fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err("a number of seconds, more than 0 and at most 86400".into()),
    }
}

impl LimitArgs {
    fn limits(&self) -> crate::native::conn::Limits {
        use std::time::Duration;
        crate::native::conn::Limits {
            request_timeout: Duration::from_secs_f64(self.request_timeout),
            write_timeout: Duration::from_secs_f64(self.write_timeout),
            max_connections: self
                .max_connections
                .map_or_else(crate::native::conn::default_max_connections, |n| n as usize),
            max_connections_per_ip: self.max_connections_per_ip,
            answer_budget: self.answer_budget,
        }
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Flushes the queued log lines on the way out.
    let _log_guard = match crate::native::logs::init(cli.log_format) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("needhave: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match cli.command {
        Command::Serve {
            addr,
            db,
            client_ip_header,
            public_url,
            abuse_contact,
            allow_origins,
            allow_hosts,
            ip_salt,
            limits,
            group,
            reads,
            drain_timeout,
            metrics_addr,
            exit_with_stdin,
        } => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|rt| {
                let served =
                    rt.block_on(crate::native::serve::run(crate::native::serve::Options {
                        addr,
                        db,
                        client_ip_header,
                        public_url,
                        abuse_contact,
                        allowed_origins: allow_origins,
                        allowed_hosts: allow_hosts,
                        ip_salt,
                        limits: limits.limits(),
                        group: group.policy(),
                        reads: reads.policy(),
                        drain: std::time::Duration::from_secs_f64(drain_timeout),
                        metrics_addr,
                        exit_with_stdin,
                    }));
                // The stdin watch (--exit-with-stdin) is a blocking read that
                // ends only when stdin closes; dropping the runtime would wait
                // for it, so a SIGTERM or Ctrl-C would never exit.
                rt.shutdown_background();
                served
            }),
        Command::Mcp { list_url } => {
            crate::native::stdio::run(&list_url).map_err(|e| e.to_string())
        }
        Command::D1Keys { query: true } => {
            println!("{}", crate::store::migrate::d1_keys_query());
            Ok(())
        }
        Command::D1Keys { query: false } => {
            let mut input = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)
                .map_err(|e| e.to_string())
                .and_then(|_| crate::store::migrate::d1_key_updates(&input))
                .map(|sql| print!("{sql}"))
        }
        Command::D1Words { query: true } => {
            println!("{}", crate::store::migrate::d1_unindexed());
            Ok(())
        }
        Command::D1Words { query: false } => {
            let mut input = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)
                .map_err(|e| e.to_string())
                .and_then(|_| crate::store::migrate::d1_word_inserts(&input))
                .map(|sql| print!("{sql}"))
        }
        Command::Backup { db, out } => crate::store::sqlite::SqliteStore::backup(&db, &out)
            .map(|()| println!("needhave: wrote a copy of {db} to {out}"))
            .map_err(|e| format!("backup of {db}: {e}")),
        Command::Remove {
            id,
            reason,
            sql: true,
            ..
        } => crate::native::operator::remove_sql(&id, &reason).map(|sql| print!("{sql}")),
        Command::Remove { id, reason, db, .. } => {
            crate::native::operator::remove(&db, &id, &reason)
                .map(|done| println!("needhave: {done}"))
        }
        Command::Reports { query: true, .. } => {
            println!("{}", crate::native::operator::REPORTS);
            Ok(())
        }
        Command::Reports { db, json, .. } => {
            crate::native::operator::reports(&db, json).map(|out| print!("{out}"))
        }
        Command::Openapi => {
            println!(
                "{}",
                serde_json::to_string_pretty(&crate::gen::openapi::generate(&crate::routes::API))
                    .unwrap_or_default()
            );
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("needhave: {e}");
            ExitCode::FAILURE
        }
    }
}
