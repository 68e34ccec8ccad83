//! sysbench's `sbtest<n>` tables: their shape, the multi-row INSERTs that load them, and the
//! ownership marks that decide which tables fairbench may drop or write (each driver
//! writes the CREATE TABLE itself: `Database::sbtest_create_sql`).
//!
//! Ownership is exact, never a substring: a MySQL or PostgreSQL table is fairbench's only
//! if its whole comment equals [`MARKER`] (complete) or [`MARKER_LOADING`] (a prepare that
//! did not finish); a SQLite table only if its whole CREATE statement is one fairbench
//! generates (`prepare::ownership`). The complete mark is set last, after the rows and the
//! `k` index.

use super::OltpOptions;
use crate::random::{Distribution, Rng};

/// The whole comment of a table fairbench prepared completely (versioned).
pub const MARKER: &str = "fairbench:sbtest:v1";
/// The whole comment while prepare loads it.
pub const MARKER_LOADING: &str = "fairbench:sbtest:v1:loading";
/// What fairbench 0.1 before this marker wrote (an exact comment, completeness unknown).
pub const MARKER_LEGACY: &str = "created by fairbench";

/// Whose a `sbtest<n>` table is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ownership {
    /// Prepared by fairbench, completely.
    Complete,
    /// fairbench's, but prepare did not finish (or an older fairbench made it): it may be
    /// dropped or overwritten, never measured.
    Incomplete,
    /// Someone else's: never dropped, overwritten or written.
    Foreign,
}

impl OltpOptions {
    /// The table's shape these options give.
    pub fn shape(&self) -> crate::model::SbtestShape {
        crate::model::SbtestShape {
            auto_inc: self.auto_inc,
            secondary: self.secondary,
            engine: self.mysql_storage_engine.clone(),
        }
    }
}

/// sysbench's c template: 10 groups of 11 digits (119 characters).
pub const C_TEMPLATE: &[u8] = b"###########-###########-###########-###########-###########-###########-###########-###########-###########-###########";
/// sysbench's pad template: 5 groups of 11 digits (59 characters).
pub const PAD_TEMPLATE: &[u8] = b"###########-###########-###########-###########-###########";

/// Largest multi-row INSERT sysbench's bulk insert builds (512 KiB).
pub const BULK_INSERT_BYTES: usize = 512 * 1024;

/// The secondary index on k, built after loading (sysbench's `k_<n>`).
pub fn create_k_index(n: u32) -> String {
    format!("CREATE INDEX k_{n} ON sbtest{n}(k)")
}

pub fn drop_table(n: &str) -> String {
    format!("DROP TABLE {n}")
}

/// Builds sysbench's loading INSERTs: rows `first_id..` with `k` drawn from the run's
/// distribution and fresh c/pad strings; each statement stays under 512 KiB.
pub struct RowBatcher<'a> {
    table: u32,
    explicit_id: bool,
    table_size: u32,
    dist: &'a Distribution,
    scratch: Vec<u8>,
}

impl<'a> RowBatcher<'a> {
    pub fn new(table: u32, o: &OltpOptions, dist: &'a Distribution) -> Self {
        RowBatcher {
            table,
            explicit_id: !o.auto_inc,
            table_size: o.table_size as u32,
            dist,
            scratch: Vec::with_capacity(128),
        }
    }

    /// Appends rows starting at id `next` up to `last` (inclusive) into one statement;
    /// returns the statement and the next id to load.
    pub fn next_statement(&mut self, rng: &mut Rng, mut next: u64, last: u64) -> (String, u64) {
        let mut sql = String::with_capacity(BULK_INSERT_BYTES + 256);
        if self.explicit_id {
            sql.push_str(&format!("INSERT INTO sbtest{}(id, k, c, pad) VALUES", self.table));
        } else {
            sql.push_str(&format!("INSERT INTO sbtest{}(k, c, pad) VALUES", self.table));
        }
        let mut first = true;
        while next <= last && sql.len() < BULK_INSERT_BYTES {
            if !first {
                sql.push(',');
            }
            first = false;
            let k = self.dist.sample(rng, 1, self.table_size);
            sql.push('(');
            if self.explicit_id {
                sql.push_str(&next.to_string());
                sql.push_str(", ");
            }
            sql.push_str(&k.to_string());
            sql.push_str(", '");
            rng.fill_digits(C_TEMPLATE, &mut self.scratch);
            sql.push_str(std::str::from_utf8(&self.scratch).expect("digits"));
            sql.push_str("', '");
            rng.fill_digits(PAD_TEMPLATE, &mut self.scratch);
            sql.push_str(std::str::from_utf8(&self.scratch).expect("digits"));
            sql.push_str("')");
            next += 1;
        }
        (sql, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::DistributionSpec;

    #[test]
    fn templates_have_sysbench_lengths() {
        assert_eq!(C_TEMPLATE.len(), 119);
        assert_eq!(PAD_TEMPLATE.len(), 59);
    }

    #[test]
    fn batches_stay_under_512k_and_cover_all_rows() {
        let o = OltpOptions { table_size: 10_000, ..Default::default() };
        let dist = DistributionSpec::default().sampler();
        let mut b = RowBatcher::new(1, &o, &dist);
        let mut rng = Rng::seeded(1);
        let (mut next, mut stmts) = (1, 0);
        while next <= 10_000 {
            let (sql, n) = b.next_statement(&mut rng, next, 10_000);
            assert!(sql.len() < BULK_INSERT_BYTES + 300);
            assert!(n > next);
            next = n;
            stmts += 1;
        }
        assert!(stmts >= 3, "about 2,700 rows per statement");
    }
}
