//! `fairbench probe failover|lag`: high-availability probes (docs/ha.md).

use super::values::{seconds, ValueError};
use super::ConnectArgs;
use super::FlagError;
use crate::model::probe_request::{FailoverRequest, LagRequest, ProbeOptions, VerifyRequest};
use crate::model::{ProbeRequest, RunRequest};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug, Clone)]
pub struct ProbeArgs {
    #[command(subcommand)]
    pub probe: Probe,
}

#[derive(Subcommand, Debug, Clone)]
pub enum Probe {
    /// Write rows at a fixed rate through a failover: every attempt recorded (acknowledged,
    /// failed with its code, unknown), the downtime between acknowledged writes, and after the
    /// run which acknowledged writes the surviving primary lacks.
    Failover(FailoverArgs),
    /// Replica lag: heartbeats written on the primary at a fixed rate, read on each replica;
    /// each heartbeat's delay until a replica shows it (p50/p99/max, per second).
    Lag(LagArgs),
    /// Look up a failover probe's acknowledged writes again (after the old primary came
    /// back, or on another node): the result's verification and audit are replaced.
    Verify(VerifyArgs),
}

#[derive(Args, Debug, Clone)]
pub struct VerifyArgs {
    /// A result file of `probe failover` (or of a workload run with it).
    pub result: PathBuf,
    /// A node to look on, repeatable (default: every node the probe wrote to; the result
    /// keeps URLs without passwords, so give the password with --password-file or the
    /// environment).
    #[arg(long = "target", visible_alias = "node", value_name = "URL")]
    pub targets: Vec<String>,
    #[arg(long = "password-file", value_name = "FILE")]
    pub password_file: Option<PathBuf>,
    /// Seconds to wait at most for every node to settle (replicas to apply what they
    /// received, rows the same on two reads) before its rows count.
    #[arg(long = "settle-timeout", default_value = "10", value_parser = seconds)]
    pub settle_timeout: Duration,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// What every probe shares: its duration, a workload beside it, where the result goes.
#[derive(Args, Debug, Clone)]
pub struct ProbeCommon {
    /// Probe writes (attempts or heartbeats) per second.
    #[arg(long, default_value_t = 20.0, value_parser = rate)]
    pub rate: f64,
    /// Seconds to probe. With --with: the workload's --time when it has one.
    #[arg(long, default_value = "60", value_parser = seconds)]
    pub time: Duration,
    /// A workload run alongside (failover: on whichever target takes writes), written as `fairbench bench` takes it
    /// without --target: e.g. --with 'oltp_write_only --threads 8 --table-size 100000'
    /// (words split at spaces; no quoting). Its result file carries the probe's figures.
    #[arg(long, value_name = "WORKLOAD ARGS")]
    pub with: Option<String>,
    /// Seconds an attempt (connect, or one write or read) may take before it counts as
    /// timed out.
    #[arg(long = "attempt-timeout", default_value = "1", value_parser = seconds)]
    pub attempt_timeout: Duration,
    /// The result file (default: fairbench-results/probe-<kind>-<time>.json).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Read the password from the first line of FILE for URLs without one.
    #[arg(long = "password-file", value_name = "FILE")]
    pub password_file: Option<PathBuf>,
    #[command(flatten)]
    pub connect: ConnectArgs,
    #[command(flatten)]
    pub faults: super::FaultArgs,
    /// Also print every attempt that was not acknowledged (failover) or every second (lag).
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

#[derive(Args, Debug, Clone)]
pub struct FailoverArgs {
    /// A writer endpoint; repeat it to give the nodes a failover may move the primary to,
    /// tried in this order on every reconnect (or one DNS name or proxy that follows the
    /// primary).
    #[arg(long = "target", required = true, value_name = "URL")]
    pub targets: Vec<String>,
    /// Milliseconds between readings of every node's role while the probe writes (each write
    /// is judged by its node's role at that moment: the resolution of that judgement).
    #[arg(long = "role-poll-ms", default_value_t = 100.0, value_parser = poll_ms)]
    pub role_poll_ms: f64,
    /// A node of the cluster reached directly (not through the target's proxy or DNS name),
    /// repeatable: its role is watched while the probe writes and its rows are read after
    /// it, so a second primary and rows lost or diverged on it are seen (a sandbox's nodes
    /// are added by themselves). NAME=URL names it in the report.
    #[arg(long = "node", value_name = "[NAME=]URL")]
    pub nodes: Vec<String>,
    /// Patroni's REST API (http://HOST:8008): every member its /cluster lists is read
    /// directly as a --node would be, named as Patroni names it.
    #[arg(long = "patroni-api", value_name = "URL")]
    pub patroni_api: Option<String>,
    /// Seconds the check after the run waits at most for every node to settle (replicas to
    /// apply what they received, rows the same on two reads) before its rows count.
    #[arg(long = "settle-timeout", default_value = "10", value_parser = seconds)]
    pub settle_timeout: Duration,
    #[command(flatten)]
    pub common: ProbeCommon,
}

#[derive(Args, Debug, Clone)]
pub struct LagArgs {
    /// The primary (the heartbeats are written here).
    #[arg(long, value_name = "URL")]
    pub primary: String,
    /// A replica of it (repeatable).
    #[arg(long = "replica", required = true, value_name = "URL")]
    pub replicas: Vec<String>,
    /// Milliseconds between reads of each replica: the resolution of every lag.
    #[arg(long = "poll-ms", default_value_t = 10.0, value_parser = poll_ms)]
    pub poll_ms: f64,
    /// Seconds replicas are still read after the last heartbeat for the ones they lack.
    #[arg(long, default_value = "30", value_parser = seconds)]
    pub drain: Duration,
    #[command(flatten)]
    pub common: ProbeCommon,
}

fn rate(s: &str) -> Result<f64, ValueError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.1..=10_000.0).contains(&v) => Ok(v),
        _ => Err(ValueError::Rate(s.into())),
    }
}

