//! Runs the real policy.wasm when `make policy.wasm` has built it; skipped otherwise.

mod common;

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use sidecarset_host::engine::{EngineConfig, PolicyEngine};
use sidecarset_host::{ClusterContext, evaluate_admission};

fn policy_wasm() -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../policy.wasm");
    path.is_file().then_some(path)
}

#[test]
fn the_real_policy_speaks_kubewardens_protocol() {
    let Some(path) = policy_wasm() else {
        eprintln!("policy.wasm not built: skipped");
        return;
    };
    let engine = PolicyEngine::from_file(&path, EngineConfig::default()).expect("policy loads");
    assert_eq!(engine.protocol_version().unwrap(), "v1");
    let empty = ClusterContext::default();
    assert!(engine.validate_settings(&json!({}), &empty).unwrap().valid);

    let started = Instant::now();
    let rounds = 20;
    for _ in 0..rounds {
        let response = evaluate_admission(&engine, &common::pod_request(), &json!({}), &empty);
        assert!(
            response.allowed,
            "no SidecarSet, nothing to reject: {response:?}"
        );
    }
    eprintln!(
        "policy.wasm: {:?} per evaluation (fresh instance each)",
        started.elapsed() / rounds
    );
}
