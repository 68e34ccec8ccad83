//! The live status line of a run, as text: what stage, how far (a bar, elapsed and left),
//! the last second's rates and p99, errors and reconnects so far, an open loop's backlog,
//! and where the whole job is (which repeat, sweep point or A/B turn; its time left).

use super::thousands;
use crate::model::IntervalStats;

/// What a run is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStage {
    /// Clients connecting, nothing measured yet.
    Starting,
    Warmup,
    Measuring,
    /// The clients stopped; the run's end is being read from the server.
    Collecting,
}

impl RunStage {
    fn word(self) -> &'static str {
        match self {
            RunStage::Starting => "starting",
            RunStage::Warmup => "warmup",
            RunStage::Measuring => "measuring",
            RunStage::Collecting => "collecting",
        }
    }
}

/// Everything the line shows; seconds count from the part's start (its warmup included).
#[derive(Clone, Debug, Default)]
pub struct StatusLine {
    pub stage: Option<RunStage>,
    pub elapsed_s: f64,
    /// Warmup plus --time; `None` for a run limited by events only.
    pub planned_s: Option<f64>,
    /// The last second's rates and event p99 (ms).
    pub tps: f64,
    pub qps: f64,
    pub p99_ms: Option<f64>,
    pub errors: u64,
    pub reconnects: u64,
    /// Open loop: events due and not started at the last second's end; late ones so far.
    pub backlog: Option<u64>,
    pub late: Option<u64>,
    /// The longest timeline entry seen (a second, or a --report-interval fraction of one).
    pub entry_s: f64,
    /// Which part of the job this is (`repeat 2 of 3`, a sweep point, an A/B turn).
    pub part: Option<String>,
    /// The whole job's estimated time left, when it has several parts.
    pub job_left_s: Option<f64>,
}

impl StatusLine {
    /// Takes in one timeline second.
    pub fn second(&mut self, s: &IntervalStats) {
        self.stage = Some(if s.warmup { RunStage::Warmup } else { RunStage::Measuring });
        self.elapsed_s = s.from_s + s.duration_s;
        // The run's last sliver of an entry: its rates would be noise.
        self.entry_s = self.entry_s.max(s.duration_s);
        if s.duration_s >= self.entry_s / 2.0 {
            self.tps = s.event.per_s;
            self.qps = s.total.per_s;
            self.p99_ms = (s.event.count > 0).then(|| s.event.p99_us / 1000.0);
        }
        self.errors += s.errors;
        self.reconnects += s.reconnects;
        self.backlog = s.backlog;
        if let Some(late) = s.late {
            *self.late.get_or_insert(0) += late;
        }
    }

    /// Seconds left in this part, when it has a time limit.
    pub fn left_s(&self) -> Option<f64> {
        self.planned_s.map(|p| (p - self.elapsed_s).max(0.0))
    }
}

/// Width of the bar between the brackets.
const BAR: usize = 12;

/// `measuring [######------] 60 s of 2m 00s, 60 s left | repeat 2 of 3, job ~5m 12s left |
/// 2,345 tps 46,900 qps p99 3.14 ms (last s) | 0 errors 0 reconnects`: what matters most
/// first, as a narrow terminal cuts the end.
pub fn status_line(s: &StatusLine) -> String {
    let stage = s.stage.unwrap_or(RunStage::Starting);
    let mut parts = vec![format!("{} {}", stage.word(), progress(s))];
    match (&s.part, s.job_left_s) {
        (Some(part), Some(left)) => parts.push(format!("{part}, job ~{} left", duration(left))),
        (Some(part), None) => parts.push(part.clone()),
        (None, Some(left)) => parts.push(format!("job ~{} left", duration(left))),
        (None, None) => {}
    }
    if matches!(stage, RunStage::Warmup | RunStage::Measuring) {
        let p99 = s.p99_ms.map_or(String::new(), |ms| format!(" p99 {}", millis(ms)));
        parts.push(format!("{} tps {} qps{p99} (last s)", thousands(s.tps), thousands(s.qps)));
    }
    let mut faults = format!("{} errors {} reconnects", s.errors, s.reconnects);
    if let Some(backlog) = s.backlog {
        faults += &format!(" backlog {} late {}", thousands(backlog as f64), thousands(s.late.unwrap_or(0) as f64));
    }
    parts.push(faults);
    parts.join(" | ")
}

