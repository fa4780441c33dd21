//! The `validate` payload to ValidationResponse bytes, as the module answers the host.

use super::*;
use crate::evaluate::tests::{Listing, pod_create};
use serde_json::json;

const NOW: &str = "2026-01-02T03:04:05Z";

fn answer(payload: &[u8]) -> Value {
    let bytes = validate(payload, &mut Listing::of(&[]), NOW).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn an_injected_pod_comes_back_as_the_mutated_object() {
    let sidecarset = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "logs"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "containers": [{"name": "log-agent", "image": "agent:1"}]}});
    let payload = json!({"request": pod_create(), "settings": {"sidecarSets": [sidecarset]}});
    let response = answer(payload.to_string().as_bytes());
    assert_eq!(response["accepted"], true, "{response}");
    let names: Vec<&str> = response["mutated_object"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["log-agent", "app"], "BeforeAppContainer by default");
    assert_eq!(response["warnings"], Value::Null);
    assert!(response.get("message").is_none());
}

#[test]
fn an_untouched_pod_is_accepted_without_an_object() {
    let payload = json!({"request": pod_create(), "settings": {}});
    let response = answer(payload.to_string().as_bytes());
    assert_eq!(response, json!({"accepted": true, "warnings": null}));
}

#[test]
fn malformed_payloads_are_rejections_with_a_message() {
    let response = answer(b"{not json");
    assert_eq!(response["accepted"], false);
    assert_eq!(response["code"], 400);
    let message = response["message"].as_str().unwrap();
    assert!(
        message.starts_with("invalid ValidationRequest JSON: "),
        "{message}"
    );

    let response = answer(b"[1]");
    assert_eq!(response["code"], 400);
    assert_eq!(
        response["message"],
        "the admission request is not a JSON object"
    );

    let bad_settings =
        json!({"request": pod_create(), "settings": {"allowPatchPodMetadataKey": []}});
    let response = answer(bad_settings.to_string().as_bytes());
    assert_eq!(response["accepted"], false);
    assert_eq!(response["code"], 400);
}

#[test]
fn an_oversized_payload_is_refused_before_decoding() {
    let payload = vec![b' '; MAX_REQUEST_BYTES + 1];
    let response = answer(&payload);
    assert_eq!(response["accepted"], false);
    assert_eq!(response["code"], 413);
}
