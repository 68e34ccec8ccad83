//! MySQL and its flavours: MariaDB, Percona Server, Aurora MySQL, TiDB.

use super::{culprits, is_on, isolation, setting_groups, settings, Groups, OS_PAGE_CACHE};
use crate::model::facts::{CommitFlush, Counted, CounterRule, Durability, SampledFigure, ServerFacts};
use crate::model::ha::{NodeRole, RoleReading};
use crate::model::parse_bytes;
use crate::model::SqlCommand;
use std::collections::BTreeMap;

/// Aurora MySQL's storage layer: InnoDB's redo goes to a distributed log that rebuilds pages
/// itself, so there is neither a local redo log to size nor a page write to tear.
pub const AURORA: &str = "Aurora MySQL";

pub fn facts(product: &str, vars: &BTreeMap<String, String>) -> ServerFacts {
    let aurora = product == AURORA;
    ServerFacts {
        flavour: product.to_string(),
        durability: durability(vars, aurora),
        isolation: vars.get("transaction_isolation").or_else(|| vars.get("tx_isolation")).map(|v| isolation(v)),
        redo_bytes: redo_bytes(vars).filter(|_| !aurora),
        counters: counters(),
        setting_groups: setting_groups(vars, GROUPS),
        sampled: sampled(product),
        io_requests: io_requests(product),
    }
}

/// Reads and writes of InnoDB's files as InnoDB counts them. MySQL's data writes include
/// the redo log's; MariaDB (10.8+, its own redo log format) counts redo writes apart.
fn io_requests(product: &str) -> Vec<String> {
    let mut keys = vec!["Innodb_data_reads/s".to_string(), "Innodb_data_writes/s".to_string()];
    if product.contains("MariaDB") {
        keys.push("Innodb_log_writes/s".into());
    }
    keys
}

/// SHOW GLOBAL STATUS figures followed over time; a server without one leaves it out.
fn sampled(product: &str) -> Vec<SampledFigure> {
    let rate = SampledFigure::rate;
    let mut list = vec![
        rate("Innodb_data_reads", "InnoDB data file reads", "reads", "io"),
        rate("Innodb_data_writes", "InnoDB data file writes", "writes", "io"),
        rate("Innodb_data_fsyncs", "InnoDB data file fsyncs", "fsyncs", "io"),
        rate("Innodb_os_log_written", "redo log written", "bytes", "log"),
        rate("Innodb_log_writes", "redo log writes", "writes", "log"),
        rate("Innodb_os_log_fsyncs", "redo log fsyncs", "fsyncs", "log"),
        rate("Innodb_buffer_pool_read_requests", "buffer pool page requests", "requests", "cache"),
        rate("Innodb_buffer_pool_reads", "buffer pool misses (pages read from disk)", "pages", "cache"),
        SampledFigure::gauge("Innodb_buffer_pool_pages_dirty", "dirty buffer pool pages", "pages", "checkpoint"),
        rate("Innodb_buffer_pool_pages_flushed", "buffer pool pages flushed", "pages", "checkpoint"),
        rate("Innodb_row_lock_waits", "row lock waits", "waits", "locks"),
    ];
    // MariaDB reports both in its status; MySQL 8.0.30+ reports the two log positions.
    if product.contains("MariaDB") {
        list.push(SampledFigure::gauge(
            "Innodb_history_list_length",
            "undo history list length",
            "transactions",
            "history",
        ));
        list.push(SampledFigure::gauge(
            "Innodb_checkpoint_age",
            "checkpoint age (redo not yet checkpointed)",
            "bytes",
            "checkpoint",
        ));
    } else {
        list.push(SampledFigure::gap(
            "Innodb_checkpoint_age",
            "Innodb_redo_log_current_lsn",
            "Innodb_redo_log_checkpoint_lsn",
            "checkpoint age (redo not yet checkpointed)",
            "bytes",
            "checkpoint",
        ));
    }
    for (counter, label) in [
        ("Com_select", "SELECT statements"),
        ("Com_insert", "INSERT statements"),
        ("Com_update", "UPDATE statements"),
        ("Com_delete", "DELETE statements"),
        ("Com_commit", "COMMIT statements"),
    ] {
        list.push(rate(counter, label, "statements", "statements"));
    }
    list
}

