//! MySQL's flavours that cannot be installed here, as fake servers over real TCP answering
//! with their own version and variables: each is recorded with its own flavour, redo
//! capacity and durability, and judged by them (MySQL 8's innodb_redo_log_capacity, Aurora's
//! storage-kept log, TiDB's unknown commit flush). Needs no database server.

use fairbench::conditions;
use fairbench::db::mysql::MysqlDatabase;
use fairbench::db::{ConnectOptions, Connection, Database, TargetUrl};
use fairbench::model::{CommitFlush, ServerConditions};
use std::io::Write;
use std::net::TcpListener;

#[path = "common/fake_mysql.rs"]
mod fake_mysql;
use fake_mysql::{pkt, read_packet, welcome, OK};

fn lenenc(s: &str) -> Vec<u8> {
    assert!(s.len() < 251);
    let mut v = vec![s.len() as u8];
    v.extend_from_slice(s.as_bytes());
    v
}

/// A text result set of string columns, without EOF packets (CLIENT_DEPRECATE_EOF).
fn result_set(columns: &[&str], rows: &[Vec<String>]) -> Vec<u8> {
    let mut r = pkt(1, &[columns.len() as u8]);
    let mut seq = 2u8;
    for c in columns {
        let mut def = Vec::new();
        for part in ["def", "", "", ""] {
            def.extend(lenenc(part));
        }
        def.extend(lenenc(c));
        def.extend(lenenc(""));
        def.extend_from_slice(b"\x0c\x21\0\0\0\0\0\xfd\0\0\0\0\0");
        r.extend(pkt(seq, &def));
        seq += 1;
    }
    for row in rows {
        let payload: Vec<u8> = row.iter().flat_map(|v| lenenc(v)).collect();
        r.extend(pkt(seq, &payload));
        seq = seq.wrapping_add(1);
    }
    r.extend(pkt(seq, &[0xfe, 0, 0, 2, 0, 0, 0]));
    r
}

/// `SHOW GLOBAL VARIABLES [LIKE 'p%' | WHERE Variable_name IN (...)]`: the matching variables
/// (LIKE with % only).
fn like(name: &str, pattern: &str) -> bool {
    let parts: Vec<&str> = pattern.split('%').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return name == pattern; // no %
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for mid in middle {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

fn answer(query: &str, vars: &[(&str, &str)]) -> Vec<u8> {
    let pairs = |filter: &dyn Fn(&str) -> bool| -> Vec<Vec<String>> {
        vars.iter().filter(|(k, _)| filter(k)).map(|(k, v)| vec![k.to_string(), v.to_string()]).collect()
    };
    let q = query.trim();
    if let Some(rest) = q.strip_prefix("SHOW GLOBAL VARIABLES LIKE '") {
        let pattern = rest.trim_end_matches('\'');
        return result_set(&["Variable_name", "Value"], &pairs(&|k| like(k, pattern)));
    }
    if q == "SHOW GLOBAL VARIABLES" {
        return result_set(&["Variable_name", "Value"], &pairs(&|_| true));
    }
    if let Some(list) = q.strip_prefix("SHOW GLOBAL VARIABLES WHERE Variable_name IN (") {
        let names: Vec<&str> = list.trim_end_matches(')').split(',').map(|n| n.trim().trim_matches('\'')).collect();
        return result_set(&["Variable_name", "Value"], &pairs(&|k| names.contains(&k)));
    }
    if q == "SHOW GLOBAL STATUS" {
        return result_set(&["Variable_name", "Value"], &[vec!["Com_select".into(), "12".into()]]);
    }
    if q.starts_with("SHOW REPLICA STATUS") || q.starts_with("SHOW SLAVE STATUS") {
        return result_set(&["Source_Host"], &[]);
    }
    pkt(1, &OK)
}

/// A server on a free port answering as `vars` say (their `version` in the greeting).
fn serve(vars: &'static [(&'static str, &'static str)]) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            std::thread::spawn(move || {
                welcome(&mut s, vars.iter().find(|(k, _)| *k == "version").unwrap().1)?;
                loop {
                    let p = read_packet(&mut s)?;
                    match p.first() {
                        Some(0x03) => s.write_all(&answer(&String::from_utf8_lossy(&p[1..]), vars)).ok()?,
                        Some(0x01) => return Some(()),
                        _ => s.write_all(&pkt(1, &OK)).ok()?,
                    }
                }
            });
        }
    });
    port
}

/// What `run` records of the server at `port`.
fn recorded(port: u16) -> ServerConditions {
    let target = TargetUrl::parse(&format!("mysql://bench@127.0.0.1:{port}/db"), |_| None).unwrap();
    let db = MysqlDatabase::new(&target, &ConnectOptions::default()).unwrap();
    fairbench::local_runtime().block_on(async {
        let mut conn = db.connect().await.unwrap();
        let info = conn.server_info().await.unwrap();
        conditions::server(&db, &mut conn, info).await.unwrap()
    })
}

