//! `fairbench combine`: the shards of one run (`--shard I/N`) as one result document. Every
//! histogram is the exact sum of the shards' (never an average of percentiles), counts and
//! rates add up, minima and maxima are the extremes of all, the timeline is merged entry by
//! entry from the shards' entry histograms, and each shard keeps a row of its own.

mod merge;
mod timeline;

use crate::model::shard::{ShardRecord, ShardRow};
use crate::model::{Criterion, ResultDocument, RunStatus, ThresholdRecord};
use crate::recorder::classes::ClassHistogramError;
use crate::stats::HistogramError;

pub const BEGIN: &str = "-----BEGIN FAIRBENCH RESULT-----";
pub const END: &str = "-----END FAIRBENCH RESULT-----";

/// Why the given results do not make one run's result.
#[derive(Debug, thiserror::Error)]
pub enum CombineError {
    #[error("nothing to combine: give the shards' result files (or logs with marked results)")]
    NothingGiven,
    #[error("{0} is already a combined result")]
    AlreadyCombined(String),
    #[error("{0} is not a shard's result (run with --shard I/N)")]
    NotAShard(String),
    #[error(
        "{first} is shard {}/{} of run {:?}, {other} is shard {}/{} of run {:?}: combine only the shards of one run",
        .first_shard.index, .first_shard.count, .first_shard.key, .other_shard.index, .other_shard.count, .other_shard.key
    )]
    OtherRun { first: String, first_shard: Box<ShardRecord>, other: String, other_shard: Box<ShardRecord> },
    #[error("shard {index} of {count} is missing: combine needs every shard of the run")]
    MissingShard { index: u32, count: u32 },
    #[error("shard {index} is given twice ({})", .names.join(", "))]
    ShardGivenTwice { index: u32, names: Vec<String> },
    #[error(
        "{first} and {other} differ in {fact} ({first_value} vs {other_value}): combine only the shards of one run"
    )]
    Differ { first: String, other: String, fact: &'static str, first_value: String, other_value: String },
    #[error(
        "a shard's timeline has entries without histograms: combine needs results written with --shard by this version"
    )]
    TimelineWithoutHistograms,
    #[error("{class}: {source}")]
    Class { class: String, source: HistogramError },
    #[error(transparent)]
    Histogram(#[from] HistogramError),
    #[error(transparent)]
    TimelineHistogram(#[from] ClassHistogramError),
}

/// A shard's result and where it came from (a file, or a log's n-th marked result).
pub struct Source {
    pub name: String,
    pub doc: ResultDocument,
}

/// The results marked in a log (`--print-result` between [`BEGIN`] and [`END`]); none when
/// the text has no marker.
pub fn marked(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(b) = rest.find(BEGIN) {
        let after = &rest[b + BEGIN.len()..];
        let Some(e) = after.find(END) else { break };
        found.push(after[..e].trim());
        rest = &after[e + END.len()..];
    }
    found
}

/// One result of the shards in `sources`, which must be every shard of one run, each once.
pub fn combine(mut sources: Vec<Source>) -> Result<ResultDocument, CombineError> {
    let records = shard_records(&sources)?;
    sources.sort_by_key(|s| s.doc.conditions.run.shard.as_ref().map_or(0, |r| r.index));
    let docs: Vec<&ResultDocument> = sources.iter().map(|s| &s.doc).collect();
    same_run(&sources)?;
    let mut doc = docs[0].clone();
    merge::figures(&mut doc, &docs)?;
    doc.intervals = timeline::merged(&docs)?;
    doc.conditions.run = run_record(&docs, &records);
    doc.shards = sources.iter().map(row).collect();
    doc.streamed = Vec::new();
    doc.thresholds = thresholds(&doc, &docs[0].thresholds);
    doc.audit = Vec::new();
    Ok(doc)
}

/// The run's --thresholds (as every shard was given them) checked on the whole run: a shard
/// alone cannot judge `qps>5000` for all of them.
fn thresholds(doc: &ResultDocument, given: &[ThresholdRecord]) -> Vec<ThresholdRecord> {
    given
        .iter()
        .filter_map(|t| Criterion::threshold(&t.threshold).ok())
        .map(|c| ThresholdRecord::check(&c, doc.metric(&c.metric)))
        .collect()
}

/// Every source is a shard of the same run, and every shard of it is there once.
fn shard_records(sources: &[Source]) -> Result<Vec<ShardRecord>, CombineError> {
    if sources.is_empty() {
        return Err(CombineError::NothingGiven);
    }
    let mut records = Vec::new();
    for s in sources {
        match &s.doc.conditions.run.shard {
            Some(r) => records.push(r.clone()),
            None if !s.doc.shards.is_empty() => return Err(CombineError::AlreadyCombined(s.name.clone())),
            None => return Err(CombineError::NotAShard(s.name.clone())),
        }
    }
    let count = records[0].count;
    for (i, r) in records.iter().enumerate() {
        if r.key != records[0].key || r.count != count {
            return Err(CombineError::OtherRun {
                first: sources[0].name.clone(),
                first_shard: Box::new(records[0].clone()),
                other: sources[i].name.clone(),
                other_shard: Box::new(r.clone()),
            });
        }
    }
    for index in 0..count {
        let names: Vec<String> =
            records.iter().zip(sources).filter(|(r, _)| r.index == index).map(|(_, s)| s.name.clone()).collect();
        match names.len() {
            1 => {}
            0 => return Err(CombineError::MissingShard { index, count }),
            _ => return Err(CombineError::ShardGivenTwice { index, names }),
        }
    }
    Ok(records)
}

/// What must be the same for shards to be one run: the workload, the target, the settings.
fn same_run(sources: &[Source]) -> Result<(), CombineError> {
    let facts = |d: &ResultDocument| -> Vec<(&'static str, String)> {
        let (c, r) = (&d.conditions, &d.conditions.run);
        let shard = r.shard.as_ref();
        vec![
            ("workload", c.workload.name.clone()),
            ("workload options", c.workload.options.to_string()),
            ("distribution", c.workload.distribution.to_string()),
            ("statements", format!("{:?}", c.workload.statements_sql)),
            ("target", d.target.url.clone()),
            ("server", format!("{} {}", c.server.product, c.server.version)),
            // Shards behind a load balancer may reach different servers: their durability
            // in effect must at least agree.
            ("server durability", c.server.facts.as_ref().map_or("unknown".into(), |f| f.durability.describe())),
            ("loop", format!("{:?}", r.loop_model)),
            ("--time", format!("{:?}", r.time_limit_s)),
            ("--warmup", r.warmup_s.to_string()),
            ("--rand-seed", r.rand_seed.to_string()),
            ("--threads", format!("{:?}", shard.map(|s| s.total_threads))),
            ("--rate", format!("{:?}", shard.and_then(|s| s.total_rate))),
            ("fairbench version", d.fairbench_version.clone()),
        ]
    };
    let first = facts(&sources[0].doc);
    for s in &sources[1..] {
        for ((fact, a), (_, b)) in first.iter().zip(facts(&s.doc)) {
            if *a != b {
                return Err(CombineError::Differ {
                    first: sources[0].name.clone(),
                    other: s.name.clone(),
                    fact,
                    first_value: a.clone(),
                    other_value: b,
                });
            }
        }
    }
    Ok(())
}

/// The whole run's record: every shard's clients and events, from the first start to the
/// last end, the worst status.
fn run_record(docs: &[&ResultDocument], records: &[ShardRecord]) -> crate::model::RunRecord {
    let mut run = docs[0].conditions.run.clone();
    run.threads = records[0].total_threads;
    run.events = docs.iter().map(|d| d.conditions.run.events).sum();
    run.measured_s = docs.iter().map(|d| d.conditions.run.measured_s).fold(0.0, f64::max);
    run.events_limit = docs.iter().map(|d| d.conditions.run.events_limit).sum();
    run.started_at = docs.iter().map(|d| d.conditions.run.started_at.clone()).min().unwrap_or_default();
    run.ended_at = docs.iter().map(|d| d.conditions.run.ended_at.clone()).max().unwrap_or_default();
    let worst = [RunStatus::Failed, RunStatus::Incomplete, RunStatus::Running, RunStatus::Interrupted];
    run.status =
        worst.into_iter().find(|w| docs.iter().any(|d| d.conditions.run.status == *w)).unwrap_or(RunStatus::Completed);
    let failures: Vec<String> = docs
        .iter()
        .filter_map(|d| {
            let r = &d.conditions.run;
            Some(format!("shard {}: {}", r.shard.as_ref()?.index, r.failure.as_deref()?))
        })
        .collect();
    run.failure = (!failures.is_empty()).then(|| failures.join("; "));
    run.shard = None;
    // Each shard ended its warmup on its own: the longest pause, every event left in flight.
    let ends: Option<Vec<_>> = docs.iter().map(|d| d.conditions.run.warmup_end.clone()).collect();
    run.warmup_end = ends.map(|ends| crate::model::WarmupEnd {
        pause_ms: ends.iter().map(|e| e.pause_ms).fold(0.0, f64::max),
        events_in_flight: ends.iter().map(|e| e.events_in_flight).sum(),
    });
    run
}

fn row(s: &Source) -> ShardRow {
    let d = &s.doc;
    let stat = |k: &str| d.stats.get(k).cloned().unwrap_or_default();
    ShardRow {
        shard: d.conditions.run.shard.clone().expect("checked: a shard's result"),
        source: s.name.clone(),
        client: d.conditions.client.clone(),
        client_cost: d.client_cost.clone(),
        measured_s: d.conditions.run.measured_s,
        events: d.conditions.run.events,
        tps: stat("event").qps,
        qps: stat("total").qps,
        p95_us: stat("total").p95_us,
        event_p95_us: Some(stat("event").p95_us),
        errors: d.errors.total,
        status: d.conditions.run.status,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_results_are_found_among_other_log_lines() {
        let log = format!("pod a\n{BEGIN}\n{{\"a\":1}}\n{END}\nnoise\n{BEGIN}\n{{\"b\":2}}\n{END}\n{BEGIN}\ncut");
        assert_eq!(marked(&log), ["{\"a\":1}", "{\"b\":2}"], "a result cut short is left out");
        assert!(marked("{\"schema\": \"fairbench.result\"}").is_empty());
    }
}
