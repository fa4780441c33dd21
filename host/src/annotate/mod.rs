//! `kwctl annotate` compatible metadata: parsing and validating `metadata.yml`, and embedding it
//! as the `io.kubewarden.metadata` custom section.

mod section;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::engine::{
    EngineConfig, GuestStdio, KubewardenVersion, METADATA_SECTION, PolicyEngine, read_metadata,
};

pub use section::{count_custom_sections, remove_custom_section, replace_custom_section};

/// Annotation that records the tool which annotated the module.
pub const KWCTL_ANNOTATION: &str = "io.kubewarden.kwctl";
/// Annotation that holds the README given with `-u`.
pub const USAGE_ANNOTATION: &str = "io.kubewarden.policy.usage";
/// Annotation copied to `org.opencontainers.image.source` on push.
pub const SOURCE_ANNOTATION: &str = "io.kubewarden.policy.source";

/// What `io.kubewarden.kwctl` is set to by this host.
pub fn annotator_version() -> String {
    format!("sidecarset-host {}", env!("CARGO_PKG_VERSION"))
}

/// Errors of `annotate` / `inspect`.
#[derive(Debug, Error)]
pub enum AnnotateError {
    /// `metadata.yml` cannot be parsed.
    #[error("cannot parse the metadata: {0}")]
    Parse(String),
    /// The metadata breaks one of kwctl's rules.
    #[error("invalid metadata: {0}")]
    Invalid(String),
    /// The module is not a wasm module, or cannot be run to read its protocol version.
    #[error("{0}")]
    Module(String),
}

/// `rules[]` entry, as in a ValidatingWebhookConfiguration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// API groups (`""` is the core group).
    pub api_groups: Vec<String>,
    /// API versions.
    pub api_versions: Vec<String>,
    /// Resources, optionally with `/subresource`.
    pub resources: Vec<String>,
    /// CREATE, UPDATE, DELETE, CONNECT or `*`.
    pub operations: Vec<String>,
}

/// `contextAwareResources[]` entry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextAwareResource {
    /// e.g. `apps.kruise.io/v1alpha1`.
    pub api_version: String,
    /// e.g. `SidecarSet`.
    pub kind: String,
}

/// `executionMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutionMode {
    /// waPC with the Kubewarden SDK protocol.
    #[default]
    KubewardenWapc,
    /// Open Policy Agent.
    Opa,
    /// Gatekeeper.
    Gatekeeper,
    /// WASI command.
    Wasi,
}

/// `policyType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyType {
    /// Admission requests.
    #[default]
    Kubernetes,
    /// Raw JSON documents.
    Raw,
}

fn default_true() -> bool {
    true
}

/// The embedded metadata (`policy_metadata::Metadata`), serialized camelCase like kwctl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// `v1` for waPC SDK policies, filled in by annotate.
    #[serde(default)]
    pub protocol_version: Option<String>,
    /// Resources and operations the policy targets.
    pub rules: Vec<Rule>,
    /// Free-form annotations (title, description, usage, …).
    #[serde(default)]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Whether the policy mutates (required).
    pub mutating: bool,
    /// Whether the audit scanner evaluates the policy.
    #[serde(default = "default_true")]
    pub background_audit: bool,
    /// Resources the policy reads through host callbacks.
    #[serde(default)]
    pub context_aware_resources: Vec<ContextAwareResource>,
    /// Execution mode.
    #[serde(default)]
    pub execution_mode: ExecutionMode,
    /// Policy type.
    #[serde(default)]
    pub policy_type: PolicyType,
    /// Oldest Kubewarden release able to run the policy.
    #[serde(default)]
    pub minimum_kubewarden_version: Option<String>,
    /// Host capabilities the policy says it uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_capabilities: Option<Vec<String>>,
}

const OPERATIONS: [&str; 5] = ["CREATE", "UPDATE", "DELETE", "CONNECT", "*"];

fn check_list(rule: usize, field: &str, values: &[String]) -> Result<(), AnnotateError> {
    let invalid = |why: String| AnnotateError::Invalid(format!("rules[{rule}].{field}: {why}"));
    if values.is_empty() {
        return Err(invalid("must not be empty".into()));
    }
    // The core API group is the empty string; every other field needs non-empty values.
    if field != "apiGroups" && values.iter().any(String::is_empty) {
        return Err(invalid("must not contain empty strings".into()));
    }
    if values.len() > 1 && values.iter().any(|v| v == "*") {
        return Err(invalid(
            "if '*' is present, it must be the only value".into(),
        ));
    }
    Ok(())
}

fn check_resources(rule: usize, resources: &[String]) -> Result<(), AnnotateError> {
    let invalid = |why: &str| AnnotateError::Invalid(format!("rules[{rule}].resources: {why}"));
    if resources.len() > 1 && resources.iter().any(|r| r == "*/*") {
        return Err(invalid("if '*/*' is present, it must be the only value"));
    }
    for resource in resources {
        let (name, sub) = match resource.split_once('/') {
            Some((name, sub)) => (name, Some(sub)),
            None => (resource.as_str(), None),
        };
        if name.is_empty() || sub.is_some_and(str::is_empty) {
            return Err(invalid(&format!("'{resource}' is not a valid resource")));
        }
        if sub.is_some_and(|s| s.contains('/')) {
            return Err(invalid(&format!("'{resource}' has more than one '/'")));
        }
        // `pods/*` already covers every subresource of pods; `*/status` covers every resource's status.
        if name != "*" && sub.is_none() && resources.iter().any(|r| r == "*") {
            return Err(invalid(&format!("'{resource}' is redundant with '*'")));
        }
    }
    Ok(())
}

