//! What a measurement refuses before it starts: one variant per problem, each its one line.

use std::path::PathBuf;

/// A run that cannot go as asked (bad input: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("--fault acts once, on one measured phase: it cannot go with --repeat")]
    FaultWithRepeat,
    #[error("--fault acts from one process: give it to a probe beside the shards, not to a shard")]
    FaultOnShard,
    #[error("--fault needs the run's end: give --time")]
    FaultWithoutTime,
    #[error("cannot write the result to {}: {source} (choose another --out)", .path.display())]
    ResultUnwritable { path: PathBuf, source: std::io::Error },
    #[error("{} has {free_mb} MB free; the result of this run needs about {needed_mb} MB: free space or choose another --out", .dir.display())]
    NoRoom { dir: PathBuf, free_mb: u64, needed_mb: u64 },
}

/// The tables a run needs are not there, or not the run's to use (exit 2). `prepare` is the
/// command line that makes them.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// No database at all (SQLite's file): every table is missing.
    #[error("{problem}: run `{prepare}` first")]
    NoDatabase { problem: String, prepare: String },
    #[error("table {table} does not exist in {target}{}: run `{prepare}` first", present_of(*.present, *.missing))]
    TableMissing { table: String, target: String, present: usize, missing: usize, prepare: String },
    #[error("table {table} does not exist in {target}, and {foreign} there was not created by fairbench: prepare in another database")]
    ForeignTableInTheWay { table: String, target: String, foreign: String },
    #[error("--allow-foreign-tables applies to the sysbench workloads' sbtest tables only")]
    ForeignTablesOfFile,
    #[error("table {table} is not completely prepared (an interrupted prepare, or an older fairbench): rebuild it with `{prepare}`")]
    TableIncomplete { table: String, prepare: String },
    #[error("{workload} writes, and table {table} was not created by fairbench: fairbench modifies only tables it created (prepare them with fairbench, or give --allow-foreign-tables to write sbtest tables another tool prepared)")]
    ForeignTableWritten { workload: String, table: String },
    #[error("check {check:?} fails before the run ({detail}): the tables do not fit this run's parameters; prepare them with the same --set, `{prepare}`")]
    CheckFailsBeforeRun { check: String, detail: String, prepare: String },
}

/// " (2 of 5 are)" when some of the tables are there.
fn present_of(present: usize, missing: usize) -> String {
    match present {
        0 => String::new(),
        n => format!(" ({n} of {} are)", n + missing),
    }
}
