//! Rules about runs split over client hosts: a shard's result read alone, and in a combined
//! result a saturated client host, shards that started or ended apart, host clocks off, one
//! shard much slower than the others, server counters read before every shard ended.

use super::rules::finding;
use super::{Finding, Severity};
use crate::model::shard::{ShardRow, ShardStart, StartSpread};
use crate::model::ResultDocument;
use serde_json::json;

/// Ends may differ by more than starts: a host busy with its clients wakes later at the
/// deadline than at a start it waited for idle.
const END_ALLOWANCE_US: i64 = 20_000;
/// A host's clock this far from the database's is not kept in time (NTP): it drifts.
const CLOCK_OFFSET_US: i64 = 100_000;
/// A shard's events per client this far below the shards' median: it held the total back.
const UNEVEN: f64 = 0.2;

pub fn all(d: &ResultDocument) -> Vec<Finding> {
    let mut out: Vec<Finding> = shard_alone(d).into_iter().collect();
    if !d.shards.is_empty() {
        out.extend(saturated(&d.shards));
        out.extend(skew(&d.shards));
        out.extend(clock_offsets(&d.shards));
        out.extend(uneven(&d.shards));
        out.extend(counters_partial(&d.shards));
    }
    out
}

fn shard_alone(d: &ResultDocument) -> Option<Finding> {
    let s = d.conditions.run.shard.as_ref()?;
    Some(finding(
        "shard-alone",
        Severity::Warn,
        format!("this is shard {} of {}: one client host's part of the run", s.index, s.count),
        vec![("shard", json!(s.index)), ("shards", json!(s.count)), ("key", json!(s.key))],
        "combine every shard's result (`fairbench combine SHARD.json ... -o all.json`) before reading or comparing the run's numbers; the server's counters are in shard 0's only",
    ))
}

fn saturated(rows: &[ShardRow]) -> Vec<Finding> {
    rows.iter()
        .filter(|r| r.client_cost.saturated)
        .map(|r| {
            finding(
                "shard-client-saturated",
                Severity::Warn,
                format!(
                    "client host {} (shard {}) was saturated: {}",
                    r.client.host.hostname,
                    r.shard.index,
                    r.client_cost.warning.as_deref().unwrap_or("its CPU limited it")
                ),
                vec![
                    ("shard", json!(r.shard.index)),
                    ("host", json!(r.client.host.hostname)),
                    ("client_cpu_pct", json!((r.client_cost.cpu_utilization_pct * 10.0).round() / 10.0)),
                    ("busiest_worker_pct", json!((r.client_cost.busiest_worker_pct * 10.0).round() / 10.0)),
                ],
                "give that shard fewer clients or a larger host, or add shards: a saturated host adds latency that is not the server's and holds back the total",
            )
        })
        .collect()
}

fn firsts(rows: &[ShardRow]) -> Vec<(u32, &ShardStart)> {
    rows.iter().filter_map(|r| Some((r.shard.index, r.shard.starts.first()?))).collect()
}

/// Starts farther apart than two shards' bounds allow, or ends farther apart than that
/// plus the deadline check's allowance.
fn skew(rows: &[ShardRow]) -> Option<Finding> {
    let spread = StartSpread::of(rows)?;
    let bound = 2 * spread.bound_us;
    let (start_spread, end_spread) = (spread.starts_us, spread.ends_us);
    if start_spread <= bound && end_spread <= bound + END_ALLOWANCE_US {
        return None;
    }
    Some(finding(
        "shard-skew",
        Severity::Warn,
        format!(
            "the shards started {:.1} ms and ended {:.1} ms apart, beyond the bound of {:.1} ms",
            start_spread as f64 / 1000.0,
            end_spread as f64 / 1000.0,
            bound as f64 / 1000.0
        ),
        vec![
            ("start_spread_ms", json!(start_spread as f64 / 1000.0)),
            ("end_spread_ms", json!(end_spread as f64 / 1000.0)),
            ("bound_ms", json!(bound as f64 / 1000.0)),
        ],
        "the edges of the run had fewer clients than the middle: look at the timeline's first and last seconds, and at the hosts' load (a host that woke late was busy or swapping)",
    ))
}

fn clock_offsets(rows: &[ShardRow]) -> Option<Finding> {
    let off: Vec<(u32, i64)> = firsts(rows)
        .into_iter()
        .filter(|(_, s)| s.clock_offset_us.abs() > CLOCK_OFFSET_US)
        .map(|(i, s)| (i, s.clock_offset_us))
        .collect();
    let worst = off.iter().map(|(_, o)| o.abs()).max()?;
    Some(finding(
        "shard-clock-offset",
        Severity::Warn,
        format!(
            "{} client host clock(s) differ from the database's by up to {:.0} ms",
            off.len(),
            worst as f64 / 1000.0
        ),
        vec![("offsets_ms", json!(off.iter().map(|(i, o)| (i.to_string(), *o as f64 / 1000.0)).collect::<std::collections::BTreeMap<_, _>>()))],
        "the start was corrected with the measured offsets, but a clock that far off is not kept by NTP and drifts during a long run: run chrony or ntpd on every client host",
    ))
}

/// A shard whose clients ran far fewer events than the others' (same workload, same server).
fn uneven(rows: &[ShardRow]) -> Option<Finding> {
    let per_client: Vec<(u32, f64)> =
        rows.iter().map(|r| (r.shard.index, r.tps / r.shard.threads.max(1) as f64)).collect();
    let mut sorted: Vec<f64> = per_client.iter().map(|(_, v)| *v).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let slow: Vec<&(u32, f64)> = per_client.iter().filter(|(_, v)| *v < median * (1.0 - UNEVEN)).collect();
    if slow.is_empty() || median <= 0.0 {
        return None;
    }
    let (index, rate) = **slow.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(finding(
        "shard-uneven",
        Severity::Warn,
        format!(
            "shard {index}'s clients ran {:.0}% fewer events per second than the shards' median",
            (1.0 - rate / median) * 100.0
        ),
        vec![
            ("slowest_shard", json!(index)),
            ("events_per_s_per_client", json!((rate * 10.0).round() / 10.0)),
            ("median_per_client", json!((median * 10.0).round() / 10.0)),
            ("slower_shards", json!(slow.len())),
        ],
        "a slower host, network path or zone held the total back: compare the hosts' CPU, network latency to the database and placement before reading the total as the server's",
    ))
}

fn counters_partial(rows: &[ShardRow]) -> Option<Finding> {
    let leader = rows.iter().find(|r| r.shard.reads_server_facts)?;
    if leader.shard.not_ended.is_empty() {
        return None;
    }
    Some(finding(
        "shard-counters-partial",
        Severity::Warn,
        format!("the server's counters were read before shard(s) {:?} ended", leader.shard.not_ended),
        vec![("not_ended", json!(leader.shard.not_ended))],
        "the statement-mix check compares counters that miss those shards' last statements; rerun with every shard healthy, or a longer --shard-timeout",
    ))
}
