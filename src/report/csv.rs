//! CSV exports of a result, for spreadsheets and Grafana: the timeline (one row per
//! interval and class), per-statement statistics, the conditions as key/value rows.

use crate::model::{ClassStats, CompactStats, IntervalStats, ResultDocument};
use serde_json::Value;
use std::fmt::Write;

/// The classes of every timeline row, in order (`event_service` too in open loop).

/// The header of [`intervals`] and [`interval_rows`].
pub const INTERVALS_HEADER: &str = "from_s,duration_s,warmup,repeat,class,count,per_s,min_us,p50_us,p95_us,p99_us,p999_us,max_us,errors,reconnects,client_cpu_pct,late,dropped,backlog\n";

/// One row per interval and class: `intervals x 6` rows (`x 7` in open loop).
pub fn intervals(d: &ResultDocument) -> String {
    let mut o = String::from(INTERVALS_HEADER);
    for i in &d.intervals {
        interval_rows(i, &mut o);
    }
    o
}

/// One interval's rows of [`intervals`] (a streamed timeline is exported one at a time).
pub fn interval_rows(i: &IntervalStats, o: &mut String) {
    let mut classes: Vec<(&str, &CompactStats)> =
        crate::model::LATENCY_CLASSES.iter().filter_map(|&c| i.class(c).map(|s| (c, s))).collect();
    if let Some(s) = &i.event_service {
        classes.push(("event_service", s));
    }
    for (name, s) in classes {
        let _ = writeln!(
            o,
            "{},{},{},{},{name},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            i.from_s,
            i.duration_s,
            i.warmup,
            opt(i.repeat),
            s.count,
            s.per_s,
            known(s.min_us),
            known(s.p50_us),
            known(s.p95_us),
            known(s.p99_us),
            known(s.p999_us),
            s.max_us,
            i.errors,
            i.reconnects,
            opt(i.client_cpu_pct),
            opt(i.late),
            opt(i.dropped),
            opt(i.backlog)
        );
    }
}

/// A figure, or an empty cell for one the line did not keep (a long run's streamed line
/// keeps each class's count and max, not its percentiles).
fn known(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else {
        v.to_string()
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// One row per class, statement kind and transaction over the measured run.
pub fn statements(d: &ResultDocument) -> String {
    let mut o = String::from("kind,name,count,per_s,min_us,mean_us,p50_us,p95_us,p99_us,p999_us,max_us,sum_us\n");
    let groups = [("class", &d.stats), ("statement", &d.statements), ("transaction", &d.transactions)];
    for (kind, map) in groups {
        for (name, s) in map {
            row(&mut o, kind, name, s);
        }
    }
    o
}

fn row(o: &mut String, kind: &str, name: &str, s: &ClassStats) {
    let _ = writeln!(
        o,
        "{kind},{},{},{},{},{},{},{},{},{},{},{}",
        field(name),
        s.count,
        s.qps,
        s.min_us,
        s.mean_us,
        s.p50_us,
        s.p95_us,
        s.p99_us,
        s.p999_us,
        s.max_us,
        s.sum_us
    );
}

/// The target and every condition as `key,value` rows, keys dotted as in the JSON
/// (`conditions.server.variables.innodb_flush_log_at_trx_commit`).
pub fn conditions(d: &ResultDocument) -> String {
    let mut o = String::from("key,value\n");
    let mut flat = Vec::new();
    flatten("target", &serde_json::to_value(&d.target).unwrap_or_default(), &mut flat);
    flatten("conditions", &serde_json::to_value(&d.conditions).unwrap_or_default(), &mut flat);
    for (k, v) in flat {
        let _ = writeln!(o, "{},{}", field(&k), field(&v));
    }
    o
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| flatten(&format!("{prefix}.{k}"), v, out)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| flatten(&format!("{prefix}.{i}"), v, out)),
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        Value::Null => out.push((prefix.to_string(), String::new())),
        v => out.push((prefix.to_string(), v.to_string())),
    }
}

/// A CSV field, quoted when it holds a comma, quote or line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fields_are_quoted_when_needed() {
        assert_eq!(super::field("a,b"), "\"a,b\"");
        assert_eq!(super::field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(super::field("plain"), "plain");
    }
}
