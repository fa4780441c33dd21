//! Crashes, API faults and two replicas, with the real controller binary against the stand-in.

mod common;

use std::collections::BTreeMap;

use apiserver_standin::Verb;
use common::*;
use serde_json::{Value, json};

const SS: &str = "envoy";

async fn twenty_pods(env: &Env, max_unavailable: u32) {
    let ss = env
        .create_sidecarset(cold_sidecarset(
            SS,
            "envoy:v1",
            json!({ "maxUnavailable": max_unavailable }),
        ))
        .await;
    env.create_injected_pods(&ss, "web", 20, |_| BTreeMap::new())
        .await;
    env.wait_pods("20 pods available", |p| {
        p.len() == 20 && p.iter().all(available)
    })
    .await;
}

fn restarts(pod: &Value) -> i64 {
    container_status(pod, "sidecar")["restartCount"]
        .as_i64()
        .unwrap_or(-1)
}

/// SIGKILL mid-rollout, restart: the rollout completes, the budget is never exceeded and every
/// pod was updated exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_rollout_and_restarted() {
    let env = Env::start().await;
    twenty_pods(&env, 2).await;
    let first = env.controller("a");
    first.wait_ready().await;
    env.wait_status(SS, "initial status", |s| s["matchedPods"] == 20)
        .await;
    env.slow_restarts(120);
    let watcher = BudgetWatcher::start(&env);
    env.update_sidecarset(SS, set_image("envoy:v2")).await;
    env.wait_pods("4 pods on v2", |p| {
        count_image(p, "sidecar", "envoy:v2") >= 4
    })
    .await;
    first.kill().await;
    let moved = count_image(&env.all_pods(), "sidecar", "envoy:v2");
    assert!(moved < 20, "killed before the end ({moved})");

    let second = env.controller("a");
    let pods = env
        .wait_pods("all on v2", |p| {
            count_image(p, "sidecar", "envoy:v2") == 20 && p.iter().all(available)
        })
        .await;
    let (max, which) = watcher.max();
    assert!(
        max <= 2,
        "{max} unavailable at once: {which}\n{}",
        second.logs()
    );
    assert!(
        pods.iter().all(|p| restarts(p) == 1),
        "each sidecar restarted once"
    );
}

/// 409s and 500s on pod and status writes: nothing is lost, nothing is applied twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicts_and_server_errors_are_survived() {
    let env = Env::start().await;
    twenty_pods(&env, 3).await;
    let controller = env.controller("a");
    controller.wait_ready().await;
    env.wait_status(SS, "initial status", |s| s["matchedPods"] == 20)
        .await;
    let faults = env.standin.faults();
    faults.fail_next(Some(Verb::Patch), Some("pods"), 3, 409);
    faults.fail_next(Some(Verb::Patch), Some("pods"), 3, 500);
    faults.fail_next(Some(Verb::Patch), Some("sidecarsets/status"), 2, 500);
    let watcher = BudgetWatcher::start(&env);
    env.update_sidecarset(SS, set_image("envoy:v2")).await;
    let pods = env
        .wait_pods("all on v2", |p| {
            count_image(p, "sidecar", "envoy:v2") == 20 && p.iter().all(available)
        })
        .await;
    assert_eq!(faults.pending(), 0, "every armed fault was hit");
    assert!(
        pods.iter().all(|p| restarts(p) == 1),
        "each sidecar restarted once"
    );
    env.wait_status(SS, "status caught up", |s| s["updatedReadyPods"] == 20)
        .await;
    assert_eq!(
        controller
            .metric("sidecarset_controller_pods_upgraded_total")
            .await,
        Some(20.0)
    );
    assert!(
        controller
            .metric("sidecarset_controller_reconcile_errors_total")
            .await
            .unwrap_or(0.0)
            >= 1.0
    );
    let (max, which) = watcher.max();
    assert!(max <= 3, "{max} unavailable at once: {which}");
}

fn lease_holder(env: &Env) -> String {
    let def = apiserver_standin::resources::RESOURCES
        .iter()
        .find(|r| r.plural == "leases")
        .expect("leases");
    env.standin
        .store()
        .get(def, NS, "sidecarset-controller")
        .map(|l| {
            l["spec"]["holderIdentity"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default()
}

async fn leader_of<'a>(a: &'a Controller, b: &'a Controller) -> (&'a Controller, &'a Controller) {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let la = a.metric("sidecarset_controller_leader").await == Some(1.0);
        let lb = b.metric("sidecarset_controller_leader").await == Some(1.0);
        match (la, lb) {
            (true, false) => return (a, b),
            (false, true) => return (b, a),
            (true, true) => panic!("two leaders"),
            _ => {}
        }
        assert!(tokio::time::Instant::now() < deadline, "no leader");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Two replicas: only the Lease holder reconciles; on SIGTERM it hands over and the other finishes the next rollout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_only_the_leader_acts() {
    let env = Env::start().await;
    twenty_pods(&env, 4).await;
    let a = env.controller("a");
    let b = env.controller("b");
    a.wait_ready().await;
    b.wait_ready().await;
    let (leader, standby) = leader_of(&a, &b).await;
    assert_eq!(lease_holder(&env), leader.identity);
    env.update_sidecarset(SS, set_image("envoy:v2")).await;
    env.wait_pods("all on v2", |p| {
        count_image(p, "sidecar", "envoy:v2") == 20 && p.iter().all(available)
    })
    .await;
    assert_eq!(
        leader
            .metric("sidecarset_controller_pods_upgraded_total")
            .await,
        Some(20.0)
    );
    assert_eq!(
        standby
            .metric("sidecarset_controller_pods_upgraded_total")
            .await,
        Some(0.0)
    );
    assert_eq!(
        standby
            .metric("sidecarset_controller_reconciles_total")
            .await,
        Some(0.0)
    );
    let standby_identity = standby.identity.clone();

    let (leader, standby) = if leader.identity == "a" {
        (a, b)
    } else {
        (b, a)
    };
    let status = leader.terminate().await;
    assert!(status.success(), "clean exit on SIGTERM: {status:?}");
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while standby.metric("sidecarset_controller_leader").await != Some(1.0) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "standby never took over"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(lease_holder(&env), standby_identity);
    env.update_sidecarset(SS, set_image("envoy:v3")).await;
    env.wait_pods("all on v3", |p| {
        count_image(p, "sidecar", "envoy:v3") == 20 && p.iter().all(available)
    })
    .await;
    assert_eq!(
        standby
            .metric("sidecarset_controller_pods_upgraded_total")
            .await,
        Some(20.0)
    );
}
