//! The server's own counters against what fairbench sent: each statement's SQL command
//! (recorded in the result for built-in workloads and workload files alike) says which
//! counter it moves, so other load on the server (or a proxy that changes statements)
//! shows as a difference.

use super::{Finding, Severity};
use crate::model::{Dialect, ResultDocument, SqlCommand};
use serde_json::json;
use std::collections::BTreeMap;

/// PostgreSQL backends flush their statistics at most once a second (at exit at once):
/// each end of a measured phase may miss up to this much of the load.
const PG_STATS_LAG_S: f64 = 1.0;

/// One counter's expectation: what fairbench sent, and how far the server may differ
/// without other load.
struct Expected {
    counter: &'static str,
    sent: u64,
    /// Seconds of this counter's rate the server may legitimately lag behind.
    lag_s: f64,
}

pub fn server_counted_other_load(d: &ResultDocument) -> Option<Finding> {
    let delta = &d.conditions.server.status_delta;
    if delta.is_empty() {
        return None;
    }
    let sent = Sent::of(d);
    let expected = match d.target.driver {
        Dialect::Mysql => mysql(&sent),
        Dialect::Postgres => postgres(d, &sent),
        Dialect::Sqlite => return None,
    };
    let phases = d.repeats.len().max(1) as f64;
    let measured_s = d.conditions.run.measured_s.max(1e-3);
    // In flight at each end of each measured phase: one event per client; retried events
    // resend their statements.
    let fixed = 10.0 + 2.0 * d.conditions.run.threads as f64 * phases + d.errors.total as f64 * 20.0;
    let mut evidence = Vec::new();
    for e in expected {
        let counted = delta.get(e.counter).copied().unwrap_or(0);
        let lag = e.sent as f64 / measured_s * e.lag_s * 2.0 * phases;
        let slack = e.sent as f64 * 0.05 + lag + fixed;
        if (counted - e.sent as i64).unsigned_abs() as f64 > slack {
            evidence.push((e.counter.to_string(), json!({"sent": e.sent, "server_counted": counted})));
        }
    }
    if evidence.is_empty() {
        return None;
    }
    Some(Finding {
        id: "mix-mismatch".into(),
        severity: Severity::Warn,
        title: "the server counted a different statement mix than fairbench sent: other load ran on the server, or a proxy changed the statements".into(),
        evidence: evidence.into_iter().collect::<BTreeMap<_, _>>(),
        advice: match d.target.driver {
            Dialect::Postgres => "benchmark a database nothing else uses, and check what the server itself counted (pg_stat_database: xact_commit, tup_inserted, tup_updated, tup_deleted)",
            _ => "benchmark a server nothing else uses, and check what the server itself counted (SHOW GLOBAL STATUS LIKE 'Com_%')",
        }
        .into(),
    })
}

/// Statements sent by SQL command.
pub fn sent(d: &ResultDocument, commands: &[SqlCommand]) -> u64 {
    let sent = Sent::of(d);
    commands.iter().map(|c| sent.count(*c)).sum()
}

/// What the result says fairbench sent, by SQL command.
struct Sent {
    statements: BTreeMap<SqlCommand, u64>,
    rows: BTreeMap<SqlCommand, u64>,
    /// Statements sent outside BEGIN ... COMMIT: each is a transaction of its own.
    autocommit: u64,
}

impl Sent {
    fn of(d: &ResultDocument) -> Sent {
        let w = &d.conditions.workload;
        let command = |name: &str| {
            w.statement_commands
                .get(name)
                .copied()
                .or_else(|| w.statements_sql.get(name).map(|sql| SqlCommand::of_sql(sql)))
                .unwrap_or(SqlCommand::Other)
        };
        let mut sent = Sent { statements: BTreeMap::new(), rows: BTreeMap::new(), autocommit: 0 };
        for (name, s) in &d.statements {
            let c = command(name);
            *sent.statements.entry(c).or_default() += s.count;
            *sent.rows.entry(c).or_default() += s.rows_affected.unwrap_or(0);
        }
        let in_transactions = sent.count(SqlCommand::Begin) > 0;
        for (name, s) in &d.statements {
            let autocommit = match w.transactions.is_empty() {
                // A built-in workload: all its statements are in transactions, or none.
                true => !in_transactions,
                false => w.transactions.values().any(|t| !t.begin && t.statements.iter().any(|n| n == name)),
            };
            if autocommit && !matches!(command(name), SqlCommand::Begin | SqlCommand::Commit | SqlCommand::Rollback) {
                sent.autocommit += s.count;
            }
        }
        sent
    }

    fn count(&self, c: SqlCommand) -> u64 {
        self.statements.get(&c).copied().unwrap_or(0)
    }

    fn rows(&self, commands: &[SqlCommand]) -> u64 {
        commands.iter().filter_map(|c| self.rows.get(c)).sum()
    }
}

/// MySQL and MariaDB count each statement by command (prepared statements included).
fn mysql(sent: &Sent) -> Vec<Expected> {
    use SqlCommand::*;
    let counters: [(SqlCommand, &str); 10] = [
        (Select, "Com_select"),
        (Insert, "Com_insert"),
        (InsertSelect, "Com_insert_select"),
        (Replace, "Com_replace"),
        (ReplaceSelect, "Com_replace_select"),
        (Update, "Com_update"),
        (Delete, "Com_delete"),
        (Begin, "Com_begin"),
        (Commit, "Com_commit"),
        (Rollback, "Com_rollback"),
    ];
    counters.into_iter().map(|(c, counter)| Expected { counter, sent: sent.count(c), lag_s: 0.0 }).collect()
}

/// PostgreSQL counts transactions and the rows they changed (pg_stat_database); its
/// backends report them up to a second late.
fn postgres(d: &ResultDocument, sent: &Sent) -> Vec<Expected> {
    use SqlCommand::*;
    let server = &d.conditions.server;
    let known = |c: &str| server.status_delta.contains_key(c) || server.status_after.contains_key(c);
    let mut out = vec![
        Expected { counter: "xact_commit", sent: sent.count(Commit) + sent.autocommit, lag_s: PG_STATS_LAG_S },
        Expected {
            counter: "tup_inserted",
            sent: sent.rows(&[Insert, InsertSelect, Replace, ReplaceSelect]),
            lag_s: PG_STATS_LAG_S,
        },
        Expected { counter: "tup_updated", sent: sent.rows(&[Update]), lag_s: PG_STATS_LAG_S },
        Expected { counter: "tup_deleted", sent: sent.rows(&[Delete]), lag_s: PG_STATS_LAG_S },
    ];
    // Rows are compared only when the result recorded them.
    let rows_recorded = d.statements.values().any(|s| s.rows_affected.is_some());
    out.retain(|e| known(e.counter) && (e.counter == "xact_commit" || rows_recorded));
    out
}
