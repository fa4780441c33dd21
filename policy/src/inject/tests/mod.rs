//! Ports of the upstream injection tests (semantics doc §6.1, §6.2 and the policy-side cases
//! of §6.3), with upstream's fixtures. SidecarSets are not defaulted unless a test says so.

mod annotations;
mod hotupgrade;
mod merge;
mod resources;
mod select;
mod share;
mod share_index;

use super::{InjectError, inject, select as select_sidecarsets};
use crate::api::SidecarSet;
use crate::revision::current_hashes;
use crate::selector::Labels;
use serde_json::{Value, json};

/// The injection time written into the hash annotations.
pub(super) const NOW: &str = "2025-01-02T03:04:05Z";

pub(super) fn decode(value: &Value) -> SidecarSet {
    SidecarSet::deserialize_value(value).unwrap()
}

/// Upstream's `pod1`: one init container, `nginx` with two envs and two mounts.
pub(super) fn pod1() -> Value {
    json!({
        "metadata": {"name": "test-pod", "namespace": "default", "labels": {"app": "suxing-test"}},
        "spec": {
            "initContainers": [{"name": "init-0", "image": "busybox:1.0.0"}],
            "containers": [{
                "name": "nginx",
                "image": "nginx:1.15.1",
                "env": [{"name": "hello1", "value": "world1"}, {"name": "hello2", "value": "world2"}],
                "volumeMounts": [
                    {"name": "volume-a", "mountPath": "/a/b"},
                    {"name": "volume-b", "mountPath": "/e/f"}
                ]
            }],
            "volumes": [{"name": "volume-a"}, {"name": "volume-b"}]
        }
    })
}

/// Upstream's `podWithStaragent`: pod1 without init containers, nginx also mounts `/staragent`.
pub(super) fn pod_with_staragent() -> Value {
    json!({
        "metadata": {"name": "test-pod", "namespace": "default", "labels": {"app": "suxing-test"}},
        "spec": {
            "containers": [{
                "name": "nginx",
                "image": "nginx:1.15.1",
                "env": [{"name": "hello1", "value": "world1"}, {"name": "hello2", "value": "world2"}],
                "volumeMounts": [
                    {"name": "volume-a", "mountPath": "/a/b"},
                    {"name": "volume-b", "mountPath": "/e/f"},
                    {"name": "volume-staragent", "mountPath": "/staragent"}
                ]
            }],
            "volumes": [{"name": "volume-a"}, {"name": "volume-b"}, {"name": "volume-staragent"}]
        }
    })
}

/// Upstream's `sidecarSet1`.
pub(super) fn sidecarset1() -> Value {
    json!({
        "metadata": {
            "name": "sidecarset1",
            "annotations": {"kruise.io/sidecarset-hash": "c4k2dbb95d"},
            "labels": {}
        },
        "spec": {
            "selector": {"matchLabels": {"app": "suxing-test"}},
            "initContainers": [
                {"name": "init-2", "image": "busybox:1.0.0"},
                {"name": "init-1", "image": "busybox:1.0.0"}
            ],
            "containers": [
                {
                    "name": "dns-f",
                    "image": "dns-f-image:1.0",
                    "podInjectPolicy": "BeforeAppContainer",
                    "shareVolumePolicy": {"type": "disabled"}
                },
                {
                    "name": "log-agent",
                    "image": "log-agent-image:1.0",
                    "podInjectPolicy": "AfterAppContainer",
                    "shareVolumePolicy": {"type": "disabled"}
                }
            ]
        }
    })
}

/// Upstream's `sidecarsetWithTransferEnv` (named `sidecarset2`).
pub(super) fn sidecarset2() -> Value {
    json!({
        "metadata": {
            "name": "sidecarset2",
            "annotations": {"kruise.io/sidecarset-hash": "c4k2dbb95d"},
            "labels": {}
        },
        "spec": {
            "selector": {"matchLabels": {"app": "suxing-test"}},
            "initContainers": [{
                "name": "dns-e",
                "image": "dns-e-image:1.0",
                "volumeMounts": [{"name": "volume-1"}],
                "podInjectPolicy": "BeforeAppContainer",
                "transferEnv": [{"sourceContainerName": "nginx", "envName": "hello2"}]
            }],
            "containers": [{
                "name": "dns-f",
                "image": "dns-f-image:1.0",
                "volumeMounts": [{"name": "volume-1"}],
                "podInjectPolicy": "BeforeAppContainer",
                "shareVolumePolicy": {"type": "disabled"},
                "transferEnv": [{"sourceContainerName": "nginx", "envName": "hello2"}]
            }],
            "volumes": [{"name": "volume-1"}, {"name": "volume-2"}]
        }
    })
}

/// Upstream's `sidecarSet3`.
pub(super) fn sidecarset3() -> Value {
    json!({
        "metadata": {
            "name": "sidecarset3",
            "annotations": {"kruise.io/sidecarset-hash": "gm967682cm"},
            "labels": {}
        },
        "spec": {
            "selector": {"matchLabels": {"app": "suxing-test"}},
            "containers": [
                {
                    "name": "dns-f",
                    "image": "dns-f-image:1.0",
                    "volumeMounts": [
                        {"name": "volume-1", "mountPath": "/a/b/c"},
                        {"name": "volume-2", "mountPath": "/d/e/f"}
                    ],
                    "podInjectPolicy": "AfterAppContainer",
                    "shareVolumePolicy": {"type": "enabled"}
                },
                {
                    "name": "log-agent",
                    "image": "log-agent-image:1.0",
                    "podInjectPolicy": "AfterAppContainer",
                    "shareVolumePolicy": {"type": "disabled"}
                }
            ],
            "volumes": [{"name": "volume-1"}, {"name": "volume-2"}]
        }
    })
}

