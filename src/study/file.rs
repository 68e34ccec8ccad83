//! A study file (TOML, docs/studies.md): what a study runs, declared once. Unknown keys are
//! refused by name, so a typo never silently drops part of a study.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The file as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    pub study: Header,
    /// By name: the name is how cells, the plan and the report call it.
    pub targets: BTreeMap<String, TargetSpec>,
    pub workloads: Vec<WorkloadSpec>,
    /// Axes: a run option (`threads`, `table_size`, `tables`, `rate`) or a server setting
    /// of the sandbox targets (`set.NAME`), each with its values.
    #[serde(default)]
    pub matrix: BTreeMap<String, Vec<toml::Value>>,
    /// What the study sets out to check, each judged on the cells it covers.
    #[serde(default)]
    pub claims: Vec<ClaimSpec>,
    /// Per target name: what it costs, for the cost per million transactions.
    #[serde(default)]
    pub prices: BTreeMap<String, crate::model::study::Prices>,
    /// The published study this file redoes: what of it is reproduced, what dropped.
    #[serde(default)]
    pub seed: Option<super::seed::SeedSpec>,
}

/// A claim: in words, the check (a threshold or a ratio to a baseline), and for a ratio
/// the variable under test with its baseline and subject values.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// Its name in `[seed]`'s `by` (`claim:ID`), unique in the file.
    #[serde(default)]
    pub id: Option<String>,
    pub says: String,
    /// `tps>=5x`, `commit.p99<2ms`: compare's claim grammar.
    pub check: String,
    /// The axis whose two values are compared: `target` (the default), `workload`, a run
    /// option or `set.NAME`.
    #[serde(default)]
    pub vary: Option<String>,
    #[serde(default)]
    pub baseline: Option<toml::Value>,
    #[serde(default)]
    pub subject: Option<toml::Value>,
    /// Only the cells with these values (`threads = [8, 64]`, `target = ["aurora"]`).
    #[serde(default, rename = "where")]
    pub only: BTreeMap<String, Vec<toml::Value>>,
}

impl ClaimSpec {
    /// As the study's document keeps it.
    pub fn definition(&self) -> crate::model::study::ClaimDefinition {
        crate::model::study::ClaimDefinition {
            id: self.id.clone(),
            says: self.says.clone(),
            check: self.check.clone(),
            vary: self.vary.clone(),
            baseline: self.baseline.as_ref().map(value_text),
            subject: self.subject.as_ref().map(value_text),
            only: self.only.iter().map(|(k, v)| (k.clone(), v.iter().map(value_text).collect())).collect(),
        }
    }
}

/// A TOML value as the plan writes it: a string as itself, a number as its digits.
pub fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub title: String,
    /// The question the study answers, in words.
    #[serde(default)]
    pub question: Option<String>,
    /// Runs of each cell.
    #[serde(default = "one")]
    pub repeats: u32,
    #[serde(default)]
    pub order: Order,
    /// Warmup and measured time of every run, seconds.
    #[serde(default)]
    pub warmup_s: u32,
    pub time_s: u64,
    /// Every run's --rand-seed, and the random order's.
    #[serde(default)]
    pub seed: Option<u64>,
}

fn one() -> u32 {
    1
}

/// The order of a study's runs.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Each repeat of a point runs every target in turn (A B A B ...): drift over time hits
    /// every target alike.
    #[default]
    Interleaved,
    /// Every run in an order drawn from the seed.
    Random,
}

/// A target: a URL, or a sandbox fairbench starts before its runs and removes after.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    #[serde(default)]
    pub url: Option<String>,
    /// A sandbox's engine: mariadb, postgres or galera (docs/sandbox.md).
    #[serde(default)]
    pub sandbox: Option<String>,
    /// The failover manager that runs a sandbox's nodes: patroni (with postgres), which
    /// elects a new leader by itself when the leader dies.
    #[serde(default)]
    pub manager: Option<String>,
    /// A sandbox's server settings (NAME=VALUE), as `sandbox up --set`.
    #[serde(default)]
    pub set: Vec<String>,
    /// A sandbox's replicas (a Galera sandbox's members besides the first): 0 by default,
    /// 2 for Galera.
    #[serde(default)]
    pub replicas: Option<u32>,
    /// A URL target's other nodes, for probes: where a failover may move the primary, or
    /// the replicas whose lag is read.
    #[serde(default)]
    pub replica_urls: Vec<String>,
}

