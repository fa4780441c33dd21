//! The container defaults of §2.1 steps 2–3 (Kruise `setDefaultSidecarContainer` and
//! core/v1 `SetDefaults_Container` & co.), applied in place on one SidecarContainer object.

use super::image::default_pull_policy;
use super::{child_object, default_int, default_string, each_object};
use crate::quantity::Quantity;
use serde_json::{Map, Value};

/// `podInjectPolicy` defaults to `before_after` (`BeforeAppContainer` or `AfterAppContainer`).
pub(super) fn apply(container: &mut Map<String, Value>, pod_inject_policy: &str) {
    default_string(container, "podInjectPolicy", pod_inject_policy);
    if let Some(strategy) = child_object(container, "upgradeStrategy", true) {
        default_string(strategy, "upgradeType", "ColdUpgrade");
    }
    if let Some(policy) = child_object(container, "shareVolumePolicy", true) {
        default_string(policy, "type", "disabled");
    }
    each_object(container, "transferEnv", |transfer| {
        // Go dereferences a nil fieldRef here (§2.1 ⚠); a missing one is simply left alone.
        if let Some(from) = child_object(transfer, "sourceContainerNameFrom", false)
            && let Some(field_ref) = child_object(from, "fieldRef", false)
        {
            default_string(field_ref, "apiVersion", "v1");
        }
    });
    core_container(container);
}

/// core/v1 `SetDefaults_Container` plus the per-field defaults Kruise applies to containers.
fn core_container(container: &mut Map<String, Value>) {
    if is_unset_string(container.get("imagePullPolicy")) {
        let image = container
            .get("image")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let policy = default_pull_policy(image);
        default_string(container, "imagePullPolicy", policy);
    }
    default_string(container, "terminationMessagePath", "/dev/termination-log");
    default_string(container, "terminationMessagePolicy", "File");
    each_object(container, "ports", |port| {
        default_string(port, "protocol", "TCP")
    });
    each_object(container, "env", |env| {
        if let Some(from) = child_object(env, "valueFrom", false)
            && let Some(field_ref) = child_object(from, "fieldRef", false)
        {
            default_string(field_ref, "apiVersion", "v1");
        }
    });
    if let Some(resources) = child_object(container, "resources", false) {
        for key in ["limits", "requests"] {
            if let Some(list) = child_object(resources, key, false) {
                round_up_resource_list(list);
            }
        }
    }
    for key in ["livenessProbe", "readinessProbe"] {
        if let Some(probe) = child_object(container, key, false) {
            default_int(probe, "timeoutSeconds", 1);
            default_int(probe, "periodSeconds", 10);
            default_int(probe, "successThreshold", 1);
            default_int(probe, "failureThreshold", 3);
            http_get_defaults(probe);
        }
    }
    if let Some(lifecycle) = child_object(container, "lifecycle", false) {
        for key in ["postStart", "preStop"] {
            if let Some(handler) = child_object(lifecycle, key, false) {
                http_get_defaults(handler);
            }
        }
    }
}

fn is_unset_string(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null)) || v.and_then(Value::as_str) == Some("")
}

/// `SetDefaults_HTTPGetAction` on the handler's `httpGet`, if any.
fn http_get_defaults(handler: &mut Map<String, Value>) {
    if let Some(get) = child_object(handler, "httpGet", false) {
        default_string(get, "path", "/");
        default_string(get, "scheme", "HTTP");
    }
}

