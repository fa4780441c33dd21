//! The Kubewarden waPC entry: registers the operations and answers host callbacks; the bytes in
//! and out are `evaluate::wire`'s. Never panics.

use crate::annotations::rfc3339;
use crate::evaluate::{Cluster, validate_settings, wire};
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
    Ok(wire::validate(
        payload,
        &mut HostCluster::default(),
        &now(),
        &mut draw,
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

/// A number uniform in [0, 1) from WASI's random source (std seeds `RandomState` with it).
fn draw() -> f64 {
    use std::hash::BuildHasher;
    let bits = std::collections::hash_map::RandomState::new().hash_one(0u8);
    (bits >> 11) as f64 / (1u64 << 53) as f64
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

    fn get_controller_revision(&mut self, namespace: &str, name: &str) -> Result<Value, String> {
        host_call(
            "get_resource",
            &json!({"api_version": "apps/v1", "kind": "ControllerRevision", "name": name,
                    "namespace": namespace, "disable_cache": false, "field_masks": null}),
        )
    }

    fn list_controller_revisions(
        &mut self,
        namespace: &str,
        label_selector: &str,
    ) -> Result<Vec<Value>, String> {
        let mut list = host_call(
            "list_resources_by_namespace",
            &json!({"api_version": "apps/v1", "kind": "ControllerRevision",
                    "namespace": namespace, "label_selector": label_selector,
                    "field_selector": null, "field_masks": null}),
        )?;
        match list.get_mut("items").map(Value::take) {
            Some(Value::Array(items)) => Ok(items),
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(_) => Err(
                "kubernetes.list_resources_by_namespace answered items that are not a list".into(),
            ),
        }
    }
}
