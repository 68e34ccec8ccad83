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
        let endpoints: Vec<&str> = h.nodes.iter().map(|n| n.name.as_str()).collect();
        failover(o, f, (&endpoints, h.duration_s), faults, verbose);
    }
    if let Some(l) = &h.lag {
        lag(o, l, verbose);
    }
}

fn secs(us: u64) -> String {
    format!("{:.3}", us as f64 / 1e6)
}

/// `(endpoints, duration_s)`: the targets' names, and how long the probe ran.
fn failover(
    o: &mut String,
    f: &FailoverRecord,
    (endpoints, duration_s): (&[&str], f64),
    faults: Option<&FaultRecord>,
    verbose: bool,
) {
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
    primaries_at_once(o, f, duration_s);
    timing(o, f, faults);
    roles(o, f, endpoints);
    if let Some(sb) = &f.split_brain {
        split_brain(o, f, sb);
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
        Some(v) if v.through.is_some() => format!(
            "{} of {} acknowledged writes lost on {}, verified only through {} (no other node read)",
            v.lost,
            v.acknowledged,
            f.name_of(&v.server),
            v.node
        ),
        Some(v) => format!(
            "{} of {} acknowledged writes lost on the final primary ({}), {} diverged",
            v.lost,
            v.acknowledged,
            f.name_of(&v.server),
            v.diverged
        ),
        None => "loss not judged (no node reads as primary after the run, or none answered)".into(),
    };
    if let Some(sb) = &f.split_brain {
        let n: u64 = sb.on_non_primary.iter().map(|w| w.acknowledged).sum::<u64>();
        if n == 0 {
            let pairs: Vec<String> = sb
                .overlapping
                .iter()
                .map(|p| format!("{} and {}", f.name_of(&p.nodes[0]), f.name_of(&p.nodes[1])))
                .collect();
            return format!("TWO PRIMARIES ({} took writes at once): no clean failover; {loss}", pairs.join("; "));
        }
        let who: Vec<String> = sb.on_non_primary.iter().map(|w| f.name_of(&w.node)).collect();
        return format!(
            "SPLIT BRAIN ({n} write(s) acknowledged off the primary, by {}): no clean failover; {loss}",
            who.join(", ")
        );
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
    let (before, after_node) = (who(f, longest.target_before, &longest.node_before), after_of(f, longest));
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
        Some(_) => format!(
            "failover from {before} to {after_node} in {:.0} ms{after}, {}; {loss}",
            longest.duration_ms,
            origin_words(f, faults)
        ),
    }
}

/// What ended the outage: `scheduled (this run's promote replica1 at 4.000 s made the new
/// primary; not a failover anything detected)`.
pub fn origin_words(f: &FailoverRecord, faults: Option<&FaultRecord>) -> String {
    use crate::model::fault::DowntimeOrigin;
    match crate::model::fault::downtime_origin(f, faults) {
        Some((DowntimeOrigin::Scheduled, Some(e))) => format!(
            "SCHEDULED (this run's own {} at {} made the new primary: the downtime is the schedule's, not a failover anything detected)",
            e.label(),
            secs(e.at_us.unwrap_or(0))
        ),
        Some((DowntimeOrigin::Requested, Some(e))) => {
            format!("requested (by this run's {} at {}; the cluster chose the new primary)", e.label(), secs(e.at_us.unwrap_or(0)))
        }
        _ => "detected (no step of this run promoted a node or asked for a failover)".into(),
    }
}

/// The server that answered, by its name (`replica1`, `127.0.0.2:5432`); a result without
/// servers: the target, with what the server said.
fn who(f: &FailoverRecord, target: u32, node: &Option<String>) -> String {
    match node {
        Some(n) if !f.servers.is_empty() => f.name_of(n),
        Some(n) => format!("target{target} ({n})"),
        None => format!("target{target}"),
    }
}

fn after_of(f: &FailoverRecord, o: &crate::model::ha::Outage) -> String {
    o.target_after.map_or("none".into(), |t| who(f, t, &o.node_after))
}

