//! A write and its guards, each guard said once.
//!
//! A guarded write is one batch of two statements: the `INSERT … SELECT …
//! WHERE` every guard holds, then a SELECT that gives each guard's verdict
//! (and, for a rate, the oldest row it counts). Both are made at compile
//! time from one list ([`guarded!`]), so the condition that names an error
//! and the condition that stops the write cannot drift apart. The INSERT
//! alone decides; the SELECT, run after it in the same transaction, only
//! names the first guard that failed, and says when a refusal ends
//! (`Retry-After`). It answers only when the INSERT wrote nothing (its row,
//! by the new id, is not there), so it reads the very rows the INSERT's
//! guards read, and a write that is let in, nearly every write, pays one
//! primary-key probe for it instead of every guard's count a second time.
//!
//! A guard may also pass the call without the write (`pass`): a report a
//! client already made is answered as made, and counted once.
//!
//! Parameters: the guards' come first (`?1` … `?k`) and both statements
//! bind them; the values only the INSERT writes follow (`?k+1` …), the
//! first of them the new row's id, which the SELECT binds too.

use crate::api::Ctx;
use crate::error::{ApiError, Code};
use crate::rules;
use crate::store::{Row, RowExt, Statement, Value};

/// One guard of a write: the error it names when it fails, and when that
/// refusal ends.
pub struct Guard {
    /// Its column in the checking SELECT.
    pub name: &'static str,
    /// `None`: not a refusal; the call succeeds, without the write.
    pub code: Option<Code>,
    pub wait: Wait,
}

/// When a refusal by a guard would admit the same request.
pub enum Wait {
    /// Not a refusal that ends by waiting (a duplicate, a missing post).
    Never,
    /// A rate over the last hour: when the oldest row it counts (this
    /// column of the checking SELECT) leaves the window.
    Window(&'static str),
    /// Not known to the list (a slot that frees when someone else acts):
    /// this many seconds, a polite interval to ask again.
    Fixed(u32),
}

/// A write and its guards, made by [`guarded!`].
pub struct Guarded {
    /// The guards' verdicts, when the row `insert` makes is not there.
    pub check: &'static str,
    pub insert: &'static str,
    pub guards: &'static [Guard],
}

/// Makes a [`Guarded`] from one list of guards:
///
/// ```text
/// guarded! {
///     insert "INSERT INTO t (id, a, b) SELECT ?4, ?5, ?6";
///     made "t" "?4";
///     "post" => NotFound if holds("EXISTS (…)");
///     "waiting" => TooMany if holds("(…) < ?2"), wait 3600;
///     "again" => pass if holds("NOT EXISTS (…)");
///     "recent" => RateLimited if rate("?3", "t", "ip_hash = ?1 AND created_at > ?2");
///     returning "id"
/// }
/// ```
///
/// `made TABLE ID`: the table the INSERT writes and the parameter of the
/// new row's `id` (the first value, `?k+1`). `holds(COND)` is a SQL condition; `rate(LIMIT, FROM, WHERE)` is "fewer
/// than LIMIT rows of FROM match WHERE", whose refusal ends when the oldest
/// of them leaves the hour. `pass` instead of a code: when this is the
/// first guard that fails, the call succeeds without writing.
macro_rules! guarded {
    (
        insert $insert:literal;
        made $table:literal $id:literal;
        $( $name:literal => $code:ident if $kind:ident ( $($args:tt)* ) $(, wait $secs:expr)? ; )+
        returning $ret:literal
    ) => {
        $crate::handlers::guard::Guarded {
            check: concat!(
                "SELECT 1 AS guarded"
                $(, ", (", $crate::handlers::guard::guarded!(@cond $kind $($args)*), ") AS ", $name,
                    $crate::handlers::guard::guarded!(@oldest $name $kind $($args)*))+,
                " WHERE NOT EXISTS (SELECT 1 FROM ", $table, " WHERE id = ", $id, ")"
            ),
            insert: concat!(
                $insert, " WHERE 1"
                $(, " AND (", $crate::handlers::guard::guarded!(@cond $kind $($args)*), ")")+,
                " RETURNING ", $ret
            ),
            guards: &[$($crate::handlers::guard::Guard {
                name: $name,
                code: $crate::handlers::guard::guarded!(@code $code),
                wait: $crate::handlers::guard::guarded!(@wait $name $kind $($secs)?),
            }),+],
        }
    };
    (@code pass) => { ::core::option::Option::None };
    (@code $code:ident) => { ::core::option::Option::Some($crate::error::Code::$code) };
    (@cond holds $($cond:tt)+) => { concat!($($cond)+) };
    (@cond rate $limit:literal, $from:literal, $where:literal) => {
        concat!("(SELECT count(*) FROM ", $from, " WHERE ", $where, ") < ", $limit)
    };
    (@oldest $name:literal holds $($cond:tt)+) => { "" };
    (@oldest $name:literal rate $limit:literal, $from:literal, $where:literal) => {
        concat!(", (SELECT min(created_at) FROM ", $from, " WHERE ", $where, ") AS ", $name, "_oldest")
    };
    (@wait $name:literal holds) => { $crate::handlers::guard::Wait::Never };
    (@wait $name:literal holds $secs:expr) => { $crate::handlers::guard::Wait::Fixed($secs) };
    (@wait $name:literal rate) => {
        $crate::handlers::guard::Wait::Window(concat!($name, "_oldest"))
    };
}
pub(crate) use guarded;

impl Guarded {
    /// Runs the write in one round trip: the rows its INSERT returned (its
    /// `RETURNING`), or the error of the first guard that failed (an empty
    /// row when that guard passes the call).
    pub async fn run(
        &self,
        ctx: &Ctx,
        guard_params: Vec<Value>,
        values: Vec<Value>,
    ) -> Result<Row, ApiError> {
        let (row, _) = self.run_then(ctx, guard_params, values, Vec::new()).await?;
        Ok(row)
    }

