//! The waPC engine against WAT guests: protocol, isolation, deadlines, memory cap, traps, threads.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sidecarset_host::engine::{
    EngineConfig, EngineError, HostCallbacks, NoHostCallbacks, PolicyEngine,
    SettingsValidationResponse,
};
use sidecarset_host::{ClusterContext, evaluate_admission};

fn misbehaving() -> PolicyEngine {
    PolicyEngine::new(&misbehaving_guest(), test_config()).expect("engine")
}

fn assert_still_works(engine: &PolicyEngine) {
    let response = engine
        .validate(&pod_request(), &json!({}), &NoHostCallbacks)
        .expect("a good call after a failure");
    assert!(response.accepted);
    let mutated = response
        .mutated_object
        .map(|raw| serde_json::from_str(raw.get()).unwrap());
    assert_eq!(mutated, Some(annotated_pod()));
}

#[test]
fn speaks_the_three_guest_functions() {
    let engine = misbehaving();
    assert_eq!(engine.protocol_version().unwrap(), "v1");
    assert_eq!(
        engine
            .validate_settings(&Value::Null, &NoHostCallbacks)
            .unwrap(),
        SettingsValidationResponse {
            valid: true,
            message: None
        }
    );
    assert_still_works(&engine);
    assert!(engine.metadata().is_none());
}

#[test]
fn non_object_settings_are_refused_before_the_guest_runs() {
    let engine = misbehaving();
    let err = engine.validate(&pod_request(), &json!([1]), &NoHostCallbacks);
    assert!(matches!(err, Err(EngineError::InvalidInput(_))), "{err:?}");
}

#[test]
fn an_endless_loop_hits_the_deadline_and_the_engine_recovers() {
    let engine = misbehaving();
    // `spin` never returns by itself: only the deadline can end it.
    let err = engine.call("spin", b"", &NoHostCallbacks).unwrap_err();
    assert_eq!(err, EngineError::DeadlineExceeded);
    assert_eq!(
        err.to_string(),
        "Guest call failure: guest code interrupted, execution deadline exceeded"
    );
    assert_still_works(&engine);
}

#[test]
fn work_spanning_several_ticks_within_the_deadline_completes() {
    // Ticks every 100 ms; the guest works 300 ms (3 ticks) of a 3 s deadline: an engine that
    // interrupted at the first tick, or counted ticks instead of time, would fail it.
    let config = EngineConfig {
        deadline: Duration::from_secs(3),
        ..test_config()
    };
    let engine = PolicyEngine::new(&clock_wait_guest(300_000_000), config).unwrap();
    let response = engine
        .validate(&pod_request(), &json!({}), &NoHostCallbacks)
        .expect("finishes before its deadline");
    assert!(response.accepted);
    // The same guest with a deadline shorter than its work is interrupted.
    let short = PolicyEngine::new(&clock_wait_guest(300_000_000), test_config()).unwrap();
    let err = short
        .validate(&pod_request(), &json!({}), &NoHostCallbacks)
        .unwrap_err();
    assert_eq!(err, EngineError::DeadlineExceeded);
}

#[test]
fn a_loop_in_wapc_init_is_an_init_deadline() {
    let engine = PolicyEngine::new(&init_loop_guest(), test_config()).unwrap();
    let err = engine
        .call("validate", b"{}", &NoHostCallbacks)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "wapc_init init interrupted, execution deadline exceeded"
    );
    assert!(err.is_deadline());
    let response = evaluate_admission(&engine, &pod_request(), &json!({}), &NoHostCallbacks);
    assert_eq!(
        serde_json::to_value(&response).unwrap()["status"],
        json!({"message": "Policy execution interrupted because it exceeded the allowed execution time", "code": 500})
    );
}

#[test]
fn unbounded_memory_growth_hits_the_cap_and_the_engine_recovers() {
    let engine = misbehaving();
    let err = engine.call("balloon", b"", &NoHostCallbacks).unwrap_err();
    match &err {
        EngineError::MemoryLimitExceeded { requested, limit } => {
            assert_eq!(*limit, 8 * 1024 * 1024);
            assert!(requested > limit);
        }
        other => panic!("expected a memory error, got {other:?}"),
    }
    assert!(err.to_string().contains("memory limit exceeded"), "{err}");
    assert_still_works(&engine);
}

