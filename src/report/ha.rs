//! A high-availability probe's figures as the text report prints them: the nodes, the
//! failover writer's outages and lost writes, each replica's lag.

use crate::model::fault::FaultRecord;
use crate::model::ha::{FailoverRecord, HaRecord, LagRecord, NodeRole, Outcome, SplitBrain};
use std::fmt::Write;

pub fn text(o: &mut String, h: &HaRecord, faults: Option<&FaultRecord>, verbose: bool) {
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
        failover(o, f, faults, verbose);
    }
    if let Some(l) = &h.lag {
        lag(o, l, verbose);
    }
}

fn secs(us: u64) -> String {
    format!("{:.3}", us as f64 / 1e6)
}

fn failover(o: &mut String, f: &FailoverRecord, faults: Option<&FaultRecord>, verbose: bool) {
    let outcomes: Vec<String> = f.outcomes.iter().map(|(k, v)| format!("{v} {k}")).collect();
    let _ = writeln!(
        o,
        "  writer: {} attempts at {} per second, {:.1} s allowed each: {}",
        f.attempts.len(),
        f.rate,
        f.attempt_timeout_s,
        outcomes.join(", ")
    );
    let _ = writeln!(o, "  verdict: {}", verdict(f, faults));
    roles(o, f);
    if let Some(sb) = &f.split_brain {
        split_brain(o, sb);
    }
    downtime(o, f, faults);
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
    verification(o, f);
}

/// The failover in one line: split brain, no failover, or the writer's move; and the loss.
pub fn verdict(f: &FailoverRecord, faults: Option<&FaultRecord>) -> String {
    let loss = match &f.verification {
        Some(v) => format!(
            "{} of {} acknowledged writes lost on the final primary, {} diverged",
            v.lost, v.acknowledged, v.diverged
        ),
        None => "loss not judged (no node reads as primary after the run, or none answered)".into(),
    };
    if let Some(sb) = &f.split_brain {
        let n: u64 = sb.on_non_primary.iter().map(|w| w.acknowledged).sum::<u64>()
            + sb.overlapping.iter().map(|p| p.acknowledged).sum::<u64>();
        return format!("SPLIT BRAIN ({n} write(s) acknowledged off the primary): no clean failover; {loss}");
    }
    let Some(longest) = f.outages.iter().max_by(|a, b| a.duration_ms.total_cmp(&b.duration_ms)) else {
        return format!("no outage; {loss}");
    };
    let since = f.outages.iter().take_while(|o| !std::ptr::eq(*o, longest)).filter_map(|o| o.to_us).last();
    let after = match (super::faults::cause(faults, longest, since.unwrap_or(0)), longest.to_us) {
        (Some(e), Some(to)) => {
            let at = e.at_us.unwrap_or(0);
            format!(" ({:.0} ms after {} at {})", to.saturating_sub(at) as f64 / 1000.0, e.label(), secs(at))
        }
        _ => String::new(),
    };
    let (before, after_node) = (who(longest.target_before, &longest.node_before), after_of(longest));
    match longest.target_after {
        None => format!(
            "no write acknowledged on a primary for the last {:.0} ms (not recovered); {loss}",
            longest.duration_ms
        ),
        Some(_) if !longest.moved() => {
            format!(
                "no failover: the same node ({before}) took writes again after {:.0} ms{after}; {loss}",
                longest.duration_ms
            )
        }
        Some(_) => format!("failover from {before} to {after_node} in {:.0} ms{after}; {loss}", longest.duration_ms),
    }
}

/// A target, with the server that answered on it when known: `target1 (port 13306, server_id 1)`.
fn who(target: u32, node: &Option<String>) -> String {
    match node {
        Some(n) => format!("target{target} ({n})"),
        None => format!("target{target}"),
    }
}

fn after_of(o: &crate::model::ha::Outage) -> String {
    o.target_after.map_or("none".into(), |t| who(t, &o.node_after))
}

/// Each node's roles as the probe saw them change.
fn roles(o: &mut String, f: &FailoverRecord) {
    if f.roles.is_empty() {
        return;
    }
    let targets: std::collections::BTreeSet<u32> = f.roles.iter().map(|c| c.target).collect();
    let _ = writeln!(o, "  roles (read before each connection's first write, and every {:.0} ms):", f.role_poll_ms);
    for t in targets {
        let changes: Vec<String> = f
            .roles
            .iter()
            .filter(|c| c.target == t)
            .map(|c| format!("{} at {}", c.role.map_or("no answer", |r| r.name()), secs(c.at_us)))
            .collect();
        let _ = writeln!(o, "    target{t}: {}", changes.join(", "));
    }
}

fn split_brain(o: &mut String, sb: &SplitBrain) {
    for w in &sb.on_non_primary {
        let _ = writeln!(
            o,
            "  SPLIT BRAIN: {} write(s) acknowledged by target{} while it was {} ({} -> {})",
            w.acknowledged,
            w.target,
            w.role.map_or("of unknown role", |r| if r == NodeRole::ReadOnly { "read-only" } else { "a replica" }),
            secs(w.first_us),
            secs(w.last_us)
        );
    }
    for p in &sb.overlapping {
        let _ = writeln!(
            o,
            "  SPLIT BRAIN: target{} and target{} both took writes while both read as primaries ({} interleaved acknowledgement(s), {} -> {})",
            p.targets[0],
            p.targets[1],
            p.acknowledged,
            secs(p.from_us),
            secs(p.to_us)
        );
    }
    let _ = writeln!(
        o,
        "  this was no clean failover: the spans below are without a write acknowledged on a primary, and loss is judged on the node that ends as primary only"
    );
}

