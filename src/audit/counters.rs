//! The server's own counters against what fairbench sent: each statement's SQL command
//! (recorded in the result for built-in workloads and workload files alike) says which
//! counter it moves, so other load on the server (or a proxy that changes statements)
//! shows as a difference.

use super::{Finding, Severity};
use crate::model::{Counted, ResultDocument, SqlCommand};
use serde_json::json;
use std::collections::BTreeMap;

pub fn server_counted_other_load(d: &ResultDocument, sent: &Sent) -> Option<Finding> {
    let delta = &d.conditions.server.status_delta;
    // The driver says which counters relate to what was sent (none: nothing to check, as
    // for an embedded database or a result written before it was recorded).
    let rules = d.conditions.server.facts.as_ref().map(|f| f.counters.as_slice()).unwrap_or_default();
    if delta.is_empty() || rules.is_empty() {
        return None;
    }
    let server = &d.conditions.server;
    let known = |c: &str| server.status_delta.contains_key(c) || server.status_after.contains_key(c);
    let rows_recorded = d.statements.values().any(|s| s.rows_affected.is_some());
    let phases = d.repeats.len().max(1) as f64;
    let measured_s = d.conditions.run.measured_s.max(1e-3);
    // In flight at each end of each measured phase: one event per client; retried events
    // resend their statements; each new connection reads its transport (a SELECT, and
    // MySQL's SHOW SESSION STATUS), counted when it reconnects during the measured phase.
    let fixed = 10.0
        + 2.0 * d.conditions.run.threads as f64 * phases
        + d.errors.total as f64 * 20.0
        + 2.0 * d.errors.reconnects as f64;
    let probe = probe_writes(d);
    // The sampler reads the server about once a second, each reading a transaction of its
    // own on servers that count them (PostgreSQL's xact_commit).
    let sampled = d.intervals.iter().any(|i| !i.server.is_empty());
    let readings = if sampled { (measured_s * phases).ceil() + 2.0 * phases } else { 0.0 };
    let mut evidence = Vec::new();
    let mut counters = Vec::new();
    for rule in rules {
        let expected = match &rule.counts {
            Counted::Statements(commands) => sent.statements(commands),
            Counted::Rows(_) if !rows_recorded => continue,
            Counted::Rows(commands) => sent.rows(commands),
            Counted::Transactions => sent.count(SqlCommand::Commit) + sent.autocommit,
        };
        // A counter this server does not have (another version) is not compared.
        if matches!(rule.counts, Counted::Rows(_) | Counted::Transactions) && !known(&rule.counter) {
            continue;
        }
        counters.push(rule.counter.as_str());
        let counted = delta.get(&rule.counter).copied().unwrap_or(0);
        let lag = expected as f64 / measured_s * rule.lag_s * 2.0 * phases;
        // A probe beside the workload writes autocommit INSERTs on the same server.
        let probed = match &rule.counts {
            Counted::Statements(c) if c.contains(&SqlCommand::Insert) => probe,
            Counted::Transactions => probe,
            _ => 0,
        };
        let own = if matches!(rule.counts, Counted::Transactions) { readings } else { 0.0 };
        let slack = expected as f64 * 0.05 + lag + fixed + probed as f64 + own;
        if (counted - expected as i64).unsigned_abs() as f64 > slack {
            evidence.push((rule.counter.clone(), json!({"sent": expected, "server_counted": counted})));
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
        advice: format!(
            "benchmark a server (or database) nothing else uses, and check what the server itself counted ({})",
            counters.join(", ")
        ),
    })
}

/// The INSERTs of an HA probe run beside the workload that reached the workload's server (the
/// probe's first target, the lag probe's primary): the server counts them with the workload's.
fn probe_writes(d: &ResultDocument) -> u64 {
    let Some(h) = d.ha.as_ref().filter(|h| h.load.is_some()) else { return 0 };
    let failover = h.failover.as_ref().map_or(0, |f| {
        f.attempts.iter().filter(|a| a.target == 1 && a.outcome != crate::model::ha::Outcome::NotConnected).count()
            as u64
    });
    failover + h.lag.as_ref().map_or(0, |l| l.heartbeats_written)
}

/// What the result says fairbench sent, by SQL command.
pub struct Sent {
    statements: BTreeMap<SqlCommand, u64>,
    rows: BTreeMap<SqlCommand, u64>,
    /// Statements sent outside BEGIN ... COMMIT: each is a transaction of its own.
    autocommit: u64,
}

impl Sent {
    pub fn of(d: &ResultDocument) -> Sent {
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

    /// Statements of any of these commands.
    pub fn statements(&self, commands: &[SqlCommand]) -> u64 {
        commands.iter().map(|c| self.count(*c)).sum()
    }

    fn rows(&self, commands: &[SqlCommand]) -> u64 {
        commands.iter().filter_map(|c| self.rows.get(c)).sum()
    }
}