/// The bar and the times: `[####------] 54 s of 120 s, 66 s left`, or the time so far.
fn progress(s: &StatusLine) -> String {
    match (s.planned_s, s.left_s()) {
        (Some(planned), Some(left)) if planned > 0.0 => {
            let done = ((s.elapsed_s / planned).clamp(0.0, 1.0) * BAR as f64).round() as usize;
            format!(
                "[{}{}] {} of {}, {} left",
                "#".repeat(done),
                "-".repeat(BAR - done),
                duration(s.elapsed_s),
                duration(planned),
                duration(left)
            )
        }
        _ => duration(s.elapsed_s),
    }
}

/// `42 s`, `4m 05s`, `2h 03m`.
pub fn duration(secs: f64) -> String {
    let t = secs.max(0.0).round() as u64;
    match t {
        0..=99 => format!("{t} s"),
        100..=5999 => format!("{}m {:02}s", t / 60, t % 60),
        _ => format!("{}h {:02}m", t / 3600, t / 60 % 60),
    }
}

/// Below a millisecond in microseconds (a point select on SQLite takes a few).
fn millis(ms: f64) -> String {
    match ms {
        x if x < 1.0 => format!("{:.1} us", x * 1000.0),
        x if x < 10.0 => format!("{x:.2} ms"),
        x if x < 100.0 => format!("{x:.1} ms"),
        x => format!("{} ms", thousands(x)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_p99_below_a_millisecond_reads_in_microseconds() {
        assert_eq!(millis(0.0123), "12.3 us");
        assert_eq!(millis(3.14), "3.14 ms");
        assert_eq!(millis(1234.0), "1,234 ms");
    }

    fn second(from_s: f64, warmup: bool, events: u64, errors: u64) -> IntervalStats {
        let mut s = IntervalStats { from_s, duration_s: 1.0, warmup, errors, ..Default::default() };
        s.event.count = events;
        s.event.per_s = events as f64;
        s.event.p99_us = 3_140.0;
        s.total.per_s = events as f64 * 20.0;
        s
    }

    #[test]
    fn the_line_counts_down_and_sums_faults() {
        let mut s = StatusLine { planned_s: Some(120.0), part: Some("repeat 2 of 3".into()), ..Default::default() };
        assert_eq!(
            status_line(&s),
            "starting [------------] 0 s of 2m 00s, 2m 00s left | repeat 2 of 3 | 0 errors 0 reconnects"
        );
        s.second(&second(9.0, true, 100, 1));
        assert!(status_line(&s).starts_with("warmup [#-----------] 10 s of 2m 00s, 1m 50s left"));
        s.second(&second(59.0, false, 2345, 2));
        s.job_left_s = Some(312.0);
        assert_eq!(
            status_line(&s),
            "measuring [######------] 60 s of 2m 00s, 60 s left | repeat 2 of 3, job ~5m 12s left \
             | 2,345 tps 46,900 qps p99 3.14 ms (last s) | 3 errors 0 reconnects"
        );
        s.stage = Some(RunStage::Collecting);
        assert!(status_line(&s).starts_with("collecting [######------]"));
        assert!(!status_line(&s).contains("tps"));
        // A sliver at the run's end keeps the last whole second's rates.
        s.second(&IntervalStats { from_s: 60.0, duration_s: 0.01, ..second(0.0, false, 1, 0) });
        assert!(status_line(&s).contains("2,345 tps"), "{}", status_line(&s));
    }

    #[test]
    fn events_only_runs_show_time_so_far_and_open_loops_their_backlog() {
        let mut s = StatusLine::default();
        let mut sec = second(4.0, false, 50, 0);
        sec.backlog = Some(1200);
        sec.late = Some(7);
        s.second(&sec);
        s.second(&sec);
        assert_eq!(s.left_s(), None);
        assert!(status_line(&s).starts_with("measuring 5 s | 50 tps"), "{}", status_line(&s));
        assert!(status_line(&s).contains("backlog 1,200 late 14"), "{}", status_line(&s));
    }

    #[test]
    fn durations() {
        assert_eq!(duration(0.4), "0 s");
        assert_eq!(duration(99.0), "99 s");
        assert_eq!(duration(245.0), "4m 05s");
        assert_eq!(duration(7385.0), "2h 03m");
    }
}