impl TargetSpec {
    /// The sandbox's nodes by the names faults use (`primary`, `replica1`; Galera's
    /// `node1`...); none for a URL target.
    pub fn node_names(&self) -> Vec<String> {
        let Some(engine) = self.sandbox.as_deref().and_then(|e| crate::sandbox::engine(e).ok()) else {
            return Vec::new();
        };
        let count = self.replica_count() + 1;
        match engine.multi_primary() {
            true => (1..=count).map(|i| format!("node{i}")).collect(),
            false => std::iter::once("primary".to_string()).chain((1..count).map(|i| format!("replica{i}"))).collect(),
        }
    }

    /// Replicas of a sandbox (Galera: two unless given).
    pub fn replica_count(&self) -> u32 {
        let galera =
            self.sandbox.as_deref().and_then(|e| crate::sandbox::engine(e).ok()).is_some_and(|e| e.multi_primary());
        self.replicas.unwrap_or(if galera { 2 } else { 0 })
    }

    /// What it is, in words: `mariadb sandbox`, `postgres sandbox under patroni, 2 replicas`,
    /// `server at its URL`.
    pub fn kind(&self) -> String {
        let Some(engine) = &self.sandbox else {
            return match self.url.as_deref().is_some_and(|u| u.starts_with("sqlite:")) {
                true => "embedded, its file".into(),
                false => "server at its URL".into(),
            };
        };
        let manager = self.manager.as_ref().map(|m| format!(" under {m}")).unwrap_or_default();
        let members = crate::sandbox::engine(engine).ok().is_some_and(|e| e.multi_primary());
        match self.replica_count() {
            n if members => format!("{engine} sandbox, {n} members", n = n + 1),
            0 => format!("{engine} sandbox{manager}"),
            n => format!("{engine} sandbox{manager}, {}", crate::model::plural(n as u64, "replica")),
        }
    }

    /// Whether it has a node besides the first (a replica, a member, another URL).
    pub fn has_replicas(&self) -> bool {
        self.replica_count() > 0 || !self.replica_urls.is_empty()
    }
}

impl TargetSpec {
    /// One URL or one sandbox, each with only the keys that apply to it.
    fn check(&self, name: &str, file: &str) -> Result<(), StudyFileError> {
        let target = |problem| Err(StudyFileError::Target { file: file.into(), name: name.to_string(), problem });
        match (&self.url, &self.sandbox) {
            (Some(_), Some(_)) => return target("has both url and sandbox: give one"),
            (None, None) => return target("has neither url nor sandbox: give one"),
            (Some(_), None) if !self.set.is_empty() => {
                return target("sets server settings on a URL: only a sandbox fairbench starts takes set")
            }
            (Some(_), None) if self.replicas.is_some() => {
                return target("gives replicas on a URL: name the URL target's other nodes with replica_urls")
            }
            (Some(_), None) if self.manager.is_some() => {
                return target("gives a manager on a URL: only a sandbox fairbench starts takes manager")
            }
            (None, Some(_)) if !self.replica_urls.is_empty() => {
                return target(
                    "gives replica_urls on a sandbox: its replicas are started, give their number with replicas",
                )
            }
            _ => {}
        }
        if let Some(engine) = &self.sandbox {
            let bad = |source| StudyFileError::Engine { file: file.into(), name: name.to_string(), source };
            let engine = crate::sandbox::engine_managed(engine, self.manager.as_deref()).map_err(bad)?;
            crate::sandbox::check_log_bin(engine.name(), self.replica_count(), &self.set).map_err(bad)?;
        }
        Ok(())
    }
}

/// A workload: a built-in, or a workload file (relative to the study file), with `run`
/// options by name (`tables = 4`, `distribution = "pareto"`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub name: String,
    /// What the study calls it (its `workload` value) when the same workload runs twice,
    /// say once alone and once beside a probe: the name by default.
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub options: BTreeMap<String, toml::Value>,
    /// A probe beside the workload (`probe failover|lag --with` it): its figures go into
    /// the run's result and the cell's.
    #[serde(default)]
    pub probe: Option<ProbeKind>,
    /// The probe's writes per second (default 20).
    #[serde(default)]
    pub probe_rate: Option<f64>,
    /// Per target name: the faults performed on its sandbox during each run
    /// (`kill primary @10s; promote replica1 @11s`, docs/ha.md), on the run's clock.
    #[serde(default)]
    pub faults: BTreeMap<String, String>,
}

impl WorkloadSpec {
    /// Its value on the study's `workload` axis.
    pub fn label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.name)
    }
}

/// A probe a study runs beside a workload.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ProbeKind {
    /// Downtime and lost acknowledged writes.
    Failover,
    /// Replica lag.
    Lag,
}

