//! The server over time: a thread of its own reads the server's counters on a connection of
//! its own once a second, and turns each reading into the figures its driver lists
//! ([`SampledFigure`]): rates over the span since the previous reading, gauges as read.
//! The measuring thread takes the latest figures at each tick; it never waits for the
//! server. Readings are taken just before each whole second of the run, so that a tick's
//! figures cover about its own interval.

use crate::db::{Connection as _, Database};
use crate::model::SampledFigure;
use std::collections::BTreeMap;
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the server is read, at most (a short `--report-interval` does not read it
/// a hundred times a second).
const EVERY: Duration = Duration::from_secs(1);
/// How long before the tick a reading starts: a reading takes milliseconds.
const AHEAD: Duration = Duration::from_millis(30);

pub struct Sampler {
    latest: Arc<Mutex<Option<BTreeMap<String, f64>>>>,
    /// Dropped to stop the thread: its wait between readings ends at once.
    stop: Option<mpsc::Sender<()>>,
    handle: Option<JoinHandle<()>>,
}

/// How long the end of a run waits for a reading in progress: the thread then closes its
/// connection properly (MySQL's COM_QUIT; a process that exits first leaves the server
/// counting an aborted client).
const END_WAIT: Duration = Duration::from_secs(2);

impl Sampler {
    /// Starts reading once the run starts at `start`; `None` when there is nothing to read
    /// or no connection (the run goes on without the figures).
    pub fn start<D: Database>(
        db: Arc<D>,
        figures: Vec<SampledFigure>,
        start: Instant,
        limit: Duration,
    ) -> Option<Self> {
        if figures.is_empty() {
            return None;
        }
        let latest = Arc::new(Mutex::new(None));
        let (stop, stopped) = mpsc::channel::<()>();
        let out = latest.clone();
        let handle = std::thread::Builder::new()
            .name("fairbench-sampler".into())
            .spawn(move || {
                let rt = crate::local_runtime();
                let Some(mut conn) = super::bounded(&rt, limit, db.connect()) else { return };
                // The first reading, as the run starts: the first interval's rates count from it.
                let mut previous = super::bounded(&rt, limit, conn.status_counters()).map(|r| (Instant::now(), r));
                let mut due = start + EVERY - AHEAD;
                loop {
                    let now = Instant::now();
                    if now < due {
                        match stopped.recv_timeout(due - now) {
                            Err(mpsc::RecvTimeoutError::Timeout) => continue,
                            _ => return,
                        }
                    }
                    // A slow server skips readings rather than piling them up.
                    while due <= now {
                        due += EVERY;
                    }
                    let Some(reading) = super::bounded(&rt, limit, conn.status_counters()) else { continue };
                    let at = Instant::now();
                    if let Some((then, before)) = &previous {
                        let secs = at.duration_since(*then).as_secs_f64();
                        *crate::lock(&out) = Some(figures_of(&figures, before, &reading, secs));
                    }
                    previous = Some((at, reading));
                }
            })
            .ok()?;
        Some(Sampler { latest, stop: Some(stop), handle: Some(handle) })
    }

    /// The figures read since the last call, if a reading completed.
    pub fn take(&self) -> Option<BTreeMap<String, f64>> {
        crate::lock(&self.latest).take()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        drop(self.stop.take());
        let Some(h) = self.handle.take() else { return };
        // A server that hangs in a reading is not waited for past END_WAIT.
        let until = Instant::now() + END_WAIT;
        while !h.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        if h.is_finished() {
            let _ = h.join();
        }
    }
}

/// Every figure the server has, from two readings `secs` apart.
pub fn figures_of(
    figures: &[SampledFigure],
    before: &BTreeMap<String, i64>,
    after: &BTreeMap<String, i64>,
    secs: f64,
) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for f in figures {
        if let Some(v) = f.value(before, after, secs) {
            // The first of a key that the server has (flavours list alternatives).
            out.entry(f.key.clone()).or_insert(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_per_second_gauges_as_read_and_missing_counters_left_out() {
        let figures = [
            SampledFigure::rate("reads", "reads", "reads", "io"),
            SampledFigure::gauge("history", "history", "transactions", "history"),
            SampledFigure::gap("age", "lsn", "checkpoint_lsn", "age", "bytes", "checkpoint"),
            SampledFigure::rate("absent", "absent", "x", "io"),
        ];
        let at = |pairs: &[(&str, i64)]| pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let before = at(&[("reads", 100), ("history", 7), ("lsn", 10), ("checkpoint_lsn", 5)]);
        let after = at(&[("reads", 400), ("history", 9), ("lsn", 50), ("checkpoint_lsn", 20)]);
        let got = figures_of(&figures, &before, &after, 2.0);
        let want: BTreeMap<String, f64> =
            [("reads/s".to_string(), 150.0), ("history".into(), 9.0), ("age".into(), 30.0)].into();
        assert_eq!(got, want);
    }
}
