//! The shards' figures added up: histograms summed bucket by bucket, rates and counts added,
//! the clients' cost and fairness pooled.

use super::CombineError;
use crate::model::{ClassStats, ClientRecord, ErrorRecord, FairnessRecord, ResultDocument};
use crate::recorder::summary::class_stats;
use crate::stats::{HistogramError, LatencyHistogram};
use std::collections::BTreeMap;

/// Sets `into`'s figures to the sum of `docs`' (`into` starts as shard 0's).
pub fn figures(into: &mut ResultDocument, docs: &[&ResultDocument]) -> Result<(), CombineError> {
    let extra = extra_percentiles(docs[0]);
    into.stats = classes(docs.iter().map(|d| &d.stats), &extra)?;
    into.statements = classes(docs.iter().map(|d| &d.statements), &extra)?;
    into.transactions = classes(docs.iter().map(|d| &d.transactions), &extra)?;
    if docs.iter().all(|d| d.service.is_some()) {
        into.service = Some(classes(docs.iter().filter_map(|d| d.service.as_ref()), &extra)?);
        into.service_statements = Some(classes(docs.iter().filter_map(|d| d.service_statements.as_ref()), &extra)?);
    }
    if let Some(o) = &mut into.open_loop {
        let all: Vec<_> = docs.iter().filter_map(|d| d.open_loop.as_ref()).collect();
        o.rate = all.iter().map(|o| o.rate).sum();
        o.max_backlog = all.iter().map(|o| o.max_backlog).sum();
        o.late = all.iter().map(|o| o.late).sum();
        o.dropped = all.iter().map(|o| o.dropped).sum();
        o.start_delay = class(&all.iter().map(|o| &o.start_delay).collect::<Vec<_>>(), &extra)?;
    }
    into.errors = errors(docs);
    into.client_cost = client_cost(docs);
    into.fairness = docs.iter().map(|d| d.fairness.clone()).collect::<Option<Vec<_>>>().and_then(|f| fairness(&f));
    Ok(())
}

/// The `--percentiles` the shards computed beyond the fixed ones.
fn extra_percentiles(doc: &ResultDocument) -> Vec<f64> {
    let Some(first) = doc.stats.values().next() else { return Vec::new() };
    first.percentiles_us.keys().filter_map(|k| k.strip_prefix('p')?.parse().ok()).collect()
}

/// Each name's statistics over every map that has it.
fn classes<'a>(
    maps: impl Iterator<Item = &'a BTreeMap<String, ClassStats>>,
    extra: &[f64],
) -> Result<BTreeMap<String, ClassStats>, CombineError> {
    let mut by_name: BTreeMap<String, Vec<&ClassStats>> = BTreeMap::new();
    for map in maps {
        for (name, stats) in map {
            by_name.entry(name.clone()).or_default().push(stats);
        }
    }
    by_name
        .into_iter()
        .map(|(name, all)| match class(&all, extra) {
            Ok(stats) => Ok((name, stats)),
            Err(source) => Err(CombineError::Class { class: name, source }),
        })
        .collect()
}

/// One class over all shards: the histograms' exact sum; rates and counts added.
fn class(all: &[&ClassStats], extra: &[f64]) -> Result<ClassStats, HistogramError> {
    let mut sum = LatencyHistogram::new();
    for s in all {
        sum.add(&decode(s)?);
    }
    let mut merged = class_stats(&sum, 1.0, extra);
    merged.qps = all.iter().map(|s| s.qps).sum();
    let add = |f: fn(&ClassStats) -> Option<u64>| all.iter().map(|s| f(s)).reduce(|a, b| Some(a? + b?)).flatten();
    merged.rows_affected = add(|s| s.rows_affected);
    merged.rollbacks = add(|s| s.rollbacks);
    merged.errors = add(|s| s.errors);
    Ok(merged)
}

/// A result's histogram with its exact extremes and sum.
pub fn decode(s: &ClassStats) -> Result<LatencyHistogram, HistogramError> {
    let ns = |us: f64| (us * 1000.0).round() as u64;
    let sum = (s.sum_us * 1000.0).round().max(0.0) as u128;
    LatencyHistogram::decode(&s.histogram, ns(s.min_us), ns(s.max_us), sum)
}

fn errors(docs: &[&ResultDocument]) -> ErrorRecord {
    let mut e = ErrorRecord::default();
    for d in docs {
        e.total += d.errors.total;
        e.reconnects += d.errors.reconnects;
        e.reconnect_failures += d.errors.reconnect_failures;
        for (code, n) in &d.errors.by_code {
            *e.by_code.entry(code.clone()).or_default() += n;
        }
    }
    e
}

