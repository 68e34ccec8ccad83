//! What a run executes: the sysbench 1.0 OLTP workloads (their options, statements and
//! per-event steps) and workload files (spec -> program). A workload is data: the runner
//! executes it. Nothing here talks to a database.

pub mod builtin;
pub mod file;
pub mod generate;
pub mod program;
pub mod recipes;
pub mod schema;
pub mod spec;
mod statements;

pub use statements::{StatementClass, StatementInfo, StatementKind};

use serde::Serialize;

/// The eight sysbench OLTP workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    OltpReadWrite,
    OltpReadOnly,
    OltpWriteOnly,
    OltpPointSelect,
    OltpUpdateIndex,
    OltpUpdateNonIndex,
    OltpInsert,
    OltpDelete,
}

impl Workload {
    pub const ALL: [Workload; 8] = [
        Workload::OltpReadWrite,
        Workload::OltpReadOnly,
        Workload::OltpWriteOnly,
        Workload::OltpPointSelect,
        Workload::OltpUpdateIndex,
        Workload::OltpUpdateNonIndex,
        Workload::OltpInsert,
        Workload::OltpDelete,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::OltpReadWrite => "oltp_read_write",
            Workload::OltpReadOnly => "oltp_read_only",
            Workload::OltpWriteOnly => "oltp_write_only",
            Workload::OltpPointSelect => "oltp_point_select",
            Workload::OltpUpdateIndex => "oltp_update_index",
            Workload::OltpUpdateNonIndex => "oltp_update_non_index",
            Workload::OltpInsert => "oltp_insert",
            Workload::OltpDelete => "oltp_delete",
        }
    }

    /// Accepts `oltp_read_write`, `oltp-read-write` and `oltp_read_write.lua`.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim_end_matches(".lua").replace('-', "_");
        let s = s.rsplit('/').next().unwrap_or(&s);
        Self::ALL.into_iter().find(|w| w.name() == s)
    }

    pub fn description(self) -> &'static str {
        match self {
            Workload::OltpReadWrite => "BEGIN, 10 point selects, 4 ranges, 2 updates, delete+insert, COMMIT",
            Workload::OltpReadOnly => "BEGIN, 10 point selects, 4 ranges, COMMIT",
            Workload::OltpWriteOnly => "BEGIN, index update, non-index update, delete+insert, COMMIT",
            Workload::OltpPointSelect => "one point select, autocommit",
            Workload::OltpUpdateIndex => "one UPDATE of the indexed column k, autocommit",
            Workload::OltpUpdateNonIndex => "one UPDATE of the non-indexed column c, autocommit",
            Workload::OltpInsert => "one INSERT into a random table, autocommit",
            Workload::OltpDelete => "one DELETE by random id, autocommit",
        }
    }

    /// Whether an event can write (decides table ownership checks and SQLite's BEGIN IMMEDIATE).
    pub fn writes(self) -> bool {
        !matches!(self, Workload::OltpReadOnly | Workload::OltpPointSelect)
    }

    /// Rows per table that `prepare` loads: sysbench's oltp_insert with --auto-inc=off
    /// prepares EMPTY tables, because its client-generated ids could collide with loaded ones.
    pub fn rows_to_load(self, opts: &OltpOptions) -> u64 {
        if self == Workload::OltpInsert && !opts.auto_inc {
            0
        } else {
            opts.table_size
        }
    }

    /// What one event does, in order.
    pub fn steps(self, o: &OltpOptions) -> Vec<Step> {
        use StatementKind as K;
        let mut steps = Vec::new();
        let trx = !o.skip_trx;
        let reads = |steps: &mut Vec<Step>| {
            steps.push(Step::Repeat(K::PointSelect, o.point_selects));
            if o.range_selects {
                steps.push(Step::Repeat(K::SimpleRange, o.simple_ranges));
                steps.push(Step::Repeat(K::SumRange, o.sum_ranges));
                steps.push(Step::Repeat(K::OrderRange, o.order_ranges));
                steps.push(Step::Repeat(K::DistinctRange, o.distinct_ranges));
            }
        };
        let writes = |steps: &mut Vec<Step>| {
            steps.push(Step::Repeat(K::IndexUpdate, o.index_updates));
            steps.push(Step::Repeat(K::NonIndexUpdate, o.non_index_updates));
            steps.push(Step::DeleteInserts(o.delete_inserts));
        };
        match self {
            Workload::OltpReadWrite | Workload::OltpReadOnly | Workload::OltpWriteOnly => {
                if trx {
                    steps.push(Step::Begin);
                }
                if self != Workload::OltpWriteOnly {
                    reads(&mut steps);
                }
                if self != Workload::OltpReadOnly {
                    writes(&mut steps);
                }
                if trx {
                    steps.push(Step::Commit);
                }
            }
            // sysbench forces point_selects=1 for this script.
            Workload::OltpPointSelect => steps.push(Step::Repeat(K::PointSelect, 1)),
            Workload::OltpUpdateIndex => steps.push(Step::Repeat(K::IndexUpdate, o.index_updates)),
            Workload::OltpUpdateNonIndex => steps.push(Step::Repeat(K::NonIndexUpdate, o.non_index_updates)),
            Workload::OltpInsert => steps.push(Step::NewRowInsert),
            Workload::OltpDelete => steps.push(Step::Repeat(K::Delete, 1)),
        }
        steps.retain(|s| !matches!(s, Step::Repeat(_, 0) | Step::DeleteInserts(0)));
        steps
    }

    /// Statements one event sends, per kind (the mix the server should count).
    pub fn mix(self, o: &OltpOptions) -> Vec<(StatementKind, u64)> {
        let mut counts = [0u64; StatementKind::COUNT];
        for step in self.steps(o) {
            match step {
                Step::Begin => counts[StatementKind::Begin as usize] += 1,
                Step::Commit => counts[StatementKind::Commit as usize] += 1,
                Step::Repeat(k, n) => counts[k as usize] += n as u64,
                Step::DeleteInserts(n) => {
                    counts[StatementKind::Delete as usize] += n as u64;
                    counts[StatementKind::Insert as usize] += n as u64;
                }
                Step::NewRowInsert => counts[StatementKind::Insert as usize] += 1,
            }
        }
        StatementKind::ALL.iter().map(|&k| (k, counts[k as usize])).filter(|&(_, n)| n > 0).collect()
    }

    /// The statement kinds this workload prepares.
    pub fn statement_kinds(self, o: &OltpOptions) -> Vec<StatementKind> {
        self.mix(o).into_iter().map(|(k, _)| k).collect()
    }

    /// The statements measured, in id order (the order of [`Workload::statement_kinds`]).
    pub fn statements(self, o: &OltpOptions) -> Vec<StatementInfo> {
        self.statement_kinds(o).into_iter().map(|k| StatementInfo { name: k.name().into(), class: k.class() }).collect()
    }
}

