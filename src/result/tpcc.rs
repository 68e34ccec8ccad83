//! A TPC-C-like run's figures, from its result document: tpmC, NOPM, each type's share of
//! the mix and 90th-percentile response time against the specification (model::tpcc).

use crate::model::tpcc::{
    TpccDeferredRecord, TpccRecord, TpccTypeRecord, C_LOAD, DELIVERY_DEFERRED_LIMIT_S, DELIVERY_QUEUED_LIMIT_S, TYPES,
};
use crate::model::{ClassStats, ResultDocument};
use crate::stats::histogram::LatencyHistogram;
use crate::workload::generate::{nurand_c, DrawnFor};

/// The tally that counts New-Orders in the database (the change in the sum of D_NEXT_O_ID).
pub const NEW_ORDERS_TALLY: &str = "new_orders";

/// The figures of `doc` when its workload follows TPC-C (`follows = "tpc-c"`).
pub fn figures(doc: &ResultDocument) -> Option<TpccRecord> {
    let workload = &doc.conditions.workload;
    if workload.follows.as_deref() != Some("tpc-c") {
        return None;
    }
    let param = |name: &str| workload.file.as_ref()?.params.get(name)?.parse::<u64>().ok();
    let minutes = doc.conditions.run.measured_s / 60.0;
    let per_minute = |n: u64| if minutes > 0.0 { n as f64 / minutes } else { 0.0 };
    let total: u64 = TYPES.iter().filter_map(|(name, ..)| doc.transactions.get(*name)).map(|s| s.count).sum();
    let deferred_delivery = deferred_delivery(doc);
    let mut types = Vec::new();
    for (name, spec_name, min_share, limit_s) in TYPES {
        let s = doc.transactions.get(name);
        // Deferred, Delivery's own response time is the queueing (clause 5.2.5.4).
        let limit_s = if name == "delivery" && deferred_delivery.is_some() { DELIVERY_QUEUED_LIMIT_S } else { limit_s };
        let count = s.map_or(0, |s| s.count);
        types.push(TpccTypeRecord {
            name: name.into(),
            spec_name: spec_name.into(),
            count,
            per_minute: per_minute(count),
            rollbacks: s.and_then(|s| s.rollbacks).unwrap_or(0),
            errors: s.and_then(|s| s.errors).unwrap_or(0),
            share_pct: 100.0 * count as f64 / total.max(1) as f64,
            min_share_pct: min_share,
            p90_ms: s.and_then(p90_ms).unwrap_or(0.0),
            p90_limit_ms: limit_s * 1000.0,
        });
    }
    let new_order = &types[0];
    let spec_mode = param("waits").unwrap_or(0) > 0;
    let from_database = doc.tallies.iter().find(|t| t.name == NEW_ORDERS_TALLY).and_then(|t| t.change);
    let mut record = TpccRecord {
        mode: if spec_mode { "spec" } else { "no-wait" }.into(),
        warehouses: param("warehouses").unwrap_or(0),
        terminals: doc.conditions.run.threads,
        measured_minutes: minutes,
        tpmc: new_order.per_minute,
        nopm: per_minute(new_order.count - new_order.rollbacks),
        new_orders_database: from_database,
        nopm_database: from_database.map(|n| if minutes > 0.0 { n as f64 / minutes } else { 0.0 }),
        tpm: per_minute(total),
        c_load: Some(C_LOAD),
        c_run: Some(nurand_c(doc.conditions.run.rand_seed, 255, DrawnFor::Run)),
        mix_ok: total > 0 && !types.iter().any(TpccTypeRecord::below_minimum),
        response_times_ok: None,
        types,
        deferred_delivery,
    };
    record.response_times_ok = spec_mode.then(|| record.over_limits().is_empty());
    Some(record)
}

/// Delivery's deferred executions, when the file defers it (`deferred = true`).
fn deferred_delivery(doc: &ResultDocument) -> Option<TpccDeferredRecord> {
    doc.conditions.workload.transactions.get("delivery").filter(|t| t.deferred)?;
    let runs = doc.transactions.get("delivery_deferred");
    Some(TpccDeferredRecord {
        executed: runs.map_or(0, |s| s.count),
        p90_ms: runs.and_then(p90_ms).unwrap_or(0.0),
        p90_limit_ms: DELIVERY_DEFERRED_LIMIT_S * 1000.0,
        skipped_districts: runs.and_then(|s| s.skipped).unwrap_or(0),
        left_queued: doc.conditions.run.deferred_left.unwrap_or(0),
    })
}

/// The 90th percentile of a transaction's latency, from its histogram.
fn p90_ms(s: &ClassStats) -> Option<f64> {
    let ns = |us: f64| (us * 1000.0).round().max(0.0) as u64;
    let h = LatencyHistogram::decode(&s.histogram, ns(s.min_us), ns(s.max_us), ns(s.sum_us) as u128).ok()?;
    Some(h.percentile_ns(90.0) as f64 / 1e6)
}