const GROUPS: Groups = &[
    (
        "durability",
        &[
            "innodb_flush_log_at_trx_commit",
            "sync_binlog",
            "innodb_doublewrite",
            "innodb_flush_method",
            "innodb_flush_log_at_timeout",
            "innodb_use_native_aio",
        ],
    ),
    (
        "memory/cache",
        &[
            "innodb_buffer_pool_",
            "key_buffer_size",
            "query_cache_",
            "table_open_cache",
            "tmp_table_size",
            "max_heap_table_size",
            "join_buffer_size",
            "sort_buffer_size",
        ],
    ),
    (
        "logging/redo",
        &[
            "innodb_log_",
            "innodb_redo_log_",
            "binlog_",
            "log_bin",
            "innodb_io_capacity",
            "innodb_io_capacity_max",
            "innodb_adaptive_flushing",
            "innodb_max_dirty_pages_",
        ],
    ),
    ("replication", &["server_id", "gtid_mode", "gtid_strict_mode", "rpl_", "slave_", "replica_", "read_only"]),
    (
        "connections",
        &[
            "max_connections",
            "thread_handling",
            "thread_pool_",
            "thread_cache_size",
            "back_log",
            "max_prepared_stmt_count",
        ],
    ),
    // Positions and process ids move on their own.
    ("volatile", &["gtid_binlog_pos", "gtid_current_pos", "gtid_binlog_state", "gtid_slave_pos", "pid_file"]),
];

/// MySQL and MariaDB count every statement by its command as it ends (prepared ones
/// too), server-wide: Com_select, Com_insert, ...
fn counters() -> Vec<CounterRule> {
    use SqlCommand::*;
    [
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
    ]
    .into_iter()
    .map(|(command, counter)| CounterRule::new(counter, Counted::Statements(vec![command]), 0.0))
    .collect()
}

/// MySQL 8.0.30+: innodb_redo_log_capacity; before, and MariaDB: the log file size times
/// the files in the group (one file since MariaDB 10.5). Aurora MySQL keeps none locally.
fn redo_bytes(vars: &BTreeMap<String, String>) -> Option<u64> {
    let bytes = |name: &str| vars.get(name).and_then(|v| parse_bytes(v));
    bytes("innodb_redo_log_capacity").or_else(|| {
        let files = vars.get("innodb_log_files_in_group").and_then(|v| v.parse::<u64>().ok()).unwrap_or(1);
        bytes("innodb_log_file_size").map(|size| size * files)
    })
}

/// InnoDB's buffer pool, and the OS page cache of the server's host (`os_available`, when
/// it is this host) unless InnoDB bypasses it (O_DIRECT, MariaDB's default).
pub fn data_caches(vars: &BTreeMap<String, String>, os_available: Option<u64>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    if let Some(b) = vars.get("innodb_buffer_pool_size").and_then(|v| parse_bytes(v)) {
        out.insert("innodb_buffer_pool_size".to_string(), b);
    }
    let direct = vars.get("innodb_flush_method").is_some_and(|m| m.to_ascii_uppercase().contains("O_DIRECT"));
    if let Some(bytes) = os_available.filter(|_| !direct) {
        out.insert(OS_PAGE_CACHE.to_string(), bytes);
    }
    out
}

