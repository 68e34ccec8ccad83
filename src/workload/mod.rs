//! What a run executes: the sysbench 1.0 OLTP workloads (their options; their statements
//! and steps are one definition, builtin/sysbench.toml, compiled like any workload file)
//! and workload files (spec -> program). A workload is data: the runner executes it.
//! Nothing here talks to a database.

pub mod builtin;
pub mod file;
pub mod generate;
pub mod program;
pub mod recipes;
pub mod schema;
pub mod spec;
mod statements;

pub use statements::{StatementClass, StatementInfo};

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
}

pub use crate::model::request::OltpOptions;

/// Built-in workload options that cannot make a run (bad flags).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    #[error("--tables must be at least 1")]
    NoTables,
    #[error("--table-size must be at most {max} (ids are INTEGER)", max = i32::MAX)]
    TableSizeTooLarge,
    #[error("--range-size must be at least 1")]
    NoRange,
    #[error("--mysql-storage-engine {0:?} is not an engine name")]
    NotAnEngine(String),
}

impl OltpOptions {
    pub fn validate(&self) -> Result<(), OptionsError> {
        if self.tables == 0 {
            return Err(OptionsError::NoTables);
        }
        if self.table_size > i32::MAX as u64 {
            return Err(OptionsError::TableSizeTooLarge);
        }
        if self.range_size == 0 {
            return Err(OptionsError::NoRange);
        }
        let engine = &self.mysql_storage_engine;
        if engine.is_empty() || !engine.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(OptionsError::NotAnEngine(engine.clone()));
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
    let typed = name.trim_end_matches(".lua").trim_end_matches(".toml");
    let names = Workload::ALL.iter().map(|w| w.name()).chain(recipes::RECIPES.iter().map(|(n, _)| *n));
    crate::model::nearest(typed, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compiled definition's statements per event.
    fn mix_of(w: Workload, o: &OltpOptions) -> std::collections::BTreeMap<String, u64> {
        builtin::program(w, o, crate::model::Dialect::Mysql).unwrap().per_event()
    }

    #[test]
    fn bad_options_are_named_as_flags() {
        let o = |f: fn(&mut OltpOptions)| {
            let mut o = OltpOptions::default();
            f(&mut o);
            o.validate().unwrap_err().to_string()
        };
        assert_eq!(o(|o| o.table_size = 1 << 31), "--table-size must be at most 2147483647 (ids are INTEGER)");
        assert_eq!(
            o(|o| o.mysql_storage_engine = "a b".into()),
            "--mysql-storage-engine \"a b\" is not an engine name"
        );
    }

    #[test]
    fn read_write_mix_is_the_contracts() {
        let mix = mix_of(Workload::OltpReadWrite, &OltpOptions::default());
        assert_eq!(mix.values().sum::<u64>(), 20);
        let reads = ["point_selects", "simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges"];
        assert_eq!(reads.iter().map(|r| mix[*r]).sum::<u64>(), 14);
    }

    #[test]
    fn skip_trx_and_range_selects_off() {
        let o = OltpOptions { skip_trx: true, range_selects: false, ..Default::default() };
        let m = mix_of(Workload::OltpReadOnly, &o);
        assert_eq!(m, [("point_selects".to_string(), 10)].into());
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
        assert_eq!(super::nearest("hammerdb"), None);
    }
}
