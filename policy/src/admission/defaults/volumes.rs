//! Volume defaults of §2.1 step 4 (core/v1 `SetDefaults_Volume` and the per-source defaults).

use super::{child_object, default_ptr, default_string, each_object};
use serde_json::{Map, Value, json};

/// Mode 0644 of secret, configMap, downwardAPI and projected volumes.
const DEFAULT_MODE: i64 = 0o644;
/// `serviceAccountToken.expirationSeconds` default (one hour).
const TOKEN_EXPIRATION_SECONDS: i64 = 3600;

pub(super) fn apply(volume: &mut Map<String, Value>) {
    // Go adds emptyDir when every VolumeSource pointer is nil. A source this code does not know
    // (from a newer Kubernetes) also counts as a source, so it never gets a second one added.
    let has_source = volume.iter().any(|(k, v)| k != "name" && v.is_object());
    if !has_source {
        volume.insert("emptyDir".into(), json!({}));
    }
    if let Some(host_path) = child_object(volume, "hostPath", false) {
        default_ptr(host_path, "type", json!(""));
    }
    for key in ["secret", "configMap"] {
        if let Some(source) = child_object(volume, key, false) {
            default_ptr(source, "defaultMode", json!(DEFAULT_MODE));
        }
    }
    if let Some(downward) = child_object(volume, "downwardAPI", false) {
        default_ptr(downward, "defaultMode", json!(DEFAULT_MODE));
        downward_items(downward);
    }
    if let Some(projected) = child_object(volume, "projected", false) {
        default_ptr(projected, "defaultMode", json!(DEFAULT_MODE));
        each_object(projected, "sources", |source| {
            if let Some(downward) = child_object(source, "downwardAPI", false) {
                downward_items(downward);
            }
            if let Some(token) = child_object(source, "serviceAccountToken", false) {
                default_ptr(token, "expirationSeconds", json!(TOKEN_EXPIRATION_SECONDS));
            }
        });
    }
}

/// Every downward-API item's `fieldRef.apiVersion` "" → `v1`.
fn downward_items(downward: &mut Map<String, Value>) {
    each_object(downward, "items", |item| {
        if let Some(field_ref) = child_object(item, "fieldRef", false) {
            default_string(field_ref, "apiVersion", "v1");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaulted(v: Value) -> Value {
        let mut v = v;
        if let Some(obj) = v.as_object_mut() {
            apply(obj);
        }
        v
    }

    #[test]
    fn sourceless_volume_gets_empty_dir() {
        assert_eq!(
            defaulted(json!({"name": "v"})),
            json!({"name": "v", "emptyDir": {}})
        );
        assert_eq!(
            defaulted(json!({"name": "v", "secret": null})),
            json!({"name": "v", "secret": null, "emptyDir": {}})
        );
        assert_eq!(
            defaulted(json!({"name": "v", "futureSource": {}})),
            json!({"name": "v", "futureSource": {}})
        );
    }

    #[test]
    fn source_defaults() {
        assert_eq!(
            defaulted(json!({"name": "h", "hostPath": {"path": "/x"}}))["hostPath"],
            json!({"path": "/x", "type": ""})
        );
        assert_eq!(
            defaulted(json!({"name": "h", "hostPath": {"path": "/x", "type": "Directory"}}))["hostPath"]
                ["type"],
            "Directory"
        );
        assert_eq!(
            defaulted(json!({"name": "s", "secret": {"secretName": "s"}}))["secret"]["defaultMode"],
            420
        );
        assert_eq!(
            defaulted(json!({"name": "c", "configMap": {"name": "c", "defaultMode": 256}}))["configMap"]
                ["defaultMode"],
            256
        );
        let d = defaulted(
            json!({"name": "d", "downwardAPI": {"items": [{"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]}}),
        );
        assert_eq!(d["downwardAPI"]["defaultMode"], 420);
        assert_eq!(d["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"], "v1");
        let p = defaulted(json!({"name": "p", "projected": {"sources": [
            {"serviceAccountToken": {"path": "token"}},
            {"downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}},
            {"configMap": {"name": "c"}}
        ]}}));
        assert_eq!(p["projected"]["defaultMode"], 420);
        assert_eq!(
            p["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
            3600
        );
        assert_eq!(
            p["projected"]["sources"][1]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"],
            "v1"
        );
        assert_eq!(
            p["projected"]["sources"][2],
            json!({"configMap": {"name": "c"}})
        );
    }
}