fn durability(vars: &BTreeMap<String, String>, aurora: bool) -> Durability {
    let commit = match vars.get("innodb_flush_log_at_trx_commit").map(String::as_str) {
        Some("1") => CommitFlush::EveryCommit,
        // 2: written at commit, flushed about once a second; 0: both about once a second.
        Some("0" | "2") => CommitFlush::Periodic,
        // TiDB and other engines without InnoDB's setting: not readable here.
        _ => CommitFlush::Unknown,
    };
    let binlog = vars.get("log_bin").is_some_and(|v| is_on(v));
    let second_log_synced = binlog.then(|| vars.get("sync_binlog").is_some_and(|v| v == "1"));
    // MySQL 8.0.30+: ON, OFF, DETECT_ONLY, DETECT_AND_RECOVER; older: ON/OFF (1/0).
    let torn_pages_protected = match aurora {
        true => None,
        false => vars.get("innodb_doublewrite").map(|v| is_on(v) || v.eq_ignore_ascii_case("DETECT_AND_RECOVER")),
    };
    let mut off_because = culprits(vars, &["innodb_flush_log_at_trx_commit", "sync_binlog"], |name, v| match name {
        "sync_binlog" => binlog && v != "1",
        _ => v != "1",
    });
    if torn_pages_protected == Some(false) {
        off_because.extend(settings(vars, &["innodb_doublewrite"]));
    }
    if off_because.contains_key("sync_binlog") {
        off_because.extend(settings(vars, &["log_bin"]));
    }
    // Semi-synchronous replication: a commit returns once a replica has its events.
    let semi_sync = ["rpl_semi_sync_source_enabled", "rpl_semi_sync_master_enabled"];
    let replica_acknowledges = semi_sync.iter().filter_map(|n| vars.get(*n)).map(|v| is_on(v)).reduce(|a, b| a || b);
    // Galera: a commit returns once every member has certified its write set.
    let galera = vars.get("wsrep_on").is_some_and(|v| is_on(v));
    let replica_acknowledges = if galera { Some(true) } else { replica_acknowledges };
    let mut names = vec!["innodb_flush_log_at_trx_commit", "log_bin", "sync_binlog", "innodb_doublewrite"];
    if replica_acknowledges == Some(true) {
        names.extend(if galera { &["wsrep_on"][..] } else { &semi_sync[..] });
    }
    Durability {
        commit,
        second_log_synced,
        torn_pages_protected,
        replica_acknowledges,
        settings: settings(vars, &names),
        off_because,
    }
}

/// A Galera node's role from its wsrep status (`wsrep_cluster_status`, `wsrep_ready`,
/// `wsrep_local_state_comment`, `wsrep_cluster_size`): a member of the primary component
/// takes writes beside the others; any other state refuses them.
pub fn galera_role(status: &BTreeMap<String, String>) -> RoleReading {
    let get = |k: &str| status.get(k).map_or("?", String::as_str);
    let evidence = format!(
        "Galera: wsrep_cluster_status={}, wsrep_ready={}, {}, cluster size {}",
        get("wsrep_cluster_status"),
        get("wsrep_ready"),
        get("wsrep_local_state_comment"),
        get("wsrep_cluster_size")
    );
    let member = get("wsrep_cluster_status") == "Primary" && get("wsrep_ready") == "ON";
    RoleReading::anonymous(if member { NodeRole::Member } else { NodeRole::ReadOnly }, evidence)
}

/// The role from `read_only`, `super_read_only`, `log_bin` and whether the node replicates
/// (`Err`: why the user may not see it). That error comes back when the role cannot be told
/// (the node is writable and whether it replicates is hidden from this user).
pub fn role<E: std::fmt::Display>(
    vars: &BTreeMap<String, String>,
    replicates: Result<bool, E>,
) -> Result<RoleReading, E> {
    let on = |k: &str| vars.get(k).is_some_and(|v| v.eq_ignore_ascii_case("ON") || v == "1");
    let read_only = match (on("read_only"), vars.contains_key("super_read_only"), on("super_read_only")) {
        (_, true, true) => "super_read_only=ON",
        (true, _, _) => "read_only=ON",
        _ => "read_only=OFF",
    };
    let replicates = match replicates {
        Ok(r) => Ok(r),
        Err(e) if read_only == "read_only=OFF" => return Err(e),
        Err(e) => Err(format!("replica status not visible to this user: {e}")),
    };
    let (role, source) = match (replicates, read_only != "read_only=OFF", on("log_bin")) {
        (Ok(true), _, _) => (NodeRole::Replica, "SHOW REPLICA STATUS has a source".to_string()),
        (Ok(false), true, _) => (NodeRole::ReadOnly, "not a replica".to_string()),
        (Ok(false), false, true) => (NodeRole::Primary, "binary log on, not a replica".to_string()),
        (Ok(false), false, false) => (NodeRole::Standalone, "no binary log, not a replica".to_string()),
        (Err(why), _, _) => (NodeRole::ReadOnly, why),
    };
    let (node, address) = identity(vars);
    Ok(RoleReading { role, evidence: format!("{source}, {read_only}"), node, address })
}

