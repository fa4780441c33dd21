//! The Kubewarden waPC entry: decode, call the pure functions, encode. Never panics.

use crate::annotations::rfc3339;
use crate::evaluate::{
    Cluster, MAX_REQUEST_BYTES, Outcome, Verdict, evaluate, too_large, validate_settings,
};
use crate::selector::Labels;
use crate::settings::Settings;
use guest::prelude::*;
use kubewarden_policy_sdk::wapc_guest as guest;
use serde_json::{Value, json};
use std::collections::BTreeMap;

#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    register_function("validate", validate);
    register_function("validate_settings", settings_entry);
    register_function(
        "protocol_version",
        kubewarden_policy_sdk::protocol_version_guest,
    );
}

fn validate(payload: &[u8]) -> CallResult {
    if payload.len() > MAX_REQUEST_BYTES {
        return respond(too_large(payload.len()));
    }
    let mut input: Value = match serde_json::from_slice(payload) {
        Ok(input) => input,
        Err(error) => {
            return respond_reject(format!("invalid ValidationRequest JSON: {error}"), 400);
        }
    };
    let settings = match Settings::from_value(input.get("settings").unwrap_or(&Value::Null)) {
        Ok(settings) => settings,
        Err(error) => return respond_reject(error.to_string(), 400),
    };
    let request = input
        .get_mut("request")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let mut cluster = HostCluster::default();
    respond(evaluate(request, &settings, &mut cluster, &now()))
}

/// Kubewarden's ValidationResponse, serialised straight from the verdict (no `Value` copy).
#[derive(serde::Serialize)]
struct Response<'a> {
    accepted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    mutated_object: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<u16>,
    warnings: Option<&'a [String]>,
}

fn respond(verdict: Verdict) -> CallResult {
    let mut response = Response {
        accepted: true,
        mutated_object: None,
        message: None,
        code: None,
        warnings: (!verdict.warnings.is_empty()).then_some(verdict.warnings.as_slice()),
    };
    match &verdict.outcome {
        Outcome::Accept => {}
        Outcome::Mutate(object) => response.mutated_object = Some(object),
        Outcome::Reject { message, code } => {
            response.accepted = false;
            response.message = Some(message);
            response.code = Some(*code);
        }
    }
    let mut out = Vec::with_capacity(16 * 1024);
    serde_json::to_writer(&mut out, &response)?;
    Ok(out)
}

fn respond_reject(message: String, code: u16) -> CallResult {
    Ok(serde_json::to_vec(
        &json!({"accepted": false, "message": message, "code": code}),
    )?)
}

fn settings_entry(payload: &[u8]) -> CallResult {
    let result = serde_json::from_slice::<Value>(payload)
        .map_err(|e| format!("settings are not JSON: {e}"))
        .and_then(|value| Settings::from_value(&value).map_err(|e| e.to_string()))
        .and_then(|settings| validate_settings(&settings).map_err(|e| e.to_string()));
    let response = match result {
        Ok(()) => json!({"valid": true, "message": null}),
        Err(message) => json!({"valid": false, "message": message}),
    };
    Ok(serde_json::to_vec(&response)?)
}

fn now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    rfc3339(seconds)
}

/// Kubewarden's context-aware callbacks; Namespace lookups are cached per request.
#[derive(Default)]
struct HostCluster {
    namespaces: BTreeMap<String, Option<Labels>>,
}

fn host_call_raw(operation: &str, request: &Value) -> Result<Vec<u8>, String> {
    let payload = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    guest::host_call("kubewarden", "kubernetes", operation, &payload)
        .map_err(|e| format!("kubernetes.{operation}: {e}"))
}

fn host_call(operation: &str, request: &Value) -> Result<Value, String> {
    serde_json::from_slice(&host_call_raw(operation, request)?)
        .map_err(|e| format!("kubernetes.{operation} answered invalid JSON: {e}"))
}

impl Cluster for HostCluster {
    /// Passed on undecoded: the policy reads each item only as far as it needs.
    fn list_sidecarsets(&mut self) -> Result<Vec<u8>, String> {
        host_call_raw(
            "list_resources_all",
            &json!({"api_version": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
                    "label_selector": null, "field_selector": null, "field_masks": null}),
        )
    }

    fn namespace_labels(&mut self, name: &str) -> Option<Labels> {
        self.namespaces
            .entry(name.to_string())
            .or_insert_with(|| {
                let namespace = host_call(
                    "get_resource",
                    &json!({"api_version": "v1", "kind": "Namespace", "name": name,
                            "namespace": null, "disable_cache": false, "field_masks": null}),
                )
                .ok()?;
                Some(crate::inject::pod::labels(&namespace))
            })
            .clone()
    }
}
