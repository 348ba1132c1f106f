//! The little that differs between the native build and the Worker besides
//! the store: the clock, logging, Unicode normalization, and whether futures
//! must be `Send`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};

/// Native futures run on tokio's thread pool and must be `Send`; the Worker
/// is single-threaded and its D1 futures are not.
#[cfg(not(target_arch = "wasm32"))]
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
#[cfg(target_arch = "wasm32")]
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSend: Send + Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + Sync + ?Sized> MaybeSend for T {}
#[cfg(target_arch = "wasm32")]
pub trait MaybeSend {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSend for T {}

/// What [`set_clock_offset_s`] moved the clock by, in milliseconds.
static OFFSET_MS: AtomicI64 = AtomicI64::new(0);

/// Moves [`now_ms`] `seconds` forward for the whole process: a test's
/// "later" (`NEEDHAVE_TEST_NOW_OFFSET_S`), so that a server restarted on
/// the same file sees its posts expire. Everything that asks the time
/// asks `now_ms`: a post's times, expiry, the rate windows, how long an
/// answer may be kept.
pub fn set_clock_offset_s(seconds: i64) {
    OFFSET_MS.store(seconds.saturating_mul(1000), Ordering::Relaxed);
}

/// Unix time in milliseconds: the one clock of the list.
pub fn now_ms() -> i64 {
    #[cfg(not(target_arch = "wasm32"))]
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    // `Date.now()` itself: workers-rs's `Date::now` builds a `Date`
    // object to read the same number.
    #[cfg(target_arch = "wasm32")]
    let now = worker::js_sys::Date::now() as i64;
    now.saturating_add(OFFSET_MS.load(Ordering::Relaxed))
}

/// Unix ms as an RFC 3339 time in UTC, to the millisecond
/// (`2026-12-06T04:12:33.120Z`): every time the list shows.
pub fn rfc3339(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms.rem_euclid(1000)
    )
}

/// NFKC, then lower-cased: the part of the duplicate key (see
/// `rules::key`) that takes Unicode's tables. Natively the
/// `unicode-normalization` crate and the standard library's case mapping; on
/// the Worker the JavaScript runtime's `normalize("NFKC")` and
/// `toLowerCase()`, so that the wasm links no tables for them.
pub fn nfkc_lowercase(s: &str) -> String {
    #[cfg(not(target_arch = "wasm32"))]
    {
        use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};
        // Most notes are already in NFKC (every ASCII one is): the quick
        // check answers that in one lookup per character, a fraction of
        // what composing them again costs.
        if s.is_ascii() {
            s.to_ascii_lowercase()
        } else if is_nfkc_quick(s.chars()) == IsNormalized::Yes {
            s.to_lowercase()
        } else {
            s.nfkc().collect::<String>().to_lowercase()
        }
    }
    #[cfg(target_arch = "wasm32")]
    {
        let js = worker::js_sys::JsString::from(s);
        String::from(js.normalize("NFKC").to_lower_case())
    }
}

/// Unicode `Alphabetic`, as `char::is_alphabetic`: the letters of the
/// contact and key rules. Natively the standard library's tables; on the
/// Worker the JavaScript runtime's `\p{Alphabetic}` for anything past
/// ASCII, so that the wasm links none of those tables (1.85 KB gzip,
/// measured with the same build as bench/worker-size.sh).
/// `tests/data/note-keys.tsv` holds both to the same answers.
pub fn is_alphabetic(c: char) -> bool {
    #[cfg(not(target_arch = "wasm32"))]
    {
        c.is_alphabetic()
    }
    #[cfg(target_arch = "wasm32")]
    {
        c.is_ascii_alphabetic() || (!c.is_ascii() && js::ALPHABETIC.with(|re| js::test(re, c)))
    }
}

/// Unicode `Alphabetic` or a number (`Nd`, `Nl`, `No`), as
/// `char::is_alphanumeric`; on the Worker, `[\p{Alphabetic}\p{N}]` past
/// ASCII (see [`is_alphabetic`]).
pub fn is_alphanumeric(c: char) -> bool {
    #[cfg(not(target_arch = "wasm32"))]
    {
        c.is_alphanumeric()
    }
    #[cfg(target_arch = "wasm32")]
    {
        c.is_ascii_alphanumeric() || (!c.is_ascii() && js::ALPHANUMERIC.with(|re| js::test(re, c)))
    }
}

