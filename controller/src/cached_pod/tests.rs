use super::*;
use serde_json::json;
use sidecarset_policy::annotations::InPlaceUpdateContainerStatus;

fn cached(value: serde_json::Value) -> CachedPod {
    CachedPod::from(serde_json::from_value::<Pod>(value).expect("pod"))
}

fn container(name: &str, image: Option<&str>, restart_policy: Option<&str>) -> CachedContainer {
    CachedContainer {
        name: name.into(),
        image: image.map(Into::into),
        restart_policy: restart_policy.map(Into::into),
        digest_image: false,
        runs_spec_image: false,
    }
}

#[test]
fn keeps_what_is_read_and_drops_the_rest() {
    let pod = cached(json!({
        "metadata": {"name": "p", "namespace": "n", "uid": "u", "resourceVersion": "7",
                     "labels": {"a": "b"}, "annotations": {"k": "v"},
                     "creationTimestamp": "2025-01-01T00:00:00Z",
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
                                          "restartCount": 2, "state": {"running": {}}}],
                   "initContainerStatuses": [{"name": "init", "image": "i:1", "imageID": "i", "ready": true,
                                              "restartCount": 5}]},
    }));
    assert_eq!(
        (
            pod.name(),
            pod.namespace(),
            pod.uid(),
            pod.resource_version()
        ),
        ("p", "n", "u", "7")
    );
    assert_eq!(pod.labels, [("a".into(), "b".into())].into());
    assert_eq!(pod.annotation("k"), Some("v"));
    assert!(pod.creation_timestamp.is_some() && !pod.terminating);
    assert_eq!(
        pod.containers,
        vec![
            container("app", Some("app:1"), None),
            container("sidecar", None, None)
        ]
    );
    assert_eq!(
        pod.init_containers,
        vec![container("init", Some("i:1"), Some("Always"))]
    );
    assert_eq!(pod.node_name.as_deref(), Some("node"));
    assert_eq!(pod.phase.as_deref(), Some("Running"));
    let types: Vec<&str> = pod.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, ["Ready", "SidecarSetUpgradable"]);
    assert_eq!(pod.conditions[1].message.as_deref(), Some("{}"));
    assert_eq!(
        pod.container_statuses,
        vec![CachedContainerStatus {
            name: "app".into(),
            image: "app:1".into(),
            image_id: "id".into(),
            ready: true,
            restart_count: 2,
        }]
    );
    assert_eq!(pod.init_container_statuses.len(), 1);
    let facts = &pod.facts;
    assert!(facts.ready && facts.active && facts.running_and_ready && !facts.unassigned);
    assert!(facts.ready_since.is_some());
    assert_eq!((facts.phase_rank, facts.restarts), (2, (2, 5)));
    assert_eq!(facts.update_states, UpdateStates::Absent);
    assert!(facts.injected.is_empty());
}

#[test]
fn absent_parts_read_as_empty() {
    let pod =
        cached(json!({"metadata": {"name": "p", "deletionTimestamp": "2025-01-01T00:00:00Z"}}));
    assert_eq!(
        (pod.namespace(), pod.uid(), pod.resource_version()),
        ("", "", "")
    );
    assert!(pod.annotations.is_none() && pod.containers.is_empty());
    assert!(pod.terminating && !pod.facts.active && !pod.facts.ready);
    assert!(pod.facts.unassigned);
    assert_eq!(pod.facts.hash_of("a"), "");
}

const DIGEST: &str = "sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d";

#[test]
fn digest_containers_know_whether_they_run_their_image() {
    let pod = cached(json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": format!("busybox@{DIGEST}")},
                                {"name": "b", "image": format!("busybox@{DIGEST}")},
                                {"name": "c", "image": "busybox:1"},
                                {"name": "d", "image": format!("busybox@{DIGEST}")}]},
        "status": {"containerStatuses": [
            {"name": "a", "image": "x", "imageID": format!("docker-pullable://busybox@{DIGEST}"), "ready": true, "restartCount": 0},
            {"name": "b", "image": "x", "imageID": "docker-pullable://busybox@sha256:00000000000000000000000000000000", "ready": true, "restartCount": 0},
            {"name": "c", "image": "x", "imageID": format!("docker-pullable://busybox@{DIGEST}"), "ready": true, "restartCount": 0}]},
    }));
    let facts: Vec<(bool, bool)> = pod
        .containers
        .iter()
        .map(|c| (c.digest_image, c.runs_spec_image))
        .collect();
    assert_eq!(
        facts,
        [(true, true), (true, false), (false, false), (true, false)]
    );
}

#[test]
fn annotations_are_decoded_as_the_policy_decodes_them() {
    let pod = cached(json!({
        "metadata": {"name": "p", "annotations": {
            "kruise.io/sidecarset-injected-list": ",a,,b",
            "kruise.io/sidecarset-hash": r#"{"a":{"hash":"h1"},"b":{"hash":"h2"}}"#,
            "kruise.io/sidecarset-hash-without-image": r#"{"a":"legacy"}"#,
            "kruise.io/sidecarset-working-hotupgrade-container": r#"{"envoy":"envoy-2"}"#,
            "kruise.io/sidecarset-inplace-update-state": r#"{"a":{"revision":"r","lastContainerStatuses":{"s":{"imageID":"i"}}}}"#,
        }},
    }));
    let facts = &pod.facts;
    assert_eq!(
        (facts.hash_of("a"), facts.hash_of("b"), facts.hash_of("c")),
        ("h1", "h2", "")
    );
    assert_eq!(facts.hash_without_image_of("a"), "legacy");
    assert_eq!(
        facts
            .injected
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        // Split as upstream splits it: the empty item stays (no SidecarSet is named "").
        ["", "a", "b"]
    );
    assert_eq!(facts.working, [("envoy".into(), "envoy-2".into())].into());
    let UpdateStates::Parsed(states) = &facts.update_states else {
        panic!("parsed states expected, got {:?}", facts.update_states);
    };
    assert_eq!(
        states["a"].last_container_statuses["s"],
        InPlaceUpdateContainerStatus {
            image_id: "i".into()
        }
    );

    let garbage = cached(json!({"metadata": {"name": "p", "annotations": {
        "kruise.io/sidecarset-hash": "not json",
        "kruise.io/sidecarset-working-hotupgrade-container": "[",
        "kruise.io/sidecarset-inplace-update-state": "[]",
    }}}));
    assert_eq!(garbage.facts.hash_of("a"), "");
    assert!(garbage.facts.working.is_empty());
    assert_eq!(garbage.facts.update_states, UpdateStates::Unparsable);
}
