//! The faults a run performed on a sandbox's nodes (`--fault`), as the text report prints
//! them, and which fault an outage followed.

use crate::model::fault::{FaultEvent, FaultRecord};
use crate::model::ha::Outage;
use std::fmt::Write;

fn secs(us: u64) -> String {
    format!("{:.3}", us as f64 / 1e6)
}

pub fn text(o: &mut String, f: &FaultRecord) {
    let _ = writeln!(o, "\nFaults on sandbox {} ({}); seconds on the run's clock:", f.sandbox, f.schedule);
    for e in &f.events {
        let planned = e.planned_ms as f64 / 1000.0;
        let when = match (e.at_us, e.done_us) {
            (Some(at), Some(done)) => format!("began {}, done {}", secs(at), secs(done)),
            _ => "never began".into(),
        };
        let _ = writeln!(o, "  @{planned:.3} {:<20} {when}: {} ({})", e.label(), e.outcome, e.detail);
    }
}

/// The fault an outage followed: the first fault that interrupts writes and began after the
/// previous outage ended (`since_us`) and before this one ended.
pub fn cause<'a>(faults: Option<&'a FaultRecord>, outage: &Outage, since_us: u64) -> Option<&'a FaultEvent> {
    let until = outage.to_us.unwrap_or(u64::MAX);
    faults?.events.iter().filter(|e| e.disrupts()).find(|e| e.at_us.is_some_and(|at| at >= since_us && at <= until))
}
