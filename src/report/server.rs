//! The server as the text report prints it: its counters over the measured phase, and each figure its driver
//! follows over time (`intervals[].server`), as the median, minimum and maximum over the measured intervals.

use crate::model::{ResultDocument, SampledFigure};
use std::fmt::Write;

pub fn text(o: &mut String, d: &ResultDocument) {
    let figures = d.conditions.server.sampled();
    let measured: Vec<_> = d.intervals.iter().filter(|i| !i.warmup && !i.server.is_empty()).collect();
    let rows: Vec<(&SampledFigure, [f64; 3])> = figures
        .iter()
        .filter_map(|f| {
            let mut values: Vec<f64> = measured.iter().filter_map(|i| i.server.get(&f.key).copied()).collect();
            values.sort_by(f64::total_cmp);
            let (first, last) = (*values.first()?, *values.last()?);
            Some((f, [values[values.len() / 2], first, last]))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nServer over time ({} measured intervals; read about once a second on a connection of fairbench's own):",
        measured.len()
    );
    let named = |f: &SampledFigure| {
        let unit = if f.is_rate() { format!("{}/s", f.unit) } else { f.unit.clone() };
        format!("{} ({unit})", f.label)
    };
    let width = rows.iter().map(|(f, _)| named(f).len()).max().unwrap_or(0);
    let _ = writeln!(o, "  {:width$}  {:>9}  {:>9}  {:>9}", "", "median", "min", "max");
    for (f, [median, min, max]) in rows {
        let _ = writeln!(o, "  {:width$}  {:>9}  {:>9}  {:>9}", named(f), short(median), short(min), short(max));
    }
}

/// A figure in at most about six characters: `0`, `12.5`, `4521`, `51.2k`, `3.4M`, `1.2G`.
pub fn short(v: f64) -> String {
    let a = v.abs();
    match a {
        _ if a >= 1e9 => format!("{:.1}G", v / 1e9),
        _ if a >= 1e6 => format!("{:.1}M", v / 1e6),
        _ if a >= 1e4 => format!("{:.1}k", v / 1e3),
        _ if v.fract() == 0.0 || a >= 100.0 => format!("{v:.0}"),
        _ => format!("{v:.1}"),
    }
}

/// The counters the driver relates to what was sent (its facts), and any of rollbacks or
/// deadlocks.
pub fn counters(o: &mut String, d: &ResultDocument) {
    let server = &d.conditions.server;
    let rules = server.facts.as_ref().map(|f| f.counters.as_slice()).unwrap_or_default();
    let interesting: Vec<String> = server
        .status_delta
        .iter()
        .filter(|(k, _)| {
            let lower = k.to_ascii_lowercase();
            rules.iter().any(|r| r.counter == **k) || lower.contains("rollback") || lower.contains("deadlock")
        })
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    if !interesting.is_empty() {
        let _ = writeln!(o, "\nServer counters (delta over the measured phase): {}", interesting.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_short_and_keep_their_magnitude() {
        let got: Vec<String> = [0.0, 12.46, 4521.0, 51_234.0, 3_400_000.0, 1.2e9].iter().map(|v| short(*v)).collect();
        assert_eq!(got, ["0", "12.5", "4521", "51.2k", "3.4M", "1.2G"]);
    }
}
