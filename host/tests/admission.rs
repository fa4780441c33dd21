//! AdmissionResponse building, byte for byte like policy-evaluator / kwctl.

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use common::*;
use serde_json::{Value, json};
use sidecarset_host::admission::{
    AdmissionError, DEADLINE_MESSAGE, NULL_OBJECT_MUTATION_MESSAGE, admission_request,
};
use sidecarset_host::engine::{EngineError, NoHostCallbacks, PolicyEngine, ValidationResponse};
use sidecarset_host::{AdmissionRequest, AdmissionResponse, evaluate_admission};

fn raw(value: &Value) -> Box<serde_json::value::RawValue> {
    serde_json::value::to_raw_value(value).unwrap()
}

fn accepted() -> ValidationResponse {
    ValidationResponse {
        accepted: true,
        message: None,
        code: None,
        mutated_object: None,
        audit_annotations: None,
        warnings: None,
    }
}

#[test]
fn mutation_gives_the_documented_patch_and_line() {
    let response = ValidationResponse {
        mutated_object: Some(raw(&annotated_pod())),
        ..accepted()
    };
    let admission =
        AdmissionResponse::from_validation_response("uid-1", Some(&pod().to_string()), &response);
    assert_eq!(admission.patch.as_deref(), Some(PROBE_PATCH));
    assert_eq!(
        serde_json::to_string(&admission).unwrap(),
        format!(
            r#"{{"uid":"uid-1","allowed":true,"patchType":"JSONPatch","patch":"{PROBE_PATCH}","auditAnnotations":null,"warnings":null}}"#
        )
    );
    let patch = STANDARD.decode(admission.patch.as_ref().unwrap()).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&patch).unwrap(),
        json!([{"op": "add", "path": "/metadata/annotations", "value": {"probe/seen": "0"}}])
    );
    assert_eq!(
        admission.decoded_patch(),
        serde_json::from_slice(&patch).ok()
    );
}

#[test]
fn patch_applies_back_to_the_mutated_object() {
    let original = json!({"spec": {"containers": [{"name": "a"}], "x": 1}, "metadata": {"labels": {"k": "v"}}});
    let mutated = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}, "metadata": {"labels": {"k": "w"}}});
    let response = ValidationResponse {
        mutated_object: Some(raw(&mutated)),
        ..accepted()
    };
    let admission =
        AdmissionResponse::from_validation_response("u", Some(&original.to_string()), &response);
    let patch: json_patch::Patch =
        serde_json::from_value(admission.decoded_patch().unwrap()).unwrap();
    let mut patched = original;
    json_patch::patch(&mut patched, &patch).unwrap();
    assert_eq!(patched, mutated);
}

#[test]
fn an_unchanged_mutated_object_gives_no_patch() {
    let response = ValidationResponse {
        mutated_object: Some(raw(&pod())),
        ..accepted()
    };
    let admission =
        AdmissionResponse::from_validation_response("u", Some(&pod().to_string()), &response);
    assert_eq!(admission.patch, None);
    assert_eq!(admission.patch_type, None);
    assert_eq!(
        serde_json::to_string(&admission).unwrap(),
        r#"{"uid":"u","allowed":true,"auditAnnotations":null,"warnings":null}"#
    );
}

#[test]
fn mutating_a_null_object_is_rejected() {
    let response = ValidationResponse {
        mutated_object: Some(raw(&pod())),
        ..accepted()
    };
    for object in [None, Some("null"), Some(" null ")] {
        let admission = AdmissionResponse::from_validation_response("u", object, &response);
        assert!(!admission.allowed);
        assert_eq!(admission.patch, None);
        assert_eq!(
            serde_json::to_value(&admission).unwrap()["status"],
            json!({"message": NULL_OBJECT_MUTATION_MESSAGE})
        );
    }
}

#[test]
fn status_only_when_message_or_code_and_copies_annotations_and_warnings() {
    let rejected = ValidationResponse {
        accepted: false,
        message: Some("no".into()),
        code: None,
        mutated_object: None,
        audit_annotations: Some([("k".to_string(), "v".to_string())].into()),
        warnings: Some(vec!["careful".into()]),
    };
    let admission =
        AdmissionResponse::from_validation_response("u", Some(&pod().to_string()), &rejected);
    assert_eq!(
        serde_json::to_string(&admission).unwrap(),
        r#"{"uid":"u","allowed":false,"status":{"message":"no"},"auditAnnotations":{"k":"v"},"warnings":["careful"]}"#
    );
    let with_code = ValidationResponse {
        code: Some(418),
        ..accepted()
    };
    let admission = AdmissionResponse::from_validation_response("u", None, &with_code);
    assert_eq!(
        serde_json::to_value(&admission).unwrap()["status"],
        json!({"code": 418})
    );
}

