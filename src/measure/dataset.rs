//! Before `run` measures: the tables are there, fairbench's own and complete, of the size
//! the run says (bench prepares them when all are missing); then the server's conditions
//! and the dataset's size, and a workload file's `before_run` checks.

use super::{hints, DatasetError, Failure, Observer};
use crate::db::{Connection as _, Database, TableInfo, TargetUrl};
use crate::model::RunRequest;
use crate::model::{ServerConditions, TableSize};
use crate::plan::{RunPlan, WorkloadPlan};
use crate::prepare;
use crate::runner;
use crate::workload::schema::Ownership;
use crate::{conditions, LocalRuntime};
use std::sync::Arc;

/// What `run` reads before measuring.
pub(super) struct BeforeRun {
    pub server: ServerConditions,
    pub tables: Vec<TableSize>,
    /// Tables present that fairbench did not create.
    pub foreign: Vec<String>,
}

/// Each table that is there, with who made it.
type Present = Vec<(TableInfo, Ownership)>;

/// A workload file's `before_run` checks: one that fails refuses the run, naming it.
pub(super) fn check_before_run<D: Database, E: Failure>(db: &D, plan: &RunPlan, target: &TargetUrl) -> Result<(), E> {
    let WorkloadPlan::File(f) = &plan.workload else { return Ok(()) };
    let results = runner::checks::run(db, &f.program.run_checks, plan.admin_timeout);
    match results.iter().find(|c| !c.passed) {
        None => Ok(()),
        Some(c) => Err(DatasetError::CheckFailsBeforeRun {
            check: c.name.clone(),
            detail: c.detail(),
            prepare: hints::prepare(&plan.workload, target, true),
        }
        .into()),
    }
}

/// The tables exist (bench prepares them when all are missing) and may be written; then
/// the server's conditions and the dataset's size before the run.
pub(super) fn check_dataset<D: Database, O: Observer>(
    db: Arc<D>,
    args: &RunRequest,
    plan: &RunPlan,
    target: &TargetUrl,
    (bench, observer): (bool, &O),
) -> Result<BeforeRun, O::Error> {
    let rt = crate::local_runtime();
    let mut admin = rt.block_on(db.connect()).map_err(|e| match e.code.to_string().as_str() {
        // No database at all (SQLite's file): every table is missing.
        "SQLITE_CANTOPEN" => O::Error::from(DatasetError::NoDatabase {
            problem: e.message.clone(),
            prepare: hints::prepare(&plan.workload, target, false),
        }),
        _ => O::Error::from(e),
    })?;
    let server_at = format!("the server at {}", db.transport().address);
    let (present, missing) = read_tables::<D, O::Error>(&rt, &*db, &mut admin, plan, &server_at)?;
    if !missing.is_empty() {
        if !(bench && present.is_empty()) {
            return Err(missing_tables(&present, &missing, plan, target).into());
        }
        observer.prepare(db.clone(), args, plan, target)?;
    }
    let foreign = may_be_used::<O::Error>(&present, args, plan, target)?;
    let limit = plan.admin_timeout;
    let info = runner::bounded_result(&rt, limit, &server_at, "reading its version", admin.server_info())?;
    let server = runner::bounded_result(
        &rt,
        limit,
        &server_at,
        "reading its settings",
        conditions::server(&*db, &mut admin, info),
    )?;
    let (table_names, rows) = (plan.workload.table_names(), plan.workload.declared_rows());
    let tables =
        runner::bounded_result(&rt, limit, &server_at, "reading table sizes", admin.table_sizes(&table_names, rows))?;
    warn_of_another_size(&tables, &foreign, plan, target, observer);
    Ok(BeforeRun { server, tables, foreign })
}

/// The workload's tables that are there, each with its owner, and the missing ones.
fn read_tables<D: Database, E: Failure>(
    rt: &LocalRuntime,
    db: &D,
    admin: &mut D::Conn,
    plan: &RunPlan,
    server_at: &str,
) -> Result<(Present, Vec<String>), E> {
    let limit = plan.admin_timeout;
    Ok(match &plan.workload {
        WorkloadPlan::Sysbench { oltp, .. } => {
            let (present, missing) =
                runner::bounded_result(rt, limit, server_at, "reading its tables", prepare::table_status(admin, oltp))?;
            let owned = present.into_iter().map(|t| {
                let owner = prepare::ownership(db, &t.name, &t.definition);
                (t, owner)
            });
            (owned.collect(), missing)
        }
        WorkloadPlan::File(f) => runner::bounded_result(
            rt,
            limit,
            server_at,
            "reading its tables",
            prepare::tables::status(db, admin, &f.program),
        )?,
    })
}

/// Why a run cannot start with tables missing: another tool's tables are in the way, or
/// fairbench's are not all there (fewer tables, an interrupted prepare: the hint rebuilds
/// them all).
fn missing_tables(present: &Present, missing: &[String], plan: &RunPlan, target: &TargetUrl) -> DatasetError {
    let (table, url) = (missing[0].clone(), target.redacted());
    if let Some((t, _)) = present.iter().find(|(_, o)| *o == Ownership::Foreign) {
        return DatasetError::ForeignTableInTheWay { table, target: url, foreign: t.name.clone() };
    }
    DatasetError::TableMissing {
        table,
        target: url,
        present: present.len(),
        missing: missing.len(),
        prepare: hints::prepare(&plan.workload, target, !present.is_empty()),
    }
}

/// Every table is complete, and fairbench writes only tables it created (sysbench's own
/// may be another tool's with --allow-foreign-tables). Returns the foreign ones.
fn may_be_used<E: Failure>(
    present: &Present,
    args: &RunRequest,
    plan: &RunPlan,
    target: &TargetUrl,
) -> Result<Vec<String>, E> {
    // Only sysbench's own tables may be someone else's: a workload file's are fairbench's.
    let foreign_allowed = args.allow_foreign_tables && matches!(plan.workload, WorkloadPlan::Sysbench { .. });
    if args.allow_foreign_tables && !foreign_allowed {
        return Err(DatasetError::ForeignTablesOfFile.into());
    }
    for (t, owner) in present {
        let refusal = match owner {
            Ownership::Incomplete => DatasetError::TableIncomplete {
                table: t.name.clone(),
                prepare: hints::prepare(&plan.workload, target, true),
            },
            Ownership::Foreign if plan.workload.writes() && !foreign_allowed => {
                DatasetError::ForeignTableWritten { workload: plan.workload.name().to_string(), table: t.name.clone() }
            }
            Ownership::Complete | Ownership::Foreign => continue,
        };
        return Err(refusal.into());
    }
    Ok(present.iter().filter(|(_, o)| *o == Ownership::Foreign).map(|(t, _)| t.name.clone()).collect())
}

/// fairbench's sysbench tables of another size than this run says: measured anyway (the
/// audit weighs it), with the command that rebuilds them at this size.
fn warn_of_another_size(
    tables: &[TableSize],
    foreign: &[String],
    plan: &RunPlan,
    target: &TargetUrl,
    observer: &impl Observer,
) {
    let rows = plan.workload.declared_rows();
    let odd =
        tables.iter().find(|t| rows > 0 && t.rows_exact && (t.rows < rows / 2 || t.rows > rows.saturating_mul(2)));
    if let (Some(t), WorkloadPlan::Sysbench { .. }) = (odd, &plan.workload) {
        if !foreign.contains(&t.name) {
            observer.warn(format_args!(
                "{} holds {} rows where this run says {rows}: rebuild at this size with `{}`",
                t.name,
                t.rows,
                hints::prepare(&plan.workload, target, true)
            ));
        }
    }
}
