//! PostgreSQL and what speaks its protocol (CockroachDB: none of these settings, so unknown).

use super::{culprits, is_on, isolation, setting_groups, settings, Groups, OS_PAGE_CACHE};
use crate::model::facts::{CommitFlush, Counted, CounterRule, Durability, SampledFigure, ServerFacts};
use crate::model::parse_bytes;
use crate::model::SqlCommand;
use std::collections::BTreeMap;

pub fn facts(product: &str, vars: &BTreeMap<String, String>) -> ServerFacts {
    ServerFacts {
        flavour: product.to_string(),
        durability: durability(vars),
        isolation: vars.get("default_transaction_isolation").map(|v| isolation(v)),
        redo_bytes: vars.get("max_wal_size").and_then(|v| parse_bytes(v)),
        counters: counters(),
        setting_groups: setting_groups(vars, GROUPS),
        sampled: sampled(),
        // Blocks read from outside shared buffers, WAL writes, buffers written by
        // checkpoints (pg_stat_bgwriter up to 16, pg_stat_checkpointer from 17: one is read).
        io_requests: [
            "blks_read/s",
            "wal.wal_write/s",
            "bgwriter.buffers_checkpoint/s",
            "checkpointer.buffers_written/s",
        ]
        .map(String::from)
        .to_vec(),
    }
}

/// pg_stat_database (this database), pg_stat_wal (14+), pg_stat_bgwriter (checkpoints up to
/// 16) and pg_stat_checkpointer (17+) figures followed over time; a version without one
/// leaves it out. Backends report pg_stat_database at most once a second.
fn sampled() -> Vec<SampledFigure> {
    let rate = SampledFigure::rate;
    vec![
        rate("xact_commit", "transactions committed", "transactions", "statements"),
        rate("xact_rollback", "transactions rolled back", "transactions", "statements"),
        rate("blks_read", "blocks read (not in shared buffers)", "blocks", "io"),
        rate("blks_hit", "blocks found in shared buffers", "blocks", "cache"),
        rate("tup_fetched", "rows fetched", "rows", "rows"),
        rate("tup_inserted", "rows inserted", "rows", "rows"),
        rate("tup_updated", "rows updated", "rows", "rows"),
        rate("tup_deleted", "rows deleted", "rows", "rows"),
        rate("deadlocks", "deadlocks", "deadlocks", "locks"),
        rate("wal.wal_bytes", "WAL written", "bytes", "log"),
        rate("wal.wal_write", "WAL writes", "writes", "log"),
        rate("wal.wal_sync", "WAL syncs", "syncs", "log"),
        rate("bgwriter.checkpoints_timed", "checkpoints (timed)", "checkpoints", "checkpoint"),
        rate("bgwriter.checkpoints_req", "checkpoints (requested)", "checkpoints", "checkpoint"),
        rate("bgwriter.buffers_checkpoint", "buffers written by checkpoints", "buffers", "checkpoint"),
        rate("checkpointer.num_timed", "checkpoints (timed)", "checkpoints", "checkpoint"),
        rate("checkpointer.num_requested", "checkpoints (requested)", "checkpoints", "checkpoint"),
        rate("checkpointer.buffers_written", "buffers written by checkpoints", "buffers", "checkpoint"),
    ]
}

const GROUPS: Groups = &[
    ("durability", &["fsync", "synchronous_commit", "full_page_writes", "wal_sync_method", "commit_delay"]),
    ("memory/cache", &["shared_buffers", "effective_cache_size", "work_mem", "maintenance_work_mem", "huge_pages"]),
    (
        "logging/redo",
        &["max_wal_size", "min_wal_size", "wal_buffers", "wal_level", "wal_compression", "checkpoint_", "bgwriter_"],
    ),
    ("replication", &["synchronous_standby_names", "hot_standby", "max_wal_senders", "wal_keep_size"]),
    ("connections", &["max_connections"]),
];

/// pg_stat_database (per database): transactions and the rows they changed. Backends
/// report them at most once a second (and at exit).
fn counters() -> Vec<CounterRule> {
    use SqlCommand::*;
    const LAG_S: f64 = 1.0;
    vec![
        CounterRule::new("xact_commit", Counted::Transactions, LAG_S),
        CounterRule::new("tup_inserted", Counted::Rows(vec![Insert, InsertSelect, Replace, ReplaceSelect]), LAG_S),
        CounterRule::new("tup_updated", Counted::Rows(vec![Update]), LAG_S),
        CounterRule::new("tup_deleted", Counted::Rows(vec![Delete]), LAG_S),
        // Intended rollbacks; a retried error's ROLLBACK counts too (the audit allows for
        // retried errors). Counter reads never fail, so they add none (admin::counters).
        CounterRule::new("xact_rollback", Counted::Statements(vec![Rollback]), LAG_S),
    ]
}

