//! The JSONPatch only adds or replaces injected content: pod fields the policy's types do not
//! know (a newer Kubernetes) and explicit nulls come through untouched.

use serde_json::{Value, json};
use sidecarset_host::{ClusterContext, evaluate_admission};
use sidecarset_tests::policy_engine;

#[test]
fn unknown_pod_fields_survive_injection() {
    let cluster = ClusterContext::from_objects(vec![json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "log"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "containers": [{"name": "log", "image": "busybox", "futureContainerField": {"x": 1},
                                 "volumeMounts": [{"name": "buf", "mountPath": "/buf"}]}],
                 "volumes": [{"name": "buf", "emptyDir": {}}]},
    })])
    .unwrap();
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"},
                     "futureMetadata": "keep", "annotations": {"a": "b"}},
        "spec": {
            "futureField": {"nested": [1, 2, 3]},
            "hostname": null,
            "containers": [{"name": "app", "image": "nginx", "futureContainerField": true,
                            "resources": {"limits": {"cpu": "1"}}, "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]}],
            "volumes": [{"name": "data", "futureVolumeSource": {"size": 3}}],
        },
        "status": {"futureStatus": 1},
    });
    let request = json!({
        "uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": "default", "operation": "CREATE", "userInfo": {"username": "t"}, "object": pod,
    });
    let response = evaluate_admission(policy_engine(), &request, &json!({}), &cluster);
    assert!(response.allowed, "{response:?}");
    let patch = response.decoded_patch().expect("a patch");
    for op in patch.as_array().unwrap() {
        let kind = op["op"].as_str().unwrap();
        let path = op["path"].as_str().unwrap();
        assert!(matches!(kind, "add" | "replace"), "unexpected op {op}");
        assert!(
            [
                "/spec/containers/",
                "/spec/volumes/",
                "/metadata/annotations/"
            ]
            .iter()
            .any(|prefix| path.starts_with(prefix)),
            "patch touches {path}"
        );
    }
    let mut patched = pod.clone();
    let patch: json_patch::Patch = serde_json::from_value(patch).unwrap();
    json_patch::patch(&mut patched, &patch).unwrap();
    for pointer in [
        "/spec/futureField",
        "/metadata/futureMetadata",
        "/status/futureStatus",
        "/spec/containers/0/futureContainerField",
        "/spec/volumes/0/futureVolumeSource",
    ] {
        assert_eq!(
            patched.pointer(pointer),
            pod.pointer(pointer),
            "{pointer} changed"
        );
    }
    assert_eq!(patched.pointer("/spec/hostname"), Some(&Value::Null));
    // The sidecar keeps container fields the policy does not know, minus SidecarSet-only ones.
    assert_eq!(
        patched.pointer("/spec/containers/1/futureContainerField"),
        Some(&json!({"x": 1}))
    );
    assert_eq!(patched.pointer("/spec/volumes/1/name"), Some(&json!("buf")));
}