/// The server's own identity and the `host:port` it says it is at. MySQL's `server_uuid` is
/// unique per server; MariaDB has none, so its `server_id` (unique in a replication topology)
/// goes with the host and port. The host is `report_host` when set (what replicas announce),
/// else a specific `bind_address`, else the machine's `hostname`: nodes on one machine that
/// each bind their own address and share a port are still told apart.
pub fn identity(vars: &BTreeMap<String, String>) -> (String, String) {
    let get = |k: &str| vars.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let wildcard = |v: &&str| matches!(*v, "*" | "0.0.0.0" | "::" | "");
    let host = get("report_host")
        .or_else(|| get("bind_address").filter(|b| !wildcard(b) && !b.contains(',')))
        .or_else(|| get("hostname"))
        .unwrap_or("?");
    let address = format!("{host}:{}", get("port").unwrap_or("?"));
    let key = match get("server_uuid") {
        Some(uuid) => format!("server_uuid {uuid}"),
        None => format!("server_id {} at {address}", get("server_id").unwrap_or("?")),
    };
    (key, address)
}

#[cfg(test)]
mod tests {
    use super::super::vars;
    use super::*;

    #[test]
    fn mariadb_defaults_are_durable_and_flush_at_trx_commit_2_is_not() {
        let stock = vars(&[
            ("innodb_flush_log_at_trx_commit", "1"),
            ("log_bin", "OFF"),
            ("sync_binlog", "0"),
            ("innodb_doublewrite", "ON"),
            ("tx_isolation", "REPEATABLE-READ"),
        ]);
        let f = facts("MariaDB", &stock);
        assert_eq!(f.durability.commit, CommitFlush::EveryCommit);
        assert_eq!(f.durability.second_log_synced, None, "no binary log");
        assert!(!f.durability.is_off());
        assert_eq!(f.isolation.as_deref(), Some("repeatable read"));
        let mut lax = stock.clone();
        lax.insert("innodb_flush_log_at_trx_commit".into(), "2".into());
        assert_eq!(facts("MariaDB", &lax).durability.commit, CommitFlush::Periodic);
    }

    #[test]
    fn mysql_8_binary_log_and_doublewrite_modes() {
        let v = vars(&[
            ("innodb_flush_log_at_trx_commit", "1"),
            ("log_bin", "ON"),
            ("sync_binlog", "0"),
            ("innodb_doublewrite", "DETECT_ONLY"),
            ("transaction_isolation", "READ-COMMITTED"),
        ]);
        let f = facts("MySQL", &v);
        assert_eq!(f.durability.second_log_synced, Some(false));
        assert_eq!(f.durability.torn_pages_protected, Some(false));
        assert!(f.durability.is_off());
        let because: Vec<&str> = f.durability.off_because.keys().map(String::as_str).collect();
        assert_eq!(because, ["innodb_doublewrite", "log_bin", "sync_binlog"]);
        assert_eq!(f.isolation.as_deref(), Some("read committed"));
        assert_eq!(facts("TiDB", &vars(&[])).durability.commit, CommitFlush::Unknown);
        assert_eq!(f.durability.replica_acknowledges, None, "no semi-synchronous plugin");
        let mut semi = v.clone();
        semi.insert("rpl_semi_sync_source_enabled".into(), "ON".into());
        let d = facts("MySQL", &semi).durability;
        assert_eq!(d.replica_acknowledges, Some(true));
        assert!(d.describe().ends_with("a replica acknowledges each commit"), "{}", d.describe());
    }

