//! The CustomResourceDefinition of `sidecarsets.apps.kruise.io`, written next to the types it
//! describes so a field added to `spec.rs`/`container.rs` is one screen away from its schema.
//! `crdgen` (controller/src/bin) prints it; deploy/crd/ holds the committed output.
//!
//! Only v1alpha1 is served: this project has no conversion webhook, so serving v1beta1 too would
//! need one (the shapes differ in `namespace`/`customVersion`). The schema follows upstream's
//! generated one: containers keep every core/v1 field (preserve-unknown-fields) with the
//! SidecarSet extensions typed, volumes are schemaless, and enums exist only where upstream's
//! CRD has them (everything else is the validating policy's job, with better messages).

use serde_json::{Value, json};

const GROUP: &str = "apps.kruise.io";
const VERSION: &str = "v1alpha1";

/// The complete `apiextensions.k8s.io/v1` CustomResourceDefinition.
pub fn custom_resource_definition() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": format!("sidecarsets.{GROUP}"),
            "labels": {"app.kubernetes.io/part-of": "sidecarset-kubewarden"}
        },
        "spec": {
            "group": GROUP,
            "scope": "Cluster",
            "names": {
                "kind": "SidecarSet",
                "listKind": "SidecarSetList",
                "plural": "sidecarsets",
                "singular": "sidecarset"
            },
            "versions": [{
                "name": VERSION,
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": printer_columns(),
                "schema": {"openAPIV3Schema": root_schema()}
            }]
        }
    })
}

/// The columns `kubectl get sidecarsets` shows upstream.
fn printer_columns() -> Value {
    let count = |name: &str, path: &str, what: &str| json!({"name": name, "type": "integer", "jsonPath": path, "description": what});
    json!([
        count("MATCHED", ".status.matchedPods", "The number of pods matched."),
        count("UPDATED", ".status.updatedPods", "The number of pods matched and updated."),
        count("READY", ".status.readyPods", "The number of pods matched and ready."),
        {
            "name": "AGE",
            "type": "date",
            "jsonPath": ".metadata.creationTimestamp",
            "description": "Time since the SidecarSet was created."
        }
    ])
}

fn root_schema() -> Value {
    json!({
        "type": "object",
        "description": "SidecarSet injects sidecar containers into matching pods and upgrades them in place.",
        "properties": {
            "apiVersion": string(),
            "kind": string(),
            "metadata": {"type": "object"},
            "spec": spec_schema(),
            "status": status_schema()
        }
    })
}

fn spec_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "selector": label_selector(),
            "namespace": {
                "type": "string",
                "description": "v1alpha1 only: inject only into this namespace (prefer namespaceSelector)."
            },
            "namespaceSelector": label_selector(),
            "initContainers": {"type": "array", "items": sidecar_container()},
            "containers": {"type": "array", "items": sidecar_container()},
            "volumes": {
                "type": "array",
                "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            },
            "updateStrategy": update_strategy(),
            "injectionStrategy": injection_strategy(),
            "imagePullSecrets": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": string()},
                    "x-kubernetes-map-type": "atomic"
                }
            },
            "revisionHistoryLimit": int32(),
            "patchPodMetadata": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"annotations": string_map(), "patchPolicy": string()}
                }
            }
        }
    })
}

/// A core/v1 Container (all fields kept) plus the typed SidecarSet extension fields.
fn sidecar_container() -> Value {
    json!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "required": ["name"],
        "properties": {
            "name": string(),
            "podInjectPolicy": string(),
            "upgradeStrategy": {
                "type": "object",
                "properties": {"upgradeType": string(), "hotUpgradeEmptyImage": string()}
            },
            "shareVolumePolicy": share_volume_policy(),
            "shareVolumeDevicePolicy": share_volume_policy(),
            "transferEnv": {"type": "array", "items": transfer_env()},
            "resourcesPolicy": resources_policy()
        }
    })
}

fn share_volume_policy() -> Value {
    json!({"type": "object", "properties": {"type": string()}})
}

fn transfer_env() -> Value {
    json!({
        "type": "object",
        "properties": {
            "sourceContainerName": string(),
            "sourceContainerNameFrom": {
                "type": "object",
                "properties": {
                    "fieldRef": {
                        "type": "object",
                        "required": ["fieldPath"],
                        "properties": {"apiVersion": string(), "fieldPath": string()},
                        "x-kubernetes-map-type": "atomic"
                    }
                }
            },
            "envName": string(),
            "envNames": string_list()
        }
    })
}

fn resources_policy() -> Value {
    let cpu_memory = json!({
        "type": "object",
        "properties": {"cpu": string(), "memory": string()}
    });
    json!({
        "type": "object",
        "required": ["targetContainersMode"],
        "properties": {
            "targetContainersMode": {"type": "string", "enum": ["sum", "max"]},
            "targetContainersNameRegex": {"type": "string", "default": ".*"},
            "resourcesExpr": {
                "type": "object",
                "properties": {"limits": cpu_memory.clone(), "requests": cpu_memory}
            }
        }
    })
}

fn update_strategy() -> Value {
    json!({
        "type": "object",
        "properties": {
            "type": string(),
            "paused": {"type": "boolean"},
            "selector": label_selector(),
            "partition": int_or_string(),
            "maxUnavailable": int_or_string(),
            "priorityStrategy": {
                "type": "object",
                "properties": {
                    "weightPriority": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["weight", "matchSelector"],
                            "properties": {"weight": int32(), "matchSelector": label_selector()}
                        }
                    },
                    "orderPriority": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["orderedKey"],
                            "properties": {"orderedKey": string()}
                        }
                    }
                }
            },
            "scatterStrategy": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["key", "value"],
                    "properties": {"key": string(), "value": string()}
                }
            }
        }
    })
}

fn injection_strategy() -> Value {
    json!({
        "type": "object",
        "properties": {
            "paused": {"type": "boolean"},
            "revision": {
                "type": "object",
                "properties": {
                    "customVersion": string(),
                    "revisionName": string(),
                    "policy": {"type": "string", "enum": ["Always", "Partial"]}
                }
            }
        }
    })
}

fn status_schema() -> Value {
    json!({
        "type": "object",
        "required": ["matchedPods", "updatedPods", "readyPods"],
        "properties": {
            "observedGeneration": {"type": "integer", "format": "int64"},
            "matchedPods": int32(),
            "updatedPods": int32(),
            "readyPods": int32(),
            "updatedReadyPods": int32(),
            "latestRevision": string(),
            "collisionCount": int32()
        }
    })
}

/// meta/v1 LabelSelector, as controller-gen renders it.
fn label_selector() -> Value {
    json!({
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "properties": {
            "matchLabels": string_map(),
            "matchExpressions": {
                "type": "array",
                "x-kubernetes-list-type": "atomic",
                "items": {
                    "type": "object",
                    "required": ["key", "operator"],
                    "properties": {
                        "key": string(),
                        "operator": string(),
                        "values": string_list()
                    }
                }
            }
        }
    })
}

fn int_or_string() -> Value {
    json!({
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": true
    })
}

fn string() -> Value {
    json!({"type": "string"})
}

fn int32() -> Value {
    json!({"type": "integer", "format": "int32"})
}

fn string_map() -> Value {
    json!({"type": "object", "additionalProperties": {"type": "string"}})
}

fn string_list() -> Value {
    json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "atomic"})
}
