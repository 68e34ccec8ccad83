//! The rules of a TPC-C-like run (`follows = "tpc-c"`), read from its figures: what keeps
//! its tpmC from being a TPC-C tpmC.

use super::rules::finding;
use super::{Finding, Severity};
use crate::model::tpcc::{TpccRecord, MEASUREMENT_MINUTES, TERMINALS_PER_WAREHOUSE};
use crate::model::ResultDocument;
use serde_json::json;

pub fn all(d: &ResultDocument) -> Vec<Finding> {
    let Some(t) = &d.tpcc else { return Vec::new() };
    let mut out = Vec::new();
    if t.mode == "no-wait" {
        out.push(finding(
            "tpcc-no-wait",
            Severity::Warn,
            "no-wait TPC-C: terminals sent transactions back to back, without keying or think times",
            vec![("mode", json!(t.mode)), ("tpmc", json!(t.tpmc.round())), ("terminals", json!(t.terminals))],
            "report its figure as NOPM or tpmC-like of a no-wait run, never as tpmC: the specification's tpmC comes from terminals that key and think (about 1.3 tpmC per terminal at most), so no-wait numbers are not comparable to published tpmC; --set waits=1 runs spec mode",
        ));
    }
    let most = t.warehouses.saturating_mul(TERMINALS_PER_WAREHOUSE);
    if t.terminals as u64 > most {
        out.push(finding(
            "tpcc-few-warehouses",
            Severity::Warn,
            format!("{} terminals on {} warehouse(s): more than the specification's 10 per warehouse", t.terminals, t.warehouses),
            vec![("terminals", json!(t.terminals)), ("warehouses", json!(t.warehouses)), ("terminals_per_warehouse", json!(TERMINALS_PER_WAREHOUSE))],
            "terminals beyond 10 per warehouse share districts and fight over their next order ids and the warehouse's YTD row: the run measures lock contention the specification never creates; use --set warehouses at least --threads / 10 (the studies ran tpcc-mysql at 200 warehouses for 32-128 threads)",
        ));
    }
    if t.measured_minutes < MEASUREMENT_MINUTES {
        out.push(finding(
            "tpcc-short",
            Severity::Info,
            format!("measured {:.1} minutes: a reported TPC-C measurement interval lasts at least 120 minutes", t.measured_minutes),
            vec![("measured_minutes", json!((t.measured_minutes * 10.0).round() / 10.0)), ("minimum_minutes", json!(MEASUREMENT_MINUTES))],
            "a TPC-C result needs a steady state of at least 120 minutes (clause 5.5.1.1): deliveries empty the new-order queue, tables grow and checkpoints recur only over hours; use --warmup and --time 7200 for numbers to publish",
        ));
    }
    if !t.mix_ok {
        out.push(mix_below(d, t));
    }
    let warmup = d.conditions.run.warmup_s > 0;
    let bound = t.new_orders_in_flight_bound(warmup);
    if let Some(diff) = t.new_orders_difference().filter(|d| d.unsigned_abs() > bound) {
        out.push(finding(
            "tpcc-nopm-differs",
            Severity::Warn,
            format!(
                "the database gained {} New-Orders and the clients counted {} committed: {diff:+}, more than the {bound} transactions in flight at the measured phase's edges explain",
                t.new_orders_database.unwrap_or(0),
                t.new_orders_committed()
            ),
            vec![("database", json!(t.new_orders_database)), ("clients", json!(t.new_orders_committed())), ("in_flight_bound", json!(bound))],
            "the client's count and the database's disagree: another client wrote to the same tables, a commit the client counted did not persist, or orders were committed without being counted; run on tables no one else uses and compare with `fairbench verify`",
        ));
    }
    out.extend(delivery(t));
    if t.response_times_ok == Some(false) {
        let over = t.over_limits();
        out.push(finding(
            "tpcc-response-times",
            Severity::Critical,
            format!("90th-percentile response times over the limits of clause 5.2.5.4: {}", over.join(", ")),
            vec![("over", json!(over))],
            "a TPC-C throughput only counts while every type's 90th percentile stays within its limit: lower the terminals (or raise the warehouses) until it does, and quote that throughput",
        ));
    }
    out
}

