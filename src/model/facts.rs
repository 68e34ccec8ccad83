//! What a server is, in words every product shares: its flavour, the durability in effect,
//! its isolation level. Each driver derives them from its product's own settings (db/), so
//! the audit and compare judge products by meaning (both flush at every commit?) rather
//! than by setting names that differ from product to product.

use super::SqlCommand;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerFacts {
    /// MariaDB, MySQL, Percona Server, Aurora MySQL, TiDB; PostgreSQL, CockroachDB; SQLite.
    pub flavour: String,
    pub durability: Durability,
    /// The default transaction isolation level, lowercase words (`repeatable read`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    /// How much redo (InnoDB's redo log, PostgreSQL's max_wal_size, SQLite's WAL before a
    /// checkpoint) the server keeps before it must checkpoint, bytes: too small a redo
    /// log makes a write benchmark measure checkpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redo_bytes: Option<u64>,
    /// How the server's own counters (`status_delta`) relate to what fairbench sent: the
    /// audit's check for other load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<CounterRule>,
    /// The server's settings by what they change, as its driver knows them: setting ->
    /// one of [`ServerFacts::SETTING_GROUPS`], or `volatile` (a value that changes on its
    /// own, such as a log position: not a condition). Settings not listed are "other
    /// variables".
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub setting_groups: BTreeMap<String, String>,
    /// The server's own figures worth following over time (I/O, log, buffer pool, history,
    /// checkpoints, statements), sampled every interval (`intervals[].server`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sampled: Vec<SampledFigure>,
    /// The sampled rates (keys of `sampled`) that add up to the I/O requests the server
    /// sends to storage, reads and writes: what a service that bills I/O per request
    /// counts, as near as the server's own counters tell it (a study's I/O cost).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_requests: Vec<String>,
}

/// One of the server's figures followed over time, as its driver names it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SampledFigure {
    /// Its key in `intervals[].server`: the counter's name, with `/s` for a rate.
    pub key: String,
    /// What it is, for a reader: `InnoDB data file reads`.
    pub label: String,
    /// What one unit is: `reads`, `bytes`, `pages`, `transactions`.
    pub unit: String,
    pub kind: SampleKind,
    /// What it shows: `io`, `log`, `cache`, `history`, `checkpoint`, `statements`.
    pub group: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SampleKind {
    /// A counter's increase per second between two readings.
    Rate { counter: String },
    /// A value at the reading.
    Gauge { counter: String },
    /// One value minus another at the reading (a checkpoint age from two log positions).
    Gap { of: String, minus: String },
}

impl SampledFigure {
    /// A counter followed as its rate per second.
    pub fn rate(counter: &str, label: &str, unit: &str, group: &str) -> Self {
        let kind = SampleKind::Rate { counter: counter.into() };
        SampledFigure { key: format!("{counter}/s"), label: label.into(), unit: unit.into(), kind, group: group.into() }
    }

    /// A value followed as it is.
    pub fn gauge(counter: &str, label: &str, unit: &str, group: &str) -> Self {
        let kind = SampleKind::Gauge { counter: counter.into() };
        SampledFigure { key: counter.into(), label: label.into(), unit: unit.into(), kind, group: group.into() }
    }

    /// `of - minus`, followed as a value, under `key`.
    pub fn gap(key: &str, of: &str, minus: &str, label: &str, unit: &str, group: &str) -> Self {
        let kind = SampleKind::Gap { of: of.into(), minus: minus.into() };
        SampledFigure { key: key.into(), label: label.into(), unit: unit.into(), kind, group: group.into() }
    }

    /// Whether the key is a rate (merged over time as a mean, not a maximum).
    pub fn is_rate_key(key: &str) -> bool {
        key.ends_with("/s")
    }

    /// Whether it is followed as a rate per second.
    pub fn is_rate(&self) -> bool {
        matches!(self.kind, SampleKind::Rate { .. })
    }

    /// Its value from two readings `secs` apart (rates), or from the later one; `None`
    /// when the server does not have the counter.
    pub fn value(&self, before: &BTreeMap<String, i64>, after: &BTreeMap<String, i64>, secs: f64) -> Option<f64> {
        match &self.kind {
            SampleKind::Rate { counter } => {
                let delta = after.get(counter)? - before.get(counter)?;
                (secs > 0.0).then(|| delta as f64 / secs)
            }
            SampleKind::Gauge { counter } => after.get(counter).map(|v| *v as f64),
            SampleKind::Gap { of, minus } => Some((after.get(of)? - after.get(minus)?) as f64),
        }
    }
}

