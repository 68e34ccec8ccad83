//! A workload file's checks, run after the measured phase on a connection of their own:
//! each query's first column of its first row must be true, or count no offending row. And
//! its tallies, read around the measured phase.

use crate::db::{Connection, Database, DbError, Value};
use crate::model::CheckRecord;
use crate::workload::program::{Check, Tally};
use std::time::Duration;

/// Runs each check with a deadline; one that cannot run is recorded as failed, with why.
pub fn run<D: Database>(db: &D, checks: &[Check], limit: Duration) -> Vec<CheckRecord> {
    try_run(db, checks, limit)
        .unwrap_or_else(|e| checks.iter().map(|c| failed(c, format!("cannot connect: {e}"))).collect())
}

/// The same, except that a server it cannot connect to is the error.
pub fn try_run<D: Database>(db: &D, checks: &[Check], limit: Duration) -> Result<Vec<CheckRecord>, DbError> {
    if checks.is_empty() {
        return Ok(Vec::new());
    }
    let rt = crate::local_runtime();
    let conn = super::bounded_result(&rt, limit, "the server", "connecting for the checks", db.connect())?;
    let mut conn = Some(conn);
    Ok(checks
        .iter()
        .map(|check| {
            let Some(c) = conn.as_mut() else {
                return failed(check, "not run: an earlier check lost the connection".into());
            };
            let running = format!("running check {}", check.name);
            match super::bounded_result(&rt, limit, "the server", &running, first_value(c, &check.sql)) {
                Ok(v) => judged(check, &v),
                Err(e) => {
                    if e.connection_lost {
                        conn = None;
                    }
                    failed(check, e.to_string())
                }
            }
        })
        .collect())
}

/// Each tally's whole number on `conn` (None: it could not be read in time, or was no whole
/// number), in the file's order.
pub fn read_tallies<C: Connection>(
    rt: &crate::LocalRuntime,
    limit: Duration,
    conn: &mut C,
    tallies: &[Tally],
) -> Vec<Option<i64>> {
    tallies.iter().map(|t| super::bounded(rt, limit, first_value(conn, &t.sql)).and_then(|v| whole(&v))).collect()
}

async fn first_value<C: Connection>(conn: &mut C, sql: &str) -> Result<Value, DbError> {
    let h = conn.prepare(sql).await?;
    let mut row = Vec::new();
    conn.execute_row(h, &[], &mut row).await?;
    Ok(row.into_iter().next().unwrap_or(Value::Null))
}

/// What the query returned, judged: true, or no offending row (a count that is not a
/// whole number fails, with what it was).
fn judged(check: &Check, v: &Value) -> CheckRecord {
    let offending = check.counts_offending.then(|| count(v)).flatten();
    let passed = match check.counts_offending {
        true => offending == Some(0),
        false => truthy(v),
    };
    CheckRecord {
        name: check.name.clone(),
        sql: check.sql.clone(),
        passed,
        value: Some(text(v)),
        offending,
        error: None,
    }
}

fn failed(check: &Check, error: String) -> CheckRecord {
    CheckRecord {
        name: check.name.clone(),
        sql: check.sql.clone(),
        passed: false,
        value: None,
        offending: None,
        error: Some(error),
    }
}

/// A count: a whole number that is not negative.
fn count(v: &Value) -> Option<u64> {
    whole(v).and_then(|n| u64::try_from(n).ok())
}

/// A whole number as the three databases return it: an integer, or its digits as text (a
/// MySQL SUM is a DECIMAL).
fn whole(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Text(t) => t.trim().parse().ok(),
        Value::Bytes(b) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
        Value::Float(_) | Value::Null => None,
    }
}

/// 1, true, `t`, `1`: SQL's true as the three databases return it.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Int(i) => *i != 0,
        Value::Float(f) => *f != 0.0,
        Value::Text(t) => matches!(t.trim().to_ascii_lowercase().as_str(), "t" | "true" | "1" | "yes" | "on"),
        Value::Bytes(b) => b.as_slice() == b"1",
        Value::Null => false,
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Text(t) => t.clone(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_truth_in_each_database_spelling() {
        for v in [Value::Int(1), Value::Text("t".into()), Value::Text("1".into()), Value::Bytes(b"1".to_vec())] {
            assert!(truthy(&v), "{v:?}");
        }
        for v in [Value::Int(0), Value::Text("f".into()), Value::Null, Value::Text("0".into())] {
            assert!(!truthy(&v), "{v:?}");
        }
    }
}
