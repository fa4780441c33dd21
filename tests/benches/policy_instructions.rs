//! Native `evaluate` in a plain loop, for instruction counts under callgrind (wall-clock
//! benchmarks mean little on a shared machine; instruction counts do not depend on the load):
//! `valgrind --tool=callgrind --toggle-collect='sidecarset_policy::evaluate::evaluate'
//! target/debug/deps/policy_instructions-* [SIDECARSETS] [ITERATIONS]`, then divide `evaluate`'s
//! inclusive count by ITERATIONS. The inputs are the `policy` bench's, copied outside `evaluate`.
//! With `--wire`, the module's whole call natively (`wire::validate`, bytes to bytes): toggle on
//! `sidecarset_policy::evaluate::wire::validate` instead. With `--wasm`, the same call through
//! policy.wasm in a fresh pooled instance (the `policy` bench's *wasm-call*): toggle on
//! `sidecarset_host::engine::PolicyEngine::call` and add `--smc-check=all-non-file` so valgrind
//! sees the JIT-compiled guest (the kernel's part of an instance, page resets, is not counted).
//! With `--serve`, what `serve` does around that call (the `policy` bench's *wasm-serve*): toggle
//! on `sidecarset_host::admission::evaluate_admission`, also with `--smc-check=all-non-file`.
//! With `--wasm --instance`, only the fixed cost: `protocol_version` calls in fresh instances.
//! `POLICY_WASM=path` runs another build of the module; `PERF_MAP=1` writes `/tmp/perf-PID.map`
//! so that `perf record`/`perf report` name the guest's functions (BENCHMARKS.md).

use sidecarset_policy::evaluate::{Outcome, evaluate, wire};
use sidecarset_policy::settings::Settings;
use std::hint::black_box;

mod fixtures;

use fixtures::{InMemory, NOW, list_json, pod_request, pooled_engine, sidecarsets};

fn main() {
    let wire_mode = std::env::args().any(|a| a == "--wire");
    let wasm_mode = std::env::args().any(|a| a == "--wasm");
    let serve_mode = std::env::args().any(|a| a == "--serve");
    let instance_mode = std::env::args().any(|a| a == "--instance");
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let count: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let iterations: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let request = pod_request();
    let list = list_json(&sidecarsets(count));
    let settings = Settings::default();
    const MUTATED: &[u8] = b"\"mutated_object\"";
    let payload = serde_json::to_vec(&serde_json::json!({"request": &request, "settings": {}}))
        .expect("payload");
    if wasm_mode || serve_mode {
        let pooled = pooled_engine();
        let context = sidecarset_host::serve::SharedContext::fixed(
            sidecarset_host::ClusterContext::from_objects(sidecarsets(count)).expect("context"),
        );
        if instance_mode {
            for _ in 0..iterations {
                black_box(pooled.call("protocol_version", b"", &sidecarset_host::NoHostCallbacks))
                    .expect("answer");
            }
            println!("{iterations} protocol_version calls");
            return;
        }
        if serve_mode {
            let settings = serde_json::json!({});
            for _ in 0..iterations {
                let response = black_box(sidecarset_host::evaluate_admission(
                    &pooled, &request, &settings, &context,
                ));
                assert!(response.patch.is_some(), "the benchmark pod is injected");
            }
            println!("{iterations} serve evaluations at {count} SidecarSets");
            return;
        }
        for _ in 0..iterations {
            let response = black_box(pooled.call("validate", &payload, &context)).expect("answer");
            assert!(
                response.windows(MUTATED.len()).any(|w| w == MUTATED),
                "the benchmark pod is injected"
            );
        }
        println!("{iterations} wasm calls at {count} SidecarSets");
        return;
    }
    if wire_mode {
        for _ in 0..iterations {
            let response = black_box(wire::validate(
                &payload,
                &mut InMemory(list.clone()),
                NOW,
                &mut || 0.5,
            ))
            .expect("a response");
            assert!(
                response.windows(MUTATED.len()).any(|w| w == MUTATED),
                "the benchmark pod is injected"
            );
        }
        println!("{iterations} wire calls at {count} SidecarSets");
        return;
    }
    for _ in 0..iterations {
        let (request, mut cluster) = (request.clone(), InMemory(list.clone()));
        let verdict = black_box(evaluate(request, &settings, &mut cluster, NOW, &mut || 0.5));
        assert!(
            matches!(verdict.outcome, Outcome::Mutate(_)),
            "the benchmark pod is injected"
        );
    }
    println!("{iterations} evaluations at {count} SidecarSets");
}
