//! One statement run on a connection, and the error of a file that is gone:
//! what the readers (`sqlite.rs`) and the writer thread (`group.rs`) share.

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params_from_iter, Connection, ToSql};
use serde_json::Value as Json;

use crate::store::{Row, Statement, StoreError, StoreResult, Value};

/// The error of a write into a file that is no longer at its path.
pub fn unavailable(path: &str) -> StoreError {
    StoreError(format!(
        "{}{path} is gone or was replaced; restart the server on the file",
        StoreError::UNAVAILABLE
    ))
}

/// A parameter bound as it is: its text borrowed, not copied into a value
/// of SQLite's for the call (the writer thread binds every write's
/// parameters, and is the one thread all writes go through).
struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self.0 {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(n) => ToSqlOutput::Borrowed(ValueRef::Integer(*n)),
            Value::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
        })
    }
}

pub fn run_one(conn: &Connection, s: &Statement) -> StoreResult<Vec<Row>> {
    let mut stmt = conn.prepare_cached(s.sql)?;
    // The names once per statement, not once per cell: SQLite hands each
    // out as C text, checked as UTF-8 on every call.
    let names: Vec<String> = stmt.column_names().into_iter().map(String::from).collect();
    let mut rows = stmt.query(params_from_iter(s.params.iter().map(Param)))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
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
