//! SQL to a node through fairbench's own drivers, one short session per call, each bounded
//! by a deadline (a paused or dying server must not hang a sandbox command).

use crate::db::{ConnectOptions, Connection, Database, DbError, TargetUrl, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// One query or statement's deadline, connecting included.
const QUERY_DEADLINE: Duration = Duration::from_secs(20);

/// A URL without password, as a driver target.
pub fn target(url: &str) -> TargetUrl {
    TargetUrl::parse(url, |_| None).expect("sandbox URLs are well formed")
}

/// How the sandbox connects: short connect timeout (readiness polls), text queries.
pub fn options() -> ConnectOptions {
    ConnectOptions { connect_timeout: Duration::from_secs(3), ..ConnectOptions::default() }
}

async fn bounded<T>(f: impl std::future::Future<Output = Result<T, DbError>>) -> Result<T, DbError> {
    match tokio::time::timeout(QUERY_DEADLINE, f).await {
        Ok(r) => r,
        Err(_) => Err(DbError::timeout(format!("no answer within {} s", QUERY_DEADLINE.as_secs()))),
    }
}

/// Runs each statement in order in one session.
pub fn exec<D: Database>(db: &D, statements: &[&str]) -> Result<(), DbError> {
    crate::local_runtime().block_on(bounded(async {
        let mut c = db.connect().await?;
        for s in statements {
            c.simple(s).await?;
        }
        Ok(())
    }))
}

/// The first row of `sql` by column name (values as text, NULL as ""); None without rows.
pub fn row<D: Database>(db: &D, sql: &str) -> Result<Option<BTreeMap<String, String>>, DbError> {
    crate::local_runtime().block_on(bounded(async {
        let mut c = db.connect().await?;
        let stmt = c.prepare(sql).await?;
        let names = c.columns(stmt).await?;
        let mut values = Vec::new();
        c.execute_row(stmt, &[], &mut values).await?;
        if values.is_empty() {
            return Ok(None);
        }
        Ok(Some(names.into_iter().zip(values.iter().map(text)).collect()))
    }))
}

/// The server answers a query.
pub fn answers<D: Database>(db: &D) -> Result<(), DbError> {
    row(db, "SELECT 1").map(|_| ())
}

/// `primary`, `replica` or `read-only` as the server says (the driver's node_role; a
/// server that replicates from nobody and takes writes is a primary here).
pub fn role<D: Database>(db: &D) -> Result<&'static str, DbError> {
    use crate::model::ha::NodeRole;
    let said = crate::local_runtime().block_on(bounded(async { db.connect().await?.node_role().await }))?;
    Ok(match said.role {
        NodeRole::Replica => "replica",
        NodeRole::ReadOnly => "read-only",
        NodeRole::Member => "member",
        _ => "primary",
    })
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Text(s) => s.clone(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
    }
}

/// A SQL string literal ('' for ').
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}
