//! The few Kubernetes objects a fairbench Job is made of, as the API writes them (batch/v1
//! and core/v1, camelCase, absent fields left out). Fields are declared in alphabetical order,
//! the order the API server and kubectl print them. tests/k8s.rs checks the manifest against
//! Kubernetes' own schemas in strict mode, so a misspelt or misplaced field fails there.

use serde::Serialize;
use std::collections::BTreeMap;

pub type Labels = BTreeMap<String, String>;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: ObjectMeta,
    pub spec: JobSpec,
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    pub labels: Labels,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    pub backoff_limit: u32,
    pub completion_mode: &'static str,
    pub completions: u32,
    pub parallelism: u32,
    pub template: PodTemplateSpec,
}

#[derive(Serialize)]
pub struct PodTemplateSpec {
    pub metadata: ObjectMeta,
    pub spec: PodSpec,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    pub affinity: Affinity,
    pub containers: Vec<Container>,
    pub restart_policy: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    pub pod_anti_affinity: PodAntiAffinity,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodAntiAffinity {
    pub required_during_scheduling_ignored_during_execution: Vec<PodAffinityTerm>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodAffinityTerm {
    pub label_selector: LabelSelector,
    pub topology_key: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    pub match_labels: Labels,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    pub args: Vec<String>,
    pub env: Vec<EnvVar>,
    pub image: String,
    pub name: &'static str,
    pub resources: ResourceRequirements,
    pub security_context: SecurityContext,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    pub name: &'static str,
    pub value_from: EnvVarSource,
}

/// Where a variable's value comes from: one of the two is set.
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct EnvVarSource {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_ref: Option<ObjectFieldSelector>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<SecretKeySelector>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectFieldSelector {
    pub field_path: &'static str,
}

#[derive(Serialize)]
pub struct SecretKeySelector {
    pub key: &'static str,
    pub name: String,
}

/// A resource name (cpu, memory) to its quantity (`2`, `500m`, `1Gi`).
pub type Quantities = BTreeMap<&'static str, String>;

#[derive(Serialize)]
pub struct ResourceRequirements {
    pub limits: Quantities,
    pub requests: Quantities,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityContext {
    pub allow_privilege_escalation: bool,
    pub capabilities: Capabilities,
    pub run_as_non_root: bool,
    pub seccomp_profile: SeccompProfile,
}

#[derive(Serialize)]
pub struct Capabilities {
    pub drop: Vec<&'static str>,
}

#[derive(Serialize)]
pub struct SeccompProfile {
    #[serde(rename = "type")]
    pub kind: &'static str,
}
