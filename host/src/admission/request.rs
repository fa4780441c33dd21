//! The `admission/v1` AdmissionRequest as policy-evaluator types it: kwctl decodes the input into
//! this struct and the guest receives it re-serialised (camelCase, unknown keys dropped, absent
//! or null optionals omitted).

use k8s_openapi::api::authentication::v1::UserInfo;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AdmissionError;

/// policy-evaluator's `AdmissionRequest`. `O` holds `object`, `oldObject` and `options`: a
/// [`Value`] for `run`, raw JSON text for `serve` (copied to the guest without a parse).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest<O = Value> {
    /// Identifies this request/response round trip.
    pub uid: String,
    /// Kind of the object.
    pub kind: GroupVersionKind,
    /// Resource being requested.
    pub resource: GroupVersionResource,
    /// Subresource, e.g. `status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_resource: Option<String>,
    /// Kind originally requested, before conversion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<GroupVersionKind>,
    /// Resource originally requested, before conversion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_resource: Option<GroupVersionResource>,
    /// Subresource originally requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_sub_resource: Option<String>,
    /// Name of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace of the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// CREATE, UPDATE, DELETE or CONNECT.
    pub operation: String,
    /// Who made the request (k8s-openapi's type, as policy-evaluator uses).
    pub user_info: UserInfo,
    /// The object as admitted; absent on DELETE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<O>,
    /// The existing object, on UPDATE and DELETE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_object: Option<O>,
    /// Whether the request is a dry run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// The operation's options (CreateOptions, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<O>,
}

/// `kind` / `requestKind`: every field required, as in policy-evaluator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupVersionKind {
    /// API group (`""` for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

/// `resource` / `requestResource`: every field required, as in policy-evaluator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupVersionResource {
    /// API group (`""` for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Resource, e.g. `pods`.
    pub resource: String,
}

impl AdmissionRequest {
    /// kwctl's decode of `run`'s input: the AdmissionRequest, or `.request` of an AdmissionReview.
    pub fn from_input(input: &Value) -> Result<Self, AdmissionError> {
        Self::deserialize(admission_request(input)?)
            .map_err(|e| AdmissionError::Decode(e.to_string()))
    }
}

impl<O: Serialize> AdmissionRequest<O> {
    /// The `request` of the guest's `validate` payload.
    pub fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string(self)
    }
}

/// The AdmissionRequest inside `input`: `.request` of an AdmissionReview (top-level `kind: AdmissionReview`), else `input`.
pub fn admission_request(input: &Value) -> Result<&Value, AdmissionError> {
    if !input.is_object() {
        return Err(AdmissionError::NotAnObject);
    }
    if input.get("kind").and_then(Value::as_str) == Some("AdmissionReview") {
        return input
            .get("request")
            .filter(|r| r.is_object())
            .ok_or(AdmissionError::MissingRequest);
    }
    Ok(input)
}
