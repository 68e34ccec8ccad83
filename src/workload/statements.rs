//! A statement as measurement sees it: its name and its class.

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

    pub fn name(self) -> &'static str {
        match self {
            StatementClass::Read => "read",
            StatementClass::Write => "write",
            StatementClass::Commit => "commit",
            StatementClass::Other => "other",
        }
    }
}

/// A statement as measurement sees it: its name in results and its class. The recorder
/// keeps one histogram per statement id (the position in the run's list of these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementInfo {
    pub name: String,
    pub class: StatementClass,
}