/// Delivery as clause 2.7 has it: deferred in spec mode, its worker keeping up, and few
/// districts skipped.
fn delivery(t: &TpccRecord) -> Vec<Finding> {
    let Some(d) = &t.deferred_delivery else {
        return match t.mode == "spec" {
            true => vec![finding(
                "tpcc-delivery-inline",
                Severity::Info,
                "Delivery ran in the terminal's transaction: clause 2.7 defers it to a delivery worker",
                vec![("mode", json!(t.mode))],
                "in spec mode the terminal's Delivery response time is the queueing of the request (5 s limit) and the execution is judged separately (80 s): --set defer_delivery=1 (the recipe's default) defers it",
            )],
            false => Vec::new(),
        };
    };
    let mut out = Vec::new();
    // The queue at the end holds what arrived during the last execution or two; more says
    // the worker fell behind.
    if d.left_queued > 1 && d.left_queued * 100 > d.executed {
        out.push(finding(
            "tpcc-delivery-backlog",
            Severity::Warn,
            format!("{} deferred Deliveries were still queued at the end, beside {} executed: the delivery worker fell behind", d.left_queued, d.executed),
            vec![("left_queued", json!(d.left_queued)), ("executed", json!(d.executed)), ("p90_ms", json!(d.p90_ms))],
            "one delivery worker executes the deferred Deliveries in order: when they arrive faster than it completes them (many terminals without think times), the queue grows and the deferred response time with it; run spec mode (--set waits=1), or --set defer_delivery=0 to run Delivery in the terminal's transaction",
        ));
    }
    if d.skipped_districts > 0 && d.skipped_districts * 100 > d.executed * 10 {
        out.push(finding(
            "tpcc-delivery-skipped",
            Severity::Info,
            format!("deferred Deliveries skipped {} of {} districts for want of an undelivered order", d.skipped_districts, d.executed * 10),
            vec![("skipped_districts", json!(d.skipped_districts)), ("executed", json!(d.executed))],
            "clause 2.7.4.2 wants skipped districts reported when more than 1% of Deliveries skip one: Deliveries outran New-Orders (a high delivery weight, or few New-Orders per district); the run delivered less than it queued",
        ));
    }
    out
}

/// Shares under clause 5.2.3's minimums, with how many transactions (and decks) each
/// terminal completed: a few partial decks do not keep the deck's proportions.
fn mix_below(d: &ResultDocument, t: &TpccRecord) -> Finding {
    let completed: u64 = t.types.iter().map(|ty| ty.count).sum();
    let per_terminal = completed as f64 / t.terminals.max(1) as f64;
    let deck = d.conditions.workload.file.as_ref().and_then(|f| f.pick.as_deref()) == Some("deck");
    let cards: u64 = d.conditions.workload.transactions.values().map(|tx| tx.weight as u64).sum();
    let dealt = match (deck, cards) {
        (true, c) if c > 0 => format!(", {:.1} of its decks of {c}", per_terminal / c as f64),
        _ => String::new(),
    };
    finding(
        "tpcc-mix",
        Severity::Warn,
        format!(
            "the mix falls below the minimum shares of clause 5.2.3: {} (each terminal completed about {per_terminal:.0} transactions{dealt})",
            t.below_minimum().join(", ")
        ),
        vec![
            ("shares_pct", json!(t.types.iter().map(|ty| (ty.name.clone(), ty.share_pct)).collect::<std::collections::BTreeMap<_, _>>())),
            ("transactions_per_terminal", json!((per_terminal * 10.0).round() / 10.0)),
            ("deck_cards", json!(deck.then_some(cards))),
        ],
        "a TPC-C-like run keeps Payment at 43% or more and Order-Status, Delivery and Stock-Level at 4% each: deal transactions from a deck (pick = \"deck\") and run long enough that each terminal deals many decks, so the partial ones do not matter (in spec mode a terminal completes about 3 transactions a minute: 10 minutes are a fraction of a deck of 100)",
    )
}
