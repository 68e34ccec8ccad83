//! The load generator's own cost, and whether it limited what it measured.

use crate::model::ClientRecord;
use crate::runner::ClientCpu;

/// The client's cost, and whether it limited the measurement.
pub fn record(c: &ClientCpu, events: u64, queries: u64, peak_rss_bytes: u64) -> ClientRecord {
    let utilization = c.cpu_s / (c.wall_s * c.cores.max(1) as f64).max(1e-9);
    // Saturated: the machine had no CPU left for the client, or one of its event loops
    // was busy nearly all the time (its clients then wait for the loop, not the server).
    let host_busy = c.host_busy.unwrap_or(0.0);
    let warning = if utilization >= 0.9 {
        Some(format!(
            "the client used {:.0}% of all {} cores: it may have limited throughput and inflated latency",
            utilization * 100.0,
            c.cores
        ))
    } else if host_busy >= 0.9 && utilization >= 0.25 {
        Some(format!(
            "the host's CPUs were {:.0}% busy and the client itself used {:.0}% of them: it competed for CPU with what it measured",
            host_busy * 100.0,
            utilization * 100.0
        ))
    } else if c.shared_event_loops && c.busiest_worker >= 0.9 {
        Some(format!(
            "a client worker thread was busy {:.0}% of the time: the load generator, not the server, may be the bottleneck",
            c.busiest_worker * 100.0
        ))
    } else {
        None
    };
    ClientRecord {
        cpu_s: c.cpu_s,
        cpu_per_event_us: (events > 0).then(|| c.cpu_s * 1e6 / events as f64),
        cpu_per_query_us: (queries > 0).then(|| c.cpu_s * 1e6 / queries as f64),
        cpu_utilization_pct: utilization * 100.0,
        cores: c.cores,
        worker_threads: c.worker_threads,
        busiest_worker_pct: c.busiest_worker * 100.0,
        host_cpu_busy_pct: c.host_busy.map(|b| b * 100.0),
        peak_rss_bytes,
        saturated: warning.is_some(),
        warning,
    }
}

/// sysbench's "threads fairness" over every client's measured events and busy time.
pub fn fairness(per_client: &[crate::runner::ClientTotals]) -> Option<crate::model::FairnessRecord> {
    if per_client.is_empty() {
        return None;
    }
    let n = per_client.len() as f64;
    let events_avg = per_client.iter().map(|c| c.events as f64).sum::<f64>() / n;
    let busy_s_avg = per_client.iter().map(|c| c.busy_s).sum::<f64>() / n;
    let stddev = |f: &dyn Fn(&crate::runner::ClientTotals) -> f64, avg: f64| {
        (per_client.iter().map(|c| (f(c) - avg).powi(2)).sum::<f64>() / n).sqrt()
    };
    Some(crate::model::FairnessRecord {
        clients: per_client.len() as u32,
        events_avg,
        events_stddev: stddev(&|c| c.events as f64, events_avg),
        events_min: per_client.iter().map(|c| c.events).min().unwrap_or(0),
        events_max: per_client.iter().map(|c| c.events).max().unwrap_or(0),
        busy_s_avg,
        busy_s_stddev: stddev(&|c| c.busy_s, busy_s_avg),
    })
}
