//! `--shard I/N` around a run: the dataset checked once shard 0 has it ready, and a shard's
//! result printed between markers for logs collected by a cluster.

use super::{Error, LoadSettings};
use crate::db::Database;
use crate::model::PrepareRequest;
use crate::model::ResultDocument;
use crate::plan::{ShardPlan, WorkloadPlan};
use crate::prepare::sharded;
use crate::shard::Barrier;
use std::sync::Arc;
use std::time::Duration;

use crate::combine::{BEGIN, END, RECORD_BEGIN, RECORD_END};

/// The result on stdout between the markers `fairbench combine` looks for in a log.
/// The result, then the record it was built from (its file's bytes, base64 in lines of 76),
/// each between markers: `combine` reads them from the pods' logs.
pub(super) fn print_marked(doc: &ResultDocument, out: &std::path::Path) {
    println!("{BEGIN}\n{}\n{END}", serde_json::to_string(doc).expect("a result serializes"));
    match std::fs::read(crate::timeline::record_path_for(out)) {
        Ok(bytes) => {
            use base64::Engine;
            let text = base64::engine::general_purpose::STANDARD.encode(bytes);
            let lines: Vec<&str> = text.as_bytes().chunks(76).map(|c| std::str::from_utf8(c).unwrap_or("")).collect();
            println!("{RECORD_BEGIN}\n{}\n{RECORD_END}", lines.join("\n"));
        }
        Err(e) => eprintln!("warning: the record was not printed ({e}): combine cannot use this shard's log"),
    }
}

/// `prepare --shard I/N`: shard 0 creates the tables, every shard loads its parts, shard 0
/// finishes the tables once all have loaded (src/prepare/sharded.rs).
pub(super) fn prepare<D: Database>(
    db: Arc<D>,
    args: &PrepareRequest,
    workload: &WorkloadPlan,
    mut settings: LoadSettings,
) -> Result<(), Error> {
    let Some(plan) = args.shard.plan(settings.threads, None)? else { return Ok(()) };
    if args.shard.print_result {
        return Err(super::UsageError::PrintResultOfPrepare.into());
    }
    let plan = crate::shard::keyed(plan, || crate::shard::prepare_key(args));
    if args.workload.rand_seed == 0 {
        settings.seed = crate::shard::seed_of(&plan.key);
    }
    let (index, count) = (plan.index, plan.count);
    let host = crate::conditions::host::read().hostname;
    let mut barrier = Barrier::join(db.clone(), &plan, &host)?;
    let what = settings.tables(workload);
    let held = match plan.leads() {
        true => Some(abort_on_error(&mut barrier, sharded::create(&*db, &what).map_err(Error::from))?),
        false => None,
    };
    match &held {
        Some(_) => barrier.arrive("created").map(|_| ())?,
        None => barrier.wait_for(0, "created", &|| false)?,
    }
    let outcome = load(db.clone(), &what, &plan, settings.threads);
    let outcome = abort_on_error(&mut barrier, outcome)?;
    barrier.arrive("loaded")?;
    if let Some(held) = held {
        let waited = barrier.wait_all("loaded", Duration::from_secs(7 * 86_400))?;
        if !waited.is_empty() {
            return Err(crate::shard::BarrierError::NeverLoaded { shards: waited }.into());
        }
        abort_on_error(&mut barrier, sharded::finish(&*db, held, &what).map_err(Error::from))?;
        barrier.clean_up();
        if let WorkloadPlan::File(f) = workload {
            super::prepared_checks(&*db, &f.program.prepare_checks)?;
        }
    }
    super::say(format_args!(
        "Prepared shard {index} of {count}: {} rows in {:.1} s ({:.0} rows/s, {}){}",
        outcome.rows,
        outcome.seconds,
        outcome.rows as f64 / outcome.seconds.max(1e-9),
        crate::model::plural(outcome.loaders as u64, "loader"),
        if plan.leads() { "; every shard loaded, the tables are complete" } else { "" }
    ));
    Ok(())
}

/// This shard's parts, with the progress meter prepare always shows.
fn load<D: Database>(
    db: Arc<D>,
    what: &crate::prepare::Tables,
    plan: &ShardPlan,
    threads: u32,
) -> Result<crate::prepare::PrepareOutcome, Error> {
    let mut meter = super::LoadMeter::new();
    let outcome =
        sharded::load(db, what, (plan.index, plan.count), threads, &mut |done, total| meter.update(done, total));
    meter.finish();
    Ok(outcome?)
}

/// A shard that fails tells the others (they fail at once with its reason).
fn abort_on_error<D: Database, T>(barrier: &mut Barrier<D>, r: Result<T, Error>) -> Result<T, Error> {
    r.inspect_err(|e| barrier.abort(&format!("shard {} failed: {e}", barrier.plan.index)))
}