/// Unicode general category Mark (`Mn`, `Mc`, `Me`): the accents and vowel
/// signs that join the character before them. Natively the
/// `unicode-normalization` crate's table (already linked for NFKC); on the
/// Worker the JavaScript runtime's `\p{M}`.
pub fn is_mark(c: char) -> bool {
    #[cfg(not(target_arch = "wasm32"))]
    {
        unicode_normalization::char::is_combining_mark(c)
    }
    #[cfg(target_arch = "wasm32")]
    {
        !c.is_ascii() && js::MARK.with(|re| js::test(re, c))
    }
}

/// The Worker's Unicode classes: one compiled expression each, kept for the
/// isolate's life.
#[cfg(target_arch = "wasm32")]
mod js {
    use worker::js_sys::RegExp;

    thread_local! {
        pub static ALPHABETIC: RegExp = RegExp::new(r"^\p{Alphabetic}$", "u");
        pub static ALPHANUMERIC: RegExp = RegExp::new(r"^[\p{Alphabetic}\p{N}]$", "u");
        pub static MARK: RegExp = RegExp::new(r"^\p{M}$", "u");
    }

    pub fn test(re: &RegExp, c: char) -> bool {
        let mut buf = [0; 4];
        re.test(c.encode_utf8(&mut buf))
    }
}

/// A call this slow, in milliseconds, gets the Worker's log line.
pub const SLOW_MS: i64 = 1000;

/// A call that makes D1 read or write this many rows (what D1 bills) gets
/// the Worker's log line: a page of the list reads fewer.
pub const MANY_ROWS: u32 = 1000;

/// Whether a call on the Worker gets a log line of its own (`worker.rs`
/// writes it). Cloudflare's request logs (`[observability]` in
/// wrangler.toml) already hold every request's method, URL, status and
/// time, and a line for each call costs every call its writing: so only
/// the calls worth a look are logged, with the D1 rows that those logs
/// lack: a failure (5xx), a slow call, one that reads or writes many rows.
/// The var `LOG_REQUESTS` (`setting`) says otherwise: `all`, a line for
/// every call (`bench/d1-rows-read.sh` reads each call's rows from it), or
/// `none`. Here rather than in `worker.rs` so that it is tested natively.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn worth_a_line(
    setting: &str,
    status: u16,
    ms: i64,
    rows_read: u32,
    rows_written: u32,
) -> bool {
    match setting {
        "all" => true,
        "none" => false,
        _ => status >= 500 || ms >= SLOW_MS || rows_read >= MANY_ROWS || rows_written >= MANY_ROWS,
    }
}

/// For the operator, never the client. Callers pass no secrets or notes.
pub fn log_error(message: &str) {
    #[cfg(not(target_arch = "wasm32"))]
    tracing::error!("{message}");
    // The text as it is: `console_error!` would format it through
    // `format_args!` first.
    #[cfg(target_arch = "wasm32")]
    worker::worker_sys::web_sys::console::error_1(&message.into());
}

/// Lets the executor run everything else that is ready (other requests, the
/// accept loop, the socket driver) before this task goes on. A run of CPU
/// work that awaits nothing pending, such as building an MCP batch's twenty
/// answers from memoized reads, would otherwise hold a worker thread for its
/// whole length: forty such batches at once kept an ordinary `GET /posts`
/// waiting for seconds. On the Worker each request is an invocation of its
/// own, so there is no one to yield to.
pub async fn yield_now() {
    #[cfg(not(target_arch = "wasm32"))]
    tokio::task::yield_now().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worker_logs_only_the_calls_worth_a_look_unless_told() {
        // (status, ms, rows read, rows written): an ordinary call of each
        // kind, then one over each bound.
        let ordinary = [
            (200, 12, 101, 0),
            (201, 40, 30, 25),
            (404, 3, 1, 0),
            (429, 5, 2, 0),
        ];
        let worth = [
            (500, 3, 0, 0),
            (503, 3, 0, 0),
            (200, SLOW_MS, 5, 0),
            (200, 20, MANY_ROWS, 0),
            (201, 20, 40, MANY_ROWS),
        ];
        for (status, ms, read, written) in ordinary {
            assert!(
                !worth_a_line("", status, ms, read, written),
                "{status} {ms}"
            );
            assert!(worth_a_line("all", status, ms, read, written));
        }
        for (status, ms, read, written) in worth {
            assert!(worth_a_line("", status, ms, read, written), "{status} {ms}");
            assert!(worth_a_line("something", status, ms, read, written));
            assert!(!worth_a_line("none", status, ms, read, written));
        }
    }

    #[test]
    fn times() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(1_764_629_999_123), "2025-12-01T22:59:59.123Z");
        assert_eq!(rfc3339(1_796_530_353_120), "2026-12-06T04:12:33.120Z");
        assert_eq!(rfc3339(4_102_444_800_000), "2100-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999Z");
    }
}