impl Metadata {
    /// Parses `metadata.yml` (YAML or JSON) and validates it.
    pub fn from_yaml(text: &str) -> Result<Self, AnnotateError> {
        let metadata: Self =
            serde_norway::from_str(text).map_err(|e| AnnotateError::Parse(e.to_string()))?;
        metadata.validate()?;
        Ok(metadata)
    }

    /// kwctl's checks: non-empty rule fields, operation values, wildcards, context-aware entries.
    pub fn validate(&self) -> Result<(), AnnotateError> {
        if self.policy_type == PolicyType::Kubernetes && self.rules.is_empty() {
            return Err(AnnotateError::Invalid(
                "a kubernetes policy needs at least one rule".into(),
            ));
        }
        for (i, rule) in self.rules.iter().enumerate() {
            check_list(i, "apiGroups", &rule.api_groups)?;
            check_list(i, "apiVersions", &rule.api_versions)?;
            check_list(i, "resources", &rule.resources)?;
            check_list(i, "operations", &rule.operations)?;
            check_resources(i, &rule.resources)?;
            if let Some(op) = rule
                .operations
                .iter()
                .find(|op| !OPERATIONS.contains(&op.as_str()))
            {
                return Err(AnnotateError::Invalid(format!(
                    "rules[{i}].operations: '{op}' is not one of CREATE, UPDATE, DELETE, CONNECT, *"
                )));
            }
        }
        for (i, resource) in self.context_aware_resources.iter().enumerate() {
            if resource.api_version.is_empty() || resource.kind.is_empty() {
                return Err(AnnotateError::Invalid(format!(
                    "contextAwareResources[{i}]: apiVersion and kind must not be empty"
                )));
            }
        }
        if let Some(version) = &self.minimum_kubewarden_version
            && KubewardenVersion::parse(version).is_none()
        {
            return Err(AnnotateError::Invalid(format!(
                "minimumKubewardenVersion '{version}' is not a semantic version"
            )));
        }
        if let Some(severity) = self
            .annotations
            .as_ref()
            .and_then(|a| a.get("io.kubewarden.policy.severity"))
            && !["info", "low", "medium", "high", "critical"].contains(&severity.as_str())
        {
            return Err(AnnotateError::Invalid(format!(
                "io.kubewarden.policy.severity '{severity}' is not one of info, low, medium, high, critical"
            )));
        }
        Ok(())
    }

    /// The usage text embedded with `-u`, if any.
    pub fn usage(&self) -> Option<&str> {
        self.annotations
            .as_ref()?
            .get(USAGE_ANNOTATION)
            .map(String::as_str)
    }
}

/// Reads the protocol version the way kwctl does: `protocol_version` for waPC, `Unknown` otherwise.
pub fn protocol_version_of(wasm: &[u8], mode: ExecutionMode) -> Result<String, AnnotateError> {
    if mode != ExecutionMode::KubewardenWapc {
        return Ok("Unknown".into());
    }
    let config = EngineConfig {
        guest_stdio: GuestStdio::Discard,
        ..EngineConfig::default()
    };
    // Metadata being replaced must not stop the module from loading (e.g. a too new minimum version).
    let plain = remove_custom_section(wasm, METADATA_SECTION)?;
    let engine =
        PolicyEngine::new(&plain, config).map_err(|e| AnnotateError::Module(e.to_string()))?;
    engine.protocol_version().map_err(|e| {
        AnnotateError::Module(format!("cannot read the policy's protocol version: {e}"))
    })
}

/// Embeds `metadata` in `wasm` like `kwctl annotate`: protocol version from the module,
/// `io.kubewarden.kwctl` and (with `usage`) `io.kubewarden.policy.usage` annotations, and
/// exactly one `io.kubewarden.metadata` section. Returns the new module and the embedded metadata.
pub fn annotate(
    wasm: &[u8],
    mut metadata: Metadata,
    usage: Option<String>,
) -> Result<(Vec<u8>, Metadata), AnnotateError> {
    metadata.validate()?;
    metadata.protocol_version = Some(protocol_version_of(wasm, metadata.execution_mode)?);
    let annotations = metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(KWCTL_ANNOTATION.into(), annotator_version());
    if let Some(usage) = usage {
        annotations.insert(USAGE_ANNOTATION.into(), usage);
    }
    let json = serde_json::to_vec(&metadata).map_err(|e| AnnotateError::Invalid(e.to_string()))?;
    let annotated = replace_custom_section(wasm, METADATA_SECTION, &json)?;
    Ok((annotated, metadata))
}

/// The metadata embedded in a module, if it is annotated.
pub fn embedded_metadata(wasm: &[u8]) -> Result<Option<Metadata>, AnnotateError> {
    let Some(json) = read_metadata(wasm).map_err(|e| AnnotateError::Module(e.to_string()))? else {
        return Ok(None);
    };
    serde_json::from_value(json)
        .map(Some)
        .map_err(|e| AnnotateError::Parse(format!("embedded metadata: {e}")))
}
