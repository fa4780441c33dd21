//! Rolling in-place upgrades with the real controller binary against the stand-in.

mod common;

use std::collections::BTreeMap;

use apiserver_standin::fault::Verb;
use common::*;
use serde_json::json;

const SS: &str = "envoy";

/// 20 injected pods, v1 → v2 with maxUnavailable 2: every pod ends on v2 and no stored state
/// ever has more than 2 pods unavailable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_unavailable_is_never_exceeded() {
    let env = Env::start().await;
    let ss = env
        .create_sidecarset(cold_sidecarset(
            SS,
            "envoy:v1",
            json!({ "maxUnavailable": 2 }),
        ))
        .await;
    env.create_injected_pods(&ss, "web", 20, |_| BTreeMap::new())
        .await;
    env.wait_pods("20 pods available", |p| {
        p.len() == 20 && p.iter().all(available)
    })
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
    assert!(
        pods.iter().all(|p| pod_hash(p, SS) == hash),
        "hash annotations refreshed"
    );
    let (max, which) = watcher.max();
    assert!(
        max <= 2,
        "{max} pods unavailable at once: {which}\n{}",
        controller.logs()
    );
    assert!(max >= 1, "the watcher saw the rollout");
    env.wait_sidecarset(SS, "status all updated and ready", |o| {
        let s = &o["status"];
        s["matchedPods"] == 20
            && s["updatedPods"] == 20
            && s["readyPods"] == 20
            && s["updatedReadyPods"] == 20
            && s["observedGeneration"] == o["metadata"]["generation"]
    })
    .await;
    assert_eq!(
        controller
            .metric("sidecarset_controller_pods_upgraded_total")
            .await,
        Some(20.0)
    );
    assert_eq!(
        controller
            .metric("sidecarset_updated_ready_pods{sidecarset=\"envoy\"}")
            .await,
        Some(20.0)
    );
}

async fn started(
    env: &Env,
    strategy: serde_json::Value,
    label: impl Fn(usize) -> BTreeMap<String, String>,
) -> Controller {
    let ss = env
        .create_sidecarset(cold_sidecarset(SS, "envoy:v1", strategy))
        .await;
    env.create_injected_pods(&ss, "web", 20, label).await;
    env.wait_pods("20 pods available", |p| {
        p.len() == 20 && p.iter().all(available)
    })
    .await;
    let controller = env.controller("a");
    controller.wait_ready().await;
    env.wait_status(SS, "20 matched and updated", |s| {
        s["matchedPods"] == 20 && s["updatedPods"] == 20
    })
    .await;
    controller
}

/// partition 15: exactly 5 pods move, then none until the partition changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_holds_pods_back_until_it_changes() {
    let env = Env::start().await;
    let controller = started(
        &env,
        json!({ "maxUnavailable": 20, "partition": 15 }),
        |_| BTreeMap::new(),
    )
    .await;
    env.update_sidecarset(SS, set_image("envoy:v2")).await;
    env.wait_status(SS, "5 updated and ready", |s| {
        s["updatedPods"] == 5 && s["updatedReadyPods"] == 5
    })
    .await;
    env.poke(&controller, "web-3").await;
    env.poke(&controller, "web-17").await;
    assert_eq!(
        count_image(&env.all_pods(), "sidecar", "envoy:v2"),
        5,
        "partition 15 keeps 15 back"
    );

    env.update_sidecarset(SS, |v| v["spec"]["updateStrategy"]["partition"] = json!(10))
        .await;
    env.wait_status(SS, "10 updated and ready", |s| {
        s["updatedPods"] == 10 && s["updatedReadyPods"] == 10
    })
    .await;
    env.poke(&controller, "web-3").await;
    assert_eq!(count_image(&env.all_pods(), "sidecar", "envoy:v2"), 10);

    env.update_sidecarset(SS, |v| v["spec"]["updateStrategy"]["partition"] = json!(0))
        .await;
    env.wait_pods("all on v2", |p| {
        count_image(p, "sidecar", "envoy:v2") == 20 && p.iter().all(available)
    })
    .await;
}

