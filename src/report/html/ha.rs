//! A high-availability probe on the single-result page: the nodes, the outages and lost
//! writes, each replica's lag; charts of every attempt and of lag per second.

use super::chart::{sig, Axis, Chart, Mark, Series};
use super::{esc, table, TableCell};
use crate::model::fault::FaultRecord;
use crate::model::ha::{FailoverRecord, HaRecord, LagRecord, Outcome};
use crate::model::outage::OutageViews;
use serde_json::Value;
use std::fmt::Write;

/// `views`: a workload's stall beside the probe's outage, said as the text report says it.
pub fn section(h: &HaRecord, views: Option<&OutageViews>) -> String {
    let load = h.load.as_deref().map_or("alone, without load".to_string(), |w| format!("beside the workload {w}"));
    let nodes = h
        .nodes
        .iter()
        .map(|n| {
            let durability = match (&n.unreachable, &n.facts) {
                (Some(why), _) => format!("unreachable at the start: {why}"),
                (None, Some(f)) => f.durability.describe(),
                (None, None) => "unknown".into(),
            };
            vec![
                TableCell::text(&n.name),
                TableCell::text(&n.url),
                TableCell::text(&format!("{} {}", n.product, n.version)),
                TableCell::text(&n.role),
                TableCell::text(&durability),
            ]
        })
        .collect();
    let mut o = format!(
        "<section><h2>High availability: probe {}</h2><p>{:.1} s from {} ({}); times are seconds since then.</p>{}",
        esc(&h.probe),
        h.duration_s,
        esc(&h.started_at),
        esc(&load),
        table(&["node", "URL", "server", "role", "durability"], nodes, "")
    );
    if let Some(f) = &h.failover {
        o.push_str(&failover(f));
    }
    if let Some(v) = views {
        let class = if v.agree() { "views" } else { "views fail" };
        let _ = write!(o, "<p class=\"{class}\">{}</p>", esc(&crate::report::ha::views_sentence(v)));
    }
    if let Some(l) = &h.lag {
        o.push_str(&lag(l));
    }
    o.push_str("</section>");
    o
}

fn failover(f: &FailoverRecord) -> String {
    let outcomes: Vec<String> = f.outcomes.iter().map(|(k, v)| format!("{v} {k}")).collect();
    let rows = f
        .outages
        .iter()
        .map(|o| {
            let errors: Vec<String> = o.errors.iter().map(|(k, v)| format!("{v} {k}")).collect();
            vec![
                TableCell::num(format!("{:.3}", o.from_us as f64 / 1e6)),
                TableCell::num(o.to_us.map_or("never".into(), |t| format!("{:.3}", t as f64 / 1e6))),
                TableCell::num(format!("{:.0}", o.duration_ms)),
                TableCell::text(&format!(
                    "target{}{} -> {}{}",
                    o.target_before,
                    o.node_before.as_ref().map_or(String::new(), |n| format!(" ({n})")),
                    o.target_after.map_or("-".into(), |t| format!("target{t}")),
                    o.node_after.as_ref().map_or(String::new(), |n| format!(" ({n})"))
                )),
                TableCell::text(&errors.join(", ")),
            ]
        })
        .collect();
    let verified = match &f.verification {
        Some(v) if v.lost > 0 || v.diverged > 0 => format!(
            "<span class=\"fail\">{} of {} acknowledged writes LOST on {}, the final primary (seq {:?}); {} diverged</span>",
            v.lost,
            v.acknowledged,
            esc(&v.node),
            v.lost_seqs.iter().take(20).collect::<Vec<_>>(),
            v.diverged
        ),
        Some(v) => format!(
            "<span class=\"pass\">all {} acknowledged writes present on {}, the final primary</span>",
            v.acknowledged,
            esc(&v.node)
        ),
        None if f.checks.iter().any(|c| c.unverified.is_none()) => {
            "<span class=\"fail\">loss not judged: no node that answered reads as primary</span>".into()
        }
        None => "<span class=\"fail\">not verified: no node answered after the probe</span>".into(),
    };
    let unknown = f.verification.as_ref().map_or(0, |v| v.unacknowledged_present);
    let headline = match &f.split_brain {
        None => format!(
            "<strong>downtime {:.0} ms</strong> (the longest outage: last write acknowledged on a primary to the next; resolution {:.0} ms)",
            f.downtime_ms,
            1000.0 / f.rate
        ),
        Some(_) => "<strong class=\"fail\">split brain: no clean failover, no downtime figure</strong>".into(),
    };
    format!(
        "<h3>Failover writer</h3><p>{} attempts at {} per second ({}); {headline}.</p>{}{}<p>Afterwards: {verified}; {unknown} write(s) of unknown outcome present.</p>{}",
        f.attempts.len(),
        f.rate,
        esc(&outcomes.join(", ")),
        split_brain(f),
        table(&["from s", "to s", "ms", "writer", "attempts not acknowledged by a primary"], rows, "num"),
        checks(f)
    )
}