/// Whether the probe kept its own time: its stalls, dropped slots, late fault steps.
fn timing(o: &mut String, f: &FailoverRecord, faults: Option<&FaultRecord>) {
    let t = &f.timing;
    for s in &t.stalls {
        let _ = writeln!(
            o,
            "  PROBE STALLED {} -> {} ({:.0} ms): the probe's own process did not run on time, and saw nothing then",
            secs(s.from_us),
            secs(s.to_us),
            s.ms()
        );
    }
    if t.dropped_slots > 0 {
        let _ = writeln!(
            o,
            "  {} write slot(s) dropped: no write was tried in them (an attempt hung, or the probe was late)",
            t.dropped_slots
        );
    }
    for (e, late_ms) in faults.map(|r| r.late(t.threshold_ms)).unwrap_or_default() {
        let _ = writeln!(
            o,
            "  fault step {} began {late_ms:.0} ms after its planned {:.3} s",
            e.label(),
            e.planned_ms as f64 / 1000.0
        );
    }
    let indeterminate: Vec<&crate::model::ha::Attempt> =
        f.attempts.iter().filter(|a| a.outcome == Outcome::Unknown).collect();
    if !indeterminate.is_empty() {
        let committed = indeterminate.iter().filter(|a| a.settled == Some(true)).count();
        let not = indeterminate.iter().filter(|a| a.settled == Some(false)).count();
        let _ = writeln!(
            o,
            "  {} indeterminate write(s) (connection lost after sending, or no answer within {:.1} s), settled on the final primary: {committed} committed, {not} not, {} unsettled",
            indeterminate.len(),
            f.attempt_timeout_s,
            indeterminate.len() - committed - not
        );
    }
}

/// Each node's roles as the probe saw them change.
fn roles(o: &mut String, f: &FailoverRecord, endpoints: &[&str]) {
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
            .map(|c| match (c.role, c.node.is_empty() || f.servers.is_empty()) {
                (Some(r), false) => format!("{} on {} at {}", r.name(), f.name_of(&c.node), secs(c.at_us)),
                (r, _) => format!("{} at {}", r.map_or("no answer", |r| r.name()), secs(c.at_us)),
            })
            .collect();
        let endpoint = endpoints.get(t as usize - 1).map_or(format!("target{t}"), |n| n.to_string());
        let _ = writeln!(o, "    {endpoint}: {}", changes.join(", "));
    }
}

/// Servers that read as primaries at the same time, though not both taking this probe's
/// writes (those are the split brain's): next to the verdict, which times the writes'
/// failover and would otherwise read as a clean one.
fn primaries_at_once(o: &mut String, f: &FailoverRecord, duration_s: f64) {
    if f.split_brain.as_ref().is_some_and(|sb| !sb.overlapping.is_empty()) {
        return;
    }
    let roles = f.server_roles();
    let spans = crate::model::ha_servers::Timeline(&roles).several_writers((duration_s * 1e6) as u64);
    for (from, to, servers) in spans {
        let names: Vec<String> = servers
            .iter()
            .map(|&n| f.servers.get(n as usize - 1).map_or(format!("target{n}"), |s| s.name.clone()))
            .collect();
        let _ = writeln!(
            o,
            "  TWO PRIMARIES: {} read as primaries at the same time, {} -> {}: a client pointed at either writes to a copy of its own (ha-two-primaries)",
            names.join(" and "),
            secs(from),
            secs(to)
        );
    }
}

