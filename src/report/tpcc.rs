//! The TPC-C-like figures as the text report prints them (result::tpcc computes them).

use crate::model::tpcc::TpccRecord;
use std::fmt::Write;

/// The figures, the types' table, and the mix and response-time verdicts.
pub fn text(o: &mut String, t: &TpccRecord) {
    let mode = match t.mode.as_str() {
        "spec" => "spec mode: keying and think times of clause 5.2.5.7",
        _ => "no-wait mode: no keying or think times, so not comparable to an audited tpmC",
    };
    let _ = writeln!(o, "\nTPC-C-like figures ({mode}):");
    let _ = writeln!(
        o,
        "  tpmC {:.0} (New-Orders completed per minute, intended rollbacks included), NOPM {:.0} (committed), TPM {:.0} (all five types); {} warehouse(s), {} terminals, {:.1} min measured",
        t.tpmc, t.nopm, t.tpm, t.warehouses, t.terminals, t.measured_minutes
    );
    let _ = writeln!(o, "  {}", t.database_count_words());
    if let Some(words) = t.c_last_words() {
        let _ = writeln!(o, "  {words}");
    }
    let _ = writeln!(
        o,
        "  {:<14}{:>9}{:>11}{:>9}{:>9}{:>11}{:>11}{:>11}{:>9}",
        "type", "count", "per_min", "share%", "min%", "p90_ms", "limit_ms", "rollbacks", "errors"
    );
    for ty in &t.types {
        let min = ty.min_share_pct.map_or("-".to_string(), |m| format!("{m:.0}"));
        let _ = writeln!(
            o,
            "  {:<14}{:>9}{:>11.1}{:>9.2}{:>9}{:>11.1}{:>11.0}{:>11}{:>9}",
            ty.spec_name,
            ty.count,
            ty.per_minute,
            ty.share_pct,
            min,
            ty.p90_ms,
            ty.p90_limit_ms,
            ty.rollbacks,
            ty.errors
        );
    }
    let _ = writeln!(o, "  {}", t.delivery_words());
    let below = t.below_minimum();
    let _ = match t.mix_ok {
        true => writeln!(o, "  mix: every type at or above its minimum share (clause 5.2.3)"),
        false => writeln!(o, "  mix: BELOW the minimum shares of clause 5.2.3: {}", below.join(", ")),
    };
    let over = t.over_limits();
    let _ = match t.response_times_ok {
        Some(true) => writeln!(o, "  response times: every 90th percentile within the limits of clause 5.2.5.4"),
        Some(false) => writeln!(o, "  response times: OVER the limits of clause 5.2.5.4: {}", over.join(", ")),
        None => writeln!(o, "  response times: not checked against clause 5.2.5.4 (its limits assume spec mode)"),
    };
}
