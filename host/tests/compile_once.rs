//! A policy is compiled once, when the engine is built; evaluations only instantiate it.
//! Alone in its test binary: the compilation counter is process-wide.

mod common;

use std::sync::Arc;

use common::*;
use serde_json::json;
use sidecarset_host::engine::{NoHostCallbacks, PolicyEngine, compiled_modules};
use sidecarset_host::evaluate_admission;

#[test]
fn evaluations_compile_nothing() {
    let before = compiled_modules();
    let engine = Arc::new(PolicyEngine::new(&misbehaving_guest(), test_config()).unwrap());
    assert_eq!(compiled_modules(), before + 1);
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || {
                for _ in 0..50 {
                    assert_eq!(engine.protocol_version().unwrap(), "v1");
                    assert!(
                        engine
                            .validate_settings(&json!({}), &NoHostCallbacks)
                            .unwrap()
                            .valid
                    );
                    let response =
                        evaluate_admission(&engine, &pod_request(), &json!({}), &NoHostCallbacks);
                    assert_eq!(response.patch.as_deref(), Some(PROBE_PATCH));
                    // A failed evaluation does not recompile either.
                    assert!(engine.call("crash", b"", &NoHostCallbacks).is_err());
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("worker thread");
    }
    let clone = (*engine).clone();
    assert_eq!(clone.protocol_version().unwrap(), "v1");
    assert_eq!(
        compiled_modules(),
        before + 1,
        "an evaluation compiled a module"
    );
}
