//! A workload file compiled for one database: `{param}`s substituted, every `:name` turned
//! into a positional `?` bound from a value slot, every name checked to exist before it is
//! used. The whole file validates before anything runs, and nothing is parsed per event.

mod compile;
mod errors;
mod resolve;
mod rows;
mod sql;
mod tables;
mod transaction;

use super::spec::{Generator, Pause, Scalar};
use super::{StatementClass, StatementInfo};
use crate::model::{Dialect, TableDef};
pub use compile::{compile, scalar_from_text, scalar_text};
pub use errors::CompileErrors;
pub use sql::{positional, SqlError};
use std::collections::BTreeMap;

/// A compiled workload.
#[derive(Clone, Debug)]
pub struct Program {
    pub name: String,
    pub description: String,
    /// Statements named without their transaction's name in results.
    pub bare_names: bool,
    pub dialect: Dialect,
    pub params: BTreeMap<String, Scalar>,
    /// Names of the value slots each client keeps (client values, then the rest).
    pub slots: Vec<String>,
    pub client: Vec<(usize, Generator)>,
    pub tables: Vec<TableProgram>,
    pub transactions: Vec<TransactionProgram>,
    /// The checks that hold after each run.
    pub checks: Vec<Check>,
    /// The checks that hold right after prepare.
    pub prepare_checks: Vec<Check>,
    /// The checks that must hold before a run measures (the tables fit the parameters).
    pub run_checks: Vec<Check>,
    /// Numbers the tables hold, read around the measured phase.
    pub tallies: Vec<Tally>,
    /// The benchmark whose rules the audit applies (`tpc-c`), if the file says so.
    pub follows: Option<String>,
    /// Transactions dealt from a shuffled deck of `weight` cards each (`pick = "deck"`).
    pub deck: bool,
}

/// A check as sent to one database: its query, which returns true, or counts the rows that
/// break it (`counts_offending`).
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub name: String,
    pub sql: String,
    pub counts_offending: bool,
}

/// A tally as sent to one database: a query returning one whole number.
#[derive(Clone, Debug, PartialEq)]
pub struct Tally {
    pub name: String,
    pub sql: String,
}

#[derive(Clone, Debug)]
pub struct TableProgram {
    pub def: TableDef,
    pub rows: u64,
    /// How `prepare` fills each column of `def`, in order.
    pub generators: Vec<Generator>,
    /// The table set it belongs to (`sbtest` for sbtest3), if any.
    pub set: Option<String>,
    /// More rows drawn than kept (`rows` is then the number kept on average).
    pub keep: Option<Keep>,
}

/// Of `drawn` rows, those whose column `column` is at most `at_most`'s value are kept.
#[derive(Clone, Debug)]
pub struct Keep {
    pub drawn: u64,
    pub column: usize,
    pub at_most: Generator,
}

impl TableProgram {
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The rows prepare draws: `rows`, or more when some are not kept.
    pub fn drawn_rows(&self) -> u64 {
        self.keep.as_ref().map_or(self.rows, |k| k.drawn)
    }
}

#[derive(Clone, Debug)]
pub struct TransactionProgram {
    pub name: String,
    pub weight: u32,
    pub begin: bool,
    /// Pauses after and before each transaction (closed loop only).
    pub think: Pause,
    pub keying: Pause,
    /// Queued by the client and executed by the run's deferred worker (`deferred`).
    pub deferred: bool,
    pub params: Vec<(usize, Generator)>,
    pub statements: Vec<StatementProgram>,
    /// The order statements run in: each step runs `count` statements from `first`,
    /// `repeat` times.
    pub steps: Vec<StepProgram>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StepProgram {
    pub first: usize,
    pub count: usize,
    pub repeat: Times,
    /// Drawn once, before the repetitions (a drawn count first).
    pub once: Vec<(usize, Generator)>,
}

/// How many times a step runs in a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Times {
    Fixed(u32),
    /// The count in this slot, drawn with the step's `once` values (0..=1000000).
    Drawn(usize),
}

/// Most times a step runs per transaction.
pub const MAX_REPEAT: i64 = 1_000_000;

impl Times {
    /// Never runs: `repeat = 0` (a drawn count may be 0 in one transaction, not in all).
    pub fn never(self) -> bool {
        self == Times::Fixed(0)
    }
}

#[derive(Clone, Debug)]
pub struct StatementProgram {
    pub name: String,
    pub class: StatementClass,
    /// With `?` placeholders.
    pub sql: String,
    /// The slot bound to each `?`, in order.
    pub args: Vec<usize>,
    pub params: Vec<(usize, Generator)>,
    pub saves: Vec<Save>,
    /// A statement on a table set: the slot holding the table number and the SQL for
    /// each table (`sql` is table 1's).
    pub per_table: Option<(usize, Vec<String>)>,
    /// No row back rolls the transaction back, as intended (`rollback_if = "no_row"`).
    pub rollback_if_no_row: bool,
    /// No row back skips the rest of its group's repetition (`skip_if = "no_row"`).
    pub skip_if_no_row: bool,
    /// The row its saves read (`save_row`).
    pub save_row: crate::model::RowPick,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Save {
    pub slot: usize,
    pub from: SaveFrom,
    pub client_scope: bool,
}

/// Where a saved value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveFrom {
    /// The named column of the first row (NULL when no row came back).
    Column(String),
    /// The id the INSERT generated (MySQL, SQLite).
    InsertId,
    /// The first column of the first row: PostgreSQL's `RETURNING id`.
    FirstColumn,
}