#[test]
fn a_module_whose_initial_memory_exceeds_the_cap_fails_per_call() {
    let config = EngineConfig {
        memory_limit: 512 * 1024,
        ..test_config()
    };
    let engine = PolicyEngine::new(&misbehaving_guest(), config).unwrap();
    let err = engine
        .call("validate", b"{}", &NoHostCallbacks)
        .unwrap_err();
    assert!(
        matches!(err, EngineError::MemoryLimitExceeded { .. }),
        "{err:?}"
    );
}

#[test]
fn a_trap_is_a_guest_call_failure_and_the_engine_recovers() {
    let engine = misbehaving();
    let err = engine.call("crash", b"", &NoHostCallbacks).unwrap_err();
    assert_eq!(
        err,
        EngineError::GuestCallFailure("wasm trap: wasm `unreachable` instruction executed".into())
    );
    let response = evaluate_admission(&engine, &pod_request(), &json!({}), &NoHostCallbacks);
    assert!(response.allowed, "validate still works after the trap");
    assert_still_works(&engine);
}

#[test]
fn a_guest_error_is_reported_with_its_text() {
    let engine = misbehaving();
    let err = engine.call("err", b"", &NoHostCallbacks).unwrap_err();
    assert_eq!(err.to_string(), "Guest call failure: settings are broken");
}

#[test]
fn guest_errors_in_validate_settings_become_invalid_settings() {
    let engine = PolicyEngine::new(&host_call_guest(), test_config()).unwrap();
    // validate_settings of this guest answers without a host call: valid.
    assert!(
        engine
            .validate_settings(&json!({}), &NoHostCallbacks)
            .unwrap()
            .valid
    );
    let looping = PolicyEngine::new(&init_loop_guest(), test_config()).unwrap();
    assert!(
        looping
            .validate_settings(&json!({}), &NoHostCallbacks)
            .is_err()
    );
}

#[test]
fn no_state_survives_between_evaluations() {
    let engine = PolicyEngine::new(&counter_guest(), test_config()).unwrap();
    for _ in 0..3 {
        let response = engine
            .validate(&pod_request(), &json!({}), &NoHostCallbacks)
            .unwrap();
        assert!(response.accepted, "{response:?}");
    }
}

#[test]
fn proc_exit_zero_in_start_is_tolerated_but_not_other_codes() {
    let ok = PolicyEngine::new(&start_exit_guest(0), test_config()).unwrap();
    assert!(
        ok.validate(&pod_request(), &json!({}), &NoHostCallbacks)
            .unwrap()
            .accepted
    );
    let failing = PolicyEngine::new(&start_exit_guest(3), test_config()).unwrap();
    let err = failing
        .validate(&pod_request(), &json!({}), &NoHostCallbacks)
        .unwrap_err();
    assert!(matches!(err, EngineError::InitFailed(_)), "{err:?}");
    assert!(err.to_string().contains("_start"), "{err}");
}

#[test]
fn annotated_modules_expose_metadata_and_run_identically() {
    let metadata = json!({"protocolVersion": "v1", "mutating": true, "rules": []});
    let annotated = with_custom_section(
        misbehaving_guest(),
        "io.kubewarden.metadata",
        metadata.to_string().as_bytes(),
    );
    let engine = PolicyEngine::new(&annotated, test_config()).unwrap();
    assert_eq!(engine.metadata(), Some(&metadata));
    assert_still_works(&engine);
    let broken = with_custom_section(misbehaving_guest(), "io.kubewarden.metadata", b"{nope");
    assert!(matches!(
        PolicyEngine::new(&broken, test_config()),
        Err(EngineError::Metadata(_))
    ));
}

#[test]
fn modules_that_are_not_wapc_are_refused_at_load() {
    let not_wasm = PolicyEngine::new(b"not wasm", test_config());
    assert!(
        matches!(not_wasm, Err(EngineError::Load(_))),
        "{not_wasm:?}"
    );
    let no_guest_call = wat::parse_str("(module (memory (export \"memory\") 1))").unwrap();
    assert!(matches!(
        PolicyEngine::new(&no_guest_call, test_config()),
        Err(EngineError::MissingExport("__guest_call"))
    ));
}