    #[test]
    fn redo_capacity_of_mysql_8_older_mysql_and_mariadb() {
        let mysql8 = vars(&[("innodb_redo_log_capacity", "104857600"), ("innodb_log_file_size", "50331648")]);
        assert_eq!(facts("MySQL", &mysql8).redo_bytes, Some(100 << 20));
        let mysql57 = vars(&[("innodb_log_file_size", "50331648"), ("innodb_log_files_in_group", "2")]);
        assert_eq!(facts("MySQL", &mysql57).redo_bytes, Some(96 << 20));
        assert_eq!(facts("MariaDB", &vars(&[("innodb_log_file_size", "100663296")])).redo_bytes, Some(96 << 20));
        assert_eq!(facts("Aurora MySQL", &vars(&[])).redo_bytes, None);
        // Aurora reports InnoDB's settings, but its storage keeps the log: nothing to size.
        assert_eq!(facts("Aurora MySQL", &mysql57).redo_bytes, None);
    }

    #[test]
    fn innodb_with_o_direct_never_fits_the_os_page_cache() {
        let pool = [("innodb_buffer_pool_size", "134217728")];
        let direct = data_caches(&vars(&[pool[0], ("innodb_flush_method", "O_DIRECT")]), Some(8 << 30));
        assert_eq!(direct.keys().collect::<Vec<_>>(), ["innodb_buffer_pool_size"]);
        let buffered = data_caches(&vars(&[pool[0], ("innodb_flush_method", "fsync")]), Some(8 << 30));
        assert_eq!(buffered[OS_PAGE_CACHE], 8 << 30);
        assert!(!data_caches(&vars(&pool), None).contains_key(OS_PAGE_CACHE), "a remote server's host is unknown");
    }

    #[test]
    fn a_node_is_a_primary_only_when_it_replicates_from_nobody_and_takes_writes() {
        let role = |vars: &BTreeMap<String, String>, r: Result<bool, &'static str>| role(vars, r);
        let v = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let primary = v(&[("read_only", "OFF"), ("log_bin", "ON")]);
        assert_eq!(role(&primary, Ok(false)).unwrap().role, NodeRole::Primary);
        assert_eq!(role(&primary, Ok(true)).unwrap().role, NodeRole::Replica, "a writable replica is still a replica");
        let r = role(&v(&[("read_only", "ON"), ("log_bin", "ON")]), Ok(false)).unwrap();
        assert_eq!((r.role, r.evidence.as_str()), (NodeRole::ReadOnly, "not a replica, read_only=ON"));
        let r = role(&v(&[("read_only", "OFF"), ("super_read_only", "ON")]), Ok(false)).unwrap();
        assert_eq!(r.role, NodeRole::ReadOnly);
        assert_eq!(
            role(&v(&[("read_only", "OFF"), ("log_bin", "OFF")]), Ok(false)).unwrap().role,
            NodeRole::Standalone
        );
        assert!(
            role(&v(&[("read_only", "OFF")]), Err::<bool, &str>("denied")).is_err(),
            "a writable node of unknown source"
        );
        let hidden = role(&v(&[("read_only", "ON")]), Err::<bool, &str>("denied")).unwrap();
        assert_eq!(hidden.role, NodeRole::ReadOnly);
        assert!(hidden.evidence.contains("not visible to this user: denied"), "{}", hidden.evidence);
        let g = |s: &str, r: &str| {
            let status = v(&[("wsrep_cluster_status", s), ("wsrep_ready", r), ("wsrep_local_state_comment", "Synced")]);
            galera_role(&status).role
        };
        assert_eq!((g("Primary", "ON"), g("non-Primary", "OFF")), (NodeRole::Member, NodeRole::ReadOnly));
    }
}