/// Upstream's `sidecarSetWithStaragent` (named `sidecarset3`, as upstream).
pub(super) fn sidecarset_with_staragent() -> Value {
    json!({
        "metadata": {
            "name": "sidecarset3",
            "annotations": {"kruise.io/sidecarset-hash": "gm967682cm"},
            "labels": {}
        },
        "spec": {
            "selector": {"matchLabels": {"app": "suxing-test"}},
            "initContainers": [{
                "name": "dns-e",
                "image": "dns-e-image:1.0",
                "volumeMounts": [
                    {"name": "volume-3", "mountPath": "/g/h/i"},
                    {"name": "volume-4", "mountPath": "/j/k/l"},
                    {"name": "volume-staragent", "mountPath": "/staragent"}
                ],
                "podInjectPolicy": "BeforeAppContainer",
                "shareVolumePolicy": {"type": "enabled"}
            }],
            "containers": [
                {
                    "name": "dns-f",
                    "image": "dns-f-image:1.0",
                    "volumeMounts": [
                        {"name": "volume-1", "mountPath": "/a/b/c"},
                        {"name": "volume-2", "mountPath": "/d/e/f"},
                        {"name": "volume-staragent", "mountPath": "/staragent"}
                    ],
                    "podInjectPolicy": "AfterAppContainer",
                    "shareVolumePolicy": {"type": "enabled"}
                },
                {
                    "name": "staragent",
                    "image": "staragent-image:1.0",
                    "podInjectPolicy": "AfterAppContainer",
                    "shareVolumePolicy": {"type": "enabled"}
                },
                {
                    "name": "log-agent",
                    "image": "log-agent-image:1.0",
                    "podInjectPolicy": "AfterAppContainer",
                    "shareVolumePolicy": {"type": "disabled"}
                }
            ],
            "volumes": [
                {"name": "volume-1"},
                {"name": "volume-2"},
                {"name": "volume-staragent"},
                {"name": "volume-3"},
                {"name": "volume-4"}
            ]
        }
    })
}

/// A pod whose two app containers request cpu but set no limits.
pub(super) fn resources_pod_without_limits() -> Value {
    json!({
        "metadata": {"name": "engine", "namespace": "default", "labels": {"app": "engine"}},
        "spec": {"containers": [
            {"name": "engine-a", "image": "engine:1", "resources": {"requests": {"cpu": "30m"}}},
            {"name": "engine-b", "image": "engine:1", "resources": {"requests": {"cpu": "40m"}}}
        ]}
    })
}

/// The webhook's SidecarSet part on a CREATE: select (§3.2), then inject (§3.5).
/// Namespaces have no labels.
pub(super) fn run(pod: &mut Value, sidecarsets: &[Value]) -> Result<bool, InjectError> {
    run_in(pod, sidecarsets, &mut |_: &str| Some(Labels::new()))
}

pub(super) fn run_in(
    pod: &mut Value,
    sidecarsets: &[Value],
    namespaces: &mut dyn super::NamespaceLookup,
) -> Result<bool, InjectError> {
    let all: Vec<SidecarSet> = sidecarsets.iter().map(decode).collect();
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("");
    let labels = super::pod::labels(pod);
    let selected = select_sidecarsets(namespace, &labels, &all, namespaces)?;
    inject(pod, &selected, NOW)
}

/// The names in `spec.<key>`.
pub(super) fn names(pod: &Value, key: &str) -> Vec<String> {
    pod["spec"][key]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| item["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `spec.<key>[index]`.
pub(super) fn container<'a>(pod: &'a Value, key: &str, index: usize) -> &'a Value {
    &pod["spec"][key][index]
}

/// `(name, value)` of each env var; `value` is `None` for `valueFrom` vars.
pub(super) fn env(container: &Value) -> Vec<(String, Option<String>)> {
    container["env"]
        .as_array()
        .map(|env| {
            env.iter()
                .map(|e| {
                    (
                        e["name"].as_str().unwrap().to_string(),
                        e["value"].as_str().map(str::to_string),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `(name, path)` of each item of `container.<key>` (`mountPath` or `devicePath`).
pub(super) fn paths(container: &Value, key: &str) -> Vec<(String, String)> {
    let path_key = if key == "volumeDevices" {
        "devicePath"
    } else {
        "mountPath"
    };
    container[key]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|m| {
                    (
                        m["name"].as_str().unwrap().to_string(),
                        m[path_key].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn pod_annotations(pod: &Value) -> Labels {
    super::pod::annotations(pod)
}

/// One expected entry of a pod hash annotation (§3.9), exact bytes, timestamp [`NOW`].
pub(super) fn entry(name: &str, hash: &str, sidecars: &[&str]) -> String {
    let list = serde_json::to_string(sidecars).unwrap();
    format!(
        r#"{{"updateTimestamp":"{NOW}","hash":"{hash}","sidecarSetName":"{name}","sidecarList":{list}}}"#
    )
}

/// The JSON text of a hash annotation; `entries` must be sorted by name, as Go writes maps.
pub(super) fn hash_json(entries: &[(&str, String)]) -> String {
    assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
    let body: Vec<String> = entries
        .iter()
        .map(|(name, entry)| format!("{}:{entry}", serde_json::to_string(name).unwrap()))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// The hashes the pod gets for a SidecarSet fixture (computed when an annotation is missing).
pub(super) fn hashes_of(sidecarset: &Value) -> crate::hash::SidecarSetHashes {
    current_hashes(&decode(sidecarset))
}

pub(super) fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