/// All client hosts together: CPU added and divided by all their events and statements;
/// the extremes (busiest worker, peak memory) of any; saturated if any one was.
fn client_cost(docs: &[&ResultDocument]) -> ClientRecord {
    let costs: Vec<&ClientRecord> = docs.iter().map(|d| &d.client_cost).collect();
    let cpu_s: f64 = costs.iter().map(|c| c.cpu_s).sum();
    let events: u64 = docs.iter().map(|d| d.stats.get("event").map_or(0, |s| s.count)).sum();
    let queries: u64 = docs.iter().map(|d| d.stats.get("total").map_or(0, |s| s.count)).sum();
    // Cores of the client hosts, each host once (shards may share one).
    let mut hosts: BTreeMap<&str, u32> = BTreeMap::new();
    for d in docs {
        hosts.insert(&d.conditions.client.host.hostname, d.client_cost.cores);
    }
    let cores: u32 = hosts.values().sum();
    let warnings: Vec<String> = docs
        .iter()
        .filter_map(|d| {
            let index = d.conditions.run.shard.as_ref()?.index;
            Some(format!(
                "shard {index} ({}): {}",
                d.conditions.client.host.hostname,
                d.client_cost.warning.as_deref()?
            ))
        })
        .collect();
    ClientRecord {
        cpu_s,
        cpu_per_event_us: (events > 0).then(|| cpu_s * 1e6 / events as f64),
        cpu_per_query_us: (queries > 0).then(|| cpu_s * 1e6 / queries as f64),
        // Each shard's CPU in cores, over all the hosts' cores.
        cpu_utilization_pct: costs.iter().map(|c| c.cpu_utilization_pct * c.cores as f64).sum::<f64>()
            / cores.max(1) as f64,
        cores,
        worker_threads: costs.iter().map(|c| c.worker_threads).sum(),
        busiest_worker_pct: costs.iter().map(|c| c.busiest_worker_pct).fold(0.0, f64::max),
        host_cpu_busy_pct: costs.iter().filter_map(|c| c.host_cpu_busy_pct).reduce(f64::max),
        peak_rss_bytes: costs.iter().map(|c| c.peak_rss_bytes).max().unwrap_or(0),
        saturated: costs.iter().any(|c| c.saturated),
        warning: (!warnings.is_empty()).then(|| warnings.join("; ")),
    }
}

/// Every client of every shard as one population: means weighted by clients, the standard
/// deviation from the pooled sums of squares (exact for population deviations).
fn fairness(all: &[FairnessRecord]) -> Option<FairnessRecord> {
    let n: f64 = all.iter().map(|f| f.clients as f64).sum();
    if n == 0.0 {
        return None;
    }
    let pooled = |avg: fn(&FairnessRecord) -> f64, dev: fn(&FairnessRecord) -> f64| {
        let mean = all.iter().map(|f| avg(f) * f.clients as f64).sum::<f64>() / n;
        let squares = all.iter().map(|f| (dev(f).powi(2) + avg(f).powi(2)) * f.clients as f64).sum::<f64>() / n;
        (mean, (squares - mean * mean).max(0.0).sqrt())
    };
    let (events_avg, events_stddev) = pooled(|f| f.events_avg, |f| f.events_stddev);
    let (busy_s_avg, busy_s_stddev) = pooled(|f| f.busy_s_avg, |f| f.busy_s_stddev);
    Some(FairnessRecord {
        clients: n as u32,
        events_avg,
        events_stddev,
        events_min: all.iter().map(|f| f.events_min).min()?,
        events_max: all.iter().map(|f| f.events_max).max()?,
        busy_s_avg,
        busy_s_stddev,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_fairness_is_that_of_all_clients_together() {
        // Clients with 1, 3 (one shard) and 5, 7, 9 (another) events.
        let of = |events: &[f64]| {
            let n = events.len() as f64;
            let avg = events.iter().sum::<f64>() / n;
            let dev = (events.iter().map(|e| (e - avg).powi(2)).sum::<f64>() / n).sqrt();
            FairnessRecord {
                clients: events.len() as u32,
                events_avg: avg,
                events_stddev: dev,
                events_min: events.iter().cloned().fold(f64::MAX, f64::min) as u64,
                events_max: events.iter().cloned().fold(0.0, f64::max) as u64,
                busy_s_avg: avg,
                busy_s_stddev: dev,
            }
        };
        let pooled = fairness(&[of(&[1.0, 3.0]), of(&[5.0, 7.0, 9.0])]).unwrap();
        let whole = of(&[1.0, 3.0, 5.0, 7.0, 9.0]);
        assert!((pooled.events_avg - whole.events_avg).abs() < 1e-9);
        assert!((pooled.events_stddev - whole.events_stddev).abs() < 1e-9);
        assert_eq!((pooled.events_min, pooled.events_max, pooled.clients), (1, 9, 5));
    }
}