impl ProbeKind {
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Failover => "failover",
            ProbeKind::Lag => "lag",
        }
    }

    /// The probe of this name (`failover`, `lag`), as a study's cells record it.
    pub fn named(name: &str) -> Option<ProbeKind> {
        [ProbeKind::Failover, ProbeKind::Lag].into_iter().find(|k| k.name() == name)
    }

    /// Whether its runs carry `figure`.
    pub fn measures(self, figure: crate::model::ha_figure::HaFigure) -> bool {
        use crate::model::ha_figure::HaFigure;
        match self {
            ProbeKind::Failover => matches!(figure, HaFigure::Downtime | HaFigure::Lost),
            ProbeKind::Lag => matches!(figure, HaFigure::LagP99 | HaFigure::LagMax),
        }
    }
}

/// Why a study file is not a study.
#[derive(Debug, thiserror::Error)]
pub enum StudyFileError {
    #[error("cannot read {0}: {1}")]
    Read(String, std::io::Error),
    #[error("{file}, line {line}: {message}")]
    Toml { file: String, line: usize, message: String },
    #[error("{file}: target {name:?} {problem}")]
    Target { file: String, name: String, problem: &'static str },
    #[error("{file}: target {name:?}: {source}")]
    Engine { file: String, name: String, source: crate::sandbox::SandboxError },
    #[error("{file}: matrix axis {axis:?} {problem}")]
    Axis { file: String, axis: String, problem: String },
    #[error("{file}: {problem}")]
    Study { file: String, problem: &'static str },
    #[error("{file}: [prices.{name}] {problem}")]
    Price { file: String, name: String, problem: String },
    #[error("{file}: claim {says:?}: {problem}")]
    Claim { file: String, says: String, problem: String },
    #[error("{file}: workload {name:?}: {problem}")]
    Workload { file: String, name: String, problem: String },
    #[error("{file}: [seed] {source}")]
    Seed { file: String, source: super::seed::SeedError },
}

/// The run options a matrix may sweep (as `run` names them, with `_` for `-`).
pub const RUN_AXES: [&str; 4] = ["threads", "table_size", "tables", "rate"];

/// A setting axis: `set.NAME`.
pub fn setting_axis(axis: &str) -> Option<&str> {
    axis.strip_prefix("set.").filter(|n| !n.is_empty())
}

impl StudyFile {
    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<StudyFile, StudyFileError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| StudyFileError::Read(name.clone(), e))?;
        let file: StudyFile = toml::from_str(&text).map_err(|e| StudyFileError::Toml {
            file: name.clone(),
            line: e.span().map_or(1, |s| text[..s.start.min(text.len())].matches('\n').count() + 1),
            message: e.message().replace('\n', " "),
        })?;
        file.check(&name)?;
        Ok(file)
    }

    fn check(&self, file: &str) -> Result<(), StudyFileError> {
        let study = |problem| Err(StudyFileError::Study { file: file.into(), problem });
        if self.targets.is_empty() {
            return study("no [targets.NAME]: a study runs on at least one target");
        }
        if self.workloads.is_empty() {
            return study("no [[workloads]]: a study runs at least one workload");
        }
        if self.study.repeats == 0 || self.study.time_s == 0 {
            return study("[study] repeats and time_s must be at least 1");
        }
        for (name, t) in &self.targets {
            t.check(name, file)?;
        }
        for (axis, values) in &self.matrix {
            let bad = |problem: String| Err(StudyFileError::Axis { file: file.into(), axis: axis.clone(), problem });
            if values.is_empty() {
                return bad("has no values".into());
            }
            if setting_axis(axis).is_some() {
                if self.targets.values().all(|t| t.sandbox.is_none()) {
                    return bad("sets a server setting, and no target is a sandbox fairbench starts".into());
                }
                self.check_setting_axis(axis, values, file)?;
            } else if !RUN_AXES.contains(&axis.as_str()) {
                return bad(format!("is neither a run option ({}) nor a setting (set.NAME)", RUN_AXES.join(", ")));
            } else if values.iter().any(|v| !(v.is_integer() || (axis == "rate" && v.is_float()))) {
                return bad("takes numbers".into());
            }
        }
        for (name, p) in &self.prices {
            let bad = |problem: String| Err(StudyFileError::Price { file: file.into(), name: name.clone(), problem });
            if !self.targets.contains_key(name) {
                return bad(format!(
                    "is not a target (the targets are {})",
                    self.axis_values("target").unwrap_or_default().join(", ")
                ));
            }
            let amounts = [
                p.compute_per_hour,
                p.storage_per_gb_month,
                p.storage_gb.unwrap_or(0.0),
                p.io_per_million,
                p.provisioned_iops,
                p.per_iops_month,
            ];
            if amounts.iter().any(|a| !(a.is_finite() && *a >= 0.0)) {
                return bad("has a price that is negative or not a number".into());
            }
        }
        let currencies: std::collections::BTreeSet<&str> = self.prices.values().map(|p| p.currency.as_str()).collect();
        if currencies.len() > 1 {
            return study("[prices.*] use more than one currency: costs in different money do not compare");
        }
        for (i, w) in self.workloads.iter().enumerate() {
            if self.workloads[..i].iter().any(|o| o.label() == w.label()) {
                let problem = "runs twice under one name: give each a label";
                return Err(StudyFileError::Workload {
                    file: file.into(),
                    name: w.label().into(),
                    problem: problem.into(),
                });
            }
            self.check_probe(w, file)?;
        }
        for claim in &self.claims {
            self.check_claim(claim, file)?;
        }
        self.check_seed(file)
    }

