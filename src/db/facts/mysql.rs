//! MySQL and its flavours: MariaDB, Percona Server, Aurora MySQL, TiDB.

use super::{culprits, is_on, isolation, settings, OS_PAGE_CACHE};
use crate::model::facts::{CommitFlush, Durability, ServerFacts};
use crate::model::parse_bytes;
use std::collections::BTreeMap;

pub fn facts(product: &str, vars: &BTreeMap<String, String>) -> ServerFacts {
    ServerFacts {
        flavour: product.to_string(),
        durability: durability(vars),
        isolation: vars.get("transaction_isolation").or_else(|| vars.get("tx_isolation")).map(|v| isolation(v)),
    }
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

fn durability(vars: &BTreeMap<String, String>) -> Durability {
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
    let torn_pages_protected =
        vars.get("innodb_doublewrite").map(|v| is_on(v) || v.eq_ignore_ascii_case("DETECT_AND_RECOVER"));
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
    Durability {
        commit,
        second_log_synced,
        torn_pages_protected,
        settings: settings(vars, &["innodb_flush_log_at_trx_commit", "log_bin", "sync_binlog", "innodb_doublewrite"]),
        off_because,
    }
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
}
