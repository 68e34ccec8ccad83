//! Why a generator cannot be made ready to draw: a program that was not compiled, or
//! bounds no draw can satisfy.

use super::population::DecimalRangeError;
use crate::workload::spec::Generator;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DrawError {
    #[error("{0:?} was not resolved: draw only from a compiled program")]
    Unresolved(String),
    #[error("table numbers of {0} were not resolved: draw only from a compiled program")]
    TableUnresolved(String),
    #[error("a value read from {0} (offset, other_than) is resolved by the runner")]
    DerivedOutsideScope(String),
    #[error("a value read from {0} (offset, other_than), which is not drawn beside it")]
    DerivedWithoutSource(String),
    #[error("\"unique\" ids are drawn by clients only")]
    UniqueOutsideClients,
    #[error("range [{lo}, {hi}] is empty or wider than 2^32 values")]
    Range { lo: i64, hi: i64 },
    #[error("ids of table {table}: it has {rows} rows")]
    Ids { table: String, rows: u64 },
    #[error("nurand range [{x}, {y}] is empty or too wide")]
    NurandRange { x: i64, y: i64 },
    #[error("nurand A {0} is out of range")]
    NurandA(i64),
    #[error("by_client or shuffled [{count}, {every}]: both must be at least 1")]
    ByClient { count: i64, every: i64 },
    #[error("by_row {0:?}: [count, every] or [count, every, first], both at least 1")]
    ByRow(Vec<i64>),
    #[error("text length [{lo}, {hi}] cannot hold {word:?}")]
    TextLength { lo: i64, hi: i64, word: String },
    #[error("choose has no options")]
    NoOptions,
    #[error(transparent)]
    Decimal(#[from] DecimalRangeError),
    /// A generator handed to the wrong builder: a bug, named by the generator.
    #[error("{0:?} is not drawn by position")]
    NotByPosition(Box<Generator>),
    #[error("{0:?} is not text, a decimal or a choice")]
    NotComposed(Box<Generator>),
}
