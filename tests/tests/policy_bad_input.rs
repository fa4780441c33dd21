//! A corpus of malformed inputs through the real policy.wasm: every one gets a verdict from the
//! policy itself (never a trap, a guest error or a timeout).

use serde_json::{Value, json};
use sidecarset_host::{ClusterContext, NoHostCallbacks};
use sidecarset_tests::policy_engine;

fn pod_request(object: Value) -> Value {
    json!({
        "uid": "u-1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "name": "p", "namespace": "default", "operation": "CREATE",
        "userInfo": {"username": "tester"}, "object": object,
    })
}

fn sidecarset_request(object: Value) -> Value {
    json!({
        "uid": "u-2", "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "SidecarSet"},
        "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "sidecarsets"},
        "name": "s", "operation": "CREATE", "userInfo": {"username": "tester"}, "object": object,
    })
}

fn cluster() -> ClusterContext {
    ClusterContext::from_objects(vec![json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "log"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "containers": [{"name": "log", "image": "busybox"}]},
    })])
    .expect("valid context")
}

/// The raw `validate` answer must be a ValidationResponse with a boolean verdict.
fn verdict(payload: &[u8]) -> Value {
    let engine = policy_engine();
    let raw = engine
        .call("validate", payload, &cluster())
        .unwrap_or_else(|e| panic!("the policy failed instead of answering: {e}"));
    let response: Value = serde_json::from_slice(&raw).expect("ValidationResponse JSON");
    assert!(
        response["accepted"].is_boolean(),
        "no verdict in {response}"
    );
    if response["accepted"] == false {
        let message = response["message"].as_str().unwrap_or("");
        assert!(!message.is_empty(), "a rejection must say why: {response}");
    }
    response
}

fn validate(request: Value, settings: Value) -> Value {
    verdict(&serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap())
}

#[test]
fn malformed_payloads_get_a_verdict() {
    for payload in [
        &b""[..],
        b"not json",
        b"{",
        b"null",
        b"[]",
        b"42",
        b"{\"request\": 7}",
        b"{\"request\": null, \"settings\": null}",
        b"{\"request\": {}, \"settings\": []}",
        b"{\"request\": {\"kind\": null, \"operation\": 1}}",
        b"\xff\xfe\x00garbage",
    ] {
        verdict(payload);
    }
}

#[test]
fn malformed_pods_get_a_verdict() {
    let web = json!({"app": "web"});
    let pods = [
        Value::Null,
        json!("a string"),
        json!([]),
        json!({}),
        json!({"metadata": null, "spec": null}),
        json!({"metadata": {"labels": web}, "spec": null}),
        json!({"metadata": {"labels": web}, "spec": {"containers": null}}),
        json!({"metadata": {"labels": web}, "spec": {"containers": "x"}}),
        json!({"metadata": {"labels": web}, "spec": {"containers": [1, 2]}}),
        json!({"metadata": {"labels": web}, "spec": {"containers": [{"name": "a", "env": "x"}]}}),
        json!({"metadata": {"labels": web}, "spec": {"containers": [{"name": "a", "volumeMounts": [null]}]}}),
        json!({"metadata": {"labels": {"app": 5}}, "spec": {"containers": []}}),
        json!({"metadata": {"labels": web, "annotations": {"kruise.io/sidecarset-hash": "{broken"}}, "spec": {"containers": []}}),
        json!({"metadata": {"labels": web, "annotations": []}, "spec": {"containers": []}}),
        json!({"metadata": {"labels": web}, "spec": {"containers": [{"name": null}], "volumes": {}}}),
    ];
    for pod in pods {
        validate(pod_request(pod), json!({}));
    }
}

#[test]
fn wrong_kinds_and_operations_get_a_verdict() {
    let mut request = pod_request(json!({"metadata": {"labels": {"app": "web"}}}));
    for (pointer, value) in [
        ("/kind", json!(null)),
        ("/kind", json!({"kind": 3})),
        ("/operation", json!("CONNECT")),
        ("/operation", json!(null)),
        ("/subResource", json!("status")),
        (
            "/kind",
            json!({"group": "apps", "version": "v1", "kind": "Deployment"}),
        ),
    ] {
        let key = pointer.trim_start_matches('/');
        request
            .as_object_mut()
            .unwrap()
            .insert(key.to_string(), value);
        validate(request.clone(), json!({}));
    }
}

#[test]
fn invalid_sidecarsets_get_a_clear_rejection() {
    let cases = [
        json!(null),
        json!({"metadata": {"name": "x"}, "spec": null}),
        json!({"metadata": {"name": "x"}, "spec": {"containers": "nope"}}),
        json!({"metadata": {"name": "x"}, "spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}, "containers": [{"name": "c", "image": "i"}]}}),
        json!({"metadata": {"name": "Not_Valid!"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "containers": [{"name": "c", "image": "i"}]}}),
        json!({"metadata": {"name": "x"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "containers": [{"name": "c"}], "updateStrategy": {"partition": "abc%", "maxUnavailable": {}}}}),
        json!({"metadata": {"name": "x"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "lots"}}}]}}),
    ];
    for object in cases {
        let response = validate(sidecarset_request(object.clone()), json!({}));
        assert_eq!(
            response["accepted"], false,
            "{object} must be rejected: {response}"
        );
    }
}

