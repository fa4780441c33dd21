//! `kwctl bench` (and any host that keeps its evaluator) calls `validate` again and again on one
//! instance of policy.wasm: every call must answer as a fresh instance does, and the guest's
//! memory must not grow with the number of calls.

use serde_json::{Value, json};
use sidecarset_host::ClusterContext;
use sidecarset_tests::{policy_engine, repo_root};

fn cluster() -> ClusterContext {
    ClusterContext::from_dir(&repo_root().join("examples/cluster")).expect("examples/cluster")
}

fn payload(pod: Value) -> Vec<u8> {
    let request = json!({
        "uid": "u-1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "name": "p", "namespace": "default", "operation": "CREATE",
        "userInfo": {"username": "tester"}, "object": pod,
    });
    serde_json::to_vec(&json!({"request": request, "settings": {}})).expect("payload")
}

fn pod(annotation: String) -> Value {
    json!({
        "metadata": {"name": "web-1", "labels": {"app": "web"}, "annotations": {"note": annotation}},
        "spec": {"containers": [{"name": "app", "image": "nginx",
                                 "env": [{"name": "A", "value": "1"}]}]},
    })
}

fn accepted(raw: &[u8]) -> Value {
    let response: Value = serde_json::from_slice(raw).expect("ValidationResponse JSON");
    assert_eq!(response["accepted"], true, "{response}");
    response
}

#[test]
fn a_reused_instance_answers_every_call_as_a_fresh_one() {
    let context = cluster();
    let small = payload(pod("small".into()));
    let fresh = accepted(
        &policy_engine()
            .call("validate", &small, &context)
            .expect("fresh"),
    );
    assert!(
        fresh["mutated_object"]["spec"]["containers"]
            .as_array()
            .is_some_and(|c| c.len() > 1),
        "the example cluster's SidecarSets inject the pod: {fresh}"
    );
    let mut instance = policy_engine().instantiate(&context).expect("instance");
    // Enough calls to fill the module's 2 MiB bump arena many times over.
    for call in 0..300 {
        let answer = accepted(&instance.call("validate", &small).expect("reused"));
        assert_eq!(answer, fresh, "call {call} of one instance");
    }
}

#[test]
fn a_reused_instance_does_not_keep_memory_per_call() {
    // Requests larger than the arena go through the system allocator; 40 calls of 3.5 MB each
    // would pass the 64 MiB cap many times over if any of it stayed behind.
    let engine = policy_engine();
    assert_eq!(engine.config().memory_limit, 64 * 1024 * 1024);
    let context = cluster();
    let big = payload(pod("x".repeat(3_500_000)));
    let mut instance = engine.instantiate(&context).expect("instance");
    for call in 0..40 {
        let raw = instance
            .call("validate", &big)
            .unwrap_or_else(|e| panic!("call {call} of one instance: {e}"));
        let answer = accepted(&raw);
        assert_eq!(
            answer["mutated_object"]["metadata"]["annotations"]["note"]
                .as_str()
                .map(str::len),
            Some(3_500_000)
        );
    }
}
