//! What a TPC-C-like run reports (a workload file with `follows = "tpc-c"`): its figures,
//! and the specification's numbers they are checked against.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The five transaction types as a TPC-C-like file names them: (name, the specification's
/// name, minimum share of the mix in percent (clause 5.2.3), 90th-percentile response-time
/// limit in seconds (clause 5.2.5.4)).
pub const TYPES: [(&str, &str, Option<f64>, f64); 5] = [
    ("new_order", "New-Order", None, 5.0),
    ("payment", "Payment", Some(43.0), 5.0),
    ("order_status", "Order-Status", Some(4.0), 5.0),
    ("delivery", "Delivery", Some(4.0), 80.0),
    ("stock_level", "Stock-Level", Some(4.0), 20.0),
];

/// TPC-C's C_LOAD, the C of NURand(255, ..) (C_LAST) in every population fairbench makes:
/// fixed, so that a run, which does not read how its tables were made, can keep clause
/// 2.1.6.1's rule on C_RUN. (BenchBase fixes it at the same value.)
pub const C_LOAD: u32 = 157;

/// Whether `c_run` keeps clause 2.1.6.1's rule against `c_load`: |C_RUN - C_LOAD| in
/// 65..=119, and neither 96 nor 112.
pub fn c_run_allowed(c_load: u32, c_run: u32) -> bool {
    let delta = c_run.abs_diff(c_load);
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// Deferred Delivery (clause 2.7): the terminal's response time is the queueing, judged at
/// 5 s, and the execution's, from queued to completed, at 80 s (clause 5.2.5.4).
pub const DELIVERY_QUEUED_LIMIT_S: f64 = 5.0;
pub const DELIVERY_DEFERRED_LIMIT_S: f64 = 80.0;

/// Terminals per warehouse in the specification (clause 4.2.2).
pub const TERMINALS_PER_WAREHOUSE: u64 = 10;

/// The measurement interval of a reported result, at least (clause 5.5.1.1: 120 minutes).
pub const MEASUREMENT_MINUTES: f64 = 120.0;

/// A TPC-C-like run's figures.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TpccRecord {
    /// `no-wait` (no keying or think times: tpcc-mysql's and go-tpc's way) or `spec` (the
    /// keying and think times of clause 5.2.5.7).
    pub mode: String,
    pub warehouses: u64,
    /// Clients (terminals) that ran.
    pub terminals: u32,
    pub measured_minutes: f64,
    /// New-Order transactions completed per minute of the measured interval, its intended
    /// rollbacks included (they complete as the workload means them to).
    pub tpmc: f64,
    /// New-Orders committed per minute (HammerDB's NOPM: orders that exist afterwards), as
    /// the clients counted them.
    pub nopm: f64,
    /// New-Orders the database gained over the measured phase: the change in the sum of
    /// D_NEXT_O_ID (the tally `new_orders`, as HammerDB counts); absent when not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_orders_database: Option<i64>,
    /// That change per measured minute: NOPM from the database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm_database: Option<f64>,
    /// Transactions of all five types completed per minute.
    pub tpm: f64,
    /// NURand's C for C_LAST (A = 255) in the population (C_LOAD) and in this run (C_RUN):
    /// clause 2.1.6.1 wants them 65..119 apart, but not 96 or 112 (absent in results from
    /// before they were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_load: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_run: Option<u32>,
    pub types: Vec<TpccTypeRecord>,
    /// Delivery deferred as clause 2.7 allows (absent: it ran in the terminal's
    /// transaction, and Delivery's row above is the whole of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_delivery: Option<TpccDeferredRecord>,
    /// Every type at or above its minimum share of the mix.
    pub mix_ok: bool,
    /// Spec mode: every type's 90th percentile within its limit (absent in no-wait mode,
    /// whose response times the limits are not meant for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_times_ok: Option<bool>,
}

/// One transaction type's share and response time against the specification.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TpccTypeRecord {
    /// As the file names it (`new_order`).
    pub name: String,
    /// As the specification names it (`New-Order`).
    pub spec_name: String,
    pub count: u64,
    pub per_minute: f64,
    /// Intended rollbacks (New-Order's unused item numbers).
    pub rollbacks: u64,
    /// Attempts that failed and were retried (deadlocks, serialization failures).
    #[serde(default)]
    pub errors: u64,
    /// Share of all completed transactions, in percent.
    pub share_pct: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_share_pct: Option<f64>,
    /// 90th percentile response time (BEGIN to COMMIT), milliseconds.
    pub p90_ms: f64,
    pub p90_limit_ms: f64,
}

