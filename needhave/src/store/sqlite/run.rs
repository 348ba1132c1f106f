//! One statement run on a connection, and the error of a file that is gone:
//! what the readers (`sqlite.rs`) and the writer thread (`group.rs`) share.

use rusqlite::types::ValueRef;
use rusqlite::{params_from_iter, Connection};
use serde_json::Value as Json;

use crate::store::{Row, Statement, StoreError, StoreResult, Value};

/// The error of a write into a file that is no longer at its path.
pub fn unavailable(path: &str) -> StoreError {
    StoreError(format!(
        "{}{path} is gone or was replaced; restart the server on the file",
        StoreError::UNAVAILABLE
    ))
}

pub fn run_one(conn: &Connection, s: &Statement) -> StoreResult<Vec<Row>> {
    let mut stmt = conn.prepare_cached(s.sql)?;
    // Named only when there is a row to name: an unchanged public list
    // returns none.
    let mut names: Vec<String> = Vec::new();
    let params = s.params.iter().map(|v| match v {
        Value::Null => rusqlite::types::Value::Null,
        Value::Int(n) => rusqlite::types::Value::Integer(*n),
        Value::Text(t) => rusqlite::types::Value::Text(t.clone()),
    });
    let mut rows = stmt.query(params_from_iter(params))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        if names.is_empty() {
            names = row
                .as_ref()
                .column_names()
                .iter()
                .map(|n| n.to_string())
                .collect();
        }
        let mut map = Row::new();
        for (i, name) in names.iter().enumerate() {
            let v = match row.get_ref(i)? {
                ValueRef::Null => Json::Null,
                ValueRef::Integer(n) => Json::from(n),
                ValueRef::Real(f) => Json::from(f),
                ValueRef::Text(t) => Json::from(match std::str::from_utf8(t) {
                    Ok(s) => s.to_string(),
                    Err(_) => String::from_utf8_lossy(t).into_owned(),
                }),
                ValueRef::Blob(b) => Json::from(hex::encode(b)),
            };
            map.insert(name.clone(), v);
        }
        out.push(map);
    }
    Ok(out)
}
