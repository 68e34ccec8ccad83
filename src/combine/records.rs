//! The shards' records as one record: the run's, as if one client host had run every
//! client. Entries that cover the same stretch are merged (their counts added exactly, their
//! figures from the added histograms), each phase's end pools the shards' clients, and the
//! leading shard's reads of the server stand for the run.

use super::timeline::{group, merge_group};
use super::CombineError;
use crate::model::record::{ClientCpu, Record, RecordEntry, RecordStart, RecordedPhase, RunEnd, RunOutcome};
use crate::model::{RunStatus, WarmupEnd};
use crate::recorder::classes::ClassHistograms;
use crate::recorder::record::statement_infos;
use crate::recorder::Recorder;
use std::collections::BTreeMap;

/// One record of the run whose shards' records these are (shard order; the first leads).
pub fn merged(records: &[&Record], total_threads: u32) -> Result<Record, CombineError> {
    let start = start(records, total_threads);
    let statements = statement_infos(&start.statements)?;
    let empty = Recorder::new(&statements, &start.transactions, start.open_loop);
    let phases = (0..records.iter().map(|r| r.phases.len()).max().unwrap_or(0))
        .map(|p| {
            let of: Vec<&RecordedPhase> = records.iter().filter_map(|r| r.phases.get(p)).collect();
            Ok(RecordedPhase { entries: entries(&of, &empty)?, end: outcome(records, &of) })
        })
        .collect::<Result<Vec<_>, CombineError>>()?;
    let lead = records[0].end.clone().unwrap_or_default();
    let end = RunEnd { tables_at_end: lead.tables_at_end, checks: lead.checks, ..RunEnd::default() };
    Ok(Record { start, phases, end: Some(end), ha: Vec::new() })
}

/// The first shard's start, for every client: all threads, every shard's share of the rate.
fn start(records: &[&Record], total_threads: u32) -> RecordStart {
    let mut start = records[0].start.clone();
    start.started = records.iter().map(|r| r.start.started).min().unwrap_or(start.started);
    start.entry_histograms = false;
    let doc = &mut start.document;
    doc.conditions.run.threads = total_threads;
    doc.conditions.run.shard = None;
    if let Some(o) = &mut doc.open_loop {
        let all = records.iter().filter_map(|r| r.start.document.open_loop.as_ref());
        (o.rate, o.max_backlog) = all.fold((0.0, 0), |(rate, backlog), s| (rate + s.rate, backlog + s.max_backlog));
    }
    start
}

/// The phase's entries of every shard, grouped by the stretch they cover, each group one.
fn entries(phases: &[&RecordedPhase], empty: &Recorder) -> Result<Vec<RecordEntry>, CombineError> {
    let timelines: Vec<&[RecordEntry]> = phases.iter().map(|p| p.entries.as_slice()).collect();
    let mut merged = Vec::new();
    for members in group(&timelines, |e| &e.stats) {
        let mut counts = empty.clone();
        for e in &members {
            counts.add_recorded(&e.counts)?;
        }
        let stats: Vec<_> = members.iter().map(|e| &e.stats).collect();
        let stats = merge_group(&stats, &ClassHistograms::of(&counts));
        merged.push(RecordEntry { stats, counts: counts.counts() });
    }
    Ok(merged)
}

/// How the phase went for the run: from the first start to the last end, the worst status,
/// every client's totals; the server's counters as the leading shard read them. None when a
/// shard's phase never ended (the merged phase then never did either).
fn outcome(records: &[&Record], phases: &[&RecordedPhase]) -> Option<RunOutcome> {
    let ends: Vec<&RunOutcome> = phases.iter().map(|p| p.end.as_ref()).collect::<Option<_>>()?;
    let lead = ends[0];
    let failures: Vec<String> =
        ends.iter().enumerate().filter_map(|(i, o)| Some(format!("shard {i}: {}", o.failure.as_deref()?))).collect();
    let warmup_ends: Option<Vec<&WarmupEnd>> = ends.iter().map(|o| o.warmup_end.as_ref()).collect();
    Some(RunOutcome {
        measured_s: ends.iter().map(|o| o.measured_s).fold(0.0, f64::max),
        status: ends.iter().map(|o| o.status).max_by_key(|s| s.severity()).unwrap_or(RunStatus::Completed),
        failure: (!failures.is_empty()).then(|| failures.join("; ")),
        started_at: ends.iter().map(|o| o.started_at).min().unwrap_or(lead.started_at),
        ended_at: ends.iter().map(|o| o.ended_at).max().unwrap_or(lead.ended_at),
        counters_before: lead.counters_before.clone(),
        counters_after: lead.counters_after.clone(),
        tallies: lead.tallies.clone(),
        client: client(records, &ends),
        peak_rss_bytes: ends.iter().map(|o| o.peak_rss_bytes).max().unwrap_or(0),
        per_client: ends.iter().flat_map(|o| o.per_client.iter().copied()).collect(),
        // Each shard ended its warmup on its own.
        warmup_end: warmup_ends.map(WarmupEnd::pooled),
        deferred_left: ends.iter().map(|o| o.deferred_left).sum(),
        transports: ends.iter().flat_map(|o| &o.transports).fold(Vec::new(), |mut all, t| {
            crate::model::TransportSeen::add(&mut all, t);
            all
        }),
    })
}

/// Every client host's CPU as one: seconds added over the longest wall time, the cores of
/// each host once (shards may share one), the busiest worker of any.
fn client(records: &[&Record], ends: &[&RunOutcome]) -> ClientCpu {
    let mut hosts: BTreeMap<&str, u32> = BTreeMap::new();
    for (r, o) in records.iter().zip(ends) {
        hosts.insert(&r.start.document.conditions.client.host.hostname, o.client.cores);
    }
    let busy = ends.iter().filter_map(|o| o.client.host_busy);
    ClientCpu {
        cpu_s: ends.iter().map(|o| o.client.cpu_s).sum(),
        wall_s: ends.iter().map(|o| o.client.wall_s).fold(0.0, f64::max),
        cores: hosts.values().sum(),
        worker_threads: ends.iter().map(|o| o.client.worker_threads).sum(),
        busiest_worker: ends.iter().map(|o| o.client.busiest_worker).fold(0.0, f64::max),
        shared_event_loops: ends.iter().any(|o| o.client.shared_event_loops),
        host_busy: busy.reduce(f64::max),
    }
}