#[test]
fn invalid_settings_and_inline_sidecarsets_get_a_verdict() {
    let pod =
        pod_request(json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}));
    for settings in [
        json!({"allowPatchPodMetadataKeys": ["("]}),
        json!({"sidecarSets": [null, 3, {"spec": []}]}),
        json!({"unknownSetting": true}),
        // Deeply nested groups in a regex (the regex parser recurses).
        json!({"allowPatchPodMetadataKeys": [format!("{}a{}", "(".repeat(3000), ")".repeat(3000))]}),
        json!({"sidecarSets": [{"metadata": {"name": "a"}, "spec": {"selector": {"matchLabels": {"app": "web"}}, "containers": [{"name": "c", "image": "i"}]}}]}),
    ] {
        validate(pod.clone(), settings.clone());
        let raw = policy_engine()
            .call(
                "validate_settings",
                settings.to_string().as_bytes(),
                &NoHostCallbacks,
            )
            .expect("validate_settings answers");
        let response: Value = serde_json::from_slice(&raw).unwrap();
        assert!(response["valid"].is_boolean(), "{response}");
    }
}

#[test]
fn a_huge_pod_gets_a_verdict() {
    // ~10 MB: far beyond what an API server accepts, so the policy must still answer cleanly.
    let env: Vec<Value> = (0..100_000)
        .map(|i| json!({"name": format!("VAR_{i}"), "value": "x".repeat(64)}))
        .collect();
    let pod = json!({"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "app", "image": "nginx", "env": env}]}});
    let payload =
        serde_json::to_vec(&json!({"request": pod_request(pod), "settings": {}})).unwrap();
    assert!(payload.len() > 9_000_000);
    let response = verdict(&payload);
    assert_eq!(response["accepted"], false);
    assert!(response["message"].as_str().unwrap().contains("at most"));
}

#[test]
fn the_largest_accepted_pod_is_injected_within_the_memory_cap() {
    // Just under the policy's 4 MiB request limit, under the host's default 64 MiB cap.
    let env: Vec<Value> = (0..35_000)
        .map(|i| json!({"name": format!("VAR_{i}"), "value": "x".repeat(80)}))
        .collect();
    let pod = json!({"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "app", "image": "nginx", "env": env}]}});
    let payload =
        serde_json::to_vec(&json!({"request": pod_request(pod), "settings": {}})).unwrap();
    assert!(
        payload.len() > 3_800_000 && payload.len() < 4 * 1024 * 1024,
        "{}",
        payload.len()
    );
    let response = verdict(&payload);
    assert_eq!(response["accepted"], true, "{}", response["message"]);
}

#[test]
fn a_large_realistic_pod_is_injected() {
    // 1 MB of env and annotations stays well within what the policy handles.
    let env: Vec<Value> = (0..8_000)
        .map(|i| json!({"name": format!("VAR_{i}"), "value": "x".repeat(100)}))
        .collect();
    let pod = json!({"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "app", "image": "nginx", "env": env}]}});
    let response = validate(pod_request(pod), json!({}));
    assert_eq!(response["accepted"], true, "{response}");
    assert!(response["mutated_object"]["spec"]["containers"][1]["name"] == "log");
}

/// `levels` nested arrays (odd levels) and objects (even levels) around `null`.
fn nested(levels: usize) -> String {
    let mut text = String::from("null");
    for level in 0..levels {
        text = if level % 2 == 0 {
            format!("[{text}]")
        } else {
            format!("{{\"a\":{text}}}")
        };
    }
    text
}

#[test]
fn deeply_nested_values_get_a_verdict() {
    // Around the module's own limit (100), serde_json's (128), and far past both: in a pod member
    // that stays text, in an env var, in a SidecarSet under admission and in the settings.
    for levels in [90, 99, 100, 101, 120, 127, 128, 129, 500] {
        let deep = nested(levels);
        let pod = format!(
            r#"{{"metadata":{{"labels":{{"app":"web"}}}},"spec":{{"affinity":{deep},
                "containers":[{{"name":"app","image":"nginx","env":[{{"name":"A","valueFrom":{deep}}}]}}]}}}}"#
        );
        let request = serde_json::to_string(&pod_request(json!("POD"))).unwrap();
        let payload = format!(
            r#"{{"request":{},"settings":{{}}}}"#,
            request.replacen("\"POD\"", &pod, 1)
        );
        verdict(payload.as_bytes());
        let sidecarset = format!(
            r#"{{"apiVersion":"apps.kruise.io/v1alpha1","kind":"SidecarSet","metadata":{{"name":"s"}},
                "spec":{{"containers":[{{"name":"c","image":"i","resources":{deep}}}]}}}}"#
        );
        let request = serde_json::to_string(&sidecarset_request(json!("SS"))).unwrap();
        let payload = format!(
            r#"{{"request":{},"settings":{{"x":{deep}}}}}"#,
            request.replacen("\"SS\"", &sidecarset, 1)
        );
        verdict(payload.as_bytes());
    }
}