/// `SetDefaults_ResourceList`: every quantity rounded up to milli precision, written back in
/// the form Go marshals it. Values that are not quantities are left untouched.
fn round_up_resource_list(list: &mut Map<String, Value>) {
    for value in list.values_mut() {
        if let Some(Ok(mut q)) = Quantity::from_json(value) {
            q.round_up_milli();
            let text = q.to_string();
            if value.as_str() != Some(text.as_str()) {
                *value = Value::String(text);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn defaulted(v: Value) -> Value {
        let mut v = v;
        if let Some(obj) = v.as_object_mut() {
            apply(obj, "BeforeAppContainer");
        }
        v
    }

    #[test]
    fn minimal_container() {
        let got = defaulted(json!({"name": "dns-f", "image": "dns:1.0"}));
        assert_eq!(
            got,
            json!({
                "name": "dns-f", "image": "dns:1.0", "imagePullPolicy": "IfNotPresent",
                "podInjectPolicy": "BeforeAppContainer", "upgradeStrategy": {"upgradeType": "ColdUpgrade"},
                "shareVolumePolicy": {"type": "disabled"}, "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"
            })
        );
    }

    #[test]
    fn set_values_are_kept() {
        let input = json!({
            "name": "c", "image": "busybox", "imagePullPolicy": "Never", "podInjectPolicy": "AfterAppContainer",
            "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"},
            "shareVolumePolicy": {"type": "enabled"}, "terminationMessagePath": "/tmp/t",
            "terminationMessagePolicy": "FallbackToLogsOnError"
        });
        assert_eq!(defaulted(input.clone()), input);
    }

    #[test]
    fn nested_defaults() {
        let got = defaulted(json!({
            "name": "c", "image": "i:1",
            "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
            "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}, {"name": "V", "value": "x"}],
            "resources": {"limits": {"cpu": "0.1m", "memory": "1024Mi"}, "requests": {"cpu": 0.5, "x": "junk"}},
            "livenessProbe": {"httpGet": {"port": 8080}, "periodSeconds": 5},
            "readinessProbe": {"exec": {"command": ["true"]}},
            "startupProbe": {"httpGet": {"port": 8080}},
            "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/stop"}}, "postStart": {"exec": {}}},
            "transferEnv": [
                {"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}, "envName": "E"},
                {"sourceContainerNameFrom": {}, "envName": "F"},
                {"sourceContainerNameFrom": {"fieldRef": null}, "envName": "G"}
            ]
        }));
        assert_eq!(
            got["ports"],
            json!([{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}])
        );
        assert_eq!(got["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
        assert_eq!(got["env"][1], json!({"name": "V", "value": "x"}));
        assert_eq!(
            got["resources"],
            json!({"limits": {"cpu": "1m", "memory": "1Gi"}, "requests": {"cpu": "500m", "x": "junk"}})
        );
        assert_eq!(
            got["livenessProbe"],
            json!({"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}, "periodSeconds": 5,
                   "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3})
        );
        assert_eq!(got["readinessProbe"]["timeoutSeconds"], 1);
        assert_eq!(got["startupProbe"], json!({"httpGet": {"port": 8080}}));
        assert_eq!(
            got["lifecycle"]["preStop"]["httpGet"],
            json!({"port": 80, "path": "/stop", "scheme": "HTTP"})
        );
        assert_eq!(got["lifecycle"]["postStart"], json!({"exec": {}}));
        assert_eq!(
            got["transferEnv"][0]["sourceContainerNameFrom"]["fieldRef"]["apiVersion"],
            "v1"
        );
        assert_eq!(got["transferEnv"][1]["sourceContainerNameFrom"], json!({}));
        assert_eq!(
            got["transferEnv"][2]["sourceContainerNameFrom"],
            json!({"fieldRef": null})
        );
    }

    #[test]
    fn wrong_types_are_skipped() {
        let got = defaulted(json!({
            "name": "c", "image": 7, "upgradeStrategy": "x", "shareVolumePolicy": null, "ports": [1, null],
            "env": "e", "resources": {"limits": []}, "livenessProbe": [], "lifecycle": {"preStop": 1},
            "transferEnv": [null, {"sourceContainerNameFrom": 3}], "terminationMessagePath": false
        }));
        assert_eq!(got["imagePullPolicy"], "IfNotPresent");
        assert_eq!(got["upgradeStrategy"], "x");
        assert_eq!(got["shareVolumePolicy"], json!({"type": "disabled"}));
        assert_eq!(got["ports"], json!([1, null]));
        assert_eq!(got["terminationMessagePath"], false);
    }
}
