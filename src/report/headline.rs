//! The lines a person reads first: what ran where, throughput, per-event latency (each
//! figure in the unit that shows it: 8.21 us, 11.08 ms), errors, how steady the rate was, and the audit's worst finding.

use crate::model::stats::trim_float;
use crate::model::{plural, ClassStats, Metric, RateSpread, ResultDocument};
use std::fmt::Write;

pub(super) fn headline(o: &mut String, d: &ResultDocument, p: f64) {
    let r = &d.conditions.run;
    let stat = |class: &str| d.stats.get(class).cloned().unwrap_or_default();
    let (ev, tot, commit) = (stat("event"), stat("total"), stat("commit"));
    let load = match &d.open_loop {
        Some(ol) => format!("open loop at {} events/s", trim_float(ol.rate)),
        None => "closed loop".to_string(),
    };
    let _ = writeln!(
        o,
        "fairbench {}: {} on {}, {} client{}, {load}, {:.1} s measured after {} s warmup: {}{}",
        d.fairbench_version,
        d.conditions.workload.name,
        super::probed::subject(d),
        r.threads,
        if r.threads == 1 { "" } else { "s" },
        r.measured_s,
        r.warmup_s,
        r.status.name(),
        r.failure.as_ref().map(|f| format!(" ({f})")).unwrap_or_default()
    );
    // Autocommit: every statement commits itself and an event is the transaction.
    let events = if commit.count > 0 || ev.count == 0 { "transactions" } else { "events, autocommit" };
    let _ = writeln!(o, "  throughput:  {:.1} events/s ({events}), {:.1} queries/s", ev.qps, tot.qps);
    let _ = writeln!(o, "  latency:     {}", latency(&ev, p, d.open_loop.is_some()));
    let failed = match d.errors.reconnect_failures {
        0 => String::new(),
        n => format!(" ({n} failed reconnect attempts)"),
    };
    let _ = writeln!(o, "  errors:      {} retried, {} reconnects{failed}", d.errors.total, d.errors.reconnects);
    let _ = writeln!(o, "  stability:   {}", stability(d));
    if let Some(line) = repeats(d) {
        let _ = writeln!(o, "  repeats:     {line}");
    }
    if let Some(per_hour) = r.cost_per_hour {
        let per = |m: Metric| d.metric(&m).map_or("-".to_string(), |v| format!("{v:.4}"));
        let _ = writeln!(
            o,
            "  cost:        {} per hour -> {} per million queries, {} per million transactions",
            trim_float(per_hour),
            per(Metric::CostPerMillionQueries),
            per(Metric::CostPerMillionEvents)
        );
    }
    for t in &d.thresholds {
        let metric = Metric::parse(&t.metric).ok();
        let value = match (t.value, metric) {
            (Some(v), Some(m)) => m.show(v),
            _ => "not measured".into(),
        };
        let verdict = if t.passed { "pass" } else { "FAIL" };
        let _ = writeln!(o, "  threshold:   {} {verdict} ({value})", t.threshold);
    }
    let worst = d.audit.iter().max_by_key(|f| f.severity);
    let _ = match worst {
        Some(f) => writeln!(
            o,
            "  audit:       [{}] {}: {} ({}, all at the end)",
            f.severity.name(),
            f.id,
            f.title,
            plural(d.audit.len() as u64, "finding")
        ),
        None => writeln!(o, "  audit:       nothing found"),
    };
}

/// A latency in the unit that shows it: `8.21 us`, `11.08 ms`, `2.50 s`.
pub fn latency_unit(us: f64) -> String {
    match us {
        _ if us < 1000.0 => format!("{us:.2} us"),
        _ if us < 1e6 => format!("{:.2} ms", us / 1e3),
        _ => format!("{:.2} s", us / 1e6),
    }
}

/// Per-event percentiles, each in the unit that shows it, and what kind of latency they are.
fn latency(ev: &ClassStats, p: f64, open: bool) -> String {
    if ev.count == 0 {
        return "no event completed".into();
    }
    let ms = latency_unit;
    let mut parts =
        vec![format!("p50 {}", ms(ev.p50_us)), format!("p95 {}", ms(ev.p95_us)), format!("p99 {}", ms(ev.p99_us))];
    if ![50.0, 95.0, 99.0, 100.0].contains(&p) {
        if let Some(v) = ev.at(p) {
            parts.push(format!("p{} {}", trim_float(p), ms(v)));
        }
    }
    parts.push(format!("max {}", ms(ev.max_us)));
    let kind = if open { "from each event's intended start" } else { "closed loop: service time at full load" };
    format!("per event {} ({kind})", parts.join(", "))
}

/// `--repeat`: the events/s and p99 of each repeat, their median and spread.
fn repeats(d: &ResultDocument) -> Option<String> {
    let tps = d.repeat_summary.get("tps")?;
    let mut line = format!(
        "{} x {:.0} s; events/s median {:.1} (min {:.1}, max {:.1}, cv {:.1}%)",
        d.repeats.len(),
        d.repeats.iter().map(|r| r.measured_s).sum::<f64>() / d.repeats.len().max(1) as f64,
        tps.median,
        tps.min,
        tps.max,
        tps.cv * 100.0
    );
    if let Some(p99) = d.repeat_summary.get("p99") {
        let _ = write!(
            line,
            "; p99 median {:.2} ms (min {:.2}, max {:.2})",
            p99.median / 1e3,
            p99.min / 1e3,
            p99.max / 1e3
        );
    }
    Some(line)
}

/// Events/s over the measured entries (seconds, or what the timeline holds): min / avg /
/// max and the coefficient of variation, named by what each rate was taken over.
fn stability(d: &ResultDocument) -> String {
    match RateSpread::of(&d.intervals) {
        None => "too few measured seconds to tell".into(),
        Some(r) => format!(
            "events/s per {} min {:.0}, avg {:.0}, max {:.0}; coefficient of variation {:.1}% over {}",
            r.unit(),
            r.min,
            r.mean,
            r.max,
            r.cv * 100.0,
            r.span()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_latency_in_the_unit_that_shows_it() {
        let got: Vec<String> = [8.214, 999.0, 11_080.0, 2_500_000.0].iter().map(|v| latency_unit(*v)).collect();
        assert_eq!(got, ["8.21 us", "999.00 us", "11.08 ms", "2.50 s"]);
    }
}