const MYSQL_8: &[(&str, &str)] = &[
    ("version", "8.0.36"),
    ("version_comment", "MySQL Community Server - GPL"),
    ("innodb_version", "8.0.36"),
    ("innodb_redo_log_capacity", "104857600"),
    ("innodb_log_file_size", "50331648"),
    ("innodb_log_files_in_group", "2"),
    ("innodb_flush_log_at_trx_commit", "1"),
    ("log_bin", "ON"),
    ("sync_binlog", "1"),
    ("innodb_doublewrite", "ON"),
    ("transaction_isolation", "REPEATABLE-READ"),
    ("innodb_buffer_pool_size", "134217728"),
    ("innodb_flush_method", "fsync"),
];

#[test]
fn mysql_8_is_recorded_with_its_redo_capacity_and_binary_log() {
    let s = recorded(serve(MYSQL_8));
    let f = s.facts.as_ref().unwrap();
    assert_eq!((s.product.as_str(), s.version.as_str(), f.flavour.as_str()), ("MySQL", "8.0.36", "MySQL"));
    // innodb_redo_log_capacity, not the older file size x files (96 MiB).
    assert_eq!(f.redo_bytes, Some(100 << 20));
    assert_eq!(f.durability.commit, CommitFlush::EveryCommit);
    assert_eq!(f.durability.second_log_synced, Some(true));
    assert!(!f.durability.is_off(), "{:?}", f.durability);
    assert_eq!(f.isolation.as_deref(), Some("repeatable read"));
    assert_eq!(f.setting_group("innodb_redo_log_capacity"), "logging/redo");
    assert_eq!(s.replication_role, "primary (binary log on, not a replica, read_only=OFF)");
}

#[test]
fn mysql_5_7_without_the_capacity_setting_sizes_its_log_files() {
    static MYSQL_57: &[(&str, &str)] = &[
        ("version", "5.7.44-log"),
        ("version_comment", "MySQL Community Server (GPL)"),
        ("innodb_log_file_size", "50331648"),
        ("innodb_log_files_in_group", "2"),
        ("innodb_flush_log_at_trx_commit", "2"),
        ("tx_isolation", "READ-COMMITTED"),
    ];
    let s = recorded(serve(MYSQL_57));
    let f = s.facts.unwrap();
    assert_eq!(f.redo_bytes, Some(96 << 20));
    assert_eq!(f.durability.commit, CommitFlush::Periodic);
    assert!(f.durability.is_off());
    assert_eq!(f.isolation.as_deref(), Some("read committed"));
}

#[test]
fn aurora_mysql_is_named_by_aurora_version_and_keeps_no_local_redo() {
    static AURORA: &[(&str, &str)] = &[
        ("version", "8.0.28"),
        ("version_comment", "Source distribution"),
        ("aurora_version", "3.04.0"),
        ("innodb_flush_log_at_trx_commit", "1"),
        // Aurora reports InnoDB's settings, though its storage keeps the log and the pages.
        ("innodb_log_file_size", "50331648"),
        ("innodb_doublewrite", "OFF"),
        ("log_bin", "OFF"),
        ("innodb_buffer_pool_size", "12884901888"),
    ];
    let s = recorded(serve(AURORA));
    let f = s.facts.as_ref().unwrap();
    assert_eq!((s.product.as_str(), f.flavour.as_str()), ("Aurora MySQL", "Aurora MySQL"));
    assert_eq!(s.version, "8.0.28 (Aurora 3.04.0)");
    assert_eq!(f.redo_bytes, None);
    assert_eq!(f.durability.commit, CommitFlush::EveryCommit);
    assert_eq!(f.durability.torn_pages_protected, None, "no local page writes to tear");
    assert!(!f.durability.is_off(), "a durable Aurora is not durability-off: {:?}", f.durability);
}

#[test]
fn percona_and_tidb_are_their_own_flavours() {
    static PERCONA: &[(&str, &str)] = &[
        ("version", "8.0.35-27"),
        ("version_comment", "Percona Server (GPL), Release 27, Revision 2f8eeab2"),
        ("innodb_redo_log_capacity", "209715200"),
        ("innodb_flush_log_at_trx_commit", "1"),
    ];
    let s = recorded(serve(PERCONA));
    assert_eq!(s.facts.as_ref().unwrap().flavour, "Percona Server");
    assert_eq!(s.facts.unwrap().redo_bytes, Some(200 << 20));

    static TIDB: &[(&str, &str)] = &[
        ("version", "8.0.11-TiDB-v7.5.0"),
        ("version_comment", "TiDB Server (Apache License 2.0) Community Edition, MySQL 8.0 compatible"),
        ("tidb_txn_mode", "pessimistic"),
        ("transaction_isolation", "REPEATABLE-READ"),
    ];
    let s = recorded(serve(TIDB));
    let f = s.facts.unwrap();
    assert_eq!(f.flavour, "TiDB");
    // No InnoDB settings: the commit flush is unknown, which is not "off".
    assert_eq!(f.durability.commit, CommitFlush::Unknown);
    assert!(!f.durability.is_off());
    assert_eq!(f.redo_bytes, None);
}