fn split_brain(o: &mut String, f: &FailoverRecord, sb: &SplitBrain) {
    for w in &sb.on_non_primary {
        let _ = writeln!(
            o,
            "  SPLIT BRAIN: {} write(s) acknowledged by {} while it was {} ({} -> {})",
            w.acknowledged,
            who(f, w.target, &Some(w.node.clone()).filter(|n| !n.is_empty())),
            w.role.map_or("of unknown role", |r| if r == NodeRole::ReadOnly { "read-only" } else { "a replica" }),
            secs(w.first_us),
            secs(w.last_us)
        );
    }
    for p in &sb.overlapping {
        let name = |i: usize| match p.nodes[i].is_empty() {
            true => format!("target{}", p.targets[i]),
            false => f.name_of(&p.nodes[i]),
        };
        let _ = writeln!(
            o,
            "  TWO PRIMARIES: {} and {} both took writes while both read as primaries, {} -> {}: {} and {} acknowledged write(s) ({} interleaved)",
            name(0),
            name(1),
            secs(p.from_us),
            secs(p.to_us),
            p.acknowledged_each[0],
            p.acknowledged_each[1],
            p.acknowledged
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
                who(f, out.target_before, &out.node_before),
                after_of(f, out)
            ),
            Some(_) if out.target_before > 0 => {
                format!("; no failover: {} took writes again after {:.0} ms", after_of(f, out), out.duration_ms)
            }
            _ => String::new(),
        };
        let errors: Vec<String> = out.errors.iter().map(|(k, v)| format!("{v} {k}")).collect();
        let _ =
            writeln!(o, "    {} -> {}: {:.0} ms, {}{how}", secs(out.from_us), to, out.duration_ms, errors.join(", "));
        if let Some(earliest) = out.earliest_from_us {
            let _ = writeln!(
                o,
                "      the probe stalled after its last acknowledgement at {}: the outage began between then and {}",
                secs(earliest),
                secs(out.from_us)
            );
        }
        if let (Some(e), Some(to)) = (super::faults::cause(faults, out, since), out.to_us) {
            let at = e.at_us.unwrap_or(0);
            let _ = writeln!(
                o,
                "      from {} at {} to the first write acknowledged on a primary ({}) at {}: {:.0} ms",
                e.label(),
                secs(at),
                after_of(f, out),
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
        node_check(o, f, c);
    }
    match &f.verification {
        Some(v) => {
            let diverged = match &v.through {
                Some(endpoint) => format!(
                    "verified only through {endpoint}, which reached {}: no other node was read, so no diverged figure",
                    f.name_of(&v.server)
                ),
                None => format!(
                    "{} DIVERGED (on another node, not here){}",
                    v.diverged,
                    if v.diverged > 0 { format!(" (seq {})", list(&v.diverged_seqs)) } else { String::new() }
                ),
            };
            let _ = writeln!(
                o,
                "  acknowledged writes on {} afterwards (final primary: {}): {} of {} present, {} LOST{}; {diverged}; {} of unknown outcome present (committed, never acknowledged); {} that failed with an error present",
                f.name_of(&v.server),
                v.why,
                v.acknowledged - v.lost,
                v.acknowledged,
                v.lost,
                if v.lost > 0 { format!(" (seq {})", list(&v.lost_seqs)) } else { String::new() },
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

/// One server's rows after the run: named, how it was read, what it lacks and holds.
fn node_check(o: &mut String, f: &FailoverRecord, c: &crate::model::ha::NodeCheck) {
    if let Some(why) = &c.unverified {
        let _ = writeln!(o, "  {}: UNVERIFIED ({why})", f.check_name(c));
        return;
    }
    let name = if c.server.is_empty() { format!("target{} {}", c.target, c.node) } else { f.name_of(&c.server) };
    let via = c.through.as_ref().map(|t| format!(", read through {t}")).unwrap_or_default();
    let settled = match c.settled_ms {
        Some(ms) => format!("settled after {ms:.0} ms"),
        None => format!("NOT SETTLED within {:.0} s: what it lacks may still arrive", f.settle_timeout_s),
    };
    let role = c.role.as_ref().map_or("unknown".into(), |r| r.describe());
    let _ = writeln!(
        o,
        "  {name} ({role}{via}; {settled}): {} of this run's rows, {} acknowledged missing{}, {} diverged from the final primary, {} never acknowledged present",
        c.present,
        c.missing,
        if c.missing > 0 { format!(" (seq {})", list(&c.missing_seqs)) } else { String::new() },
        c.diverged,
        c.unacknowledged_present
    );
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
