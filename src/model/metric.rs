//! The headline numbers of a result, by the names thresholds, claims, repeats and compare
//! use: `qps`, `tps`, `p99` (whole events), `commit.p99`, `write.mean`, `errors`,
//! `error_rate`, `cpu_per_query`, `cost_per_mq`. One definition, read from a whole result,
//! from one of its repeats, or from one second of its timeline.

use super::ha::HaRecord;
use super::ha_figure::HaFigure;
use super::{ClassStats, ClientRecord, ErrorRecord, IntervalStats};
use std::collections::BTreeMap;
use std::fmt;

/// Which latency figure of a class.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LatencyFigure {
    Percentile(f64),
    Mean,
    /// The fastest: a floor the storage's latency sets (a durable COMMIT's fsync).
    Min,
    Max,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Metric {
    /// Statements per second (`qps`).
    Qps,
    /// Events per second: transactions, or single statements for autocommit workloads (`tps`).
    Tps,
    /// `[class.]p99`, `[class.]mean`, `[class.]min`, `[class.]max`; the class is `event` (whole events, as
    /// sysbench's "latency"), `total`, `read`, `write`, `commit`, `other`, a statement kind
    /// (`point_selects`) or a workload file's transaction.
    Latency { class: String, figure: LatencyFigure },
    /// Errors over the measured phase, a count.
    Errors,
    /// Errors per attempted event (errors / (events + errors)), a fraction.
    ErrorRate,
    /// The client's CPU per statement, microseconds.
    CpuPerQuery,
    /// The target's price per million statements (`--cost-per-hour`).
    CostPerMillionQueries,
    /// The target's price per million events.
    CostPerMillionEvents,
    /// A probe's figure (`downtime`, `lost`, `lag_p99`, `lag_max`): one number per run.
    Ha(HaFigure),
}

/// What a metric's numbers are, for units in grammar and print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Microseconds.
    Latency,
    /// Per second.
    Rate,
    Count,
    Fraction,
    /// Microseconds of CPU.
    Cpu,
    /// The currency of `--cost-per-hour`.
    Money,
}

/// Which way is better: throughput up, latency down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// A name that is no metric; the message lists the known ones.
#[derive(Debug, thiserror::Error)]
#[error("unknown metric {0:?} (qps, tps, [CLASS.]p50|p95|p99|p99.9|mean|min|max with CLASS event, total, read, write, commit, other or a statement name, errors, error_rate, cpu_per_query, cost_per_mq, cost_per_mt; a probe's downtime, lost, lag_p99, lag_max)")]
pub struct UnknownMetric(pub String);

/// The metrics compare reports for every pair of results.
pub fn headline(classes_present: &[&str]) -> Vec<Metric> {
    let mut out = vec![Metric::Qps, Metric::Tps];
    for class in crate::model::LATENCY_CLASSES.iter().filter(|c| classes_present.contains(c)) {
        for p in [50.0, 95.0, 99.0, 99.9] {
            out.push(Metric::Latency { class: class.to_string(), figure: LatencyFigure::Percentile(p) });
        }
    }
    out.extend([Metric::CpuPerQuery, Metric::ErrorRate, Metric::CostPerMillionQueries, Metric::CostPerMillionEvents]);
    out
}

