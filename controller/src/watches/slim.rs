//! What the pod cache keeps of a pod: only the fields the controller reads (an allow-list, so
//! fields a newer API adds are dropped too). Cached pods are ~6 KB of JSON each and most of it —
//! managedFields, volumes, env, probes, resources, tolerations — is never read.
//!
//! Readers, all in this crate: the planner (`plan/pod.rs` accessors: metadata name, namespace,
//! uid, resourceVersion, labels, annotations, creation and deletion timestamps; spec containers
//! and init containers by name with image and restartPolicy, nodeName; status phase, the Ready and
//! SidecarSetUpgradable conditions — only ever looked up by type; the patch copies the latter in
//! full —, container and init container statuses' name, image, imageID, ready, restartCount), the
//! patch builder (container positions: every container is kept, in order), the pod event handler
//! (`watches.rs`: the same fields), selection (namespace, labels) and the expectations (uid,
//! resourceVersion).

use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sidecarset_policy::annotations::UPGRADABLE_CONDITION;

const READY: &str = "Ready";

/// Drops every field of `pod` the controller never reads.
pub fn keep_read_fields(pod: &mut Pod) {
    let metadata = std::mem::take(&mut pod.metadata);
    pod.metadata = ObjectMeta {
        name: metadata.name,
        namespace: metadata.namespace,
        uid: metadata.uid,
        resource_version: metadata.resource_version,
        labels: metadata.labels,
        annotations: metadata.annotations,
        creation_timestamp: metadata.creation_timestamp,
        deletion_timestamp: metadata.deletion_timestamp,
        ..ObjectMeta::default()
    };
    pod.spec = pod.spec.take().map(|spec| PodSpec {
        containers: spec.containers.into_iter().map(container).collect(),
        init_containers: spec
            .init_containers
            .map(|list| list.into_iter().map(container).collect()),
        node_name: spec.node_name,
        ..PodSpec::default()
    });
    pod.status = pod.status.take().map(|status| PodStatus {
        phase: status.phase,
        // Conditions are only ever looked up by these two types.
        conditions: status.conditions.map(|list| {
            list.into_iter()
                .filter(|c| c.type_ == READY || c.type_ == UPGRADABLE_CONDITION)
                .collect()
        }),
        container_statuses: status
            .container_statuses
            .map(|list| list.into_iter().map(container_status).collect()),
        init_container_statuses: status
            .init_container_statuses
            .map(|list| list.into_iter().map(container_status).collect()),
        ..PodStatus::default()
    });
}

fn container(container: Container) -> Container {
    Container {
        name: container.name,
        image: container.image,
        restart_policy: container.restart_policy,
        ..Container::default()
    }
}

fn container_status(status: ContainerStatus) -> ContainerStatus {
    ContainerStatus {
        name: status.name,
        image: status.image,
        image_id: status.image_id,
        ready: status.ready,
        restart_count: status.restart_count,
        ..ContainerStatus::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_what_is_read_and_drops_the_rest() {
        let mut pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "n", "uid": "u", "resourceVersion": "7",
                         "labels": {"a": "b"}, "annotations": {"k": "v"},
                         "managedFields": [{"manager": "kubectl"}], "generateName": "p-"},
            "spec": {"nodeName": "node", "serviceAccountName": "sa",
                     "containers": [{"name": "app", "image": "app:1", "env": [{"name": "E", "value": "1"}],
                                     "readinessProbe": {"periodSeconds": 5}},
                                    {"name": "sidecar"}],
                     "initContainers": [{"name": "init", "image": "i:1", "restartPolicy": "Always"}],
                     "volumes": [{"name": "v", "emptyDir": {}}]},
            "status": {"phase": "Running", "podIP": "10.0.0.1",
                       "conditions": [{"type": "PodScheduled", "status": "True"},
                                      {"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"},
                                      {"type": "SidecarSetUpgradable", "status": "False", "message": "{}"}],
                       "containerStatuses": [{"name": "app", "image": "app:1", "imageID": "id", "ready": true,
                                              "restartCount": 2, "state": {"running": {}}}]},
        }))
        .expect("pod");
        keep_read_fields(&mut pod);
        let kept = serde_json::to_value(&pod).expect("json");
        assert_eq!(
            kept,
            json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "n", "uid": "u", "resourceVersion": "7",
                             "labels": {"a": "b"}, "annotations": {"k": "v"}},
                "spec": {"nodeName": "node",
                         "containers": [{"name": "app", "image": "app:1"}, {"name": "sidecar"}],
                         "initContainers": [{"name": "init", "image": "i:1", "restartPolicy": "Always"}]},
                "status": {"phase": "Running",
                           "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"},
                                          {"type": "SidecarSetUpgradable", "status": "False", "message": "{}"}],
                           "containerStatuses": [{"name": "app", "image": "app:1", "imageID": "id", "ready": true,
                                                  "restartCount": 2}]},
            })
        );
    }
}
