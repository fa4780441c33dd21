//! Criterion benchmarks of pod injection: (a) native `evaluate`, and the module's whole call
//! natively (`wire::validate`, bytes to bytes); (b) the same request through policy.wasm in the
//! bundled host, instantiation included (as policy-server pays it per request).
//! A realistic ~5 KB pod with 1, 10 and 100 SidecarSets, 10% of them matching (at least one).
//! Run: `make policy.wasm && cargo bench --profile dev --workspace --bench policy`.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use sidecarset_host::serve::SharedContext;
use sidecarset_host::{ClusterContext, NoHostCallbacks, evaluate_admission};
use sidecarset_policy::evaluate::{evaluate, wire};
use sidecarset_policy::settings::Settings;
use std::hint::black_box;

mod fixtures;

use fixtures::{InMemory, NOW, list_json, pod_request, pooled_engine, sidecarsets};

fn benches(c: &mut Criterion) {
    let request = pod_request();
    assert!(
        request["object"].to_string().len() > 4_000,
        "the pod is realistic, ~5 KB"
    );
    let settings = Settings::default();
    let engine = sidecarset_tests::policy_engine();
    let pooled = pooled_engine();
    // The fixed cost in every wasm row: a fresh pooled instance, `wapc_init`, a trivial call.
    // First, while the pool's slots are as the 1 and 10 SidecarSet rows find them: after a call
    // at 100 SidecarSets, a slot keeps more pages resident and every reset walks them.
    c.bench_function("inject/wasm-instance", |b| {
        b.iter(|| black_box(pooled.call("protocol_version", b"", &NoHostCallbacks)))
    });
    for count in [1, 10, 100] {
        let list = sidecarsets(count);
        let mut group = c.benchmark_group(format!("inject/{count}-sidecarsets"));
        let list_json = list_json(&list);
        // The inputs are copied outside the measurement: `evaluate` owns them, as the entry does.
        group.bench_function("native", |b| {
            b.iter_batched(
                || (request.clone(), InMemory(list_json.clone())),
                |(request, mut cluster)| {
                    black_box(evaluate(request, &settings, &mut cluster, NOW, &mut || 0.5))
                },
                BatchSize::SmallInput,
            )
        });
        let context = ClusterContext::from_objects(list.clone()).expect("context");
        let verdict = evaluate_admission(engine, &request, &json!({}), &context);
        assert!(
            verdict.allowed && verdict.patch.is_some(),
            "the benchmark pod is injected"
        );
        group.bench_function("wasm", |b| {
            b.iter(|| black_box(evaluate_admission(engine, &request, &json!({}), &context)))
        });
        // `serve` as deployed: pooled instances, and callback answers kept per context snapshot
        // (the SidecarSetList is serialised once per cache change, not once per request).
        let served =
            SharedContext::fixed(ClusterContext::from_objects(list.clone()).expect("context"));
        group.bench_function("wasm-serve", |b| {
            b.iter(|| black_box(evaluate_admission(&pooled, &request, &json!({}), &served)))
        });
        // The guest's own work, bytes to bytes: natively, then in a fresh pooled instance. The
        // difference is what the sandbox costs; the rows above add the host's JSON on both sides.
        let payload =
            serde_json::to_vec(&json!({"request": &request, "settings": {}})).expect("payload");
        group.bench_function("native-wire", |b| {
            b.iter_batched(
                || InMemory(list_json.clone()),
                |mut cluster| black_box(wire::validate(&payload, &mut cluster, NOW, &mut || 0.5)),
                BatchSize::SmallInput,
            )
        });
        group.bench_function("wasm-call", |b| {
            b.iter(|| black_box(pooled.call("validate", &payload, &served)))
        });
        group.finish();
    }
}

criterion_group!(policy, benches);
criterion_main!(policy);