impl Metric {
    /// Parses a metric name: `qps`, `tps`, `p99`, `commit.p99.9`, `write.mean`, `errors`...
    pub fn parse(name: &str) -> Result<Metric, UnknownMetric> {
        let n = name.trim();
        Ok(match n {
            "qps" => Metric::Qps,
            "tps" | "eps" => Metric::Tps,
            "errors" => Metric::Errors,
            "error_rate" => Metric::ErrorRate,
            "cpu_per_query" => Metric::CpuPerQuery,
            "cost_per_mq" => Metric::CostPerMillionQueries,
            "cost_per_mt" => Metric::CostPerMillionEvents,
            _ if HaFigure::parse(n).is_some() => Metric::Ha(HaFigure::parse(n).expect("checked")),
            _ => {
                // `[CLASS.]FIGURE`: a class may hold dots (`new_order.stock`), a figure too (`p99.9`).
                let (class, figure) = match parse_figure(n) {
                    Some(f) => ("event", f),
                    None => n
                        .match_indices('.')
                        .find_map(|(i, _)| parse_figure(&n[i + 1..]).map(|f| (&n[..i], f)))
                        .ok_or_else(|| UnknownMetric(name.into()))?,
                };
                if class.is_empty() || !class.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                    return Err(UnknownMetric(name.into()));
                }
                Metric::Latency { class: class.to_string(), figure }
            }
        })
    }

    pub fn quantity(&self) -> Quantity {
        match self {
            Metric::Qps | Metric::Tps => Quantity::Rate,
            Metric::Latency { .. } => Quantity::Latency,
            Metric::Errors => Quantity::Count,
            Metric::ErrorRate => Quantity::Fraction,
            Metric::CpuPerQuery => Quantity::Cpu,
            Metric::CostPerMillionQueries | Metric::CostPerMillionEvents => Quantity::Money,
            Metric::Ha(HaFigure::Lost) => Quantity::Count,
            Metric::Ha(_) => Quantity::Latency,
        }
    }

    pub fn better(&self) -> Better {
        match self {
            Metric::Qps | Metric::Tps => Better::Higher,
            _ => Better::Lower,
        }
    }

    /// The metric's value in a measurement (µs for latency and CPU, per second for rates).
    pub fn value(&self, m: &MetricSource<'_>) -> Option<f64> {
        let rate = |class: &str| m.stats.get(class).map(|s| s.qps);
        match self {
            Metric::Qps => rate("total"),
            Metric::Tps => rate("event"),
            Metric::Latency { class, figure } => {
                let s = m.class(class)?;
                if s.count == 0 {
                    return None;
                }
                match figure {
                    LatencyFigure::Percentile(p) => s.at(*p),
                    LatencyFigure::Mean => Some(s.mean_us),
                    LatencyFigure::Min => Some(s.min_us),
                    LatencyFigure::Max => Some(s.max_us),
                }
            }
            Metric::Errors => Some(m.errors.total as f64),
            Metric::ErrorRate => {
                let events = m.stats.get("event").map_or(0, |s| s.count);
                let tried = events + m.errors.total;
                (tried > 0).then(|| m.errors.total as f64 / tried as f64)
            }
            Metric::CpuPerQuery => m.client.cpu_per_query_us,
            Metric::CostPerMillionQueries => cost_per_million(m.cost_per_hour?, rate("total")?),
            Metric::CostPerMillionEvents => cost_per_million(m.cost_per_hour?, rate("event")?),
            Metric::Ha(figure) => figure.of(m.ha?).exact(),
        }
    }

    /// The metric in one second of the timeline, with its weight (the events or statements
    /// behind it); `None` when the timeline does not carry it (statement kinds, means).
    pub fn per_second(&self, i: &IntervalStats, cost_per_hour: Option<f64>) -> Option<(f64, f64)> {
        let class = |name: &str| i.class(name);
        match self {
            Metric::Qps => Some((i.total.per_s, 1.0)),
            Metric::Tps => Some((i.event.per_s, 1.0)),
            Metric::Latency { class: c, figure } => {
                let s = class(c)?;
                let v = match figure {
                    LatencyFigure::Percentile(p) => s.pick(*p)?,
                    LatencyFigure::Min => s.min_us,
                    LatencyFigure::Max => s.max_us,
                    LatencyFigure::Mean => return None,
                };
                (s.count > 0).then_some((v, s.count as f64))
            }
            Metric::Errors => Some((i.errors as f64, 1.0)),
            Metric::ErrorRate => {
                let tried = i.event.count + i.errors;
                (tried > 0).then(|| (i.errors as f64 / tried as f64, tried as f64))
            }
            Metric::CpuPerQuery => {
                let cpu = i.client_cpu_pct?;
                (i.total.count > 0)
                    .then(|| (cpu / 100.0 * i.duration_s * 1e6 / i.total.count as f64, i.total.count as f64))
            }
            Metric::CostPerMillionQueries => Some((cost_per_million(cost_per_hour?, i.total.per_s)?, 1.0)),
            Metric::CostPerMillionEvents => Some((cost_per_million(cost_per_hour?, i.event.per_s)?, 1.0)),
            Metric::Ha(_) => None,
        }
    }

    /// A number of this metric with its unit: `1234.5 q/s`, `2.35 ms`, `0.12%`.
    pub fn show(&self, v: f64) -> String {
        match self.quantity() {
            Quantity::Latency | Quantity::Cpu => show_us(v),
            Quantity::Rate => format!("{} /s", show_number(v)),
            Quantity::Count => format!("{v:.0}"),
            Quantity::Fraction => format!("{}%", show_number(v * 100.0)),
            Quantity::Money => show_number(v),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Metric::Qps => f.write_str("qps"),
            Metric::Tps => f.write_str("tps"),
            Metric::Latency { class, figure } => {
                let fig = match figure {
                    LatencyFigure::Percentile(p) => super::stats::percentile_key(*p),
                    LatencyFigure::Mean => "mean".into(),
                    LatencyFigure::Min => "min".into(),
                    LatencyFigure::Max => "max".into(),
                };
                if class == "event" {
                    f.write_str(&fig)
                } else {
                    write!(f, "{class}.{fig}")
                }
            }
            Metric::Errors => f.write_str("errors"),
            Metric::ErrorRate => f.write_str("error_rate"),
            Metric::CpuPerQuery => f.write_str("cpu_per_query"),
            Metric::CostPerMillionQueries => f.write_str("cost_per_mq"),
            Metric::CostPerMillionEvents => f.write_str("cost_per_mt"),
            Metric::Ha(figure) => f.write_str(figure.name()),
        }
    }
}

