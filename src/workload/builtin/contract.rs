//! The sysbench 1.0 statements as the compatibility contract writes them
//! (../shared/reference/sysbench-compat.md), kept as the tests' oracle: the product has one
//! description of the built-ins, sysbench.toml compiled, and the tests check it against this.

use crate::workload::StatementClass;

/// How an INSERT asks the database for a generated id (decided by each driver).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewRowId {
    /// Send id 0 (MySQL's AUTO_INCREMENT takes the next value).
    Zero,
    /// Leave the id column out of the INSERT (PostgreSQL SERIAL, SQLite rowid).
    Omitted,
}

/// Every statement the OLTP workloads send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatementKind {
    Begin = 0,
    Commit,
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

impl StatementKind {
    pub const COUNT: usize = 11;
    pub const ALL: [StatementKind; Self::COUNT] = [
        StatementKind::Begin,
        StatementKind::Commit,
        StatementKind::PointSelect,
        StatementKind::SimpleRange,
        StatementKind::SumRange,
        StatementKind::OrderRange,
        StatementKind::DistinctRange,
        StatementKind::IndexUpdate,
        StatementKind::NonIndexUpdate,
        StatementKind::Delete,
        StatementKind::Insert,
    ];

    /// sysbench's statement names (`point_selects`, ...), used as keys in results.
    pub fn name(self) -> &'static str {
        match self {
            StatementKind::Begin => "begin",
            StatementKind::Commit => "commit",
            StatementKind::PointSelect => "point_selects",
            StatementKind::SimpleRange => "simple_ranges",
            StatementKind::SumRange => "sum_ranges",
            StatementKind::OrderRange => "order_ranges",
            StatementKind::DistinctRange => "distinct_ranges",
            StatementKind::IndexUpdate => "index_updates",
            StatementKind::NonIndexUpdate => "non_index_updates",
            StatementKind::Delete => "deletes",
            StatementKind::Insert => "inserts",
        }
    }

    pub fn class(self) -> StatementClass {
        match self {
            StatementKind::Begin => StatementClass::Other,
            StatementKind::Commit => StatementClass::Commit,
            StatementKind::PointSelect
            | StatementKind::SimpleRange
            | StatementKind::SumRange
            | StatementKind::OrderRange
            | StatementKind::DistinctRange => StatementClass::Read,
            StatementKind::IndexUpdate
            | StatementKind::NonIndexUpdate
            | StatementKind::Delete
            | StatementKind::Insert => StatementClass::Write,
        }
    }

    /// The statement's SQL with `?` placeholders (translated by the driver), sysbench's text.
    /// `new_row`: oltp_insert's form, which leaves the id to the database in the driver's way.
    pub fn sql(self, table: u32, new_row: Option<NewRowId>) -> String {
        let t = table;
        match self {
            StatementKind::Begin => "BEGIN".into(),
            StatementKind::Commit => "COMMIT".into(),
            StatementKind::PointSelect => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            StatementKind::SimpleRange => {
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?")
            }
            StatementKind::SumRange => {
                format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?")
            }
            StatementKind::OrderRange => {
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            StatementKind::DistinctRange => {
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            StatementKind::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            StatementKind::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            StatementKind::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
            StatementKind::Insert => {
                // sysbench sends id=0 to MySQL (auto-increment) and omits the id on PostgreSQL;
                // SQLite would store 0 literally, so it omits the id too.
                if new_row == Some(NewRowId::Omitted) {
                    format!("INSERT INTO sbtest{t} (k, c, pad) VALUES (?, ?, ?)")
                } else {
                    format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)")
                }
            }
        }
    }
}
