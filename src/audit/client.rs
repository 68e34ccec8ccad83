//! Rules about the client and the host it ran on: whether the load generator limited what it
//! measured, and whether it shared a busy host with the server it measured.

use super::rules::finding;
use super::{Finding, Severity};
use crate::model::{plural, ResultDocument, TransportKind};
use serde_json::{json, Value};

/// The host's CPUs (all processes) at least this busy: a client and a server on that host
/// took CPU from each other.
pub const BUSY_HOST_PCT: f64 = 80.0;

/// The client's process against all its cores, or a worker thread against its one core
/// (as `result::client_cost` judges it when it builds the result).
const SATURATED_PCT: f64 = 90.0;

pub fn all(d: &ResultDocument) -> Vec<Finding> {
    [client_saturated(d), shared_host(d), clients_unequal(d)].into_iter().flatten().collect()
}

/// Clients' events spread at least this much (standard deviation over mean) are unequal:
/// equal clients of a closed loop on an unloaded server stay within a few percent.
const UNEQUAL_SPREAD: f64 = 0.25;

/// Clients of a closed loop served unequally (sysbench's "threads fairness"): a lock or a
/// scheduler held some back while others ran, so the throughput is the lucky clients'.
fn clients_unequal(d: &ResultDocument) -> Option<Finding> {
    let f = d.fairness.as_ref().filter(|f| f.clients >= 2 && f.events_avg >= 20.0)?;
    if d.open_loop.is_some() || f.events_stddev / f.events_avg <= UNEQUAL_SPREAD {
        return None;
    }
    Some(finding(
        "clients-unequal",
        Severity::Warn,
        format!(
            "clients were served unequally: {:.0} ± {:.0} events per client (from {} to {}): a lock or a scheduler held some back while others ran",
            f.events_avg, f.events_stddev, f.events_min, f.events_max
        ),
        vec![
            ("clients", json!(f.clients)),
            ("events_avg", one_decimal(f.events_avg)),
            ("events_stddev", one_decimal(f.events_stddev)),
            ("events_min", json!(f.events_min)),
            ("events_max", json!(f.events_max)),
        ],
        "the throughput is that of the clients that got through, and the latency percentiles are mostly theirs; look for lock waits (SQLite runs one writer at a time; hot rows) or a client host short of CPU before comparing",
    ))
}

fn one_decimal(v: f64) -> Value {
    json!((v * 10.0).round() / 10.0)
}

/// The client's own CPU (the process against its cores, a worker thread against its one
/// core) limited it: judged when the result was built (`client_cost.warning`).
fn client_saturated(d: &ResultDocument) -> Option<Finding> {
    let c = &d.client_cost;
    // Results built before the judgement was the client's own CPU also warned of a busy
    // host: only a warning its own numbers bear out is this finding.
    let own_cpu = c.cpu_utilization_pct >= SATURATED_PCT || c.busiest_worker_pct >= SATURATED_PCT;
    let warning = c.warning.as_ref().filter(|_| own_cpu)?;
    let embedded = d.target.transport == TransportKind::Embedded;
    Some(finding(
        "client-saturated",
        Severity::Warn,
        warning.clone(),
        vec![
            ("client_cpu_pct_of_all_cores", one_decimal(c.cpu_utilization_pct)),
            ("busiest_worker_pct", one_decimal(c.busiest_worker_pct)),
            ("worker_threads", json!(c.worker_threads)),
            ("cores", json!(c.cores)),
        ],
        if embedded {
            "an embedded database runs inside the client process: the numbers include the database's own CPU; leave cores free or compare at fixed --rate"
        } else {
            "run the client on another host, or with fewer clients per core; a saturated client lowers throughput and adds latency that is not the server's"
        },
    ))
}

/// A server on the client's host (loopback, Unix socket, or the same hostname) while the
/// host's CPUs were busy: the numbers include client and server contending for CPU. An
/// embedded database is no second program: its CPU is the client's own (client-saturated).
fn shared_host(d: &ResultDocument) -> Option<Finding> {
    let server = &d.conditions.server;
    if !server.same_host_as_client || d.target.transport == TransportKind::Embedded {
        return None;
    }
    let c = &d.client_cost;
    let busy = c.host_cpu_busy_pct.filter(|b| *b >= BUSY_HOST_PCT)?;
    let mut evidence = vec![
        ("transport", json!(d.target.transport)),
        ("server_address", json!(d.target.address)),
        ("host_cpu_busy_pct", one_decimal(busy)),
        ("client_cpu_pct_of_all_cores", one_decimal(c.cpu_utilization_pct)),
        ("server_and_other_cpu_pct", one_decimal((busy - c.cpu_utilization_pct).max(0.0))),
        ("cores", json!(c.cores)),
    ];
    if let Some(name) = server.host.get("hostname") {
        evidence.push(("server_hostname", json!(name)));
        evidence.push(("client_hostname", json!(d.conditions.client.host.hostname)));
    }
    Some(finding(
        "shared-host",
        Severity::Warn,
        format!(
            "the client and the server shared one host of {}, {busy:.0}% busy (the client itself used {:.0}%, the server and any other programs the rest): the numbers include their contention for CPU",
            plural(c.cores as u64, "core"),
            c.cpu_utilization_pct
        ),
        evidence,
        "run the client on another host, or give client and server separate cores (taskset, cgroups), before comparing products: on one busy host each takes CPU from the other",
    ))
}
