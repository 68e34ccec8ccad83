//! `fairbench sweep`: every data size prepared in turn (smallest first), every client count
//! run on it, one file with every point's full result, a table and the saturation point.

use super::live::Job;
use super::{connect_options, do_prepare, follow, targets, workload_plan, Error, LoadSettings};
use crate::cli::{Sweep, SweepArgs};
use crate::db::{Database, TargetUrl};
use crate::measure::{check_out, default_out, measure_run};
use crate::model::sweep::{
    cache_cliff, saturation, SweepDocument, SweepPoint, SWEEP_SCHEMA_NAME, SWEEP_SCHEMA_VERSION,
};
use crate::model::{file::write_atomic, plural, RunStatus};
use crate::with_database;
use std::process::ExitCode;
use std::sync::Arc;

pub(super) fn sweep_cmd(args: &SweepArgs) -> Result<ExitCode, Error> {
    let sweep = args.sweep()?;
    let (first, quiet) = sweep.point(sweep.threads[0], sweep.tables[0], sweep.table_sizes[0]);
    first.shard.refuse_in("sweep")?;
    if quiet {
        super::QUIET.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let urls = targets(&first.target)?;
    let options = connect_options(&first.target);
    with_database!(&urls[0], &options, |db| sweep_points(follow(db, &urls, &options)?, &sweep, &first, &urls))
}

/// Every point of `sweep`; `first` is its first point's options (the target, the format).
fn sweep_points<D: Database>(
    db: Arc<D>,
    sweep: &Sweep,
    first: &crate::model::RunRequest,
    targets: &[TargetUrl],
) -> Result<ExitCode, Error> {
    let target = &targets[0];
    let name = workload_plan(&first.workload, target.dialect)?.name().to_string();
    let file_workload = crate::workload::file::is_file(&first.workload.workload);
    if file_workload && sweep.sizes_given {
        return Err(super::UsageError::SweepSizesOfFile.into());
    }
    let out = sweep.out.clone().unwrap_or_else(|| default_out(&format!("sweep-{name}")));
    db.create_if_missing()?;
    let mut doc = SweepDocument {
        schema: SWEEP_SCHEMA_NAME.into(),
        schema_version: SWEEP_SCHEMA_VERSION,
        fairbench_version: env!("CARGO_PKG_VERSION").into(),
        workload: name,
        target: target.redacted(),
        threads: sweep.threads.clone(),
        tables: sweep.tables.clone(),
        table_sizes: sweep.table_sizes.clone(),
        points: Vec::new(),
        saturation: Vec::new(),
        cache_cliffs: Vec::new(),
    };
    let stopped = measure_points(&db, sweep, first, targets, &out, &mut doc)?;
    find_knees(sweep, &mut doc);
    let text = crate::model::pretty_json(&doc);
    write_atomic(&out, &text)?;
    if first.format() == "json" {
        println!("{text}");
    } else {
        print!("{}", crate::report::Report::render(&crate::report::SweepTable, &doc, &Default::default()));
    }
    super::say(format_args!("Sweep saved to {}", out.display()));
    Ok(match stopped {
        None => ExitCode::SUCCESS,
        Some(RunStatus::Interrupted) => ExitCode::from(130),
        Some(_) => ExitCode::from(1),
    })
}

/// Each point in turn, each data size prepared fresh before its client counts; the status
/// of the point that did not complete (the sweep stops there), if one did not.
fn measure_points<D: Database>(
    db: &Arc<D>,
    sweep: &Sweep,
    first: &crate::model::RunRequest,
    targets: &[TargetUrl],
    out: &std::path::Path,
    doc: &mut SweepDocument,
) -> Result<Option<RunStatus>, Error> {
    let target = &targets[0];
    let file_workload = crate::workload::file::is_file(&first.workload.workload);
    let job = Job::new(0);
    let points = (sweep.sizes().len() * sweep.threads.len()) as u32;
    job.expect_parts(points * first.plan(db.dialect(), workload_plan(&first.workload, target.dialect)?)?.repeats);
    for (tables, size) in sweep.sizes() {
        let (args, _) = sweep.point(sweep.threads[0], tables, size);
        let workload = workload_plan(&args.workload, target.dialect)?;
        let plan = args.plan(db.dialect(), workload.clone())?;
        check_out(out, &plan)?;
        // A data size is built fresh (only fairbench's own tables are replaced), so each
        // point runs on exactly the size it names; a workload file prepares when missing.
        if !file_workload {
            super::say(format_args!("sweep: preparing {} of {size} rows", plural(tables as u64, "table")));
            let settings = LoadSettings::for_run(&args, &plan, true);
            do_prepare(db.clone(), &workload, &settings, target)?;
        }
        for &threads in &sweep.threads {
            let (args, _) = sweep.point(threads, tables, size);
            job.point(format_args!(
                "sweep: {} on {} of {size} rows",
                plural(threads as u64, "client"),
                plural(tables as u64, "table")
            ));
            // Each point streams its timeline beside the sweep file, under a name of its own.
            let point = out.with_extension("").display().to_string() + &format!("-t{threads}-{tables}x{size}.json");
            let point = std::path::PathBuf::from(point);
            let result = measure_run(db.clone(), &args, targets, file_workload, Some(&point), &job)?.0.complete()?;
            // The document written when the point started measuring: the sweep file holds
            // the point now (its streamed timeline stays beside it).
            let _ = std::fs::remove_file(&point);
            let status = result.conditions.run.status;
            doc.points.push(SweepPoint { threads, tables, table_size: size, result });
            if status != RunStatus::Completed {
                return Ok(Some(status));
            }
        }
    }
    Ok(None)
}

/// Where throughput stops growing with clients (per data size), and where it falls off a
/// cache (per client count).
fn find_knees(sweep: &Sweep, doc: &mut SweepDocument) {
    for (tables, size) in sweep.sizes() {
        let points: Vec<&SweepPoint> =
            doc.points.iter().filter(|p| p.tables == tables && p.table_size == size).collect();
        doc.saturation.extend(saturation(&points));
    }
    for &threads in &sweep.threads {
        let points: Vec<&SweepPoint> = doc.points.iter().filter(|p| p.threads == threads).collect();
        doc.cache_cliffs.extend(cache_cliff(&points));
    }
}