impl ServerFacts {
    /// The groups of settings, in the order a reviewer reads them.
    pub const SETTING_GROUPS: [&'static str; 5] =
        ["durability", "memory/cache", "logging/redo", "replication", "connections"];
    /// Settings that change on their own.
    pub const VOLATILE: &'static str = "volatile";
    /// Settings no group claims.
    pub const OTHER: &'static str = "other variables";

    /// The group of the setting `name`.
    pub fn setting_group(&self, name: &str) -> &str {
        self.setting_groups.get(name).map_or(Self::OTHER, String::as_str)
    }
}

/// One of the server's counters and what it counts of fairbench's statements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CounterRule {
    pub counter: String,
    pub counts: Counted,
    /// Seconds of its rate the counter may lag at each end of a measured phase (PostgreSQL
    /// backends report their statistics up to a second late).
    #[serde(default)]
    pub lag_s: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Counted {
    /// Statements of these SQL commands.
    Statements(Vec<SqlCommand>),
    /// Rows that statements of these commands inserted, updated or deleted.
    Rows(Vec<SqlCommand>),
    /// Transactions: COMMITs, and statements sent outside BEGIN ... COMMIT.
    Transactions,
}

impl CounterRule {
    pub fn new(counter: &str, counts: Counted, lag_s: f64) -> CounterRule {
        CounterRule { counter: counter.to_string(), counts, lag_s }
    }
}

/// Whether a transaction acknowledged as committed survives a crash.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Durability {
    /// When the commit record reaches stable storage.
    pub commit: CommitFlush,
    /// A second log a commit also writes (MySQL's binary log): whether it is synced at each
    /// commit. Absent: there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_log_synced: Option<bool>,
    /// Protection against pages torn by a crash mid-write (InnoDB's doublewrite buffer,
    /// PostgreSQL's full_page_writes, SQLite's journal). Absent: not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torn_pages_protected: Option<bool>,
    /// Whether a commit waits for a replica to acknowledge it (MySQL's semi-synchronous
    /// replication, PostgreSQL's synchronous standbys): then it survives the loss of this
    /// host. Absent: not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_acknowledges: Option<bool>,
    /// The product's own settings these facts come from, as the server reported them.
    pub settings: BTreeMap<String, String>,
    /// Of those, the ones that switch durability off (empty when it is on).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub off_because: BTreeMap<String, String>,
}

impl Durability {
    /// Committed transactions can be lost on a crash (of the server or the host).
    pub fn is_off(&self) -> bool {
        self.commit != CommitFlush::EveryCommit && self.commit != CommitFlush::Unknown
            || self.second_log_synced == Some(false)
            || self.torn_pages_protected == Some(false)
    }

    /// `flushed at every commit; binary log synced at every commit; torn pages protected`.
    pub fn describe(&self) -> String {
        let mut parts = vec![self.commit.to_string()];
        match self.second_log_synced {
            Some(true) => parts.push("second log synced at every commit".into()),
            Some(false) => parts.push("second log not synced at every commit".into()),
            None => {}
        }
        match self.torn_pages_protected {
            Some(true) => parts.push("torn pages protected".into()),
            Some(false) => parts.push("torn pages NOT protected".into()),
            None => {}
        }
        if self.replica_acknowledges == Some(true) {
            parts.push("a replica acknowledges each commit".into());
        }
        parts.join("; ")
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CommitFlush {
    /// The log is flushed to stable storage before the commit is acknowledged.
    EveryCommit,
    /// Written at commit, flushed about once a second (or by the OS): a server crash may
    /// keep it, a host crash loses up to that much.
    Periodic,
    /// Never flushed by the database (fsync off, SQLite synchronous=OFF, no journal).
    Never,
    #[default]
    Unknown,
}

impl fmt::Display for CommitFlush {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CommitFlush::EveryCommit => "flushed at every commit",
            CommitFlush::Periodic => "flushed periodically, not at every commit",
            CommitFlush::Never => "never flushed by the database",
            CommitFlush::Unknown => "unknown",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durability_is_off_when_any_part_is() {
        let on = Durability {
            commit: CommitFlush::EveryCommit,
            second_log_synced: Some(true),
            torn_pages_protected: Some(true),
            replica_acknowledges: None,
            settings: BTreeMap::new(),
            off_because: BTreeMap::new(),
        };
        assert!(!on.is_off());
        // A replica's acknowledgement adds to durability; without one it is not "off".
        assert!(!Durability { replica_acknowledges: Some(false), ..on.clone() }.is_off());
        assert!(Durability { commit: CommitFlush::Periodic, ..on.clone() }.is_off());
        assert!(Durability { second_log_synced: Some(false), ..on.clone() }.is_off());
        assert!(Durability { torn_pages_protected: Some(false), ..on.clone() }.is_off());
        assert!(!Durability { commit: CommitFlush::Unknown, second_log_synced: None, ..on }.is_off());
    }
}
