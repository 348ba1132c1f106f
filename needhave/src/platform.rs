//! The little that differs between the native build and the Worker besides
//! the store: the clock, logging, Unicode normalization, and whether futures
//! must be `Send`.

use std::future::Future;
use std::pin::Pin;

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

/// Unix time in milliseconds.
pub fn now_ms() -> i64 {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }
    #[cfg(target_arch = "wasm32")]
    {
        worker::Date::now().as_millis() as i64
    }
}

/// NFKC, then lower-cased: the part of the duplicate key (see
/// `rules::key`) that takes Unicode's tables. Natively the
/// `unicode-normalization` crate and the standard library's case mapping; on
/// the Worker the JavaScript runtime's `normalize("NFKC")` and
/// `toLowerCase()`, so that the wasm links no tables for them.
pub fn nfkc_lowercase(s: &str) -> String {
    #[cfg(not(target_arch = "wasm32"))]
    {
        use unicode_normalization::UnicodeNormalization;
        s.nfkc().collect::<String>().to_lowercase()
    }
    #[cfg(target_arch = "wasm32")]
    {
        let js = worker::js_sys::JsString::from(s);
        String::from(js.normalize("NFKC").to_lower_case())
    }
}

/// For the operator, never the client. Callers pass no secrets or notes.
pub fn log_error(message: &str) {
    #[cfg(not(target_arch = "wasm32"))]
    tracing::error!("{message}");
    #[cfg(target_arch = "wasm32")]
    worker::console_error!("{message}");
}