fn parse_figure(s: &str) -> Option<LatencyFigure> {
    match s {
        "mean" | "avg" => Some(LatencyFigure::Mean),
        "min" => Some(LatencyFigure::Min),
        "max" => Some(LatencyFigure::Max),
        "p999" => Some(LatencyFigure::Percentile(99.9)),
        _ => {
            let p: f64 = s.strip_prefix('p')?.parse().ok()?;
            (p > 0.0 && p <= 100.0).then_some(if p == 100.0 {
                LatencyFigure::Max
            } else {
                LatencyFigure::Percentile(p)
            })
        }
    }
}

fn cost_per_million(per_hour: f64, per_s: f64) -> Option<f64> {
    (per_s > 0.0).then(|| per_hour / (per_s * 3600.0) * 1e6)
}

/// Microseconds in the unit a person reads best.
pub fn show_us(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.3} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.3} ms", us / 1e3)
    } else {
        format!("{us:.1} us")
    }
}

fn show_number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// What metrics are read from: a whole result or one repeat.
pub struct MetricSource<'a> {
    pub stats: &'a BTreeMap<String, ClassStats>,
    pub statements: &'a BTreeMap<String, ClassStats>,
    pub transactions: &'a BTreeMap<String, ClassStats>,
    pub errors: &'a ErrorRecord,
    pub client: &'a ClientRecord,
    pub cost_per_hour: Option<f64>,
    /// A probe's record, when a probe ran (a whole result's only: a repeat has none).
    pub ha: Option<&'a HaRecord>,
}

impl MetricSource<'_> {
    fn class(&self, name: &str) -> Option<&ClassStats> {
        self.stats.get(name).or_else(|| self.statements.get(name)).or_else(|| self.transactions.get(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "qps",
            "tps",
            "p99",
            "p99.9",
            "commit.p99",
            "write.p95",
            "read.mean",
            "event.max",
            "commit.min",
            "errors",
            "downtime",
            "lost",
            "lag_p99",
            "lag_max",
        ] {
            let m = Metric::parse(name).unwrap();
            let shown = m.to_string();
            assert_eq!(Metric::parse(&shown).unwrap(), m, "{name} -> {shown}");
        }
        assert_eq!(Metric::parse("p999").unwrap().to_string(), "p99.9");
        assert_eq!(Metric::parse("event.p99").unwrap().to_string(), "p99");
        assert_eq!(
            Metric::parse("commit.p99.9").unwrap(),
            Metric::Latency { class: "commit".into(), figure: LatencyFigure::Percentile(99.9) }
        );
        assert_eq!(
            Metric::parse("point_selects.p95").unwrap(),
            Metric::Latency { class: "point_selects".into(), figure: LatencyFigure::Percentile(95.0) }
        );
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        for bad in ["qpss", "p0", "p101", "commit.", ".p99", "commit.latency", ""] {
            let e = Metric::parse(bad).unwrap_err().to_string();
            assert!(e.contains("qps, tps"), "{bad}: {e}");
        }
    }

    #[test]
    fn cost_per_million_queries() {
        // $3.60 per hour at 1000 q/s: 3.6 M queries per hour -> $1 per million.
        assert!((cost_per_million(3.6, 1000.0).unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(cost_per_million(3.6, 0.0), None);
    }
}
