//! The TPC-C-like figures on the single-result page: tpmC, NOPM, each type against the
//! specification.

use super::{esc, table, TableCell};
use crate::model::tpcc::TpccRecord;

pub fn section(t: &TpccRecord) -> String {
    let mode = match t.mode.as_str() {
        "spec" => "spec mode (keying and think times of clause 5.2.5.7)",
        _ => "no-wait mode: no keying or think times, not comparable to an audited tpmC",
    };
    let rows = t
        .types
        .iter()
        .map(|ty| {
            let below = ty.min_share_pct.is_some_and(|m| ty.share_pct < m);
            let over = t.response_times_ok.is_some() && ty.p90_ms > ty.p90_limit_ms;
            let mark = |c: TableCell, bad: bool| if bad { c.class("fail") } else { c };
            vec![
                TableCell::text(&ty.spec_name),
                TableCell::num(ty.count.to_string()),
                TableCell::num(format!("{:.1}", ty.per_minute)),
                mark(TableCell::num(format!("{:.2}", ty.share_pct)), below),
                TableCell::num(ty.min_share_pct.map_or("-".into(), |m| format!("{m:.0}"))),
                mark(TableCell::num(format!("{:.1}", ty.p90_ms)), over),
                TableCell::num(format!("{:.0}", ty.p90_limit_ms)),
                TableCell::num(ty.rollbacks.to_string()),
                TableCell::num(ty.errors.to_string()),
            ]
        })
        .collect();
    let verdict = |ok: bool, yes: &str, no: String| match ok {
        true => format!("<span class=\"pass\">{}</span>", esc(yes)),
        false => format!("<span class=\"fail\">{}</span>", esc(&no)),
    };
    let mix = verdict(
        t.mix_ok,
        "every type at or above its minimum share (clause 5.2.3)",
        format!("below the minimum shares of clause 5.2.3: {}", t.below_minimum().join(", ")),
    );
    let times = match t.response_times_ok {
        Some(ok) => verdict(
            ok,
            "every 90th percentile within the limits of clause 5.2.5.4",
            format!("over the limits of clause 5.2.5.4: {}", t.over_limits().join(", ")),
        ),
        None => "not checked (the limits of clause 5.2.5.4 assume spec mode)".into(),
    };
    format!(
        "<section><h2>TPC-C-like figures</h2><p>{}</p><p><strong>tpmC {:.0}</strong> (New-Orders completed per minute, intended rollbacks included), <strong>NOPM {:.0}</strong> (committed), TPM {:.0} (all five types); {} warehouse(s), {} terminals, {:.1} min measured.</p><p>{}.</p><p>{}</p>{}<p>{}.</p><p>Mix: {mix}. Response times: {times}.</p></section>",
        esc(mode),
        t.tpmc,
        t.nopm,
        t.tpm,
        t.warehouses,
        t.terminals,
        t.measured_minutes,
        esc(&t.database_count_words()),
        esc(&t.c_last_words().unwrap_or_default()),
        table(&["type", "count", "per minute", "share %", "minimum %", "p90 ms", "limit ms", "rollbacks", "retried errors"], rows, "num"),
        esc(&t.delivery_words())
    )
}