    /// Claim ids unique; the `[seed]`'s `by` entries each naming something in the file.
    fn check_seed(&self, file: &str) -> Result<(), StudyFileError> {
        for (i, c) in self.claims.iter().enumerate() {
            if c.id.is_some() && self.claims[..i].iter().any(|o| o.id == c.id) {
                let problem =
                    format!("id {:?} is another claim's: give each claim its own id", c.id.as_deref().unwrap_or(""));
                return Err(StudyFileError::Claim { file: file.into(), says: c.says.clone(), problem });
            }
        }
        let Some(seed) = &self.seed else { return Ok(()) };
        seed.check(|by| self.names(by)).map_err(|source| StudyFileError::Seed { file: file.into(), source })
    }

    /// Ok when `by` names a target, workload label, claim id or axis value of the file;
    /// else the names it could be.
    fn names(&self, by: &super::seed::By) -> Result<(), super::seed::Unmatched> {
        use super::seed::By;
        let (found, known) = match by {
            By::Target(name) => (self.targets.contains_key(*name), self.axis_values("target").unwrap_or_default()),
            By::Workload(label) => {
                let labels = self.axis_values("workload").unwrap_or_default();
                (labels.iter().any(|l| l == label), labels)
            }
            By::Claim(id) => {
                let ids: Vec<String> = self.claims.iter().filter_map(|c| c.id.clone()).collect();
                (ids.iter().any(|i| i == id), ids)
            }
            By::Axis(axis, value) => match self.axis_values(axis) {
                Some(values) => (values.iter().any(|v| v == value), values),
                None => (false, self.matrix.keys().cloned().collect()),
            },
        };
        match found {
            true => Ok(()),
            false => Err(super::seed::Unmatched(known)),
        }
    }

    /// A matrix setting each sandbox target can take (`set.log_bin`: only where it holds).
    fn check_setting_axis(&self, axis: &str, values: &[toml::Value], file: &str) -> Result<(), StudyFileError> {
        let name = setting_axis(axis).unwrap_or_default();
        for (target, t) in self.targets.iter().filter(|(_, t)| t.sandbox.is_some()) {
            let engine = t.sandbox.as_deref().and_then(|e| crate::sandbox::engine(e).ok()).map_or("", |e| e.name());
            let set: Vec<String> = values.iter().map(|v| format!("{name}={}", value_text(v))).collect();
            for one in set {
                crate::sandbox::check_log_bin(engine, t.replica_count(), &[one])
                    .map_err(|source| StudyFileError::Engine { file: file.into(), name: target.clone(), source })?;
            }
        }
        Ok(())
    }

