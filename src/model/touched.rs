//! The part of the data a run drew from: tables prepared at one size and run at another
//! (`run` without the `--table-size` they were prepared with) touch only some of their
//! rows, and every judgement of the dataset (cache fit, size) must be about that part.

use super::TableSize;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Rows present beyond those the run draws from, over which a table counts as partly
/// touched: 10% when its rows were counted, 50% when they are the database's estimate.
const EXACT_SLACK: f64 = 1.1;
const ESTIMATE_SLACK: f64 = 1.5;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TouchedData {
    /// Rows the run's ids were drawn from, summed over its tables (a built-in: ids
    /// 1..=table_size of each table; a workload file: the rows each table declares).
    pub drawn_rows: u64,
    /// Rows present at the start in the same tables.
    pub rows_present: u64,
    /// False when any table's rows are the database's estimate.
    pub rows_exact: bool,
    /// Data + index bytes of the part drawn from (each table's bytes times its drawn share).
    pub bytes: u64,
    /// Tables holding more rows than the run drew from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial_tables: Vec<String>,
}

impl TouchedData {
    /// What a run declaring `declared` rows per table (`by_table` overrides it per table)
    /// touches of `tables`. `None` when it draws from no table (tables meant to be empty).
    pub fn of(declared: u64, by_table: &BTreeMap<String, u64>, tables: &[TableSize]) -> Option<TouchedData> {
        let mut t = TouchedData { rows_exact: true, ..TouchedData::default() };
        for table in tables {
            let drawn = by_table.get(&table.name).copied().unwrap_or(declared);
            if drawn == 0 {
                continue;
            }
            let share = if table.rows > drawn { drawn as f64 / table.rows as f64 } else { 1.0 };
            t.drawn_rows += drawn;
            t.rows_present += table.rows;
            t.rows_exact &= table.rows_exact;
            t.bytes += ((table.data_bytes + table.index_bytes) as f64 * share).round() as u64;
            let slack = if table.rows_exact { EXACT_SLACK } else { ESTIMATE_SLACK };
            if table.rows as f64 > drawn as f64 * slack {
                t.partial_tables.push(table.name.clone());
            }
        }
        (t.drawn_rows > 0).then_some(t)
    }

    /// The drawn share of the rows present (1 when the run draws from all of them).
    pub fn share(&self) -> f64 {
        match self.rows_present {
            0 => 1.0,
            n => (self.drawn_rows as f64 / n as f64).min(1.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(name: &str, rows: u64, exact: bool) -> TableSize {
        TableSize { name: name.into(), rows, rows_exact: exact, data_bytes: rows * 200, index_bytes: 0 }
    }

    #[test]
    fn a_run_on_a_tenth_of_the_rows_touches_a_tenth() {
        let t = TouchedData::of(10_000, &BTreeMap::new(), &[table("sbtest1", 100_000, true)]).unwrap();
        assert_eq!((t.drawn_rows, t.rows_present, t.bytes), (10_000, 100_000, 2_000_000));
        assert_eq!(t.partial_tables, ["sbtest1"]);
        assert!((t.share() - 0.1).abs() < 1e-9);
    }

    #[test]
    fn whole_tables_and_estimates_within_their_error_are_not_partial() {
        let tables = [table("sbtest1", 10_000, true), table("sbtest2", 15_000, false)];
        let t = TouchedData::of(10_000, &BTreeMap::new(), &tables).unwrap();
        assert!(t.partial_tables.is_empty(), "{t:?}");
        assert!(!t.rows_exact);
    }

    #[test]
    fn tables_declared_empty_are_not_drawn_from() {
        let by_table = BTreeMap::from([("log".to_string(), 0), ("users".to_string(), 500)]);
        let tables = [table("log", 80_000, true), table("users", 500, true)];
        let t = TouchedData::of(500, &by_table, &tables).unwrap();
        assert_eq!((t.drawn_rows, t.rows_present), (500, 500));
        assert!(TouchedData::of(0, &BTreeMap::new(), &[table("sbtest1", 5, true)]).is_none());
    }
}
