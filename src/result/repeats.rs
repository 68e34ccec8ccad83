//! `--repeat N`: one document from N measured phases. The top level is built from the
//! repeats' recorders added together (exact percentiles over every repeat); each repeat
//! keeps its own statistics; the timeline is the repeats' timelines back to back.

use super::{figures, PhaseTotals};
use crate::model::{metric, repeat, IntervalStats, RepeatRecord, ResultDocument};
use crate::runner::RunOutcome;

/// The document of a run whose measured phase ran `runs.len()` times (at least once), from
/// its `start` document (`extra`: the run's further percentiles).
pub(super) fn build_repeated(
    start: &ResultDocument,
    extra: &[f64],
    mut runs: Vec<(RunOutcome, PhaseTotals)>,
) -> ResultDocument {
    if runs.len() <= 1 {
        let (outcome, measured) = runs.pop().expect("at least one run");
        return figures(start, extra, outcome, &measured.totals, measured.timeline);
    }
    let mut merged: Option<(RunOutcome, PhaseTotals)> = None;
    let mut records = Vec::with_capacity(runs.len());
    let mut offset = 0.0;
    for (i, (outcome, mut collected)) in runs.into_iter().enumerate() {
        let index = i as u32 + 1;
        // Back to back on one time axis, the scatter's samples with their seconds; the
        // seconds between repeats (clients reconnecting) are left out.
        for s in collected.timeline.iter_mut() {
            s.from_s += offset;
            s.repeat = Some(index);
            s.scatter.points.iter_mut().for_each(|p| p[0] += offset);
        }
        offset = collected.timeline.last().map_or(offset, |s: &IntervalStats| s.from_s + s.duration_s);
        merged = Some(match merged {
            None => (
                outcome.clone(),
                PhaseTotals { totals: collected.totals.clone(), timeline: collected.timeline.clone() },
            ),
            Some((mut m, mut c)) => {
                add_outcome(&mut m, &outcome);
                c.totals.add(&collected.totals);
                c.timeline.extend(collected.timeline.iter().cloned());
                (m, c)
            }
        });
        let doc = figures(start, extra, outcome, &collected.totals, collected.timeline);
        records.push(record(index, doc));
    }
    let (outcome, collected) = merged.expect("runs");
    let mut doc = figures(start, extra, outcome, &collected.totals, collected.timeline);
    // The counters of the measured phases only: the warmups and reconnections between
    // repeats ran statements too.
    let mut delta = std::collections::BTreeMap::new();
    for r in &records {
        for (k, v) in &r.status_delta {
            *delta.entry(k.clone()).or_insert(0) += v;
        }
    }
    delta.retain(|_, v| *v != 0);
    doc.conditions.server.status_delta = delta;
    let classes: Vec<&str> = doc.stats.iter().filter(|(_, s)| s.count > 0).map(|(k, _)| k.as_str()).collect();
    let metrics = metric::headline(&classes);
    doc.repeat_summary = repeat::summarize(&records, &metrics, doc.conditions.run.cost_per_hour);
    doc.repeats = records;
    doc
}

/// Adds a later repeat to the merged outcome: times and counts add up, the run's status is
/// the worst, counters span from the first repeat's start to the last one's end.
fn add_outcome(m: &mut RunOutcome, o: &RunOutcome) {
    m.measured_s += o.measured_s;
    if o.status.severity() > m.status.severity() {
        m.status = o.status;
    }
    if m.failure.is_none() {
        m.failure.clone_from(&o.failure);
    }
    m.ended_at = o.ended_at;
    m.counters_after.clone_from(&o.counters_after);
    add_tallies(&mut m.tallies, &o.tallies);
    // Each repeat ended its own warmup.
    if let (Some(a), Some(b)) = (&mut m.warmup_end, &o.warmup_end) {
        *a = crate::model::WarmupEnd::pooled([&*a, b]);
    }
    let (a, b) = (&mut m.client, &o.client);
    let wall = a.wall_s + b.wall_s;
    a.host_busy = match (a.host_busy, b.host_busy) {
        (Some(x), Some(y)) if wall > 0.0 => Some((x * a.wall_s + y * b.wall_s) / wall),
        (x, y) => x.or(y),
    };
    a.busiest_worker = a.busiest_worker.max(b.busiest_worker);
    a.cpu_s += b.cpu_s;
    a.wall_s = wall;
    m.peak_rss_bytes = m.peak_rss_bytes.max(o.peak_rss_bytes);
    o.transports.iter().for_each(|t| crate::model::TransportSeen::add(&mut m.transports, t));
    // Every repeat's connections are clients of their own.
    m.per_client.extend_from_slice(&o.per_client);
}

fn record(index: u32, doc: ResultDocument) -> RepeatRecord {
    let ResultDocument { stats, statements, transactions, errors, client_cost, conditions, .. } = doc;
    let run = conditions.run;
    RepeatRecord {
        index,
        status: run.status,
        started_at: run.started_at,
        ended_at: run.ended_at,
        measured_s: run.measured_s,
        events: run.events,
        stats,
        statements,
        transactions,
        errors,
        client_cost,
        status_delta: conditions.server.status_delta,
    }
}

/// A later repeat's tallies: read last after it, changed by each repeat's change (what
/// happened between repeats, a later warmup, is no repeat's).
fn add_tallies(merged: &mut [crate::model::TallyRecord], later: &[crate::model::TallyRecord]) {
    for m in merged.iter_mut() {
        let l = later.iter().find(|l| l.name == m.name);
        m.after = l.and_then(|l| l.after);
        m.change = m.change.zip(l.and_then(|l| l.change)).map(|(a, b)| a + b);
    }
}
