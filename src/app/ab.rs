//! `fairbench ab`: one workload on two targets, A B A B ... so that whatever drifts over
//! time (caches warming after prepare, checkpoints, a noisy neighbour) falls on both sides
//! alike; both results saved, then compared as `compare` would.

use super::live::Job;
use super::{connect_options, follow, target, Error};
use crate::cli::{parse_thresholds, AbArgs};
use crate::compare::{self, Input, Subject};
use crate::db::{Database, TargetUrl};
use crate::measure::{check_out, default_out, Phases, Session};
use crate::model::comparison::Verdict;
use crate::model::file::write_atomic;
use crate::model::RunRequest;
use crate::model::{Criterion, RunStatus};
use crate::report::{CompareJson, CompareText, Report as _, ReportOptions};
use crate::with_database;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

const SIDES: [&str; 2] = ["A", "B"];

/// What both sides share, and what the comparison checks.
struct Plan {
    sides: [(RunRequest, TargetUrl); 2],
    files: [PathBuf; 3],
    claims: Vec<Criterion>,
    thresholds: Vec<Criterion>,
    subject: Option<Subject>,
}

pub(super) fn ab_cmd(args: &AbArgs) -> Result<ExitCode, Error> {
    let ab = args.ab()?;
    // One seed for both sides: each repeat of A and of B draws the same random streams.
    let seed = clock_seed();
    let (a, quiet) = ab.side(0, seed);
    let (b, _) = ab.side(1, seed);
    a.shard.refuse_in("ab")?;
    b.shard.refuse_in("ab")?;
    if quiet {
        super::QUIET.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let claims = crate::cli::parse_claims(&ab.claims)?;
    let (ta, tb) = (target(&a.target)?, target(&b.target)?);
    let name = super::workload_plan(&a.workload, ta.dialect)?.name().to_string();
    let files = match &ab.out_dir {
        Some(dir) => ["A.json", "B.json", "comparison.json"].map(|f| dir.join(f)),
        None => {
            let base = default_out(&format!("ab-{name}"));
            let stem = base.with_extension("").display().to_string();
            ["A", "B", "comparison"].map(|s| PathBuf::from(format!("{stem}-{s}.json")))
        }
    };
    let plan = Plan {
        sides: [(a, ta), (b, tb)],
        files,
        claims,
        thresholds: parse_thresholds(&ab.thresholds)?,
        subject: ab.under_test.as_deref().map(Subject::parse),
    };
    let [(a, ta), (b, tb)] = &plan.sides;
    let (oa, ob) = (connect_options(&a.target), connect_options(&b.target));
    with_database!(ta, &oa, |da| {
        let da = follow(da, std::slice::from_ref(ta), &oa)?;
        with_database!(tb, &ob, |db| alternate(da, follow(db, std::slice::from_ref(tb), &ob)?, &plan))
    })
}

/// Opens both sides (preparing missing tables), measures them in turns, saves and compares.
fn alternate<A: Database, B: Database>(da: Arc<A>, db: Arc<B>, plan: &Plan) -> Result<ExitCode, Error> {
    let [(a, ta), (b, tb)] = &plan.sides;
    let job = Job::new(0);
    let mut sides: [Box<dyn Phases<Error> + '_>; 2] = [
        Box::new(Session::open(da, a, std::slice::from_ref(ta), true, Some(&plan.files[0]), &job)?),
        Box::new(Session::open(db, b, std::slice::from_ref(tb), true, Some(&plan.files[1]), &job)?),
    ];
    let repeats = sides[0].plan().repeats;
    job.expect_parts(2 * repeats);
    check_out(&plan.files[2], sides[0].plan())?;
    let mut order = Vec::new();
    'turns: for k in 1..=repeats {
        for (label, side) in SIDES.iter().zip(sides.iter_mut()) {
            job.point(format_args!("ab: {label}, repeat {k} of {repeats}"));
            order.push(format!("{label}{k}"));
            if !side.measure_next()? {
                break 'turns; // interrupted or failed: both sides keep what they measured
            }
        }
    }
    let [sa, sb] = sides;
    let mut inputs = Vec::new();
    for side in [sa, sb] {
        let (closed, path) = side.finish()?;
        let doc = closed.complete()?;
        doc.write(&path)?;
        super::say(format_args!("Result saved to {}", path.display()));
        inputs.push(Input { file: path.display().to_string(), doc });
    }
    let mut comparison = compare::compare(&inputs, &plan.claims, &plan.thresholds, plan.subject.as_ref());
    comparison.order = order;
    write_atomic(&plan.files[2], &CompareJson.render(&comparison, &ReportOptions::default()))?;
    print!("{}", CompareText { all: false }.render(&comparison, &ReportOptions::default()));
    super::say(format_args!("Comparison saved to {}", plan.files[2].display()));
    let stopped = inputs.iter().map(|i| i.doc.conditions.run.status).find(|s| *s != RunStatus::Completed);
    let failed = comparison.thresholds.iter().any(|t| !t.check.passed);
    let unsupported = comparison.claims.iter().any(|c| c.verdict != Verdict::Supported);
    Ok(match (stopped, failed, unsupported) {
        (Some(RunStatus::Interrupted), _, _) => ExitCode::from(130),
        (Some(_), _, _) => ExitCode::from(1),
        (None, true, _) => ExitCode::from(3),
        (None, false, true) => ExitCode::from(4),
        (None, false, false) => ExitCode::SUCCESS,
    })
}

/// A seed from the clock, within the 2^53 - 1 a result's JSON keeps exact; never 0.
fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos());
    ((nanos as u64) & ((1 << 53) - 1)).max(1)
}
