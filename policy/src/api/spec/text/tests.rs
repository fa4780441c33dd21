use super::super::SidecarSet;
use proptest::prelude::*;
use serde_json::{Value, json};

/// The reference: the text parsed into a `Value`, then decoded.
fn through_value(text: &str) -> Result<SidecarSet, String> {
    serde_json::from_str::<Value>(text)
        .and_then(SidecarSet::from_value)
        .map_err(|e| e.to_string())
}

/// Whatever the direct decode accepts, it decodes as the `Value` path does.
fn agrees(text: &str) -> bool {
    match SidecarSet::from_plain_json(text) {
        Ok(direct) => {
            assert_eq!(Ok(direct), through_value(text), "{text}");
            true
        }
        Err(_) => false,
    }
}

fn served() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "agent", "labels": {"a": "b"}, "annotations": {
            "kruise.io/sidecarset-hash": "h", "kruise.io/sidecarset-hash-without-image": "w"},
            "creationTimestamp": "2026-01-02T03:04:05Z", "generation": 2, "uid": "u"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"},
                         "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]},
            "namespace": "ns", "namespaceSelector": {"matchLabels": {"x": "y"}},
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": "10%", "partition": 0,
                               "paused": false, "scatterStrategy": [{"key": "k", "value": "v"}]},
            "injectionStrategy": {"paused": true, "revision": {"policy": "Always"}},
            "initContainers": [{"name": "init", "image": "i", "restartPolicy": "Always",
                                "podInjectPolicy": "AfterAppContainer"}],
            "containers": [{
                "name": "agent", "image": "registry.example.com/agent:1.0",
                "podInjectPolicy": "AfterAppContainer", "shareVolumePolicy": {"type": "enabled"},
                "shareVolumeDevicePolicy": {"type": "disabled"},
                "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "e"},
                "env": [{"name": "LOG_LEVEL", "value": "info"}],
                "transferEnv": [{"sourceContainerName": "app", "envNames": ["POD_NAME"]},
                                {"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.labels['c']"}},
                                 "envName": "REGION"}],
                "resourcesPolicy": null, "x-future-field": {"kept": [1, 2.5, null]},
                "volumeMounts": [{"name": "buffer", "mountPath": "/buffer"}],
                "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}}}],
            "volumes": [{"name": "buffer", "emptyDir": {}}],
            "imagePullSecrets": [{"name": "s"}], "revisionHistoryLimit": 10,
            "patchPodMetadata": [{"annotations": {"k": "v"}, "patchPolicy": "Overwrite"}],
            "customVersion": "v2", "unknownSpecField": [1]
        },
        "status": {"matchedPods": 3, "latestRevision": "r1", "observedGeneration": 2}
    })
}

#[test]
fn a_served_sidecarset_decodes_straight_from_its_text() {
    let text = served().to_string();
    assert!(agrees(&text), "the plain shape takes the direct path");
    let direct = SidecarSet::from_plain_json(&text).unwrap();
    assert_eq!(direct.spec.containers[0].transfer_env.len(), 2);
    assert!(
        direct.spec.containers[0]
            .container
            .contains_key("x-future-field")
    );
    assert!(direct.spec.injection_strategy.paused);
}

#[test]
fn nulls_and_empties_read_as_zero_values() {
    for text in [
        r#"{}"#,
        r#"{"metadata": null, "spec": null, "status": null}"#,
        r#"{"spec": {"containers": null, "initContainers": null, "volumes": null,
                     "namespace": null, "customVersion": null, "selector": null,
                     "updateStrategy": null, "patchPodMetadata": null}}"#,
        r#"{"spec": {"containers": [{"name": null, "upgradeStrategy": null,
                     "shareVolumeDevicePolicy": null, "transferEnv": null}]}}"#,
        r#"{"spec": {"cont\u0061iners": [{"n\u0061me": "escaped"}]}}"#,
    ] {
        assert!(agrees(text), "{text}");
    }
}

#[test]
fn other_shapes_are_left_to_the_value_path() {
    for text in [
        r#"{"metadata": {"name": "a"}, "metadata": {"name": "b"}}"#,
        r#"{"spec": {"containers": [{"name": "a"}]}, "spec": null}"#,
        r#"{"spec": {"containers": [], "containers": []}}"#,
        r#"{"spec": {"selector": null, "selector": {}}}"#,
        r#"{"spec": {"containers": [{"name": "a", "name": "b"}]}}"#,
        r#"{"spec": {"containers": [["positional"]]}}"#,
        r#"[{"name": "positional"}]"#,
        r#"{"spec": {"containers": [{"transferEnv": "no"}]}}"#,
        r#"{"spec": {"revisionHistoryLimit": 1.5}}"#,
        r#"{"spec": {"selector": "app=web"}}"#,
        r#"{"metadata": {"name": 1}}"#,
        r#"{"spec": {"namespace": 1}}"#,
        r#"{"spec": {"volumes": [1, 2"#,
        r#"null"#,
        r#"{} trailing"#,
    ] {
        assert!(!agrees(text), "{text}");
    }
}

fn member() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!(-2)),
        Just(json!(0.5)),
        "[a-z]{0,3}".prop_map(Value::from),
        Just(json!({})),
        Just(json!([])),
        Just(json!({"matchLabels": {"app": "web"}})),
        Just(json!({"type": "enabled"})),
        Just(json!([{"name": "c", "image": "i", "transferEnv": [{"envName": "A"}]}])),
        Just(json!([{"name": "v", "emptyDir": {}}])),
        Just(json!({"paused": true})),
    ]
}

const KEYS: &[&str] = &[
    "selector",
    "namespace",
    "namespaceSelector",
    "initContainers",
    "containers",
    "volumes",
    "updateStrategy",
    "injectionStrategy",
    "imagePullSecrets",
    "revisionHistoryLimit",
    "patchPodMetadata",
    "customVersion",
    "other",
];

proptest! {
    #[test]
    fn agrees_with_the_value_path_on_any_spec(
        members in prop::collection::vec((prop::sample::select(KEYS), member()), 0..8),
        duplicate in any::<bool>(),
    ) {
        let mut text = String::from(r#"{"metadata": {"name": "s"}, "spec": {"#);
        let mut members = members;
        if duplicate && let Some(first) = members.first().cloned() {
            members.push(first);
        }
        let body: Vec<String> = members.iter().map(|(k, v)| format!("{k:?}: {v}")).collect();
        text.push_str(&body.join(", "));
        text.push_str("}}");
        agrees(&text);
    }
}
