//! Runs the real policy.wasm (built by `make policy.wasm`; the test fails without it).

mod common;

use serde_json::json;
use sidecarset_host::engine::{EngineConfig, PolicyEngine};
use sidecarset_host::{ClusterContext, evaluate_admission};

#[test]
fn the_real_policy_speaks_kubewardens_protocol() {
    let engine = PolicyEngine::from_file(&common::policy_wasm(), EngineConfig::default())
        .expect("policy loads");
    assert_eq!(engine.protocol_version().unwrap(), "v1");
    // Its only WASI writes go through the host's own fd_write: `serve` runs it on async threads.
    assert!(engine.runs_on_async_threads());
    let empty = ClusterContext::default();
    assert!(engine.validate_settings(&json!({}), &empty).unwrap().valid);
    // Repeated evaluations, each in a fresh instance, give the same answer.
    for _ in 0..20 {
        let response = evaluate_admission(&engine, &common::pod_request(), &json!({}), &empty);
        assert!(
            response.allowed,
            "no SidecarSet, nothing to reject: {response:?}"
        );
    }
}