#[test]
fn engine_errors_map_to_kubewarden_rejections() {
    let deadline = AdmissionResponse::from_engine_error("u", &EngineError::DeadlineExceeded);
    assert_eq!(
        serde_json::to_string(&deadline).unwrap(),
        format!(
            r#"{{"uid":"u","allowed":false,"status":{{"message":"{DEADLINE_MESSAGE}","code":500}},"auditAnnotations":null,"warnings":null}}"#
        )
    );
    let failure =
        AdmissionResponse::from_engine_error("u", &EngineError::GuestCallFailure("boom".into()));
    assert_eq!(
        failure.status.unwrap().message.unwrap(),
        "internal server error: Guest call failure: boom"
    );
}

#[test]
fn accepts_requests_and_reviews() {
    let request = pod_request();
    let review =
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request});
    assert_eq!(admission_request(&request), Ok(&request));
    assert_eq!(admission_request(&review), Ok(&request));
    assert_eq!(
        admission_request(&json!({"kind": "AdmissionReview"})),
        Err(AdmissionError::MissingRequest)
    );
    assert_eq!(
        admission_request(&json!(3)),
        Err(AdmissionError::NotAnObject)
    );

    let engine = PolicyEngine::new(&misbehaving_guest(), test_config()).unwrap();
    let from_request = evaluate_admission(&engine, &request, &json!({}), &NoHostCallbacks);
    let from_review = evaluate_admission(&engine, &review, &json!({}), &NoHostCallbacks);
    assert_eq!(from_request, from_review);
    assert_eq!(from_request.uid, "1299d386-525b-4032-98ae-1949f69f9cfc");
    assert_eq!(from_request.patch.as_deref(), Some(PROBE_PATCH));
    let wrapped = from_review.into_review();
    assert_eq!(wrapped["kind"], "AdmissionReview");
    assert_eq!(wrapped["response"]["allowed"], true);
}

#[test]
fn a_failing_guest_gives_a_500_rejection() {
    let engine = PolicyEngine::new(&host_call_guest(), test_config()).unwrap();
    let response = evaluate_admission(
        &engine,
        &pod_request(),
        &json!({}),
        &sidecarset_host::NoCluster,
    );
    assert_eq!(
        serde_json::to_string(&response).unwrap(),
        r#"{"uid":"1299d386-525b-4032-98ae-1949f69f9cfc","allowed":false,"status":{"message":"internal server error: Guest call failure: kube::Client was not initialized properly","code":500},"auditAnnotations":null,"warnings":null}"#
    );
}

/// kwctl decodes the request into policy-evaluator's struct and sends the guest that struct
/// re-serialised: camelCase, unknown keys dropped, null or absent optionals omitted.
#[test]
fn requests_decode_and_re_serialise_like_policy_evaluator() {
    let mut request = pod_request();
    request["unknownField"] = json!({"a": 1});
    request["dryRun"] = Value::Null;
    request["oldObject"] = Value::Null;
    request["userInfo"]["uid"] = Value::Null;
    let decoded = AdmissionRequest::from_input(&request).unwrap();
    let text = decoded.to_json().unwrap();
    assert!(
        text.starts_with(concat!(
            r#"{"uid":"1299d386-525b-4032-98ae-1949f69f9cfc","#,
            r#""kind":{"group":"","version":"v1","kind":"Pod"},"#,
            r#""resource":{"group":"","version":"v1","resource":"pods"},"#,
            r#""name":"nginx","namespace":"default","operation":"CREATE","#,
            r#""userInfo":{"groups":["system:masters"],"username":"kubernetes-admin"},"object":{"#
        )),
        "{text}"
    );
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), pod_request());

    let mut no_uid = pod_request();
    no_uid.as_object_mut().unwrap().remove("uid");
    let error = AdmissionRequest::from_input(&no_uid).unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot build AdmissionRequest object from given input: missing field `uid`"
    );
    let mut gvk = pod_request();
    gvk["kind"] = json!({"kind": "Pod"});
    assert_eq!(
        AdmissionRequest::from_input(&gvk),
        Err(AdmissionError::Decode("missing field `group`".into()))
    );

    // The library entry point answers such input with a 400 rejection instead.
    let engine = PolicyEngine::new(&misbehaving_guest(), test_config()).unwrap();
    let response = evaluate_admission(&engine, &no_uid, &json!({}), &NoHostCallbacks);
    assert!(!response.allowed);
    assert_eq!(response.status.unwrap().code, Some(400));
}