fn poll_ms(s: &str) -> Result<f64, ValueError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (1.0..=10_000.0).contains(&v) => Ok(v),
        _ => Err(ValueError::PollMs(s.into())),
    }
}

/// A probe's flags as its request: the one place they become data, `--with` parsed here,
/// once, into the run it spells.
impl ProbeArgs {
    pub fn request(&self) -> Result<ProbeRequest, FlagError> {
        Ok(match &self.probe {
            Probe::Failover(a) => ProbeRequest::Failover(FailoverRequest {
                targets: a.targets.clone(),
                nodes: a.nodes.clone(),
                patroni_api: a.patroni_api.clone(),
                role_poll_ms: a.role_poll_ms,
                settle_timeout_s: a.settle_timeout.as_secs_f64(),
                common: a.common.options(&a.targets[0])?,
            }),
            Probe::Lag(a) => ProbeRequest::Lag(LagRequest {
                primary: a.primary.clone(),
                replicas: a.replicas.clone(),
                poll_ms: a.poll_ms,
                drain_s: a.drain.as_secs_f64(),
                common: a.common.options(&a.primary)?,
            }),
            Probe::Verify(a) => ProbeRequest::Verify(VerifyRequest {
                result: a.result.clone(),
                targets: a.targets.clone(),
                password_file: a.password_file.clone(),
                settle_timeout_s: a.settle_timeout.as_secs_f64(),
                connect: (&a.connect).into(),
            }),
        })
    }
}

/// A probe's command line (`argv` from the program's name on: a study's probe cell) as its
/// request; clap's first line when it does not parse.
pub fn probe_request(argv: &[String]) -> Result<ProbeRequest, FlagError> {
    use clap::Parser;
    let cli = super::Cli::try_parse_from(argv)
        .map_err(|e| FlagError::NotProbeOptions { problem: e.to_string().lines().next().unwrap_or("").to_string() })?;
    match cli.command {
        super::Command::Probe(p) => p.request(),
        _ => Err(FlagError::ProbeCellNotAProbe),
    }
}

