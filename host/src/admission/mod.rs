//! The AdmissionRequest the guest receives, and from the policy's `ValidationResponse` to the
//! Kubernetes `AdmissionResponse`, as policy-evaluator builds them.

mod patch;
mod request;

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use thiserror::Error;

use crate::engine::{EngineError, HostCallbacks, PolicyEngine, ValidationResponse, settings_json};

pub use request::{AdmissionRequest, GroupVersionKind, GroupVersionResource, admission_request};

/// Message policy-evaluator uses when a policy mutates a request without an object (DELETE).
pub const NULL_OBJECT_MUTATION_MESSAGE: &str = "Incoming object is null, which happens only with DELETE operations, but the policy is attempting a mutation. This is not allowed";

/// Message policy-server uses when the evaluation deadline fired.
pub const DEADLINE_MESSAGE: &str =
    "Policy execution interrupted because it exceeded the allowed execution time";

/// `admission/v1` AdmissionResponse, serialized like kwctl's output line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// Copied from the request.
    pub uid: String,
    /// The verdict.
    pub allowed: bool,
    /// `JSONPatch` when `patch` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// Base64 (standard, padded) of the RFC 6902 patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Only when the policy set a message or a code (or the host rejected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<AdmissionResponseStatus>,
    /// Serialized as `null` when absent, as Kubewarden does.
    #[serde(default)]
    pub audit_annotations: Option<BTreeMap<String, String>>,
    /// Serialized as `null` when absent, as Kubewarden does.
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
}

/// `status` of an AdmissionResponse.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdmissionResponseStatus {
    /// Human-readable reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// HTTP-like code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

/// Input that is not an AdmissionRequest or AdmissionReview.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AdmissionError {
    /// The document is not a JSON object.
    #[error("the request must be a JSON object (an AdmissionRequest or an AdmissionReview)")]
    NotAnObject,
    /// An AdmissionReview without `request`.
    #[error("the AdmissionReview has no request")]
    MissingRequest,
    /// The request does not decode as policy-evaluator's AdmissionRequest (kwctl's message).
    #[error("cannot build AdmissionRequest object from given input: {0}")]
    Decode(String),
}

impl AdmissionResponse {
    /// A rejection with `status {message, code}`.
    pub fn reject(uid: impl Into<String>, message: impl Into<String>, code: u16) -> Self {
        Self {
            uid: uid.into(),
            allowed: false,
            status: Some(AdmissionResponseStatus {
                message: Some(message.into()),
                code: Some(code),
            }),
            ..Self::default()
        }
    }

    /// A 500 rejection prefixed with `internal server error: `.
    pub fn reject_internal_server_error(
        uid: impl Into<String>,
        message: impl std::fmt::Display,
    ) -> Self {
        Self::reject(uid, format!("internal server error: {message}"), 500)
    }

    /// The rejection Kubewarden returns for a failed evaluation.
    pub fn from_engine_error(uid: impl Into<String>, error: &EngineError) -> Self {
        if error.is_deadline() {
            Self::reject(uid, DEADLINE_MESSAGE, 500)
        } else {
            Self::reject_internal_server_error(uid, error)
        }
    }

    /// policy-evaluator's `from_policy_validation_response`: diff, base64, status and copies.
    /// `request_object`: the request's object as JSON text.
    pub fn from_validation_response(
        uid: impl Into<String>,
        request_object: Option<&str>,
        response: &ValidationResponse,
    ) -> Self {
        let uid = uid.into();
        let request_object = request_object.filter(|o| o.trim_ascii() != "null");
        let patch = match (&response.mutated_object, request_object) {
            (Some(_), None) => {
                return Self {
                    uid,
                    allowed: false,
                    status: Some(AdmissionResponseStatus {
                        message: Some(NULL_OBJECT_MUTATION_MESSAGE.to_string()),
                        code: None,
                    }),
                    ..Self::default()
                };
            }
            (Some(mutated), Some(original)) => match patch::diff(original, mutated.get()) {
                Ok(patch) => patch.map(|json| STANDARD.encode(json)),
                Err(e) => return Self::reject_internal_server_error(uid, e),
            },
            (None, _) => None,
        };
        let status = (response.message.is_some() || response.code.is_some()).then(|| {
            AdmissionResponseStatus {
                message: response.message.clone(),
                code: response.code,
            }
        });
        Self {
            uid,
            allowed: response.accepted,
            patch_type: patch.as_ref().map(|_| "JSONPatch".to_string()),
            patch,
            status,
            audit_annotations: response.audit_annotations.clone(),
            warnings: response.warnings.clone(),
        }
    }

    /// Wraps the response in an `admission.k8s.io/v1` AdmissionReview, as a webhook answers.
    pub fn into_review(self) -> Value {
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": self,
        })
    }

    /// The decoded JSONPatch, when there is one.
    pub fn decoded_patch(&self) -> Option<Value> {
        let bytes = STANDARD.decode(self.patch.as_ref()?).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// Evaluates one AdmissionRequest (or AdmissionReview) and always returns an AdmissionResponse:
/// input kwctl cannot decode becomes a 400 rejection, guest failures 500 rejections.
pub fn evaluate_admission(
    engine: &PolicyEngine,
    request: &Value,
    settings: &Value,
    host: &dyn HostCallbacks,
) -> AdmissionResponse {
    match AdmissionRequest::from_input(request) {
        Ok(request) => evaluate_request(engine, &request, settings, host),
        Err(e) => AdmissionResponse::reject("", e.to_string(), 400),
    }
}

/// Evaluates a decoded request: the guest gets it re-serialised, as policy-evaluator sends it.
pub fn evaluate_request(
    engine: &PolicyEngine,
    request: &AdmissionRequest,
    settings: &Value,
    host: &dyn HostCallbacks,
) -> AdmissionResponse {
    let validation = request
        .to_json()
        .map_err(|e| EngineError::InvalidInput(e.to_string()))
        .and_then(|json| engine.validate_json(&json, &settings_json(settings)?, host));
    match validation {
        Ok(response) => {
            // Serialising a Value cannot fail.
            let object = match (&response.mutated_object, &request.object) {
                (Some(_), Some(object)) => serde_json::to_string(object).ok(),
                _ => None,
            };
            AdmissionResponse::from_validation_response(&request.uid, object.as_deref(), &response)
        }
        Err(e) => AdmissionResponse::from_engine_error(&request.uid, &e),
    }
}
