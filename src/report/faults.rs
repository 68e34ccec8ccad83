//! The faults a run performed on a sandbox's nodes (`--fault`), as the text report prints
//! them, and which fault an outage followed.

use crate::model::fault::{FaultEvent, FaultRecord};
use crate::model::ha::Outage;
use std::fmt::Write;

fn secs(us: u64) -> String {
    format!("{:.3}", us as f64 / 1e6)
}

pub fn text(o: &mut String, f: &FaultRecord) {
    let on = if f.sandbox.is_empty() { String::new() } else { format!(" on sandbox {}", f.sandbox) };
    let _ = writeln!(o, "\nFaults{on} ({}); seconds on the run's clock:", f.schedule);
    for e in &f.events {
        let planned = e.planned_ms as f64 / 1000.0;
        let when = match (e.at_us, e.done_us) {
            (Some(at), Some(done)) => format!("began {}, done {}", secs(at), secs(done)),
            _ => "never began".into(),
        };
        let _ = writeln!(o, "  @{planned:.3} {:<20} {when}: {} ({})", e.label(), e.outcome, e.detail);
        for line in e.output.iter().skip(1) {
            let _ = writeln!(o, "      | {line}");
        }
    }
}

/// What the workload saw after each fault that disrupts writes (faults on the run's clock).
pub fn stalls(o: &mut String, stalls: &[crate::model::outage::FaultStall]) {
    if stalls.is_empty() {
        return;
    }
    let _ = writeln!(o, "The workload after each fault (until the next one, or the run's end):");
    for s in stalls {
        let _ = writeln!(
            o,
            "  {} (began {:.3} s): stalled {:.0} ms (its longest event {:.0} ms; {:.0} ms without a completed event, in {:.0} ms intervals); {} errors, {} reconnects, {} failed reconnect attempts",
            s.fault,
            s.at_s,
            s.stall_ms(),
            s.longest_event_ms,
            s.no_event_ms,
            s.interval_ms,
            s.errors,
            s.reconnects,
            s.reconnect_failures
        );
    }
}

/// The fault an outage followed: the first fault that interrupts writes and began after the
/// previous outage ended (`since_us`) and before this one ended.
pub fn cause<'a>(faults: Option<&'a FaultRecord>, outage: &Outage, since_us: u64) -> Option<&'a FaultEvent> {
    let until = outage.to_us.unwrap_or(u64::MAX);
    faults?.events.iter().filter(|e| e.disrupts()).find(|e| e.at_us.is_some_and(|at| at >= since_us && at <= until))
}
