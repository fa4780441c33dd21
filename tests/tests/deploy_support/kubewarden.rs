//! The fields of Kubewarden's `policies.kubewarden.io/v1` ClusterAdmissionPolicy CRD
//! (docs/kubewarden.md §7.1). `deny_unknown_fields` turns a misspelt field into a test failure
//! instead of a field the Kubewarden API server would silently prune.

use k8s_openapi::api::admissionregistration::v1::{MatchCondition, RuleWithOperations};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClusterAdmissionPolicy {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: ClusterAdmissionPolicySpec,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClusterAdmissionPolicySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    pub module: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
    pub rules: Vec<RuleWithOperations>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
    pub mutating: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_audit: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_policy: Option<MatchPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_conditions: Option<Vec<MatchCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_eval_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_aware_resources: Option<Vec<ContextAwareResource>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_inside_admission_controller_namespace: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Protect,
    Monitor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FailurePolicy {
    Fail,
    Ignore,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MatchPolicy {
    Exact,
    Equivalent,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContextAwareResource {
    pub api_version: String,
    pub kind: String,
}

impl ClusterAdmissionPolicy {
    /// The CRD's own validation: timeouts within 2–30 s, the evaluation timeout inside the
    /// webhook timeout, and at least one rule.
    pub fn check(&self) -> Result<(), String> {
        let spec = &self.spec;
        if spec.rules.is_empty() {
            return Err("spec.rules is empty".into());
        }
        for (field, value) in [
            ("timeoutSeconds", spec.timeout_seconds),
            ("timeoutEvalSeconds", spec.timeout_eval_seconds),
        ] {
            if let Some(value) = value
                && !(2..=30).contains(&value)
            {
                return Err(format!("spec.{field} {value} is outside 2..=30"));
            }
        }
        if let (Some(eval), Some(webhook)) = (spec.timeout_eval_seconds, spec.timeout_seconds)
            && eval > webhook
        {
            return Err("spec.timeoutEvalSeconds exceeds spec.timeoutSeconds".into());
        }
        Ok(())
    }
}
