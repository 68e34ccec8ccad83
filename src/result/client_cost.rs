//! The load generator's own cost, and whether it limited what it measured.

use crate::model::ClientRecord;
use crate::runner::ClientCpu;

/// The client's cost, and whether it limited the measurement.
pub fn record(c: &ClientCpu, events: u64, queries: u64, peak_rss_bytes: u64) -> ClientRecord {
    let utilization = c.cpu_s / (c.wall_s * c.cores.max(1) as f64).max(1e-9);
    let warning = saturation(c, utilization);
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

/// Whether the client's OWN CPU limited it: the process used nearly all of its cores, or
/// one of its event loops was busy nearly all the time (its clients then wait for the loop,
/// not the server). How busy the host was (a server on it, other programs) is not the
/// client's saturation: the audit's shared-host finding judges that.
fn saturation(c: &ClientCpu, utilization: f64) -> Option<String> {
    if utilization >= 0.9 {
        Some(format!(
            "the client used {:.0}% of all {} cores: it may have limited throughput and inflated latency",
            utilization * 100.0,
            c.cores
        ))
    } else if c.shared_event_loops && c.busiest_worker >= 0.9 {
        Some(format!(
            "a client worker thread (of {}) was busy {:.0}% of a core: the load generator, not the server, may be the bottleneck",
            c.worker_threads,
            c.busiest_worker * 100.0
        ))
    } else {
        None
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

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 cores, 2 event-loop workers, 10 s measured.
    fn cpu(cpu_s: f64, busiest_worker: f64, host_busy: f64) -> ClientCpu {
        ClientCpu {
            cpu_s,
            wall_s: 10.0,
            cores: 2,
            worker_threads: 2,
            busiest_worker,
            shared_event_loops: true,
            host_busy: Some(host_busy),
        }
    }

    #[test]
    fn a_busy_host_alone_does_not_saturate_the_client() {
        // A co-located server kept the host 98% busy; the client used 27% and 21%.
        for cpu_s in [5.4, 4.2] {
            let r = record(&cpu(cpu_s, 0.3, 0.98), 1000, 10_000, 0);
            assert!(!r.saturated && r.warning.is_none(), "{r:?}");
            assert_eq!(r.host_cpu_busy_pct, Some(98.0));
        }
    }

    #[test]
    fn the_clients_own_cpu_saturates_it() {
        let all_cores = record(&cpu(18.4, 0.95, 0.99), 1000, 10_000, 0);
        assert!(all_cores.saturated);
        assert!(all_cores.warning.unwrap().contains("92% of all 2 cores"));
        let one_loop = record(&cpu(9.5, 0.93, 0.5), 1000, 10_000, 0);
        assert!(one_loop.saturated);
        assert!(one_loop.warning.unwrap().contains("busy 93% of a core"));
        // A thread per client (SQLite) busy all the time runs the database, not a loop.
        let blocking = ClientCpu { shared_event_loops: false, ..cpu(9.5, 0.93, 0.5) };
        assert!(!record(&blocking, 1000, 10_000, 0).saturated);
    }
}