fn split_brain(f: &FailoverRecord) -> String {
    let Some(sb) = &f.split_brain else { return String::new() };
    let mut items: Vec<String> = sb
        .on_non_primary
        .iter()
        .map(|w| {
            let role = w.role.map_or("of unknown role", |r| r.name());
            format!(
                "<li>{} write(s) acknowledged by target{} while it was {role} ({:.3} s to {:.3} s)</li>",
                w.acknowledged,
                w.target,
                w.first_us as f64 / 1e6,
                w.last_us as f64 / 1e6
            )
        })
        .collect();
    items.extend(sb.overlapping.iter().map(|p| {
        format!(
            "<li>target{} and target{} took writes in turns while both read as primaries ({} acknowledgement(s), {:.3} s to {:.3} s)</li>",
            p.targets[0],
            p.targets[1],
            p.acknowledged,
            p.from_us as f64 / 1e6,
            p.to_us as f64 / 1e6
        )
    }));
    format!("<p class=\"fail\">Split brain (ha-split-brain):</p><ul>{}</ul>", items.concat())
}

/// Every node's rows after the run.
fn checks(f: &FailoverRecord) -> String {
    if f.checks.is_empty() {
        return String::new();
    }
    let rows = f
        .checks
        .iter()
        .map(|c| {
            let role = match (&c.unverified, &c.role) {
                (Some(why), _) => format!("UNVERIFIED: {why}"),
                (None, r) => r.as_ref().map_or("unknown".into(), |r| r.describe()),
            };
            vec![
                TableCell::text(&format!("target{} {}", c.target, c.node)),
                TableCell::text(&role),
                TableCell::num(c.present.to_string()),
                TableCell::num(c.missing.to_string()),
                TableCell::num(c.unacknowledged_present.to_string()),
            ]
        })
        .collect();
    table(&["node", "role after the run", "rows", "acknowledged missing", "never acknowledged present"], rows, "num")
}

fn lag(l: &LagRecord) -> String {
    let rows = l
        .replicas
        .iter()
        .map(|r| {
            let ms = |us: f64| TableCell::num(format!("{:.1}", us / 1000.0));
            vec![
                TableCell::text(&r.node),
                TableCell::num(r.lag.count.to_string()),
                ms(r.lag.p50_us),
                ms(r.lag.p99_us),
                ms(r.lag.max_us),
                TableCell::num(r.unseen.to_string()),
            ]
        })
        .collect();
    format!(
        "<h3>Replica lag</h3><p>{} heartbeats written at {} per second; each replica read every {:.0} ms (the resolution of every lag). A heartbeat's lag: from its acknowledgement on the primary to the first read of the replica that showed it.</p>{}",
        l.heartbeats_written,
        l.rate,
        l.poll_ms,
        table(&["replica", "seen", "p50 ms", "p99 ms", "max ms", "never seen"], rows, "num")
    )
}

