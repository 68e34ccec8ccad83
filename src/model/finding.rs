//! What the audit finds in a result: one rule's verdict with its evidence.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Critical,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Critical => "critical",
        }
    }
}

/// One thing the audit found.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Finding {
    /// Stable rule id, e.g. `durability-off`.
    pub id: String,
    pub severity: Severity,
    pub title: String,
    /// The numbers that triggered it.
    pub evidence: BTreeMap<String, serde_json::Value>,
    pub advice: String,
}
