//! Wire types of the waPC guest functions (snake_case, as the Kubewarden SDK writes them).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Output of the guest's `validate` function.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ValidationResponse {
    /// Allow or deny.
    pub accepted: bool,
    /// Rejection (or informational) message.
    #[serde(default)]
    pub message: Option<String>,
    /// Status code for the AdmissionResponse.
    #[serde(default)]
    pub code: Option<u16>,
    /// The complete object the policy wants admitted, as the policy wrote it (the patch is
    /// computed on the text).
    #[serde(default)]
    pub mutated_object: Option<Box<RawValue>>,
    /// Copied to `AdmissionResponse.auditAnnotations`.
    #[serde(default)]
    pub audit_annotations: Option<BTreeMap<String, String>>,
    /// Copied to `AdmissionResponse.warnings`.
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
}

/// Output of the guest's `validate_settings` function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsValidationResponse {
    /// Whether the settings are acceptable.
    pub valid: bool,
    /// Why they are not.
    #[serde(default)]
    pub message: Option<String>,
}
