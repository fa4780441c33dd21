//! Rolling in-place upgrades with the real controller binary against the stand-in.

mod common;

use std::collections::BTreeMap;

use common::*;
use serde_json::json;

const SS: &str = "envoy";

/// 20 injected pods, v1 → v2 with maxUnavailable 2: every pod ends on v2 and no stored state
/// ever has more than 2 pods unavailable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_unavailable_is_never_exceeded() {
    let env = Env::start().await;
    let ss = env
        .create_sidecarset(cold_sidecarset(SS, "envoy:v1", json!({ "maxUnavailable": 2 })))
        .await;
    env.create_injected_pods(&ss, "web", 20, |_| BTreeMap::new()).await;
    env.wait_pods("20 pods available", |p| p.len() == 20 && p.iter().all(available))
        .await;

    let controller = env.controller("a");
    controller.wait_ready().await;
    env.wait_sidecarset(SS, "status matched 20", |o| {
        o["status"]["matchedPods"] == 20 && o["status"]["updatedPods"] == 20
    })
    .await;

    let watcher = BudgetWatcher::start(&env);
    let v2 = env.update_sidecarset(SS, set_image("envoy:v2")).await;
    let hash = v2
        .annotation(sidecarset_policy::annotations::SIDECARSET_HASH)
        .unwrap_or("")
        .to_string();
    let pods = env
        .wait_pods("all pods on v2 and available", |p| {
            count_image(p, "sidecar", "envoy:v2") == 20 && p.iter().all(available)
        })
        .await;
    assert!(pods.iter().all(|p| pod_hash(p, SS) == hash), "hash annotations refreshed");
    let (max, which) = watcher.max();
    assert!(max <= 2, "{max} pods unavailable at once: {which}");
    assert!(max >= 1, "the watcher saw the rollout");
    env.wait_sidecarset(SS, "status all updated and ready", |o| {
        let s = &o["status"];
        s["matchedPods"] == 20 && s["updatedPods"] == 20 && s["readyPods"] == 20 && s["updatedReadyPods"] == 20
            && s["observedGeneration"] == o["metadata"]["generation"]
    })
    .await;
    assert_eq!(controller.metric("sidecarset_controller_pods_upgraded_total").await, Some(20.0));
    assert_eq!(
        controller.metric("sidecarset_updated_ready_pods{sidecarset=\"envoy\"}").await,
        Some(20.0)
    );
}