/// Records what the guest logs and asks, answering from a cluster context.
struct Spy {
    context: ClusterContext,
    logs: Mutex<Vec<String>>,
    calls: Mutex<Vec<(String, String, String)>>,
}

impl HostCallbacks for Spy {
    fn call(&self, b: &str, n: &str, o: &str, p: &[u8]) -> Result<Vec<u8>, String> {
        self.calls
            .lock()
            .unwrap()
            .push((b.to_string(), n.to_string(), o.to_string()));
        self.context.call(b, n, o, p)
    }
    fn log(&self, payload: &[u8]) {
        self.logs
            .lock()
            .unwrap()
            .push(String::from_utf8_lossy(payload).into_owned());
    }
}

fn namespaces() -> ClusterContext {
    ClusterContext::from_objects(vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b", "labels": {"tier": "gold"}}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
    ])
    .unwrap()
}

#[test]
fn host_calls_reach_the_callbacks_and_logs_reach_the_sink() {
    let engine = PolicyEngine::new(&host_call_guest(), test_config()).unwrap();
    let spy = Spy {
        context: namespaces(),
        logs: Mutex::default(),
        calls: Mutex::default(),
    };
    let payload = json!({"api_version": "v1", "kind": "Namespace", "label_selector": "tier=gold",
        "field_selector": null, "field_masks": null});
    let bytes = engine
        .call("echo", payload.to_string().as_bytes(), &spy)
        .unwrap();
    let list: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(list["kind"], "NamespaceList");
    assert_eq!(list["apiVersion"], "v1");
    assert_eq!(list["metadata"], json!({}));
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert_eq!(list["items"][0]["metadata"]["name"], "team-b");
    assert_eq!(
        *spy.calls.lock().unwrap(),
        vec![(
            "kubewarden".to_string(),
            "kubernetes".to_string(),
            "list_resources_all".to_string()
        )],
        "tracing/log is handled by the engine, not forwarded to call()"
    );
    assert_eq!(
        *spy.logs.lock().unwrap(),
        vec![r#"{"level":"info","message":"listing namespaces"}"#.to_string()]
    );
}

#[test]
fn host_errors_reach_the_guest() {
    let engine = PolicyEngine::new(&host_call_guest(), test_config()).unwrap();
    let payload = json!({"api_version": "v1", "kind": "Namespace", "name": "missing",
        "namespace": null, "disable_cache": false});
    let err = engine
        .call("get", payload.to_string().as_bytes(), &namespaces())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Guest call failure: namespaces \"missing\" not found"
    );
}

#[test]
fn many_threads_share_one_engine() {
    let engine = Arc::new(PolicyEngine::new(&misbehaving_guest(), test_config()).unwrap());
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || {
                for j in 0..50 {
                    if i == 0 && j % 25 == 0 {
                        assert!(engine.call("crash", b"", &NoHostCallbacks).is_err());
                    }
                    let response =
                        evaluate_admission(&engine, &pod_request(), &json!({}), &NoHostCallbacks);
                    assert_eq!(response.patch.as_deref(), Some(PROBE_PATCH));
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("worker thread");
    }
}

#[test]
fn the_perf_map_names_every_guest_function() {
    let wat = r#"(module
  (memory (export "memory") 1)
  (func $hot (export "__guest_call") (param i32 i32) (result i32) (call $helper))
  (func (result i32) (i32.const 1))
  (func $helper (result i32) (i32.const 1)))"#;
    let engine = PolicyEngine::new(wat.as_bytes(), test_config()).expect("engine");
    let path = engine.write_perf_map().expect("written");
    assert_eq!(
        path,
        std::path::PathBuf::from(format!("/tmp/perf-{}.map", std::process::id()))
    );
    let map = std::fs::read_to_string(&path).expect("readable");
    let lines: Vec<Vec<&str>> = map.lines().map(|l| l.splitn(3, ' ').collect()).collect();
    let names: Vec<&str> = lines.iter().map(|fields| fields[2]).collect();
    assert_eq!(names, ["hot", "wasm[1]", "helper"], "{map}");
    for fields in &lines {
        let start = u64::from_str_radix(fields[0], 16).expect("hex address");
        let len = u64::from_str_radix(fields[1], 16).expect("hex length");
        assert!(start > 0 && len > 0, "{map}");
    }
}