/// The probe's charts; the faults performed (on the probe's clock) marked on each.
pub fn charts(h: &HaRecord, faults: Option<&FaultRecord>) -> Vec<Chart> {
    let mut out = Vec::new();
    if let Some(f) = &h.failover {
        out.push(attempts_chart(f));
    }
    if let Some(l) = &h.lag {
        out.push(lag_chart(l));
    }
    let marks = fault_marks(faults);
    for c in &mut out {
        c.marks.extend(marks.iter().cloned());
    }
    out
}

pub(super) fn fault_marks(faults: Option<&FaultRecord>) -> Vec<Mark> {
    let events = faults.map_or(&[][..], |f| &f.events[..]);
    events.iter().filter_map(|e| Some(Mark { x: e.at_us? as f64 / 1e6, label: e.label() })).collect()
}

/// The faults performed, as a table.
pub fn faults_section(f: &FaultRecord) -> String {
    let secs = |us: Option<u64>| us.map_or("-".into(), |u| format!("{:.3}", u as f64 / 1e6));
    let rows = f
        .events
        .iter()
        .map(|e| {
            vec![
                TableCell::num(format!("{:.3}", e.planned_ms as f64 / 1000.0)),
                TableCell::text(&e.label()),
                TableCell::num(secs(e.at_us)),
                TableCell::num(secs(e.done_us)),
                TableCell::text(&format!("{}: {}", e.outcome, e.detail)),
            ]
        })
        .collect();
    format!(
        "<section><h2>Faults on sandbox {}</h2><p>Schedule <code>{}</code>; seconds on the run's clock (the probe's when a probe ran), marked on its charts.</p>{}</section>",
        esc(&f.sandbox),
        esc(&f.schedule),
        table(&["planned s", "fault", "began s", "done s", "what it did"], rows, "num")
    )
}

/// Every attempt at its time, by outcome; outages marked.
fn attempts_chart(f: &FailoverRecord) -> Chart {
    let mut c = Chart::new(
        "ha-attempts",
        "Failover writer: each attempt's duration, by outcome",
        "scatter",
        Axis::seconds(),
        Axis::ms_log("attempt duration (ms, log scale)"),
    );
    let outcomes = [Outcome::Acknowledged, Outcome::Failed, Outcome::Unknown, Outcome::NotConnected];
    for (color, outcome) in outcomes.into_iter().enumerate() {
        let of: Vec<_> = f.attempts.iter().filter(|a| a.outcome == outcome).collect();
        if of.is_empty() {
            continue;
        }
        let x = of.iter().map(|a| sig(a.at_us as f64 / 1e6, 6)).collect();
        let y = of.iter().map(|a| sig((a.took_us as f64 / 1000.0).max(0.001), 4)).collect();
        c.series.push(Series::line(outcome.name(), x, y, color).styled("points"));
    }
    c.marks = f
        .outages
        .iter()
        .map(|o| Mark { x: o.from_us as f64 / 1e6, label: format!("outage {:.0} ms", o.duration_ms) })
        .collect();
    c.height = 280;
    c
}

/// Each replica's lag per second of acknowledgement: the median and the maximum.
fn lag_chart(l: &LagRecord) -> Chart {
    let mut c = Chart::new(
        "ha-lag",
        "Replica lag per second (heartbeats acknowledged in that second)",
        "line",
        Axis::seconds(),
        Axis::new("lag (ms)", "linear", "num"),
    );
    for (i, r) in l.replicas.iter().enumerate() {
        let x: Vec<Value> = r.timeline.iter().map(|s| Value::from(s.second)).collect();
        let max = r.timeline.iter().map(|s| sig(s.max_ms, 4)).collect();
        let p50 = r.timeline.iter().map(|s| sig(s.p50_ms, 4)).collect();
        c.series.push(Series::line(&format!("{} max", r.node), x.clone(), max, 2 * i));
        c.series.push(Series::line(&format!("{} p50", r.node), x, p50, 2 * i + 1));
    }
    c.height = 280;
    c
}