/// One step of an event. Each `Repeat` group draws its table once, as sysbench does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Begin,
    Commit,
    /// `n` statements of one kind against one uniformly drawn table.
    Repeat(StatementKind, u32),
    /// `n` pairs of DELETE then INSERT of the same id (fresh k, c, pad).
    DeleteInserts(u32),
    /// oltp_insert's single INSERT of a new row.
    NewRowInsert,
}

/// sysbench's oltp_common.lua options, with its defaults.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OltpOptions {
    pub tables: u32,
    pub table_size: u64,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub skip_trx: bool,
    pub auto_inc: bool,
    pub secondary: bool,
    pub create_secondary: bool,
    pub mysql_storage_engine: String,
}

impl Default for OltpOptions {
    fn default() -> Self {
        OltpOptions {
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            skip_trx: false,
            auto_inc: true,
            secondary: false,
            create_secondary: true,
            mysql_storage_engine: "innodb".into(),
        }
    }
}

impl OltpOptions {
    pub fn validate(&self) -> Result<(), String> {
        if self.tables == 0 {
            return Err("--tables must be at least 1".into());
        }
        if self.table_size > i32::MAX as u64 {
            return Err(format!("--table-size must be at most {} (ids are INTEGER)", i32::MAX));
        }
        if self.range_size == 0 {
            return Err("--range-size must be at least 1".into());
        }
        let engine = &self.mysql_storage_engine;
        if engine.is_empty() || !engine.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("--mysql-storage-engine {engine:?} is not an engine name"));
        }
        Ok(())
    }

    /// Table names `sbtest1..sbtestN`.
    pub fn table_names(&self) -> impl Iterator<Item = String> {
        (1..=self.tables).map(|n| format!("sbtest{n}"))
    }
}

/// The known workload (built-in or recipe) nearest to a mistyped `name`, if one is close.
pub fn nearest(name: &str) -> Option<&'static str> {
    let typed = name.trim_end_matches(".lua").trim_end_matches(".toml").to_ascii_lowercase().replace('-', "_");
    let names = Workload::ALL.iter().map(|w| w.name()).chain(recipes::RECIPES.iter().map(|(n, _)| *n));
    names
        .map(|n| (strsim::damerau_levenshtein(&typed, &n.replace('-', "_")), n))
        .filter(|(d, n)| *d <= (n.len() / 4).max(2))
        .min()
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix_of(w: Workload) -> Vec<(&'static str, u64)> {
        w.mix(&OltpOptions::default()).into_iter().map(|(k, n)| (k.name(), n)).collect()
    }

    #[test]
    fn read_write_mix_is_the_contracts() {
        let total: u64 = mix_of(Workload::OltpReadWrite).iter().map(|x| x.1).sum();
        assert_eq!(total, 20);
        let reads: u64 = Workload::OltpReadWrite
            .mix(&OltpOptions::default())
            .iter()
            .filter(|(k, _)| k.class() == StatementClass::Read)
            .map(|x| x.1)
            .sum();
        assert_eq!(reads, 14);
    }

    #[test]
    fn skip_trx_and_range_selects_off() {
        let o = OltpOptions { skip_trx: true, range_selects: false, ..Default::default() };
        let m = Workload::OltpReadOnly.mix(&o);
        assert_eq!(m, vec![(StatementKind::PointSelect, 10)]);
    }

    #[test]
    fn insert_auto_inc_off_prepares_empty_tables() {
        let o = OltpOptions { auto_inc: false, ..Default::default() };
        assert_eq!(Workload::OltpInsert.rows_to_load(&o), 0);
        assert_eq!(Workload::OltpReadWrite.rows_to_load(&o), 10_000);
    }

    #[test]
    fn names_parse_in_sysbench_spellings() {
        assert_eq!(Workload::parse("oltp_read_write.lua"), Some(Workload::OltpReadWrite));
        assert_eq!(Workload::parse("/usr/share/sysbench/oltp_insert.lua"), Some(Workload::OltpInsert));
        assert_eq!(Workload::parse("oltp-delete"), Some(Workload::OltpDelete));
        assert_eq!(Workload::parse("tpcc"), None);
        assert_eq!(super::nearest("oltp_read_wirte"), Some("oltp_read_write"));
        assert_eq!(super::nearest("oltp-point-selct.lua"), Some("oltp_point_select"));
        assert_eq!(super::nearest("ycsb-g"), Some("ycsb-a"));
        assert_eq!(super::nearest("tpcc"), None);
    }
}