    /// A workload's probe and faults: a lag probe on targets with replicas, faults on
    /// sandbox targets' own nodes within each run.
    fn check_probe(&self, w: &WorkloadSpec, file: &str) -> Result<(), StudyFileError> {
        let bad =
            |problem: String| Err(StudyFileError::Workload { file: file.into(), name: w.label().into(), problem });
        if w.probe.is_none() && w.probe_rate.is_some() {
            return bad("gives probe_rate without a probe".into());
        }
        if w.probe_rate.is_some_and(|r| !(r.is_finite() && (0.1..=10_000.0).contains(&r))) {
            return bad("probe_rate must be between 0.1 and 10000 writes per second".into());
        }
        let spaced = |t: &str| t.chars().any(char::is_whitespace);
        if w.probe.is_some() && (spaced(&w.name) || w.options.values().any(|v| spaced(&value_text(v)))) {
            return bad("runs beside a probe, whose --with splits the workload's words at spaces: name and options without spaces".into());
        }
        if w.probe == Some(ProbeKind::Lag) {
            if let Some((name, _)) = self.targets.iter().find(|(_, t)| !t.has_replicas()) {
                return bad(format!("probes replica lag, and target {name:?} has no replica (replicas, replica_urls)"));
            }
        }
        let end = self.study.warmup_s as f64 + self.study.time_s as f64;
        for (name, schedule) in &w.faults {
            let Some(t) = self.targets.get(name) else {
                return bad(format!("faults.{name}: not a target"));
            };
            if t.sandbox.is_none() {
                return bad(format!("faults.{name}: faults act on a sandbox fairbench starts, and {name:?} is a URL"));
            }
            let steps = crate::sandbox::fault::parse(schedule).map_err(|e| StudyFileError::Workload {
                file: file.into(),
                name: w.label().into(),
                problem: format!("faults.{name}: {e}"),
            })?;
            let nodes = t.node_names();
            if let Some(s) = steps.iter().find(|s| !nodes.contains(&s.node)) {
                return bad(format!("faults.{name}: no node {:?} (its nodes: {})", s.node, nodes.join(", ")));
            }
            if let Some(s) = steps.iter().find(|s| s.at.as_secs_f64() >= end) {
                return bad(format!(
                    "faults.{name}: {} {} at {:.3} s is past each run's end (warmup_s + time_s = {end} s)",
                    s.action.name(),
                    s.node,
                    s.at.as_secs_f64()
                ));
            }
        }
        Ok(())
    }

    /// The values an axis takes in this study: `target`, `workload`, or a matrix axis.
    pub fn axis_values(&self, axis: &str) -> Option<Vec<String>> {
        match axis {
            "target" => Some(self.targets.keys().cloned().collect()),
            "workload" => Some(self.workloads.iter().map(|w| w.label().to_string()).collect()),
            _ => self.matrix.get(axis).map(|v| v.iter().map(value_text).collect()),
        }
    }

    fn check_claim(&self, c: &ClaimSpec, file: &str) -> Result<(), StudyFileError> {
        use crate::model::criterion::Bound;
        let bad = |problem: String| StudyFileError::Claim { file: file.into(), says: c.says.clone(), problem };
        let criterion = crate::model::Criterion::claim(&c.check).map_err(|e| bad(e.to_string()))?;
        for (axis, values) in &c.only {
            let known =
                self.axis_values(axis).ok_or_else(|| bad(format!("where names {axis:?}, not an axis of the study")))?;
            if let Some(v) = values.iter().map(value_text).find(|v| !known.contains(v)) {
                // A value one or two letters from one of the study's: one of them is misspelt.
                let near = known.iter().find(|k| strsim::levenshtein(k, &v) <= 2);
                let hint = near.map(|k| format!(" ({k:?} is close: one of the two is misspelt)")).unwrap_or_default();
                return Err(bad(format!(
                    "where {axis} = {v:?}: the study's {axis} values are {}{hint}",
                    known.join(", ")
                )));
            }
        }
        let sides = [("baseline", &c.baseline), ("subject", &c.subject)];
        if let crate::model::Metric::Ha(figure) = criterion.metric {
            if matches!(criterion.bound, Bound::Ratio(_)) {
                // A count takes no unit: `lost==0`, not `lost<10s`.
                let example = match figure {
                    crate::model::ha_figure::HaFigure::Lost => "lost==0".to_string(),
                    time => format!("{}<10s", time.name()),
                };
                return Err(bad(format!(
                    "{} is judged on each run against a bound (e.g. {example}), not as a ratio",
                    figure.name()
                )));
            }
            if !self.workloads.iter().any(|w| w.probe.is_some_and(|p| p.measures(figure))) {
                return Err(bad(format!("no workload runs the probe that measures {}", figure.name())));
            }
        }
        if matches!(criterion.bound, Bound::Absolute(_)) {
            return match c.vary.is_some() || c.baseline.is_some() || c.subject.is_some() {
                true => {
                    Err(bad("an absolute check takes no vary, baseline or subject: it holds for every cell".into()))
                }
                false => Ok(()),
            };
        }
        let vary = c.vary.as_deref().unwrap_or("target");
        let known = self.axis_values(vary).ok_or_else(|| bad(format!("vary {vary:?} is not an axis of the study")))?;
        for (name, side) in sides {
            let v = side.as_ref().map(value_text).ok_or_else(|| bad(format!("a ratio check needs {name}")))?;
            if !known.contains(&v) {
                return Err(bad(format!("{name} {v:?} is not one of {vary}'s values ({})", known.join(", "))));
            }
        }
        Ok(())
    }
}