fn downtime(o: &mut String, f: &FailoverRecord, faults: Option<&FaultRecord>) {
    let resolution = 1000.0 / f.rate;
    let clean = f.split_brain.is_none();
    match (f.outages.len(), clean) {
        (0, true) => {
            let _ = writeln!(o, "  downtime: none (every attempt acknowledged by a primary)");
        }
        (0, false) => {}
        (n, true) => {
            let _ = writeln!(
                o,
                "  downtime: {:.0} ms, the longest of {n} outage(s) (last write acknowledged on a primary to the next; resolution {resolution:.0} ms, one attempt per slot)",
                f.downtime_ms
            );
        }
        (n, false) => {
            let _ = writeln!(
                o,
                "  no downtime figure: {n} span(s) without a write acknowledged on a primary, the longest {:.0} ms",
                f.downtime_ms
            );
        }
    }
    let mut since = 0;
    for out in &f.outages {
        let to = out.to_us.map_or("the end (never acknowledged again)".into(), secs);
        let how = match out.target_after {
            Some(_) if out.moved() => format!(
                "; the writer moved from {} to {}, a primary then",
                who(out.target_before, &out.node_before),
                after_of(out)
            ),
            Some(_) if out.target_before > 0 => {
                format!("; no failover: {} took writes again after {:.0} ms", after_of(out), out.duration_ms)
            }
            _ => String::new(),
        };
        let errors: Vec<String> = out.errors.iter().map(|(k, v)| format!("{v} {k}")).collect();
        let _ =
            writeln!(o, "    {} -> {}: {:.0} ms, {}{how}", secs(out.from_us), to, out.duration_ms, errors.join(", "));
        if let (Some(e), Some(to)) = (super::faults::cause(faults, out, since), out.to_us) {
            let at = e.at_us.unwrap_or(0);
            let _ = writeln!(
                o,
                "      from {} at {} to the first write acknowledged on a primary ({}) at {}: {:.0} ms",
                e.label(),
                secs(at),
                after_of(out),
                secs(to),
                to.saturating_sub(at) as f64 / 1000.0
            );
        }
        since = out.to_us.unwrap_or(since);
    }
}

pub fn views(o: &mut String, v: &crate::model::outage::OutageViews) {
    let _ = writeln!(o, "  {}", views_sentence(v));
}

/// The probe's outage beside the workload's stall: whether they agree, or by how much not.
pub fn views_sentence(v: &crate::model::outage::OutageViews) -> String {
    let verdict = match v.agree() {
        true => format!("agrees with the probe's {:.0} ms within {:.0} ms", v.probe_ms, v.tolerance_ms()),
        false => format!(
            "DIFFERS from the probe's {:.0} ms by {:+.0} ms (the resolutions allow {:.0} ms): the probe's one connection and the workload's clients did not see the same outage",
            v.probe_ms,
            v.difference_ms(),
            v.tolerance_ms()
        ),
    };
    format!(
        "the workload beside it: longest stall {:.0} ms (its longest event {:.0} ms; {:.0} ms without a completed event, in {:.0} ms intervals; {} errors): {verdict}",
        v.workload_ms(),
        v.longest_event_ms,
        v.no_event_ms,
        v.interval_ms,
        v.errors
    )
}

/// Every node's rows after the run, and the verdict on the node that ends as primary.
pub fn verification(o: &mut String, f: &FailoverRecord) {
    for c in &f.checks {
        match (&c.unverified, &c.role) {
            (Some(why), _) => {
                let _ = writeln!(o, "  target{} {}: UNVERIFIED ({why})", c.target, c.node);
            }
            (None, role) => {
                let role = role.as_ref().map_or("unknown".into(), |r| r.describe());
                let _ = writeln!(
                    o,
                    "  target{} {} ({role}): {} of this run's rows, {} acknowledged missing{}, {} never acknowledged present",
                    c.target,
                    c.node,
                    c.present,
                    c.missing,
                    if c.missing > 0 { format!(" (seq {})", list(&c.missing_seqs)) } else { String::new() },
                    c.unacknowledged_present
                );
            }
        }
    }
    match &f.verification {
        Some(v) => {
            let _ = writeln!(
                o,
                "  acknowledged writes on {} afterwards (final primary: {}): {} of {} present, {} LOST{}; {} DIVERGED (on another node, not here){}; {} of unknown outcome present (committed, never acknowledged); {} that failed with an error present",
                v.node,
                v.why,
                v.acknowledged - v.lost,
                v.acknowledged,
                v.lost,
                if v.lost > 0 { format!(" (seq {})", list(&v.lost_seqs)) } else { String::new() },
                v.diverged,
                if v.diverged > 0 { format!(" (seq {})", list(&v.diverged_seqs)) } else { String::new() },
                v.unacknowledged_present,
                v.failed_present
            );
        }
        None if f.checks.iter().all(|c| c.unverified.is_some()) => {
            let _ = writeln!(o, "  acknowledged writes: not verified (no node answered after the run)");
        }
        None => {
            let _ = writeln!(
                o,
                "  acknowledged writes: loss not judged (no node that answered reads as primary after the run)"
            );
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
