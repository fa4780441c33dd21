//! kwctl session files: record then replay, the exact YAML layout, and kwctl's replay errors.

mod common;

use common::*;
use serde_json::{Value, json};
use sidecarset_host::context::{
    CallbackRequestType, Exchange, ExchangeResponse, REPLAY_EXHAUSTED_MESSAGE,
};
use sidecarset_host::engine::{HostCallbacks, PolicyEngine};
use sidecarset_host::{ClusterContext, SessionRecorder, SessionReplayer, evaluate_admission};

fn context() -> ClusterContext {
    ClusterContext::from_objects(vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
    ])
    .unwrap()
}

const LIST_ALL: &str = r#"{"api_version":"v1","kind":"Namespace","label_selector":null,"field_selector":null,"field_masks":null}"#;
const GET_MISSING: &str = r#"{"api_version":"v1","kind":"Namespace","name":"nope","namespace":null,"disable_cache":false,"field_masks":null}"#;

#[test]
fn recorded_yaml_has_kwctls_layout() {
    let recorder = SessionRecorder::new(context());
    let ok = recorder.call(
        "kubewarden",
        "kubernetes",
        "list_resources_all",
        LIST_ALL.as_bytes(),
    );
    assert!(ok.is_ok());
    let err = recorder.call(
        "kubewarden",
        "kubernetes",
        "get_resource",
        GET_MISSING.as_bytes(),
    );
    assert_eq!(err, Err("namespaces \"nope\" not found".to_string()));
    let yaml = recorder.to_yaml().unwrap();
    let expected = r#"- type: Exchange
  request: |
    !KubernetesListResourceAll
    api_version: v1
    kind: Namespace
    label_selector: null
    field_selector: null
    field_masks: null
  response:
    type: Success
    payload: PAYLOAD
- type: Exchange
  request: |
    !KubernetesGetResource
    api_version: v1
    kind: Namespace
    name: nope
    namespace: null
    disable_cache: false
    field_masks: null
  response:
    type: Error
    message: namespaces "nope" not found
"#;
    // Key order inside the payload depends on serde_json features: compare it as JSON.
    let payload_line = yaml
        .lines()
        .find(|l| l.starts_with("    payload: "))
        .expect("payload line");
    let payload: String =
        serde_norway::from_str(payload_line.trim_start_matches("    payload: ")).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&payload).unwrap(),
        json!({"apiVersion": "v1", "kind": "NamespaceList", "metadata": {},
               "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}]})
    );
    assert_eq!(yaml.replace(payload_line, "    payload: PAYLOAD"), expected);
}

#[test]
fn replays_the_kwctl_example_of_the_guide() {
    let yaml = r#"- type: Exchange
  request: |
    !KubernetesGetResource
    api_version: v1
    kind: Namespace
    name: team-a
    namespace: null
    disable_cache: false
  response:
    type: Success
    payload: '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}'
"#;
    let replayer = SessionReplayer::from_yaml(yaml, "session.yml").unwrap();
    assert_eq!(replayer.len(), 1);
    let payload = r#"{"api_version":"v1","kind":"Namespace","name":"team-a","namespace":null,"disable_cache":false,"field_masks":null}"#;
    let answer = replayer
        .call(
            "kubewarden",
            "kubernetes",
            "get_resource",
            payload.as_bytes(),
        )
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&answer).unwrap()["metadata"]["name"],
        "team-a"
    );
    assert_eq!(replayer.remaining(), 0);
    assert_eq!(
        replayer.call(
            "kubewarden",
            "kubernetes",
            "get_resource",
            payload.as_bytes()
        ),
        Err(REPLAY_EXHAUSTED_MESSAGE.to_string())
    );
}

#[test]
fn record_then_replay_through_a_guest_round_trips() {
    let engine = PolicyEngine::new(&host_call_guest(), test_config()).unwrap();
    let recorder = SessionRecorder::new(context());
    let recorded = evaluate_admission(&engine, &pod_request(), &json!({}), &recorder);
    assert!(recorded.allowed, "{recorded:?}");
    assert!(recorded.patch.is_some());
    let dir = scratch_dir("session");
    let file = dir.join("session.yml");
    recorder.save(&file).unwrap();
    assert_eq!(recorder.exchanges().len(), 1, "tracing/log is not recorded");

    let replayer = SessionReplayer::from_file(&file).unwrap();
    let replayed = evaluate_admission(&engine, &pod_request(), &json!({}), &replayer);
    assert_eq!(replayed, recorded);
    replayer.reset();
    assert_eq!(
        evaluate_admission(&engine, &pod_request(), &json!({}), &replayer),
        recorded
    );
}

#[test]
fn a_different_request_is_a_replay_error() {
    let recorder = SessionRecorder::new(context());
    let _ = recorder.call(
        "kubewarden",
        "kubernetes",
        "list_resources_all",
        LIST_ALL.as_bytes(),
    );
    let replayer = SessionReplayer::from_yaml(&recorder.to_yaml().unwrap(), "s").unwrap();
    let err = replayer
        .call(
            "kubewarden",
            "kubernetes",
            "get_resource",
            GET_MISSING.as_bytes(),
        )
        .unwrap_err();
    assert_eq!(
        err,
        r#"Replay error: unexpected request. Was expecting KubernetesListResourceAll { api_version: "v1", kind: "Namespace", label_selector: None, field_selector: None, field_masks: None }, got KubernetesGetResource { api_version: "v1", kind: "Namespace", name: "nope", namespace: None, disable_cache: false, field_masks: None } instead"#
    );
}

#[test]
fn recorded_errors_replay_as_errors_and_bad_files_are_refused() {
    let exchanges = vec![Exchange {
        request: serde_norway::to_string(&CallbackRequestType::DNSLookupHost {
            host: "example.com".into(),
        })
        .unwrap(),
        response: ExchangeResponse::Error {
            message: "lookup failed".into(),
        },
    }];
    let yaml = serde_norway::to_string(&exchanges).unwrap();
    assert!(yaml.contains("!DNSLookupHost"), "{yaml}");
    let replayer = SessionReplayer::from_yaml(&yaml, "s").unwrap();
    assert_eq!(
        replayer.call(
            "kubewarden",
            "net",
            "v1/dns_lookup_host",
            br#""example.com""#
        ),
        Err("lookup failed".to_string())
    );
    let bad = SessionReplayer::from_yaml(
        "- type: Exchange\n  request: '!Nope {}'\n  response: {type: Success, payload: ''}\n",
        "bad.yml",
    );
    assert!(bad.is_err());
    assert!(SessionReplayer::from_yaml("{", "bad.yml").is_err());
}
