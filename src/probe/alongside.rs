//! What both probes do around their writing: the clock started and, without a workload, the
//! record begun; the faults performed on the probe's clock; the probe on a thread of its own
//! beside the workload (which runs on this one); the figures judged and the result finished.

use super::ending::Unfinished;
use super::host::{Host, Notice, Probed};
use super::session::{self, ProbeStart, Recording};
use super::stream::Events;
use super::{Clock, ProbeError};
use crate::db::{Database, TargetUrl};
use crate::model::ha::{HaRecord, NodeRecord};
use crate::model::ha_ledger::HaLine;
use crate::model::probe_request::ProbeOptions;
use crate::model::record::Record;
use crate::model::RunRequest;
use crate::runner::signal;
use crate::sandbox::fault::{self, Performer, Schedule};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A probe's own statement: what its record measures when no workload runs beside it.
pub(super) struct Own {
    /// `failover` or `lag`.
    pub probe: &'static str,
    /// `probe.write` or `probe.heartbeat`.
    pub statement: &'static str,
    pub sql: String,
    /// What the probe was asked to do, kept in its result (URLs without passwords).
    pub request: crate::model::ProbeRequest,
}

/// Tells the probe thread to stop.
pub(super) type Stop = Arc<dyn Fn() -> bool + Send + Sync>;

/// The workload's result beside a probe, where it goes, and its request.
pub(super) type Workload = Option<(crate::result::Closed, PathBuf, RunRequest)>;

/// How long a probe writes: without a workload, its time; with one, until the workload
/// ends (a day at most).
pub(super) fn duration(common: &ProbeOptions) -> std::time::Duration {
    match common.with {
        Some(_) => std::time::Duration::from_secs(86_400),
        None => common.time(),
    }
}

/// A probe under way.
pub(super) struct Started {
    pub clock: Clock,
    /// The probe's figures as known before it writes.
    ha: HaRecord,
    /// Without a workload: the probe's record.
    recording: Option<Recording>,
    performer: Option<Performer>,
}

impl Started {
    /// Without a workload, the node `first` is read first (the record's target and server);
    /// then the clock starts, the record begins with `plan` as its ledger's first line, and
    /// the faults start on the probe's clock. Returns where the probe thread reports its
    /// events (nowhere beside a workload).
    pub fn begin<H: Host, D: Database>(
        host: &H,
        common: &ProbeOptions,
        own: Own,
        (first, url): (&D, &TargetUrl),
        (nodes, plan): (Vec<NodeRecord>, HaLine),
        faults: Option<Schedule>,
    ) -> Result<(Started, Events), ProbeError> {
        let before = common.with.is_none().then(|| session::before(first, url));
        let clock = Clock::now();
        let ha = session::ha_record(own.probe, clock.started_at, nodes, own.request);
        let mut recording = match before {
            Some(before) => {
                let path = common.out.clone().unwrap_or_else(|| host.default_out(&format!("probe-{}", own.probe)));
                let start = ProbeStart {
                    probe: own.probe,
                    target: before.target,
                    server: before.server,
                    host: crate::conditions::host::read(),
                    command_line: crate::db::redact::redact_args(std::env::args()),
                    statement: own.statement,
                    sql: own.sql,
                    rate: common.rate,
                    time: common.time(),
                    started_at: clock.started_at,
                    ha: ha.clone(),
                };
                Some(Recording::begin(path, start, clock)?)
            }
            None => None,
        };
        let events = recording.as_mut().and_then(|r| {
            r.streamer.line(plan);
            r.sender.take()
        });
        let performer = faults.map(|s| fault::perform(s, clock.start)).transpose()?;
        Ok((Started { clock, ha, recording, performer }, events))
    }

    /// Runs `probe` on a thread of its own, and the `--with` workload (if any) on this one
    /// against `db` (the nodes `urls` as one); the probe is told to stop when the workload
    /// ends, on Ctrl-C, or at its own end. Without a workload, the probe's events are
    /// streamed into its record until it ends.
    pub fn alongside<H: Host, D: Database, T: Send + 'static>(
        &mut self,
        host: &H,
        common: &ProbeOptions,
        (db, urls): (&Arc<D>, &[TargetUrl]),
        probe: impl FnOnce(Stop) -> T + Send + 'static,
    ) -> Result<(T, Workload), H::Error> {
        signal::install();
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        let stop: Stop = Arc::new(move || flag.load(Ordering::SeqCst) || signal::interrupted());
        let thread = std::thread::Builder::new()
            .name("fairbench-probe".into())
            .spawn(move || probe(stop))
            .map_err(ProbeError::Thread)?;
        let workload = common.with.as_ref().map(|request| {
            let measured = host.measure(db.clone(), request, urls);
            // The probe ends with the workload.
            done.store(true, Ordering::SeqCst);
            measured.map(|(closed, path)| (closed, path, request.clone()))
        });
        if let Some(r) = &mut self.recording {
            r.streamer.follow(&r.events, &|| thread.is_finished());
        }
        let probed = thread.join().map_err(|_| ProbeError::ThreadFailed)?;
        signal::uninstall();
        Ok((probed, workload.transpose()?))
    }

    /// The probe stopped at `end`: its faults end, `judge` adds its figures to its record
    /// (judged on the record read back, without a workload), and its result is finished.
    pub fn finish<H: Host>(
        self,
        host: &H,
        end: Instant,
        workload: Workload,
        judge: impl FnOnce(HaRecord, Option<&Record>) -> Result<HaRecord, ProbeError>,
    ) -> Result<Probed, ProbeError> {
        let faults = self.performer.map(Performer::finish);
        let ha = HaRecord { duration_s: self.clock.us(end) as f64 / 1e6, ..self.ha };
        let (unfinished, path, workload) = match (self.recording, workload) {
            (Some(r), _) => {
                let path = r.path.clone();
                let (doc, streamed, error) = r.finish((self.clock, end), faults, |record| judge(ha, Some(record)))?;
                if let Some(error) = &error {
                    host.notice(Notice::StreamError { error });
                }
                (Unfinished::Recorded { doc, streamed }, path, None)
            }
            (None, Some((closed, path, request))) => {
                (Unfinished::Beside { closed, ha: judge(ha, None)?, faults }, path, Some(request))
            }
            (None, None) => return Err(ProbeError::NoWorkloadResult),
        };
        Ok(Probed { doc: unfinished.finish()?, path, workload })
    }
}