/// Delivery deferred (clause 2.7): queued by the terminal (Delivery's row is that
/// queueing), executed by the run's deferred worker.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TpccDeferredRecord {
    /// Deliveries the worker completed in the measured phase.
    pub executed: u64,
    /// 90th percentile from queued to completed, milliseconds, and its limit.
    pub p90_ms: f64,
    pub p90_limit_ms: f64,
    /// Districts skipped for want of an undelivered order (clause 2.7.4.2), in the
    /// executed Deliveries (10 districts each).
    pub skipped_districts: u64,
    /// Requests still queued when the run ended: never executed.
    pub left_queued: u64,
}

impl TpccRecord {
    /// New-Orders committed as the clients counted them.
    pub fn new_orders_committed(&self) -> u64 {
        self.types.first().map_or(0, |n| n.count - n.rollbacks)
    }

    /// The database's count less the clients' (None: the database's was not read).
    pub fn new_orders_difference(&self) -> Option<i64> {
        Some(self.new_orders_database? - self.new_orders_committed() as i64)
    }

    /// NOPM from the database beside the clients' count, and whether the two agree.
    pub fn database_count_words(&self) -> String {
        let (Some(db), Some(nopm), Some(diff)) =
            (self.new_orders_database, self.nopm_database, self.new_orders_difference())
        else {
            return "NOPM from the database: not read (the sum of D_NEXT_O_ID could not be read around the measured phase)".into();
        };
        let clients = self.new_orders_committed();
        let verdict = match diff {
            0 => "the same as the clients' count".to_string(),
            d => format!(
                "{d:+} orders ({:+.3}%) beside the clients' {clients}",
                100.0 * d as f64 / clients.max(1) as f64
            ),
        };
        format!("NOPM from the database {nopm:.0} (the sum of D_NEXT_O_ID grew by {db} over the measured phase, as HammerDB counts): {verdict}")
    }

    /// C_LOAD and C_RUN, and whether they keep clause 2.1.6.1's rule.
    pub fn c_last_words(&self) -> Option<String> {
        let (load, run) = (self.c_load?, self.c_run?);
        let delta = load.abs_diff(run);
        let kept = if c_run_allowed(load, run) { "within" } else { "NOT within" };
        Some(format!(
            "NURand C of C_LAST: C_LOAD {load} (the population), C_RUN {run} (this run): |C_RUN - C_LOAD| = {delta}, {kept} 65..119 and not 96 or 112 (clause 2.1.6.1)"
        ))
    }

    /// How Delivery ran: deferred (the worker's executions) or in the terminal's transaction.
    pub fn delivery_words(&self) -> String {
        let Some(d) = &self.deferred_delivery else {
            return "Delivery ran in the terminal's transaction, not deferred as clause 2.7 allows: its row is the whole of it".into();
        };
        format!(
            "Delivery deferred (clause 2.7): its row is the terminal's queueing; the delivery worker completed {} of them, queued to completed p90 {:.1} ms (limit {:.0} ms); {} skipped for want of an undelivered order (clause 2.7.4.2); {} still queued at the end",
            d.executed,
            d.p90_ms,
            d.p90_limit_ms,
            crate::model::plural(d.skipped_districts, "district"),
            crate::model::plural(d.left_queued, "request"),
        )
    }

    /// How far apart the two counts may be from transactions in flight at the measured
    /// phase's edges alone: one per terminal at each edge the counts do not share.
    pub fn new_orders_in_flight_bound(&self, warmup: bool) -> u64 {
        self.terminals as u64 * if warmup { 2 } else { 1 }
    }

    /// The types whose 90th percentile is over its limit, as `New-Order p90 6000 ms > 5000 ms`
    /// (a deferred Delivery's execution as `Delivery (deferred)`).
    pub fn over_limits(&self) -> Vec<String> {
        let deferred = self.deferred_delivery.iter().map(|d| ("Delivery (deferred)", d.p90_ms, d.p90_limit_ms));
        self.types
            .iter()
            .map(|ty| (ty.spec_name.as_str(), ty.p90_ms, ty.p90_limit_ms))
            .chain(deferred)
            .filter(|(_, p90, limit)| p90 > limit)
            .map(|(name, p90, limit)| format!("{name} p90 {p90:.0} ms > {limit:.0} ms"))
            .collect()
    }

    /// The types below their minimum share, as `Payment 42.95% < 43%`.
    pub fn below_minimum(&self) -> Vec<String> {
        self.types
            .iter()
            .filter(|ty| ty.below_minimum())
            .filter_map(|ty| ty.min_share_pct.map(|m| (ty, m)))
            .map(|(ty, m)| format!("{} {:.2}% < {m:.0}%", ty.spec_name, ty.share_pct))
            .collect()
    }
}

impl TpccTypeRecord {
    /// Its share under its minimum (exactly at it is not: a whole deck of 45/43/4/4/4 puts
    /// Payment at 43%, which the share's floating point must not miss by a rounding).
    pub fn below_minimum(&self) -> bool {
        self.min_share_pct.is_some_and(|m| self.share_pct < m - 1e-9)
    }
}
