//! SQLite: PRAGMA synchronous and journal_mode.

use super::{culprits, setting_groups, settings, Groups};
use crate::model::facts::{CommitFlush, Durability, SampledFigure, ServerFacts};
use std::collections::BTreeMap;

pub fn facts(product: &str, vars: &BTreeMap<String, String>) -> ServerFacts {
    // WAL mode checkpoints after wal_autocheckpoint pages of WAL.
    let wal = vars.get("journal_mode").is_some_and(|j| j.eq_ignore_ascii_case("wal"));
    let number = |name: &str| vars.get(name).and_then(|v| v.parse::<u64>().ok());
    let redo_bytes = match (wal, number("wal_autocheckpoint"), number("page_size")) {
        (true, Some(pages), Some(page)) if pages > 0 => Some(pages * page),
        _ => None,
    };
    ServerFacts {
        flavour: product.to_string(),
        durability: durability(vars),
        isolation: Some("serializable".into()),
        redo_bytes,
        // No counters of statements: an embedded database runs only what this process sends.
        counters: Vec::new(),
        setting_groups: setting_groups(vars, GROUPS),
        // The file's own figures: its size and free pages (what the library keeps is per
        // connection, and the sampler's connection runs nothing).
        sampled: vec![
            SampledFigure::gauge("page_count", "database pages", "pages", "io"),
            SampledFigure::gauge("freelist_count", "free pages", "pages", "io"),
        ],
        // The library reads and writes through the OS; it counts no I/O requests.
        io_requests: Vec::new(),
    }
}

const GROUPS: Groups = &[
    ("durability", &["synchronous", "journal_mode"]),
    ("memory/cache", &["cache_size", "mmap_size", "page_size"]),
    ("logging/redo", &["wal_autocheckpoint"]),
    // The data's size in pages (compared as the dataset's) and a change counter.
    ("volatile", &["page_count", "freelist_count", "data_version"]),
];

fn durability(vars: &BTreeMap<String, String>) -> Durability {
    let journal = vars.get("journal_mode").map(|v| v.to_ascii_lowercase());
    let wal = journal.as_deref() == Some("wal");
    // synchronous: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA. NORMAL in WAL mode syncs the WAL only
    // at checkpoints: a power loss may roll back the last commits.
    let commit = match vars.get("synchronous").map(|v| v.to_ascii_lowercase()).as_deref() {
        Some("0" | "off") => CommitFlush::Never,
        Some("1" | "normal") if wal => CommitFlush::Periodic,
        Some("1" | "normal" | "2" | "full" | "3" | "extra") => CommitFlush::EveryCommit,
        _ => CommitFlush::Unknown,
    };
    // Without a journal (off) or with one in memory, a crash mid-commit corrupts the file.
    let torn_pages_protected = journal.as_deref().map(|j| !matches!(j, "off" | "memory"));
    let mut off_because =
        culprits(vars, &["synchronous"], |_, _| matches!(commit, CommitFlush::Never | CommitFlush::Periodic));
    if torn_pages_protected == Some(false) || commit == CommitFlush::Periodic {
        off_because.extend(settings(vars, &["journal_mode"]));
    }
    Durability {
        // An embedded database has no replica.
        replica_acknowledges: None,
        commit,
        second_log_synced: None,
        torn_pages_protected,
        settings: settings(vars, &["synchronous", "journal_mode"]),
        off_because,
    }
}

#[cfg(test)]
mod tests {
    use super::super::vars;
    use super::*;

    #[test]
    fn wal_with_full_sync_is_durable_normal_and_no_journal_are_not() {
        assert!(!facts("SQLite", &vars(&[("journal_mode", "wal"), ("synchronous", "2")])).durability.is_off());
        let normal = facts("SQLite", &vars(&[("journal_mode", "wal"), ("synchronous", "1")])).durability;
        assert_eq!(normal.commit, CommitFlush::Periodic);
        let rollback = facts("SQLite", &vars(&[("journal_mode", "delete"), ("synchronous", "1")])).durability;
        assert!(!rollback.is_off());
        assert!(facts("SQLite", &vars(&[("journal_mode", "off"), ("synchronous", "2")])).durability.is_off());
        assert_eq!(facts("SQLite", &vars(&[("synchronous", "0")])).durability.commit, CommitFlush::Never);
    }
}
