//! A probe's figures by the names thresholds and claims use (`downtime`, `lost`, `lag_p99`,
//! `lag_max`), with what keeps one from being a number: a failover that split the brain
//! has no clean downtime, loss not looked up is not zero, a heartbeat never seen is a lag
//! of at least the wait.

use super::ha::HaRecord;

/// Which figure of a probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HaFigure {
    /// The longest outage of a failover probe, µs.
    Downtime,
    /// Acknowledged writes the final primary lacks.
    Lost,
    /// The 99th percentile of replica lag, the worst replica's, µs.
    LagP99,
    /// The largest replica lag, µs.
    LagMax,
}

/// A figure as a probe leaves it.
#[derive(Clone, Debug, PartialEq)]
pub enum HaValue {
    Exact(f64),
    /// Only a lower bound is known (an outage still open at the end, heartbeats never seen).
    AtLeast(f64, String),
    /// The figure is not a number because the failover was not clean (split brain).
    Broken(String),
    /// The probe did not measure it (another probe, no node to look on).
    Unmeasured(String),
}

impl HaFigure {
    pub fn parse(name: &str) -> Option<HaFigure> {
        Some(match name {
            "downtime" => HaFigure::Downtime,
            "lost" => HaFigure::Lost,
            "lag_p99" => HaFigure::LagP99,
            "lag_max" => HaFigure::LagMax,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            HaFigure::Downtime => "downtime",
            HaFigure::Lost => "lost",
            HaFigure::LagP99 => "lag_p99",
            HaFigure::LagMax => "lag_max",
        }
    }

    /// The figure in `ha` (µs for times).
    pub fn of(self, ha: &HaRecord) -> HaValue {
        match self {
            HaFigure::Downtime | HaFigure::Lost => failover(self, ha),
            HaFigure::LagP99 | HaFigure::LagMax => lag(self, ha),
        }
    }
}

impl HaValue {
    /// The number, when it is one.
    pub fn exact(&self) -> Option<f64> {
        match self {
            HaValue::Exact(v) => Some(*v),
            _ => None,
        }
    }
}

fn failover(figure: HaFigure, ha: &HaRecord) -> HaValue {
    let Some(f) = &ha.failover else {
        return HaValue::Unmeasured(format!("a {} probe measures no failover", ha.probe));
    };
    if let Some(split) = &f.split_brain {
        let off: u64 = split.on_non_primary.iter().map(|w| w.acknowledged).sum();
        let both: u64 = split.overlapping.iter().map(|w| w.acknowledged).sum();
        let why = format!("split brain ({off} write(s) acknowledged off the primary, {both} by two primaries in turn)");
        if figure == HaFigure::Downtime {
            return HaValue::Broken(format!("{why}: no clean failover, so no downtime"));
        }
    }
    match figure {
        HaFigure::Downtime => match f.outages.iter().find(|o| o.to_us.is_none()) {
            Some(open) => HaValue::AtLeast(
                f.downtime_ms.max(open.duration_ms) * 1e3,
                format!("writes had not resumed when the probe ended ({:.0} ms without one)", open.duration_ms),
            ),
            None => HaValue::Exact(f.downtime_ms * 1e3),
        },
        _ => match &f.verification {
            Some(v) => HaValue::Exact(v.lost as f64),
            None => HaValue::Unmeasured("no node read as primary after the probe: loss not looked up".into()),
        },
    }
}

fn lag(figure: HaFigure, ha: &HaRecord) -> HaValue {
    let Some(l) = ha.lag.as_ref().filter(|l| !l.replicas.is_empty()) else {
        return HaValue::Unmeasured(format!("a {} probe measures no replica lag", ha.probe));
    };
    let worst = l
        .replicas
        .iter()
        .filter_map(|r| match figure {
            HaFigure::LagP99 => r.lag.at(99.0),
            _ => Some(r.lag.max_us),
        })
        .fold(f64::NAN, f64::max);
    match l.replicas.iter().find(|r| r.unseen > 0) {
        Some(r) => HaValue::AtLeast(
            (r.drain_s * 1e6).max(if worst.is_nan() { 0.0 } else { worst }),
            format!("{} heartbeat(s) never reached {} within {:.0} s", r.unseen, r.node, r.drain_s),
        ),
        None if worst.is_nan() => HaValue::Unmeasured("no heartbeat reached a replica".into()),
        None => HaValue::Exact(worst),
    }
}
