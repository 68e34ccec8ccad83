//! A high-availability probe's figures as the text report prints them: the nodes, the
//! failover writer's outages and lost writes, each replica's lag.

use crate::model::ha::{FailoverRecord, HaRecord, LagRecord, Outcome};
use std::fmt::Write;

pub fn text(o: &mut String, h: &HaRecord, verbose: bool) {
    let load = h.load.as_deref().map_or("alone, without load".to_string(), |w| format!("beside the workload `{w}`"));
    let _ = writeln!(
        o,
        "\nHigh availability: probe {} for {:.1} s from {} ({load}); times are seconds since then",
        h.probe, h.duration_s, h.started_at
    );
    for n in &h.nodes {
        match &n.unreachable {
            Some(why) => {
                let _ = writeln!(o, "  {:<9} {}  unreachable at the start: {why}", n.name, n.url);
            }
            None => {
                let durability = n.facts.as_ref().map_or("unknown".into(), |f| f.durability.describe());
                let _ = writeln!(o, "  {:<9} {}  {} {}, {}", n.name, n.url, n.product, n.version, n.role);
                let _ = writeln!(o, "            durability: {durability}");
            }
        }
    }
    if let Some(f) = &h.failover {
        failover(o, f, verbose);
    }
    if let Some(l) = &h.lag {
        lag(o, l, verbose);
    }
}

fn secs(us: u64) -> String {
    format!("{:.3}", us as f64 / 1e6)
}

fn failover(o: &mut String, f: &FailoverRecord, verbose: bool) {
    let outcomes: Vec<String> = f.outcomes.iter().map(|(k, v)| format!("{v} {k}")).collect();
    let _ = writeln!(
        o,
        "  writer: {} attempts at {} per second, {:.1} s allowed each: {}",
        f.attempts.len(),
        f.rate,
        f.attempt_timeout_s,
        outcomes.join(", ")
    );
    let resolution = 1000.0 / f.rate;
    match f.outages.len() {
        0 => {
            let _ = writeln!(o, "  downtime: none (every attempt acknowledged)");
        }
        n => {
            let _ = writeln!(
                o,
                "  downtime: {:.0} ms, the longest of {n} outage(s) (last acknowledged write to the next; resolution {resolution:.0} ms, one attempt per slot)",
                f.downtime_ms
            );
        }
    }
    for out in &f.outages {
        let to = out.to_us.map_or("the end (never acknowledged again)".into(), secs);
        let moved = match out.target_after {
            Some(t) if t != out.target_before && out.target_before > 0 => {
                format!("; the writer moved from target{} to target{t}", out.target_before)
            }
            _ => String::new(),
        };
        let errors: Vec<String> = out.errors.iter().map(|(k, v)| format!("{v} {k}")).collect();
        let _ =
            writeln!(o, "    {} -> {}: {:.0} ms, {}{moved}", secs(out.from_us), to, out.duration_ms, errors.join(", "));
    }
    if verbose {
        for a in f.attempts.iter().filter(|a| a.outcome != Outcome::Acknowledged) {
            let code = a.code.as_deref().unwrap_or("");
            let msg = a.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
            let _ = writeln!(
                o,
                "      #{} at {} target{} {} {code} ({:.1} ms){msg}",
                a.seq,
                secs(a.at_us),
                a.target,
                a.outcome.name(),
                a.took_us as f64 / 1000.0
            );
        }
    }
    match &f.verification {
        Some(v) => {
            let _ = writeln!(
                o,
                "  acknowledged writes on {} afterwards: {} of {} present, {} LOST{}; {} of unknown outcome present (committed, never acknowledged); {} that failed with an error present",
                v.node,
                v.acknowledged - v.lost,
                v.acknowledged,
                v.lost,
                if v.lost > 0 { format!(" (seq {})", list(&v.lost_seqs)) } else { String::new() },
                v.unacknowledged_present,
                v.failed_present
            );
        }
        None => {
            let _ = writeln!(o, "  acknowledged writes: not verified (no node answered after the run)");
        }
    }
}

/// At most 20 numbers, then how many more.
fn list(seqs: &[u64]) -> String {
    let shown: Vec<String> = seqs.iter().take(20).map(u64::to_string).collect();
    match seqs.len() {
        n if n > 20 => format!("{} and {} more", shown.join(", "), n - 20),
        _ => shown.join(", "),
    }
}

fn lag(o: &mut String, l: &LagRecord, verbose: bool) {
    let errors: u64 = l.write_errors.values().sum();
    let _ = writeln!(
        o,
        "  heartbeats: {} written at {} per second ({errors} failed); each replica read every {:.0} ms (the resolution of every lag)",
        l.heartbeats_written, l.rate, l.poll_ms
    );
    let _ = writeln!(
        o,
        "  {:<44}{:>9}{:>10}{:>10}{:>10}{:>10}{:>8}",
        "replica", "seen", "p50_ms", "p99_ms", "max_ms", "mean_ms", "unseen"
    );
    for r in &l.replicas {
        let ms = |us: f64| us / 1000.0;
        let _ = writeln!(
            o,
            "  {:<44}{:>9}{:>10.1}{:>10.1}{:>10.1}{:>10.1}{:>8}",
            r.node,
            r.lag.count,
            ms(r.lag.p50_us),
            ms(r.lag.p99_us),
            ms(r.lag.max_us),
            ms(r.lag.mean_us),
            r.unseen
        );
        if r.unseen > 0 {
            let _ =
                writeln!(o, "    {} heartbeat(s) not visible {:.0} s after the last was written", r.unseen, r.drain_s);
        }
        if verbose {
            for s in &r.timeline {
                let _ = writeln!(
                    o,
                    "    second {:>5}: {:>4} heartbeats, lag p50 {:.1} ms, max {:.1} ms{}",
                    s.second,
                    s.heartbeats,
                    s.p50_ms,
                    s.max_ms,
                    if s.unseen > 0 { format!(", {} unseen", s.unseen) } else { String::new() }
                );
            }
        }
    }
}
