//! The store on Cloudflare D1 (Worker only).
//!
//! Every call of the store is one `batch`: D1 runs a batch as one
//! transaction, in one round trip, which is what makes the limits hold under
//! concurrency (the check and the write it guards travel together). A batch
//! of one statement is sent as a plain `all()`, which D1 also runs alone.
//! The SQL text is the same that SQLite runs natively.

use worker::wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, D1Result};

use super::{Row, Statement, Store, StoreError, StoreResult, Value};
use crate::platform::BoxFuture;

pub struct D1Store {
    db: D1Database,
}

impl D1Store {
    pub fn new(db: D1Database) -> Self {
        D1Store { db }
    }
}

impl From<worker::Error> for StoreError {
    fn from(e: worker::Error) -> Self {
        StoreError(e.to_string())
    }
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

fn prepared(db: &D1Database, s: &Statement) -> StoreResult<D1PreparedStatement> {
    let params: Vec<JsValue> = s.params.iter().map(js).collect();
    Ok(db.prepare(s.sql).bind(&params)?)
}

/// A statement's rows, by column name. D1 hands back JS numbers; whole ones
/// arrive as JSON integers, so `RowExt::int` reads them as SQLite's do.
fn rows(result: &D1Result) -> StoreResult<Vec<Row>> {
    if !result.success() {
        return Err(StoreError(
            result
                .error()
                .unwrap_or_else(|| "D1 statement failed".into()),
        ));
    }
    Ok(result.results::<Row>()?)
}

impl Store for D1Store {
    fn batch(&self, statements: Vec<Statement>) -> BoxFuture<'_, StoreResult<Vec<Vec<Row>>>> {
        Box::pin(async move {
            let prepared = statements
                .iter()
                .map(|s| prepared(&self.db, s))
                .collect::<StoreResult<Vec<_>>>()?;
            let results = if prepared.len() == 1 {
                let one = prepared.into_iter().next();
                match one {
                    Some(stmt) => vec![stmt.all().await?],
                    None => Vec::new(),
                }
            } else if prepared.is_empty() {
                Vec::new()
            } else {
                self.db.batch(prepared).await?
            };
            if results.len() != statements.len() {
                return Err(StoreError(format!(
                    "D1 returned {} results for {} statements",
                    results.len(),
                    statements.len()
                )));
            }
            results.iter().map(rows).collect()
        })
    }
}