/// updateStrategy.selector limits the rollout to the canary pods; removing it finishes the job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canary_selector_upgrades_only_selected_pods() {
    let env = Env::start().await;
    let canary = |i: usize| BTreeMap::from([("canary".to_string(), (i < 3).to_string())]);
    let controller = started(&env, json!({ "maxUnavailable": 5 }), canary).await;
    env.update_sidecarset(SS, |v| {
        v["spec"]["containers"][0]["image"] = json!("envoy:v2");
        v["spec"]["updateStrategy"]["selector"] = json!({ "matchLabels": { "canary": "true" } });
    })
    .await;
    env.wait_status(SS, "3 canaries updated", |s| {
        s["updatedPods"] == 3 && s["updatedReadyPods"] == 3
    })
    .await;
    env.poke(&controller, "web-10").await;
    let pods = env.all_pods();
    let upgraded: Vec<&str> = pods
        .iter()
        .filter(|p| image(p, "sidecar") == "envoy:v2")
        .map(name)
        .collect();
    assert_eq!(upgraded.len(), 3, "only canaries: {upgraded:?}");
    assert!(
        pods.iter()
            .filter(|p| image(p, "sidecar") == "envoy:v2")
            .all(|p| p["metadata"]["labels"]["canary"] == "true")
    );

    env.update_sidecarset(SS, |v| {
        v["spec"]["updateStrategy"]["selector"] = serde_json::Value::Null
    })
    .await;
    env.wait_pods("all on v2", |p| {
        count_image(p, "sidecar", "envoy:v2") == 20 && p.iter().all(available)
    })
    .await;
}

/// paused stops the rollout where it is (observedGeneration says the controller saw it); resuming finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_mid_rollout_then_resumed() {
    let env = Env::start().await;
    let controller = started(&env, json!({ "maxUnavailable": 1 }), |_| BTreeMap::new()).await;
    env.slow_restarts(150);
    let watcher = BudgetWatcher::start(&env);
    env.update_sidecarset(SS, set_image("envoy:v2")).await;
    env.wait_pods("3 pods on v2", |p| {
        count_image(p, "sidecar", "envoy:v2") >= 3
    })
    .await;
    env.update_sidecarset(SS, |v| v["spec"]["updateStrategy"]["paused"] = json!(true))
        .await;
    env.wait_status(SS, "pause observed", |_| true).await;
    let frozen = count_image(&env.all_pods(), "sidecar", "envoy:v2");
    assert!(frozen < 20, "paused before the end");
    env.wait_pods("in-flight pods settle", |p| p.iter().all(available))
        .await;
    env.poke(&controller, "web-19").await;
    env.poke(&controller, "web-18").await;
    assert_eq!(
        count_image(&env.all_pods(), "sidecar", "envoy:v2"),
        frozen,
        "nothing moves while paused"
    );

    env.update_sidecarset(SS, |v| v["spec"]["updateStrategy"]["paused"] = json!(false))
        .await;
    env.wait_pods("all on v2", |p| {
        count_image(p, "sidecar", "envoy:v2") == 20 && p.iter().all(available)
    })
    .await;
    let (max, which) = watcher.max();
    assert!(max <= 1, "{max} unavailable at once: {which}");
}

/// Every upgraded pod costs exactly one pod patch (images and annotations together) and one
/// condition patch; no update (PUT) of a pod, and a clean rollout publishes no events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_pod_patch_per_upgraded_pod() {
    let env = Env::start().await;
    let controller = started(&env, json!({ "maxUnavailable": 5 }), |_| BTreeMap::new()).await;
    let faults = env.standin.faults();
    let before = faults.requests().len();
    env.update_sidecarset(SS, set_image("envoy:v2")).await;
    env.wait_pods("all on v2", |p| {
        count_image(p, "sidecar", "envoy:v2") == 20 && p.iter().all(available)
    })
    .await;
    env.wait_status(SS, "all updated and ready", |s| {
        s["updatedPods"] == 20 && s["updatedReadyPods"] == 20
    })
    .await;
    let requests = faults.requests().split_off(before);
    let count = |verb: Verb, sub: Option<&str>, pod: &str| {
        requests
            .iter()
            .filter(|r| {
                r.verb == verb
                    && r.resource == "pods"
                    && r.subresource.as_deref() == sub
                    && r.name.as_deref() == Some(pod)
            })
            .count()
    };
    for i in 0..20 {
        let pod = format!("web-{i}");
        assert_eq!(count(Verb::Patch, None, &pod), 1, "{pod}: one pod patch");
        assert_eq!(
            count(Verb::Patch, Some("status"), &pod),
            1,
            "{pod}: one condition patch"
        );
        assert_eq!(count(Verb::Update, None, &pod), 0, "{pod}: never a PUT");
    }
    let event_writes = requests.iter().filter(|r| r.resource == "events").count();
    assert_eq!(event_writes, 0, "no events in a clean rollout");
    assert_eq!(
        controller
            .metric("sidecarset_controller_pods_upgraded_total")
            .await,
        Some(20.0)
    );
}
