//! From recorders to the result model's summaries (microseconds): an interval's figures,
//! the `stats` and `statements` sections. One histogram's figures are [`super::figures`]'s.

pub use super::figures::{class_stats, compact_stats};

use super::figures::micros;

use super::classes::ClassHistograms;
use super::Recorder;
use crate::model::{ClassStats, IntervalStats, Scatter, ScatterOf, SlowestEvent, SlowestStatement};
use crate::workload::StatementClass;
use std::collections::BTreeMap;
use std::time::Instant;

/// A sample as `[seconds since the run started, microseconds]`, in time order: times to the
/// microsecond and latencies to the nanosecond (what the clocks resolve), no binary noise.
fn scatter_points(sample: &[(Instant, std::time::Duration)], start: Instant) -> Vec<[f64; 2]> {
    let mut points: Vec<[f64; 2]> = sample
        .iter()
        .map(|(at, lat)| {
            let micros = at.saturating_duration_since(start).as_micros() as f64;
            [micros / 1e6, lat.as_nanos() as f64 / 1000.0]
        })
        .collect();
    points.sort_by(|a, b| a[0].total_cmp(&b[0]));
    points
}

/// One timeline interval (or report window) of a recorder, whose histograms per class are
/// `h` (merged once by the caller, who may hand them on: the streamed log, the kept
/// timeline). `threads` is left for the caller to set.
pub fn interval_stats<C: hdrhistogram::Counter>(
    r: &Recorder<C>,
    h: &ClassHistograms,
    start: Instant,
    from_s: f64,
    secs: f64,
    warmup: bool,
    extra: &[f64],
) -> IntervalStats {
    let open = r.open_loop();
    let mut stats = IntervalStats {
        from_s,
        duration_s: secs,
        repeat: None,
        warmup,
        threads: 0,
        event: Default::default(),
        total: Default::default(),
        read: Default::default(),
        write: Default::default(),
        commit: Default::default(),
        other: Default::default(),
        event_service: None,
        late: open.map(|o| o.late),
        dropped: open.map(|o| o.dropped),
        server: Default::default(),
        backlog: None,
        errors: r.error_count(),
        reconnects: r.reconnects,
        reconnect_failures: r.reconnect_failures,
        client_cpu_pct: None,
        scatter: Scatter {
            of: if r.scatter.of_commits { ScatterOf::Commit } else { ScatterOf::Event },
            seen: r.scatter.seen,
            points: scatter_points(&r.scatter.points, start),
        },
        slowest: r.slowest_statement().map(|(name, latency, at)| SlowestStatement {
            statement: name.to_string(),
            latency_us: latency.as_nanos() as f64 / 1000.0,
            ended_s: micros(at.saturating_duration_since(start).as_secs_f64()),
        }),
        slowest_event: r.slowest_event.map(|(latency, at)| SlowestEvent {
            latency_us: latency.as_nanos() as f64 / 1000.0,
            ended_s: micros(at.saturating_duration_since(start).as_secs_f64()),
        }),
        histograms: Default::default(),
    };
    h.apply_to(&mut stats, extra);
    stats
}

/// The `stats` (or, with `service`, the open loop's `service`) and `statements` sections.
pub fn class_and_statement_stats(
    totals: &Recorder,
    secs: f64,
    extra: &[f64],
    service: bool,
) -> (BTreeMap<String, ClassStats>, BTreeMap<String, ClassStats>) {
    let mut stats = BTreeMap::new();
    stats.insert("total".to_string(), class_stats(&totals.total(service), secs, extra));
    for class in StatementClass::ALL {
        stats.insert(class.name().to_string(), class_stats(&totals.class(class, service), secs, extra));
    }
    let events = match (service, totals.open_loop()) {
        (true, Some(o)) => &o.service_events,
        _ => &totals.events,
    };
    stats.insert("event".to_string(), class_stats(events, secs, extra));
    let statements = if service {
        totals.service_statements().map(|(name, h)| (name.to_string(), class_stats(h, secs, extra))).collect()
    } else {
        totals
            .statements()
            .zip(totals.rows_affected())
            .map(|((name, h), rows)| {
                (name.to_string(), ClassStats { rows_affected: Some(rows), ..class_stats(h, secs, extra) })
            })
            .collect()
    };
    (stats, statements)
}