    /// [`run`](Self::run), with `after` in the same batch (one
    /// transaction), after the INSERT: writes that go with the row, which
    /// guard themselves on the row being there. Also returns the rows of
    /// the last of `after`.
    pub async fn run_then(
        &self,
        ctx: &Ctx,
        guard_params: Vec<Value>,
        values: Vec<Value>,
        after: Vec<Statement>,
    ) -> Result<(Row, Vec<Row>), ApiError> {
        let reads_last = !after.is_empty();
        let mut check = guard_params.clone();
        check.extend(values.first().cloned());
        let mut params = guard_params;
        params.extend(values);
        let insert = Statement {
            sql: self.insert,
            params,
        };
        let check = Statement {
            sql: self.check,
            params: check,
        };
        let mut batch = vec![insert, check];
        batch.extend(after);
        let mut results = ctx.store.batch(batch).await?;
        if let Some(row) = results.first_mut().and_then(|rows| rows.pop()) {
            let last = match results.pop() {
                Some(rows) if reads_last => rows,
                _ => Vec::new(),
            };
            return Ok((row, last));
        }
        let checks = results.get(1).and_then(|rows| rows.first());
        match checks.map(|row| self.refusal(row, ctx.now_ms)) {
            Some(None) => Ok((Row::new(), Vec::new())),
            Some(Some(refused)) => Err(refused),
            None => Err(Code::Internal.into()),
        }
    }

