//! Planning time: one SidecarSet over 10,000 pods (target < 20 ms), and the pure part of a full
//! reconcile pass, selection from the pod cache plus planning, for 100 SidecarSets over 10,000
//! cached pods (target < 500 ms). Run:
//! `cargo bench --profile dev --workspace --bench plan`.

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::runtime::reflector::{self, Lookup, Store};
use kube::runtime::watcher;
use serde_json::{Value, json};
use sidecarset_controller::cached_pod::CachedPod;
use sidecarset_controller::plan::{Snapshot, plan};
use sidecarset_controller::selection::{InjectedIndex, selected_pods};
use sidecarset_policy::api::SidecarSet;
use std::hint::black_box;

const NOW: &str = "2025-01-02T03:04:05Z";

fn sidecarset(name: &str, strategy: Value) -> SidecarSet {
    let value = json!({
        "metadata": {
            "name": name, "generation": 3, "resourceVersion": "42",
            "annotations": {
                "kruise.io/sidecarset-hash": "new-hash",
                "kruise.io/sidecarset-hash-without-image": "without-image",
            },
        },
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "containers": [
                {"name": "log-agent", "image": "log-agent:v2"},
                {"name": "envoy", "image": "envoy:v2",
                 "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"}},
            ],
            "updateStrategy": strategy,
            "patchPodMetadata": [{"annotations": {"mesh/injected": "true"}, "patchPolicy": "Retain"}],
        },
        "status": {"matchedPods": 0, "updatedPods": 0, "readyPods": 0, "latestRevision": format!("{name}-rev")},
    });
    SidecarSet::deserialize_value(&value).expect("valid SidecarSet")
}

fn image_id(image: &str) -> String {
    format!("docker-pullable://{image}@sha256:{:0>64}", image.len())
}

/// Pod `index` of SidecarSet `name`; the first `updated` of every 10 run the new images.
fn pod(name: &str, index: usize, updated: bool) -> Pod {
    let (log_agent, envoy, hash) = if updated {
        ("log-agent:v2", "envoy:v2", "new-hash")
    } else {
        ("log-agent:v1", "envoy:v1", "old-hash")
    };
    let hash_entry = |hash: &str| {
        format!(
            r#"{{"{name}":{{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"{hash}","sidecarSetName":"{name}","sidecarList":["envoy","log-agent"]}}}}"#
        )
    };
    let containers = [
        ("app", "app:1"),
        ("log-agent", log_agent),
        ("envoy-1", envoy),
        ("envoy-2", "empty:1"),
    ];
    let value = json!({
        "metadata": {
            "name": format!("{name}-pod-{index}"),
            "namespace": format!("ns-{}", index % 20),
            "uid": format!("uid-{name}-{index}"),
            "resourceVersion": format!("{}", 1000 + index),
            "creationTimestamp": format!("2025-01-01T{:02}:{:02}:{:02}Z", index / 3600 % 24, index / 60 % 60, index % 60),
            "labels": {"app": name, "zone": format!("zone-{}", index % 3), "rank": format!("r-{}", index % 50)},
            "annotations": {
                "kruise.io/sidecarset-injected-list": name,
                "kruise.io/sidecarset-hash": hash_entry(hash),
                "kruise.io/sidecarset-hash-without-image": hash_entry("without-image"),
                "kruise.io/sidecarset-working-hotupgrade-container": r#"{"envoy":"envoy-1"}"#,
                "version.sidecarset.kruise.io/envoy-1": "1",
                "versionalt.sidecarset.kruise.io/envoy-1": "0",
                "version.sidecarset.kruise.io/envoy-2": "0",
                "versionalt.sidecarset.kruise.io/envoy-2": "1",
            },
        },
        "spec": {
            "nodeName": format!("node-{}", index % 50),
            "containers": containers.iter().map(|(n, i)| json!({"name": n, "image": i})).collect::<Vec<_>>(),
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True",
                            "lastTransitionTime": format!("2025-01-01T00:{:02}:00Z", index % 60)}],
            "containerStatuses": containers.iter().map(|(n, i)| json!({
                "name": n, "image": i, "imageID": image_id(i), "ready": true,
                "restartCount": index % 4,
            })).collect::<Vec<_>>(),
        },
    });
    serde_json::from_value(value).expect("valid pod")
}

/// `count` pods of SidecarSet `name`, 30% of them already updated, as the pod watch caches them.
fn pods(name: &str, count: usize) -> Vec<CachedPod> {
    (0..count)
        .map(|i| CachedPod::from(pod(name, i, i % 10 < 3)))
        .collect()
}

fn bench_plan(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan");
    group.sample_size(20);

    let rolling = json!({"maxUnavailable": "10%", "partition": "20%"});
    let sorted = json!({
        "maxUnavailable": "10%",
        "priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]},
        "scatterStrategy": [{"key": "zone", "value": "*"}],
    });
    let pods_10k = pods("mesh", 10_000);
    for (label, strategy) in [
        ("1x10000/rolling", rolling.clone()),
        ("1x10000/priority+scatter", sorted),
    ] {
        let sidecarset = sidecarset("mesh", strategy);
        // The plan is freed after its writes were sent, not while planning: its drop is untimed.
        group.bench_function(label, |b| {
            b.iter_with_large_drop(|| {
                plan(black_box(&Snapshot {
                    sidecarset: &sidecarset,
                    pods: &pods_10k,
                    now: NOW,
                }))
            })
        });
        group.bench_function(format!("{label}/with-drop"), |b| {
            b.iter(|| {
                plan(black_box(&Snapshot {
                    sidecarset: &sidecarset,
                    pods: &pods_10k,
                    now: NOW,
                }))
            })
        });
    }

    let fleet: Vec<(SidecarSet, Vec<CachedPod>)> = (0..100)
        .map(|i| {
            let name = format!("set-{i}");
            (sidecarset(&name, rolling.clone()), pods(&name, 100))
        })
        .collect();
    group.bench_function("100x100", |b| {
        b.iter(|| {
            for (sidecarset, pods) in &fleet {
                black_box(plan(&Snapshot {
                    sidecarset,
                    pods,
                    now: NOW,
                }));
            }
        })
    });

    // One cache holding every SidecarSet's pods, as the controller's reflector does.
    let pod_cache = cache(fleet.iter().flat_map(|(_, pods)| pods.iter().cloned()));
    let namespace_cache = cache((0..20).map(|i| {
        let value = json!({"metadata": {"name": format!("ns-{i}"), "labels": {"team": "a"}}});
        serde_json::from_value::<Namespace>(value).expect("valid namespace")
    }));
    group.bench_function("pass/100x10000", |b| {
        b.iter(|| {
            // A pass after the pod cache changed: the index is rebuilt once, as the controller does.
            let index = InjectedIndex::build(&pod_cache);
            for (sidecarset, _) in &fleet {
                let pods = selected_pods(sidecarset, &pod_cache, &index, &namespace_cache)
                    .expect("valid selectors");
                black_box(plan(&Snapshot {
                    sidecarset,
                    pods: &pods,
                    now: NOW,
                }));
            }
        })
    });
    group.finish();
}

/// A reflector store filled with `objects`.
fn cache<K>(objects: impl IntoIterator<Item = K>) -> Store<K>
where
    K: Lookup<DynamicType = ()> + Clone + 'static,
{
    let (store, mut writer) = reflector::store();
    for object in objects {
        writer.apply_watcher_event(&watcher::Event::Apply(object));
    }
    store
}

criterion_group!(benches, bench_plan);
criterion_main!(benches);
