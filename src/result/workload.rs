//! The workload a result records, built from the compiled program the clients ran (a
//! built-in's and a file's alike): one description of each workload, not a second one
//! written by hand beside it.

use crate::model::{SqlCommand, TransactionRecord, WorkloadFileRecord, WorkloadRecord};
use crate::plan::{RunPlan, WorkloadPlan};
use crate::workload::program::{scalar_text, Program};
use std::collections::BTreeMap;

/// The record of `plan`'s workload; `begin_sql`: the target's BEGIN for a transaction that
/// reads only, and for one that writes.
pub fn record(plan: &RunPlan, begin_sql: [&str; 2]) -> WorkloadRecord {
    let p = plan.workload.program();
    let sent = statements_sent(p, begin_sql);
    let mut record = WorkloadRecord {
        name: p.name.clone(),
        options: serde_json::Value::Null,
        distribution: serde_json::to_value(&plan.distribution).unwrap_or_default(),
        distribution_description: plan.distribution.describe(),
        mix_per_event: p.per_event(),
        statements_sql: sent.sql,
        statement_classes: sent.classes,
        statement_commands: sent.commands,
        transactions: BTreeMap::new(),
        file: None,
        follows: p.follows.clone(),
    };
    match &plan.workload {
        WorkloadPlan::Sysbench { oltp, .. } => record.options = serde_json::to_value(oltp).unwrap_or_default(),
        WorkloadPlan::File(f) => {
            let text = |m: &BTreeMap<String, crate::workload::spec::Scalar>| -> BTreeMap<String, String> {
                m.iter().map(|(k, v)| (k.clone(), scalar_text(v))).collect()
            };
            record.options = serde_json::to_value(text(&p.params)).unwrap_or_default();
            record.transactions = transactions(p);
            record.file = Some(WorkloadFileRecord {
                path: f.path.clone(),
                sha256: f.sha256.clone(),
                content: f.text.clone(),
                overrides: f.overrides.iter().map(|(k, v)| (k.clone(), scalar_text(v))).collect(),
                params: text(&p.params),
                pick: Some(if p.deck { "deck" } else { "weighted" }.into()),
            });
        }
    }
    record
}

/// What the measured statements are, by name: SQL as sent (table 1's of a set), class and
/// command (for the server's counters).
struct StatementCatalog {
    sql: BTreeMap<String, String>,
    classes: BTreeMap<String, String>,
    commands: BTreeMap<String, SqlCommand>,
}

fn statements_sent(p: &Program, begin_sql: [&str; 2]) -> StatementCatalog {
    let (infos, ids) = p.measured();
    let mut sent = StatementCatalog { sql: BTreeMap::new(), classes: BTreeMap::new(), commands: BTreeMap::new() };
    let mut add = |id: usize, sql: &str, command: SqlCommand| {
        let name = &infos[id].name;
        sent.sql.insert(name.clone(), sql.to_string());
        sent.classes.insert(name.clone(), infos[id].class.name().to_string());
        sent.commands.insert(name.clone(), command);
    };
    for (t, ids) in p.transactions.iter().zip(&ids) {
        if let (Some(begin), Some(commit)) = (ids.begin, ids.commit) {
            add(begin, begin_sql[t.writes() as usize], SqlCommand::Begin);
            add(commit, "COMMIT", SqlCommand::Commit);
        }
        if let Some(rollback) = ids.rollback {
            add(rollback, "ROLLBACK", SqlCommand::Rollback);
        }
        for (s, &id) in t.statements.iter().zip(&ids.statements) {
            add(id, &s.sql, SqlCommand::of_sql(&s.sql));
        }
    }
    sent
}

/// A file's transactions: weight, share, framing, pauses and statements.
fn transactions(p: &Program) -> BTreeMap<String, TransactionRecord> {
    let total: u64 = p.transactions.iter().map(|t| t.weight as u64).sum();
    p.transactions
        .iter()
        .map(|t| {
            let record = TransactionRecord {
                weight: t.weight,
                share: t.weight as f64 / total.max(1) as f64,
                begin: t.begin,
                think_ms: t.think.mean_ms(),
                think: Some(t.think.describe()),
                keying: (t.keying.mean_ms() > 0).then(|| t.keying.describe()),
                statements: t.statements.iter().map(|s| s.name.clone()).collect(),
                deferred: t.deferred,
            };
            (t.name.clone(), record)
        })
        .collect()
}
