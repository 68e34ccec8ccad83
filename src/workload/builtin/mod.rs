//! The sysbench workloads as a definition in the workload-file format (`sysbench.toml`,
//! embedded): compiled per run with the sysbench flags as parameters, run by the same
//! engine as any workload file.

use super::program::{compile, Program};
use super::spec::{self, Scalar, SpecError};
use super::{OltpOptions, Workload};
use crate::model::Dialect;

#[cfg(test)]
pub mod contract;

/// The definition, as `fairbench list --show` prints it.
pub const SYSBENCH: &str = include_str!("sysbench.toml");

/// The definition's parameters for workload `w` with options `o`: the statement counts it
/// sends (0 for those it does not), the table set and the transaction framing.
pub fn params(w: Workload, o: &OltpOptions) -> Vec<(String, Scalar)> {
    use Workload::*;
    let reads = matches!(w, OltpReadWrite | OltpReadOnly);
    let writes = matches!(w, OltpReadWrite | OltpWriteOnly);
    let ranges = |n: u32| if reads && o.range_selects { n } else { 0 };
    let counts = [
        (
            "point_selects",
            if w == OltpPointSelect {
                1
            } else if reads {
                o.point_selects
            } else {
                0
            },
        ),
        ("simple_ranges", ranges(o.simple_ranges)),
        ("sum_ranges", ranges(o.sum_ranges)),
        ("order_ranges", ranges(o.order_ranges)),
        ("distinct_ranges", ranges(o.distinct_ranges)),
        ("index_updates", if writes || w == OltpUpdateIndex { o.index_updates } else { 0 }),
        ("non_index_updates", if writes || w == OltpUpdateNonIndex { o.non_index_updates } else { 0 }),
        ("delete_inserts", if writes { o.delete_inserts } else { 0 }),
        ("single_deletes", (w == OltpDelete) as u32),
        ("auto_inc_inserts", (w == OltpInsert && o.auto_inc) as u32),
        ("explicit_id_inserts", (w == OltpInsert && !o.auto_inc) as u32),
        ("trx", ((reads || w == OltpWriteOnly) && !o.skip_trx) as u32),
    ];
    let mut v: Vec<(String, Scalar)> = counts.iter().map(|(k, n)| (k.to_string(), Scalar::Int(*n as i64))).collect();
    v.push(("tables".into(), Scalar::Int(o.tables as i64)));
    v.push(("table_size".into(), Scalar::Int(o.table_size.max(1) as i64)));
    v.push(("range_last".into(), Scalar::Int(o.range_size as i64 - 1)));
    v
}

/// Why the built-in definition does not compile with these options.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuiltinError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The compiler's problems, each `file:line:col: what`.
    #[error("{}", .0.join("; "))]
    Invalid(crate::workload::program::CompileErrors),
}

/// Workload `w` compiled for `dialect`: one transaction, named after the workload.
pub fn program(w: Workload, o: &OltpOptions, dialect: Dialect) -> Result<Program, BuiltinError> {
    let file = "sysbench.toml (built in)";
    let spec = spec::parse(file, SYSBENCH)?;
    let mut p = compile(&spec, file, SYSBENCH, dialect, &params(w, o)).map_err(BuiltinError::Invalid)?;
    p.name = w.name().to_string();
    p.description = w.description().to_string();
    for t in &mut p.transactions {
        t.name = w.name().to_string();
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::contract::{NewRowId, StatementKind};
    use super::*;
    use std::collections::BTreeMap;

    /// sysbench 1.0's statements per event (docs: ../shared/reference/sysbench-compat.md),
    /// written out here as the test's own oracle: the product has one description, the
    /// compiled definition, and this checks it.
    fn contract_mix(w: Workload, o: &OltpOptions) -> Vec<(StatementKind, u64)> {
        use StatementKind as K;
        use Workload::*;
        let (reads, writes) = (matches!(w, OltpReadWrite | OltpReadOnly), matches!(w, OltpReadWrite | OltpWriteOnly));
        let trx = (reads || w == OltpWriteOnly) && !o.skip_trx;
        let ranges = |n: u32| if reads && o.range_selects { n } else { 0 };
        let mix = [
            (K::Begin, trx as u32),
            (
                K::PointSelect,
                if w == OltpPointSelect {
                    1
                } else if reads {
                    o.point_selects
                } else {
                    0
                },
            ),
            (K::SimpleRange, ranges(o.simple_ranges)),
            (K::SumRange, ranges(o.sum_ranges)),
            (K::OrderRange, ranges(o.order_ranges)),
            (K::DistinctRange, ranges(o.distinct_ranges)),
            (K::IndexUpdate, if writes || w == OltpUpdateIndex { o.index_updates } else { 0 }),
            (K::NonIndexUpdate, if writes || w == OltpUpdateNonIndex { o.non_index_updates } else { 0 }),
            (K::Delete, if writes { o.delete_inserts } else { (w == OltpDelete) as u32 }),
            (K::Insert, if writes { o.delete_inserts } else { (w == OltpInsert) as u32 }),
            (K::Commit, trx as u32),
        ];
        mix.into_iter().filter(|(_, n)| *n > 0).map(|(k, n)| (k, n as u64)).collect()
    }

    /// The definition sends exactly sysbench's statements: for every workload, dialect and
    /// the options that change the mix, each statement's SQL (table 1) and count per event
    /// are the contract's, in the contract's order.
    #[test]
    fn the_definition_is_statement_exact() {
        let options = [
            OltpOptions::default(),
            OltpOptions { skip_trx: true, range_selects: false, tables: 3, ..Default::default() },
            OltpOptions {
                auto_inc: false,
                point_selects: 2,
                delete_inserts: 3,
                index_updates: 0,
                ..Default::default()
            },
        ];
        for dialect in Dialect::ALL {
            let new_row_id = if dialect == Dialect::Mysql { NewRowId::Zero } else { NewRowId::Omitted };
            for o in &options {
                for w in Workload::ALL {
                    if contract_mix(w, o).is_empty() {
                        // e.g. oltp_update_index --index-updates=0: an event would send nothing.
                        assert!(program(w, o, dialect).is_err());
                        continue;
                    }
                    let p = program(w, o, dialect).unwrap();
                    assert_eq!(p.transactions.len(), 1);
                    let t = &p.transactions[0];
                    assert_eq!(t.name, w.name());
                    let expected: BTreeMap<String, u64> =
                        contract_mix(w, o).iter().map(|(k, n)| (k.name().to_string(), *n)).collect();
                    assert_eq!(p.per_event(), expected, "{w:?} {dialect:?} {o:?}");
                    let new_row = (w == Workload::OltpInsert && o.auto_inc).then_some(new_row_id);
                    for s in &t.statements {
                        let kind = StatementKind::ALL.into_iter().find(|k| k.name() == s.name).unwrap();
                        assert_eq!(s.sql, kind.sql(1, new_row), "{w:?} {dialect:?}");
                        let tables = s.per_table.as_ref().map(|(_, texts)| texts.len()).unwrap_or(1);
                        assert_eq!(tables, o.tables as usize);
                        if let Some((_, texts)) = &s.per_table {
                            assert_eq!(texts[o.tables as usize - 1], kind.sql(o.tables, new_row));
                        }
                    }
                }
            }
        }
    }
}
