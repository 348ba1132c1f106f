//! The store on Cloudflare D1 (Worker only).
//!
//! Every call of the store is one D1 `batch`: D1 runs a batch as one
//! transaction, in one round trip, which is what makes the limits hold under
//! concurrency (the check and the write it guards travel together). The SQL
//! text is the same that SQLite runs natively.
//!
//! Each batch runs in a session of its own (`withSession(start).batch`),
//! started where `store::session` says (the primary, any replica, or the
//! request's bookmark): still one round trip, since creating a session
//! queries nothing. The request's store is `Sessions<D1Store>`.
//!
//! The batch's answer crosses from JS as one `JSON.stringify` read by
//! serde_json, which the list links anyway: converting each value through
//! serde-wasm-bindgen would cost the Worker's size more than it saves time.

use std::cell::Cell;

use serde_json::Value as Json;
use worker::js_sys::{Array, JSON};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::worker_sys::types::D1Database as D1Sys;

use super::session::{SessionAnswer, SessionDb};
use super::{Memo, Row, Statement, StoreError, StoreResult, Value};
use crate::platform::BoxFuture;

/// The binding itself: workers-rs's `D1Database` wrapper would only add its
/// `worker::Result`s (see `worker.rs` for what those cost).
pub struct D1Store {
    db: D1Sys,
    usage: std::rc::Rc<Usage>,
}

/// What a request's D1 calls cost, for its log line (`worker.rs`): the
/// round trips, and the rows its statements read and wrote as D1 counts
/// them (each statement's `meta.rows_read` and `meta.rows_written`), which
/// is what D1 bills.
#[derive(Default)]
pub struct Usage {
    pub trips: Cell<u32>,
    pub rows_read: Cell<u32>,
    pub rows_written: Cell<u32>,
}

impl D1Store {
    /// A store on `db` that counts what it costs in `usage`.
    pub fn new(db: D1Sys, usage: std::rc::Rc<Usage>) -> Self {
        D1Store { db, usage }
    }
}

/// Adds a count of D1's answer (absent: none) to `to`.
fn add(to: &Cell<u32>, n: Option<&Json>) {
    let n = n.and_then(Json::as_u64).unwrap_or(0);
    to.set(to.get().saturating_add(n.min(u64::from(u32::MAX)) as u32));
}

/// A JS exception as text for the operator's log (never for the client).
fn js_error(e: JsValue) -> StoreError {
    let message = match e.dyn_ref::<worker::js_sys::Error>() {
        Some(err) => String::from(err.message()),
        None => e.as_string().unwrap_or_else(|| "D1 call failed".into()),
    };
    StoreError(message)
}

/// A parameter as D1 takes it. D1 binds JS numbers; every integer the list
/// binds (Unix ms, counts, limits) is far inside the 53 bits a number holds
/// exactly.
fn js(v: &Value) -> JsValue {
    match v {
        Value::Null => JsValue::NULL,
        Value::Int(n) => JsValue::from_f64(*n as f64),
        Value::Text(t) => JsValue::from_str(t),
    }
}

/// One statement's part of D1's batch answer, `{success, error?, results}`,
/// as its rows. Read from the parsed value by hand rather than through a
/// serde-derived struct: see `crate::json::json_body` for why the Worker
/// avoids serde_json's typed readers.
fn statement_rows(result: Json) -> StoreResult<Vec<Row>> {
    let Json::Object(mut result) = result else {
        return Err(StoreError("D1 answer: a result is not an object".into()));
    };
    if matches!(result.get("success"), Some(Json::Bool(false))) {
        let error = result.get("error").and_then(Json::as_str);
        return Err(StoreError(error.unwrap_or("D1 statement failed").into()));
    }
    // Taken in place: `Map::remove` would link the B-tree's rebalancing
    // (about 5 KB) for this one call.
    let rows = match result.get_mut("results").map(Json::take) {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Array(rows)) => rows,
        Some(_) => return Err(StoreError("D1 answer: results is not an array".into())),
    };
    // Loops rather than `collect::<Result<_, _>>()`, whose adapter cost
    // the Worker about 1 KB raw for these two uses.
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let Json::Object(row) = row else {
            return Err(StoreError("D1 answer: a row is not an object".into()));
        };
        out.push(row);
    }
    Ok(out)
}

impl D1Store {
    async fn run_batch(&self, start: &str, statements: &[Statement]) -> StoreResult<SessionAnswer> {
        self.usage.trips.set(self.usage.trips.get() + 1);
        let session = self.db.with_session(Some(start)).map_err(js_error)?;
        let prepared = Array::new();
        for s in statements {
            let params: Array = s.params.iter().map(js).collect();
            let stmt = session.session_prepare(s.sql).map_err(js_error)?;
            let bound: JsValue = stmt.bind(params).map_err(js_error)?.into();
            prepared.push(&bound);
        }
        let promise = session.session_batch(prepared).map_err(js_error)?;
        let answer = JsFuture::from(promise).await.map_err(js_error)?;
        // A runtime without bookmarks (or one that throws) leaves the
        // request's bookmark where it was.
        let bookmark = session.get_bookmark().ok().flatten();
        let text: String = JSON::stringify(&answer).map_err(js_error)?.into();
        let Ok(Json::Array(results)) = serde_json::from_slice(text.as_bytes()) else {
            return Err(StoreError("D1 answer: not a JSON array".into()));
        };
        if results.len() != statements.len() {
            // No counts in the line: `format!` here would cost the Worker
            // more than the operator gains (the statements are in the code).
            return Err(StoreError(
                "D1 answered another number of results than statements".into(),
            ));
        }
        let mut rows = Vec::with_capacity(results.len());
        for result in results {
            if let Some(meta) = result.get("meta") {
                add(&self.usage.rows_read, meta.get("rows_read"));
                add(&self.usage.rows_written, meta.get("rows_written"));
            }
            rows.push(statement_rows(result)?);
        }
        Ok((rows, bookmark))
    }
}

/// The Worker binds one database (`DB`), so one memo per isolate serves it.
static MEMO: Memo = Memo::new();

impl SessionDb for D1Store {
    fn memo(&self) -> Option<&Memo> {
        Some(&MEMO)
    }

    fn batch_from<'a>(
        &'a self,
        start: &'a str,
        statements: Vec<Statement>,
    ) -> BoxFuture<'a, StoreResult<SessionAnswer>> {
        Box::pin(async move { self.run_batch(start, &statements).await })
    }
}