/// shared_buffers, and the OS page cache of the server's host (`os_available`, when it is
/// this host): PostgreSQL reads through the OS. effective_cache_size is only the
/// planner's guess of the latter, not memory.
pub fn data_caches(vars: &BTreeMap<String, String>, os_available: Option<u64>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    if let Some(b) = vars.get("shared_buffers").and_then(|v| parse_bytes(v)) {
        out.insert("shared_buffers".to_string(), b);
    }
    if let Some(bytes) = os_available {
        out.insert(OS_PAGE_CACHE.to_string(), bytes);
    }
    out
}

fn durability(vars: &BTreeMap<String, String>) -> Durability {
    let fsync = vars.get("fsync").map(|v| is_on(v));
    let commit = match (fsync, vars.get("synchronous_commit").map(|v| v.to_ascii_lowercase())) {
        (Some(false), _) => CommitFlush::Never,
        // off: the WAL writer flushes within about 3 x wal_writer_delay.
        (Some(true), Some(sc)) if sc == "off" => CommitFlush::Periodic,
        // on, local, remote_write, remote_apply: flushed locally before the commit returns.
        (Some(true), Some(_)) => CommitFlush::EveryCommit,
        _ => CommitFlush::Unknown,
    };
    // Synchronous standbys named, and commits waiting for them (remote_write and up).
    let standbys = vars.get("synchronous_standby_names").is_some_and(|v| !v.trim().is_empty());
    let waits =
        vars.get("synchronous_commit").is_some_and(|v| !matches!(v.to_ascii_lowercase().as_str(), "off" | "local"));
    let mut names = vec!["fsync", "synchronous_commit", "full_page_writes", "wal_sync_method"];
    if standbys {
        names.push("synchronous_standby_names");
    }
    Durability {
        commit,
        replica_acknowledges: vars.contains_key("synchronous_standby_names").then_some(standbys && waits),
        second_log_synced: None,
        torn_pages_protected: vars.get("full_page_writes").map(|v| is_on(v)),
        settings: settings(vars, &names),
        off_because: culprits(vars, &["fsync", "synchronous_commit", "full_page_writes"], |_, v| {
            v.eq_ignore_ascii_case("off")
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::vars;
    use super::*;

    #[test]
    fn stock_postgres_is_durable_and_each_switch_is_not() {
        let stock = [("fsync", "on"), ("synchronous_commit", "on"), ("full_page_writes", "on")];
        let f = facts("PostgreSQL", &vars(&stock));
        assert_eq!(f.durability.commit, CommitFlush::EveryCommit);
        assert!(!f.durability.is_off());
        let off = |k: &str| {
            let mut v = vars(&stock);
            v.insert(k.into(), "off".into());
            facts("PostgreSQL", &v).durability
        };
        assert_eq!(off("synchronous_commit").commit, CommitFlush::Periodic);
        assert_eq!(off("fsync").commit, CommitFlush::Never);
        assert!(off("full_page_writes").is_off());
        assert_eq!(facts("CockroachDB", &vars(&[])).durability.commit, CommitFlush::Unknown);
        assert_eq!(facts("PostgreSQL", &vars(&[("max_wal_size", "1024 MB")])).redo_bytes, Some(1 << 30));
    }

    #[test]
    fn a_synchronous_standby_acknowledges_commits_unless_commits_are_local() {
        let mut v = vars(&[("fsync", "on"), ("synchronous_commit", "on"), ("synchronous_standby_names", "")]);
        assert_eq!(facts("PostgreSQL", &v).durability.replica_acknowledges, Some(false));
        v.insert("synchronous_standby_names".into(), "ANY 1 (r1, r2)".into());
        let d = facts("PostgreSQL", &v).durability;
        assert_eq!(d.replica_acknowledges, Some(true));
        assert_eq!(d.settings["synchronous_standby_names"], "ANY 1 (r1, r2)");
        v.insert("synchronous_commit".into(), "local".into());
        assert_eq!(facts("PostgreSQL", &v).durability.replica_acknowledges, Some(false));
    }

    #[test]
    fn effective_cache_size_is_no_cache() {
        let v = vars(&[("shared_buffers", "16384 8kB"), ("effective_cache_size", "524288 8kB")]);
        let caches = data_caches(&v, None);
        assert_eq!(caches.into_iter().collect::<Vec<_>>(), [("shared_buffers".to_string(), 16384 * 8192)]);
        assert_eq!(data_caches(&v, Some(1 << 30))[OS_PAGE_CACHE], 1 << 30);
    }
}
