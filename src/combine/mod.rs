//! `fairbench combine`: the shards of one run (`--shard I/N`) as one result. Their records
//! merge into the run's record (every histogram the exact sum of the shards', never an
//! average of percentiles; the timeline merged entry by entry), and the result is built from
//! it as any run's is (`result::build`); each shard keeps a row of its own. The combined
//! record is a record like any other: combined again, it gives the same result.

mod records;
mod timeline;

use crate::model::record::Record;
use crate::model::shard::{ShardRecord, ShardRow};
use crate::model::ResultDocument;
use crate::recorder::record::CountsError;
use crate::result::BuildError;

pub const BEGIN: &str = "-----BEGIN FAIRBENCH RESULT-----";
pub const END: &str = "-----END FAIRBENCH RESULT-----";
/// A shard's record in a log: its file's bytes (gzip), base64, between these.
pub const RECORD_BEGIN: &str = "-----BEGIN FAIRBENCH RECORD-----";
pub const RECORD_END: &str = "-----END FAIRBENCH RECORD-----";

/// Why the given results do not make one run's result.
#[derive(Debug, thiserror::Error)]
pub enum CombineError {
    #[error("nothing to combine: give the shards' result files (or logs with marked results)")]
    NothingGiven,
    #[error("{0} is already a combined result: combine it alone, or the shards it was combined from")]
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
    #[error("{0}: its record is missing (a file beside it, or the log's marked record): combine builds from the shards' records, written by this version")]
    NoRecord(String),
    #[error("a shard's record does not fit the run's statements: {0}")]
    Counts(#[from] CountsError),
    #[error("the combined record: {0}")]
    Build(#[from] BuildError),
}

/// A shard's result and record, and where they came from (files, or a log's n-th marked
/// result); a result without its record is refused once the results are found to belong
/// together.
pub struct ShardInput {
    pub name: String,
    pub doc: ResultDocument,
    pub record: Option<Record>,
}

/// The run's result and the record it was built from.
pub struct Combined {
    pub doc: ResultDocument,
    pub record: Record,
}

/// The results marked in a log (`--print-result` between [`BEGIN`] and [`END`]); none when
/// the text has no marker.
pub fn marked(text: &str) -> Vec<&str> {
    between(text, BEGIN, END)
}

/// The records marked in a log (base64, between [`RECORD_BEGIN`] and [`RECORD_END`]).
pub fn marked_records(text: &str) -> Vec<&str> {
    between(text, RECORD_BEGIN, RECORD_END)
}

fn between<'a>(text: &'a str, begin: &str, end: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(b) = rest.find(begin) {
        let after = &rest[b + begin.len()..];
        let Some(e) = after.find(end) else { break };
        found.push(after[..e].trim());
        rest = &after[e + end.len()..];
    }
    found
}

/// One result of the shards in `sources`, which must be every shard of one run, each once
/// (or one combined result, built again from its record).
pub fn combine(mut sources: Vec<ShardInput>) -> Result<Combined, CombineError> {
    if let [one] = &sources[..] {
        if !one.doc.shards.is_empty() {
            let one = sources.pop().expect("one");
            let record = one.record.ok_or(CombineError::NoRecord(one.name))?;
            return Ok(Combined { doc: crate::result::build(&record)?, record });
        }
    }
    let shards = shard_records(&sources)?;
    sources.sort_by_key(|s| s.doc.conditions.run.shard.as_ref().map_or(0, |r| r.index));
    same_run(&sources)?;
    let records = sources
        .iter()
        .map(|s| s.record.as_ref().ok_or_else(|| CombineError::NoRecord(s.name.clone())))
        .collect::<Result<Vec<&Record>, _>>()?;
    let mut record = records::merged(&records, shards[0].total_threads)?;
    if let Some(end) = &mut record.end {
        end.shards = sources.iter().map(row).collect();
    }
    Ok(Combined { doc: crate::result::build(&record)?, record })
}

/// Every source is a shard of the same run, and every shard of it is there once.
fn shard_records(sources: &[ShardInput]) -> Result<Vec<ShardRecord>, CombineError> {
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
fn same_run(sources: &[ShardInput]) -> Result<(), CombineError> {
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

fn row(s: &ShardInput) -> ShardRow {
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
