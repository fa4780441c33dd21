//! Decodes each object into its typed Rust form and back. k8s-openapi's types skip unknown
//! fields, so the round trip is compared with the input: a misspelt or misplaced field (that
//! the API server would prune or reject) shows up as a difference.

use super::certmanager::{Certificate, Issuer};
use super::kubewarden::ClusterAdmissionPolicy;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Service, ServiceAccount};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A kustomization.yaml (Kustomization or Component), the keys used in deploy/.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Kustomization {
    pub api_version: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replacements: Vec<Value>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Image {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_tag: Option<String>,
}

/// Decodes `object` by its apiVersion/kind and checks the round trip; `Err` names the problem.
pub fn check(object: &Value) -> Result<(), String> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    match (api_version, kind) {
        ("v1", "Namespace") => round_trip::<Namespace>(object),
        ("v1", "ServiceAccount") => round_trip::<ServiceAccount>(object),
        ("v1", "Service") => round_trip::<Service>(object),
        ("v1", "ConfigMap") => round_trip::<ConfigMap>(object),
        ("apps/v1", "Deployment") => round_trip::<Deployment>(object),
        ("policy/v1", "PodDisruptionBudget") => round_trip::<PodDisruptionBudget>(object),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => round_trip::<ClusterRole>(object),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            round_trip::<ClusterRoleBinding>(object)
        }
        ("rbac.authorization.k8s.io/v1", "Role") => round_trip::<Role>(object),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => round_trip::<RoleBinding>(object),
        ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration") => {
            round_trip::<MutatingWebhookConfiguration>(object)
        }
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration") => {
            round_trip::<ValidatingWebhookConfiguration>(object)
        }
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            round_trip::<CustomResourceDefinition>(object)
        }
        ("policies.kubewarden.io/v1", "ClusterAdmissionPolicy") => {
            round_trip::<ClusterAdmissionPolicy>(object)?;
            decode::<ClusterAdmissionPolicy>(object)?.check()
        }
        ("cert-manager.io/v1", "Issuer") => round_trip::<Issuer>(object),
        ("cert-manager.io/v1", "Certificate") => round_trip::<Certificate>(object),
        ("kustomize.config.k8s.io/v1beta1", "Kustomization")
        | ("kustomize.config.k8s.io/v1alpha1", "Component") => round_trip::<Kustomization>(object),
        _ => Err(format!(
            "no typed check for apiVersion {api_version:?} kind {kind:?}"
        )),
    }
}

pub fn decode<T: DeserializeOwned>(object: &Value) -> Result<T, String> {
    serde_json::from_value(object.clone()).map_err(|e| e.to_string())
}

fn round_trip<T: DeserializeOwned + Serialize>(object: &Value) -> Result<(), String> {
    let typed: T = decode(object)?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    match first_difference(object, &back, String::new()) {
        None => Ok(()),
        Some(path) => Err(format!(
            "{path} does not survive decoding (unknown field or wrong shape)"
        )),
    }
}

/// The path of the first place where `a` and `b` differ, ignoring nulls (absent and null
/// read the same).
fn first_difference(a: &Value, b: &Value, path: String) -> Option<String> {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            // Each key once: visiting it from both sides would double the work at every level.
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let left = a.get(key).unwrap_or(&Value::Null);
                let right = b.get(key).unwrap_or(&Value::Null);
                if let Some(found) = first_difference(left, right, format!("{path}.{key}")) {
                    return Some(found);
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (a, b))| first_difference(a, b, format!("{path}[{i}]"))),
        _ if a == b => None,
        _ => Some(if path.is_empty() { ".".into() } else { path }),
    }
}