    /// The error of the first guard that failed in `row`, with, for a 429,
    /// when every failed guard of that status would let the request in;
    /// `None` when that guard passes the call.
    fn refusal(&self, row: &Row, now_ms: i64) -> Option<ApiError> {
        let failed = |g: &&Guard| row.int(g.name) == Some(0);
        let Some(first) = self.guards.iter().find(failed) else {
            return Some(Code::Internal.into());
        };
        let code = first.code?;
        if code.status() != 429 {
            return Some(code.into());
        }
        let seconds = self
            .guards
            .iter()
            .filter(failed)
            .filter(|g| g.code.is_some_and(|c| c.status() == 429))
            .filter_map(|g| match g.wait {
                Wait::Never => None,
                Wait::Fixed(s) => Some(s),
                Wait::Window(col) => row.int(col).map(|oldest| window_wait(oldest, now_ms)),
            })
            .max()
            // Every 429 says when; a rate's count without its row cannot
            // be, but the hour is then a safe answer.
            .unwrap_or((rules::HOUR_MS / 1000) as u32);
        Some(ApiError::retry_after(code, seconds))
    }
}

/// Whole seconds, at least 1, until a row written at `oldest` (ms) leaves
/// the hour the rates count (`created_at > now - HOUR`).
pub fn window_wait(oldest: i64, now_ms: i64) -> u32 {
    let ms = (oldest + rules::HOUR_MS - now_ms).max(0);
    u32::try_from((ms + 999) / 1000).unwrap_or(u32::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_round_up_to_whole_seconds() {
        let hour = rules::HOUR_MS;
        assert_eq!(window_wait(0, hour - 1), 1);
        assert_eq!(window_wait(0, hour), 1);
        assert_eq!(window_wait(0, hour - 1_000), 1);
        assert_eq!(window_wait(0, hour - 1_001), 2);
        assert_eq!(window_wait(0, 0), 3600);
        assert_eq!(window_wait(5, 0), 3601);
    }

    static G: Guarded = guarded! {
        insert "INSERT INTO t (id) SELECT ?3";
        made "t" "?3";
        "one" => NotFound if holds("EXISTS (SELECT 1 FROM p WHERE id = ?1)");
        "two" => TooMany if holds("(SELECT count(*) FROM t) < ?2"), wait 60;
        "three" => RateLimited if rate("?2", "t", "ip = ?1 AND at > 0");
        returning "a"
    };

    static PASSING: Guarded = guarded! {
        insert "INSERT INTO t (id) SELECT ?2";
        made "t" "?2";
        "one" => NotFound if holds("EXISTS (SELECT 1 FROM p WHERE id = ?1)");
        "again" => pass if holds("NOT EXISTS (SELECT 1 FROM t WHERE ip = ?1)");
        "three" => RateLimited if rate("?1", "t", "ip = ?1");
        returning "a"
    };

    /// A passing guard that fails first is no refusal; one after a refusal
    /// changes nothing.
    #[test]
    fn a_passing_guard_lets_the_call_succeed() {
        let r = |v| PASSING.refusal(&row(v), 0);
        assert_eq!(
            r(serde_json::json!({"one": 1, "again": 0, "three": 0})),
            None
        );
        assert_eq!(
            r(serde_json::json!({"one": 0, "again": 0, "three": 1})),
            Some(Code::NotFound.into())
        );
        assert_eq!(
            r(serde_json::json!({"one": 1, "again": 1, "three": 0, "three_oldest": 0})),
            Some(ApiError::retry_after(Code::RateLimited, 3600))
        );
    }

    #[test]
    fn both_statements_come_from_one_list() {
        assert_eq!(
            G.check,
            "SELECT 1 AS guarded, (EXISTS (SELECT 1 FROM p WHERE id = ?1)) AS one, \
             ((SELECT count(*) FROM t) < ?2) AS two, \
             ((SELECT count(*) FROM t WHERE ip = ?1 AND at > 0) < ?2) AS three, \
             (SELECT min(created_at) FROM t WHERE ip = ?1 AND at > 0) AS three_oldest \
             WHERE NOT EXISTS (SELECT 1 FROM t WHERE id = ?3)"
        );
        assert_eq!(
            G.insert,
            "INSERT INTO t (id) SELECT ?3 WHERE 1 AND (EXISTS (SELECT 1 FROM p WHERE id = ?1)) \
             AND ((SELECT count(*) FROM t) < ?2) \
             AND ((SELECT count(*) FROM t WHERE ip = ?1 AND at > 0) < ?2) RETURNING a"
        );
    }

    fn row(cols: serde_json::Value) -> Row {
        cols.as_object().unwrap().clone()
    }

    #[test]
    fn the_first_failed_guard_names_the_error() {
        let now = 10 * rules::HOUR_MS;
        let r = |v| G.refusal(&row(v), now).unwrap();
        let oldest = now - rules::HOUR_MS + 90_500;
        assert_eq!(
            r(serde_json::json!({"one": 0, "two": 0, "three": 0, "three_oldest": oldest})),
            Code::NotFound.into()
        );
        // Both 429s failed: the later of their ends.
        assert_eq!(
            r(serde_json::json!({"one": 1, "two": 0, "three": 0, "three_oldest": oldest})),
            ApiError::retry_after(Code::TooMany, 91)
        );
        assert_eq!(
            r(serde_json::json!({"one": 1, "two": 1, "three": 0, "three_oldest": oldest})),
            ApiError::retry_after(Code::RateLimited, 91)
        );
        assert_eq!(
            r(serde_json::json!({"one": 1, "two": 0, "three": 1, "three_oldest": oldest})),
            ApiError::retry_after(Code::TooMany, 60)
        );
        // Nothing failed, yet nothing was written: not a refusal, not a pass.
        assert_eq!(
            r(serde_json::json!({"one": 1, "two": 1, "three": 1})),
            Code::Internal.into()
        );
    }
}