/// Where one transaction's statements sit in the run's list of measured statements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionIds {
    pub begin: Option<usize>,
    pub statements: Vec<usize>,
    pub commit: Option<usize>,
    /// The ROLLBACK of a transaction that may roll back as intended.
    pub rollback: Option<usize>,
}

impl Program {
    /// The statements measured, in id order (per transaction: BEGIN, its statements,
    /// COMMIT), and where each transaction's are.
    pub fn measured(&self) -> (Vec<StatementInfo>, Vec<TransactionIds>) {
        let mut infos = Vec::new();
        let mut add = |name: String, class| {
            infos.push(StatementInfo { name, class });
            infos.len() - 1
        };
        let ids = self
            .transactions
            .iter()
            .map(|t| {
                let named = |s: &str| if self.bare_names { s.to_string() } else { format!("{}.{s}", t.name) };
                TransactionIds {
                    begin: t.begin.then(|| add(named("begin"), StatementClass::Other)),
                    statements: t.statements.iter().map(|s| add(s.name.clone(), s.class)).collect(),
                    commit: t.begin.then(|| add(named("commit"), StatementClass::Commit)),
                    rollback: (t.begin && t.may_roll_back()).then(|| add(named("rollback"), StatementClass::Other)),
                }
            })
            .collect();
        (infos, ids)
    }

    /// Each measured statement's runs per event of its transaction, where that is fixed:
    /// BEGIN once, COMMIT once (unless the transaction may roll back instead), a statement
    /// its step's repeat count; a count drawn per transaction is left out.
    pub fn per_event(&self) -> BTreeMap<String, u64> {
        let (infos, ids) = self.measured();
        let mut counts = BTreeMap::new();
        for (t, ids) in self.transactions.iter().zip(&ids) {
            let mut put = |id: usize, n: u64| counts.insert(infos[id].name.clone(), n);
            if let Some(begin) = ids.begin {
                put(begin, 1);
            }
            if let Some(commit) = ids.commit.filter(|_| !t.may_roll_back()) {
                put(commit, 1);
            }
            let step_of = |k: usize| t.steps.iter().find(|st| (st.first..st.first + st.count).contains(&k));
            // After the first statement that may roll back (from its step's start when that
            // step repeats), a statement is skipped when the transaction rolls back: no fixed
            // count per event.
            let rolls_back_from = t.statements.iter().position(|s| s.rollback_if_no_row).map(|r| match step_of(r) {
                Some(st) if !matches!(st.repeat, Times::Fixed(1)) => st.first,
                _ => r + 1,
            });
            // After a statement that may skip, the rest of its step may not run.
            let skipped = |k: usize| {
                t.statements
                    .iter()
                    .enumerate()
                    .any(|(j, s)| s.skip_if_no_row && j < k && step_of(j).is_some_and(|st| k < st.first + st.count))
            };
            for (k, &id) in ids.statements.iter().enumerate() {
                if rolls_back_from.is_some_and(|from| k >= from) || skipped(k) {
                    continue;
                }
                if let Some(Times::Fixed(n)) = step_of(k).map(|st| st.repeat) {
                    put(id, n as u64);
                }
            }
        }
        counts
    }

    /// The kinds of event results name: each transaction, then each deferred one's
    /// execution by the deferred worker (`{name}_deferred`, see [`Program::deferred_kinds`]).
    pub fn kind_names(&self) -> Vec<String> {
        let deferred = self.transactions.iter().filter(|t| t.deferred).map(TransactionProgram::deferred_name);
        self.transactions.iter().map(|t| t.name.clone()).chain(deferred).collect()
    }

    /// Per transaction, the kind its deferred executions are recorded as (None: not deferred).
    pub fn deferred_kinds(&self) -> Vec<Option<usize>> {
        let mut next = self.transactions.len();
        let mut kind = || {
            next += 1;
            next - 1
        };
        self.transactions.iter().map(|t| t.deferred.then(&mut kind)).collect()
    }

    /// Whether any transaction can write (decides the ownership checks before a run).
    pub fn writes(&self) -> bool {
        self.transactions.iter().any(TransactionProgram::writes)
    }

    /// A table by name, or the first of a table set by the set's name.
    pub fn table(&self, name: &str) -> Option<&TableProgram> {
        self.tables
            .iter()
            .find(|t| t.def.name == name)
            .or_else(|| self.tables.iter().find(|t| t.set.as_deref() == Some(name)))
    }

    /// The number of tables in set `name` (None: not a set).
    pub fn set_count(&self, name: &str) -> Option<u32> {
        let n = self.tables.iter().filter(|t| t.set.as_deref() == Some(name)).count();
        (n > 0).then_some(n as u32)
    }
}

impl TransactionProgram {
    /// It pauses before or after (a closed loop's client waits).
    pub fn pauses(&self) -> bool {
        self.think != Pause::Fixed(0) || self.keying != Pause::Fixed(0)
    }

    /// The kind its executions by the deferred worker are recorded as.
    pub fn deferred_name(&self) -> String {
        format!("{}_deferred", self.name)
    }

    /// A statement may skip the rest of its group's repetition.
    pub fn may_skip(&self) -> bool {
        self.statements.iter().any(|s| s.skip_if_no_row)
    }

    /// A statement may roll it back as intended.
    pub fn may_roll_back(&self) -> bool {
        self.statements.iter().any(|s| s.rollback_if_no_row)
    }

    /// Anything but a read may write (SQLite then begins with BEGIN IMMEDIATE).
    pub fn writes(&self) -> bool {
        self.statements.iter().any(|s| s.class != StatementClass::Read)
    }
}

/// Names that become SQL identifiers or result keys: letters, digits and `_`, not
/// starting with a digit.
fn identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 60
}

#[cfg(test)]
mod tests;
