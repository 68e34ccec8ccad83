//! The classes latency is recorded in: a statement's class (by kind, as Finch classes),
//! and the classes every result holds, once for every room that names them.

use serde::Serialize;

/// How fairbench classes a statement (by kind, as Finch does; sysbench classes by result).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StatementClass {
    /// SELECT.
    Read,
    /// INSERT, UPDATE, DELETE.
    Write,
    /// COMMIT.
    Commit,
    /// BEGIN, ROLLBACK and anything else.
    Other,
}

impl StatementClass {
    pub const ALL: [StatementClass; 4] =
        [StatementClass::Read, StatementClass::Write, StatementClass::Commit, StatementClass::Other];

    pub const fn name(self) -> &'static str {
        match self {
            StatementClass::Read => "read",
            StatementClass::Write => "write",
            StatementClass::Commit => "commit",
            StatementClass::Other => "other",
        }
    }
}

/// The latency classes of every result, in report order: whole events, all statements
/// together, then each statement class.
pub const LATENCY_CLASSES: [&str; 6] = [
    "event",
    "total",
    StatementClass::Read.name(),
    StatementClass::Write.name(),
    StatementClass::Commit.name(),
    StatementClass::Other.name(),
];
