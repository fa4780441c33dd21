//! `SidecarContainer`: a core/v1 Container (kept as JSON) plus the SidecarSet extensions.

use super::nullable::or_default;
use super::values;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod decode;

pub(super) use decode::{ContainerVisitor, ThroughValue};

/// The JSON keys that belong to the SidecarSet extension, never to the pod's container.
pub const EXTENSION_KEYS: [&str; 6] = [
    "podInjectPolicy",
    "upgradeStrategy",
    "shareVolumePolicy",
    "shareVolumeDevicePolicy",
    "transferEnv",
    "resourcesPolicy",
];

/// Decoded by hand (`decode`), with the derive's behaviour; serialised by the derive.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainer {
    #[serde(default, deserialize_with = "or_default")]
    pub name: String,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub pod_inject_policy: String,
    #[serde(default, deserialize_with = "or_default")]
    pub upgrade_strategy: SidecarContainerUpgradeStrategy,
    #[serde(default, deserialize_with = "or_default")]
    pub share_volume_policy: ShareVolumePolicy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_volume_device_policy: Option<ShareVolumePolicy>,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub transfer_env: Vec<TransferEnvVar>,
    /// Kept as JSON: `resourcesPolicy` is not implemented yet and only detected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_policy: Option<Value>,
    /// Every core/v1 Container field except `name`, exactly as served.
    #[serde(flatten)]
    pub container: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainerUpgradeStrategy {
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub upgrade_type: String,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub hot_upgrade_empty_image: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareVolumePolicy {
    #[serde(
        rename = "type",
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub type_: String,
}

impl ShareVolumePolicy {
    pub fn enabled(&self) -> bool {
        self.type_ == values::SHARE_ENABLED
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransferEnvVar {
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub source_container_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name_from: Option<SourceContainerNameSource>,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub env_name: String,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub env_names: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceContainerNameSource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_ref: Option<ObjectFieldSelector>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectFieldSelector {
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    #[serde(default, deserialize_with = "or_default")]
    pub field_path: String,
}

impl SidecarContainer {
    /// The container image, `""` when unset.
    pub fn image(&self) -> &str {
        self.container
            .get("image")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    pub fn is_hot_upgrade(&self) -> bool {
        self.upgrade_strategy.upgrade_type == values::HOT_UPGRADE
    }

    /// A native sidecar: an init container with `restartPolicy: Always`.
    pub fn is_native_sidecar(&self) -> bool {
        self.container.get("restartPolicy").and_then(Value::as_str)
            == Some(values::RESTART_POLICY_ALWAYS)
    }

    /// Names referenced by the container's own `volumeMounts`, then its `volumeDevices`.
    pub fn own_volume_names(&self) -> impl Iterator<Item = &str> {
        ["volumeMounts", "volumeDevices"]
            .into_iter()
            .flat_map(|key| json_list(&self.container, key))
            .filter_map(|item| item.get("name").and_then(Value::as_str))
    }

    /// The container as it goes into a pod: core/v1 fields only, with `name`; they move out
    /// (the sidecar keeps an empty `container`), the map itself with them.
    pub fn take_pod_container(&mut self) -> Map<String, Value> {
        let mut out = std::mem::take(&mut self.container);
        // The decoders never put an extension field here; a container built by hand may.
        out.retain(|key, _| !EXTENSION_KEYS.contains(&key.as_str()));
        out.insert("name".into(), Value::String(self.name.clone()));
        out
    }
}

/// The array under `key` of a JSON object, or an empty slice when absent, null or not an array.
pub fn json_list<'a>(object: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    object
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pod_container_has_the_sidecar_name_and_no_extension_field() {
        let mut sidecar = SidecarContainer {
            name: "agent".into(),
            container: json!({"name": "stale", "image": "a:1", "transferEnv": [], "env": []})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ..Default::default()
        };
        let container = sidecar.take_pod_container();
        assert_eq!(
            Value::Object(container),
            json!({"name": "agent", "image": "a:1", "env": []})
        );
        assert!(sidecar.container.is_empty(), "the fields moved out");
    }
}
