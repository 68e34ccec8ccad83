//! The parts the rows of a prepare are loaded in, each drawn from a random stream of its own: the unsplit bulk
//! load (bulk.rs) and `prepare --shard` (sharded.rs) take the same parts, so the data does not depend on how many
//! loaders or shards loaded it.

use super::tables;
use super::Tables;

/// Rows of an sbtest table one part holds.
pub const PART_ROWS: u64 = 100_000;

/// One part of the rows: of sbtest table `table` (1-based) or of the file's table `table`
/// (0-based), rows `first ..= last`, drawn from stream `stream`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Part {
    pub table: u32,
    pub first: u64,
    pub last: u64,
    pub number: u64,
}

/// Every part of every table, table by table; shard I of N loads parts I, I+N, ... so each
/// shard loads some of every table when there are several.
pub fn parts(what: &Tables) -> Vec<Part> {
    let mut out = Vec::new();
    match what {
        Tables::Sbtest(plan) => {
            let rows = plan.workload.rows_to_load(&plan.oltp);
            for table in 1..=plan.oltp.tables {
                out.extend(table_parts(table, rows));
            }
        }
        Tables::File(program, _) => {
            for c in tables::chunks_of(program) {
                let last = c.first_row + c.rows - 1;
                out.push(Part { table: c.table as u32, first: c.first_row, last, number: c.number });
            }
        }
    }
    out
}

/// The parts of one table of `rows` rows.
pub fn table_parts(table: u32, rows: u64) -> impl Iterator<Item = Part> {
    (0..rows.div_ceil(PART_ROWS)).map(move |number| {
        let first = number * PART_ROWS + 1;
        Part { table, first, last: (first + PART_ROWS - 1).min(rows), number }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_every_row_once() {
        let parts: Vec<Part> = table_parts(2, 250_001).collect();
        assert_eq!(parts.len(), 3);
        assert_eq!((parts[0].first, parts[0].last, parts[0].number), (1, 100_000, 0));
        assert_eq!((parts[2].first, parts[2].last, parts[2].number), (200_001, 250_001, 2));
        assert_eq!(table_parts(1, 0).count(), 0);
    }
}