impl ProbeCommon {
    /// The options every probe shares, `--with` as the run it spells on `raw_url`.
    fn options(&self, raw_url: &str) -> Result<ProbeOptions, FlagError> {
        Ok(ProbeOptions {
            rate: self.rate,
            time_s: self.time.as_secs_f64(),
            attempt_timeout_s: self.attempt_timeout.as_secs_f64(),
            out: self.out.clone(),
            password_file: self.password_file.clone(),
            connect: (&self.connect).into(),
            faults: (&self.faults).into(),
            verbose: self.verbose,
            with: self.with_request(raw_url)?,
            with_text: self.with.clone(),
        })
    }

    /// `--with` as the `bench` it spells, on the probe's first node `raw_url`: the probe's
    /// --time unless it gives one, the probe's --out. Parsed here, once, into a request.
    fn with_request(&self, raw_url: &str) -> Result<Option<RunRequest>, FlagError> {
        let Some(with) = self.with.as_deref() else { return Ok(None) };
        let words: Vec<&str> = with.split_whitespace().collect();
        if words.iter().any(|w| *w == "--target" || w.starts_with("--target=")) {
            return Err(FlagError::TargetInsideWith);
        }
        let mut argv: Vec<String> = ["fairbench", "bench"].iter().chain(&words).map(|s| s.to_string()).collect();
        if !words.iter().any(|w| *w == "--time" || w.starts_with("--time=")) {
            argv.extend(["--time".into(), format!("{}", self.time.as_secs().max(1))]);
        }
        if let Some(out) = &self.out {
            argv.extend(["--out".into(), out.display().to_string()]);
        }
        argv.extend(["--target".into(), raw_url.to_string()]);
        let (request, _) = super::request::parse_request(&argv, "--with")
            .map_err(|e| FlagError::With { with: with.to_string(), source: Box::new(e) })?;
        request.shard.refuse_in("probe --with")?;
        if request.faults.fault.is_some() {
            return Err(FlagError::FaultInsideWith);
        }
        Ok(Some(RunRequest { bench: true, ..request }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    fn failover_with(with: &str) -> Result<ProbeRequest, FlagError> {
        let url = "mysql://root@127.0.0.1:3306/x";
        probe_request(&line(&["fairbench", "probe", "failover", "--target", url, "--time", "30", "--with", with]))
    }

    #[test]
    fn with_is_parsed_once_into_the_run_it_spells() {
        let ProbeRequest::Failover(f) = failover_with("oltp_write_only --threads 8 --table-size 1000").unwrap() else {
            panic!("a failover probe")
        };
        let run = f.common.with.expect("--with parsed");
        assert_eq!((run.workload.workload.as_str(), run.threads, run.time), ("oltp_write_only", 8, Some(30)));
        assert_eq!((run.workload.oltp.table_size, run.bench), (1000, true));
        assert_eq!(run.target.targets, ["mysql://root@127.0.0.1:3306/x"]);
        assert_eq!(f.common.with_text.as_deref(), Some("oltp_write_only --threads 8 --table-size 1000"));
        let ProbeRequest::Failover(f) = failover_with("oltp_read_only --time 5").unwrap() else { panic!() };
        assert_eq!(f.common.with.unwrap().time, Some(5), "its own --time wins");
    }

    #[test]
    fn a_bad_with_is_refused_in_one_line() {
        let e = failover_with("oltp_read_only --target sqlite://x.db").unwrap_err();
        assert!(matches!(e, FlagError::TargetInsideWith), "{e}");
        let e = failover_with("oltp_read_only --fault kill").unwrap_err();
        assert!(matches!(e, FlagError::FaultInsideWith), "{e}");
        let e = failover_with("oltp_read_only --nosuch 1").unwrap_err();
        assert!(matches!(e, FlagError::With { .. }), "{e}");
        let said = e.to_string();
        assert!(said.starts_with("--with \"oltp_read_only --nosuch 1\": unexpected argument"), "{said}");
        assert!(!said.contains('\n'), "{said}");
    }
}
