//! A study file's `[seed]`: the published study it redoes, the points that study's
//! conclusion rests on that this file reproduces (each with what in the file covers it),
//! and the points it drops (each with why). Checked here against names the file gives;
//! the file's own check (file.rs) says which names exist.

use crate::model::study::{DroppedPoint, ReproducedPoint, SeedRecord};
use serde::Deserialize;

/// `[seed]` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedSpec {
    /// The seed: title, author, where it was published, year.
    pub source: String,
    #[serde(default)]
    pub reproduced: Vec<ReproducedSpec>,
    #[serde(default)]
    pub dropped: Vec<DroppedSpec>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReproducedSpec {
    pub point: String,
    /// What covers it: `target:NAME`, `workload:LABEL`, `claim:ID`, `axis:NAME=VALUE`.
    #[serde(default)]
    pub by: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DroppedSpec {
    pub point: String,
    #[serde(default)]
    pub why: Option<String>,
}

/// A `by` entry, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum By<'a> {
    Target(&'a str),
    Workload(&'a str),
    Claim(&'a str),
    /// A matrix axis and one of its values (`threads`, `64`).
    Axis(&'a str, &'a str),
}

impl<'a> By<'a> {
    pub fn parse(text: &'a str) -> Option<By<'a>> {
        let (kind, name) = text.split_once(':')?;
        let name = name.trim();
        if name.is_empty() {
            return None;
        }
        match kind.trim() {
            "target" => Some(By::Target(name)),
            "workload" => Some(By::Workload(name)),
            "claim" => Some(By::Claim(name)),
            "axis" => {
                let (axis, value) = name.split_once('=')?;
                Some(By::Axis(axis.trim(), value.trim())).filter(|_| !axis.trim().is_empty())
            }
            _ => None,
        }
    }
}

/// What a file has of the kind a `by` names, when it has nothing by that name.
#[derive(Debug)]
pub struct Unmatched(pub Vec<String>);

impl std::fmt::Display for Unmatched {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self.0.is_empty() {
            true => write!(f, "it has none of that kind"),
            false => write!(f, "it has {}", self.0.join(", ")),
        }
    }
}

/// Why a `[seed]` does not say what it must.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error("source is empty: name the published study this file redoes")]
    NoSource,
    #[error("reproduced point {0:?} has no `by`: name what in the file covers it (target:NAME, workload:LABEL, claim:ID, axis:NAME=VALUE)")]
    NoBy(String),
    #[error("reproduced point {point:?}: by {by:?} is not target:NAME, workload:LABEL, claim:ID or axis:NAME=VALUE")]
    BadBy { point: String, by: String },
    #[error("reproduced point {point:?}: by {by:?} names nothing in the file ({known})")]
    Unknown { point: String, by: String, known: Unmatched },
    #[error("dropped point {0:?} has no `why`: say why this file does not reproduce it")]
    NoWhy(String),
    #[error("a point with no words: give each reproduced and dropped entry its `point`")]
    EmptyPoint,
}

impl SeedSpec {
    /// Every point worded, every reproduced point covered by names `known` accepts (it
    /// returns, for a name it does not know, the names it would), every dropped one with why.
    pub fn check(&self, known: impl Fn(&By) -> Result<(), Unmatched>) -> Result<(), SeedError> {
        if self.source.trim().is_empty() {
            return Err(SeedError::NoSource);
        }
        let points = self.reproduced.iter().map(|r| &r.point).chain(self.dropped.iter().map(|d| &d.point));
        if points.into_iter().any(|p| p.trim().is_empty()) {
            return Err(SeedError::EmptyPoint);
        }
        for r in &self.reproduced {
            if r.by.is_empty() {
                return Err(SeedError::NoBy(r.point.clone()));
            }
            for by in &r.by {
                let read = By::parse(by).ok_or_else(|| SeedError::BadBy { point: r.point.clone(), by: by.clone() })?;
                known(&read).map_err(|known| SeedError::Unknown { point: r.point.clone(), by: by.clone(), known })?;
            }
        }
        if let Some(d) = self.dropped.iter().find(|d| d.why.as_deref().is_none_or(|w| w.trim().is_empty())) {
            return Err(SeedError::NoWhy(d.point.clone()));
        }
        Ok(())
    }

    /// As the study's document keeps it.
    pub fn record(&self) -> SeedRecord {
        SeedRecord {
            source: self.source.clone(),
            reproduced: self
                .reproduced
                .iter()
                .map(|r| ReproducedPoint { point: r.point.clone(), by: r.by.clone() })
                .collect(),
            dropped: self
                .dropped
                .iter()
                .map(|d| DroppedPoint { point: d.point.clone(), why: d.why.clone().unwrap_or_default() })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_entries_are_read_by_kind() {
        assert_eq!(By::parse("target:stock"), Some(By::Target("stock")));
        assert_eq!(By::parse("axis:set.sync_binlog=0"), Some(By::Axis("set.sync_binlog", "0")));
        assert_eq!(By::parse("claim:"), None);
        assert_eq!(By::parse("cell:c01"), None);
        assert_eq!(By::parse("axis:threads"), None);
    }
}
