//! Hot upgrades and not-upgradable changes, with the real controller binary against the stand-in.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use common::*;
use serde_json::{Value, json};
use sidecarset_policy::annotations::{WORKING_HOT_UPGRADE_CONTAINER, version_alt_key, version_key};

const SS: &str = "envoy";
const EMPTY: &str = "empty:1";

/// Every stored state of one pod, from now on.
fn record_states(env: &Env, pod: &str) -> (Arc<Mutex<Vec<Value>>>, tokio::task::JoinHandle<()>) {
    let states = Arc::new(Mutex::new(Vec::new()));
    let mut rx = env.standin.store().subscribe();
    let (sink, pod) = (states.clone(), pod.to_string());
    let task = tokio::spawn(async move {
        while let Ok(ev) = rx.recv().await {
            if ev.storage == "pods" && name(&ev.object) == pod {
                sink.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(ev.object.clone());
            }
        }
    });
    (states, task)
}

fn working(pod: &Value) -> String {
    annotation(pod, WORKING_HOT_UPGRADE_CONTAINER)
        .and_then(|w| serde_json::from_str::<BTreeMap<String, String>>(w).ok())
        .and_then(|m| m.get("sidecar").cloned())
        .unwrap_or_default()
}

/// (image of sidecar-1, image of sidecar-2, working twin, version 1, version 2, alt 1, alt 2).
fn hot_view(pod: &Value) -> [String; 7] {
    let a = |key: String| annotation(pod, &key).unwrap_or("").to_string();
    [
        image(pod, "sidecar-1").to_string(),
        image(pod, "sidecar-2").to_string(),
        working(pod),
        a(version_key("sidecar-1")),
        a(version_key("sidecar-2")),
        a(version_alt_key("sidecar-1")),
        a(version_alt_key("sidecar-2")),
    ]
}

fn s(v: &[&str; 7]) -> [String; 7] {
    v.map(String::from)
}

/// v1 → v2 → v3 hot upgrade: the idle twin gets the new image and becomes the working one,
/// then the old twin is reset to the empty image; version annotations at every step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hot_upgrade_cycle_v1_v2_v3() {
    let env = Env::start().await;
    let ss = env
        .create_sidecarset(json!({
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "SidecarSet",
            "metadata": { "name": SS },
            "spec": {
                "selector": { "matchLabels": { "app": "web" } },
                "updateStrategy": { "maxUnavailable": 3 },
                "containers": [{
                    "name": "sidecar",
                    "image": "envoy:v1",
                    "upgradeStrategy": { "upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": EMPTY }
                }]
            }
        }))
        .await;
    env.create_injected_pods(&ss, "hot", 3, |_| BTreeMap::new())
        .await;
    let pods = env
        .wait_pods("3 pods available", |p| {
            p.len() == 3 && p.iter().all(available)
        })
        .await;
    let injected = hot_view(&pods[0]);
    assert_eq!(
        injected,
        s(&["envoy:v1", EMPTY, "sidecar-1", "1", "0", "0", "1"]),
        "as injected"
    );

    let controller = env.controller("a");
    controller.wait_ready().await;
    env.wait_status(SS, "3 ready", |st| {
        st["readyPods"] == 3 && st["updatedPods"] == 3
    })
    .await;

    let (states, task) = record_states(&env, "hot-0");
    let v2 = env.update_sidecarset(SS, set_image("envoy:v2")).await;
    let rv2 = v2.metadata.resource_version.clone().unwrap_or_default();
    let pods = env
        .wait_pods("v2 working, old twin reset", |p| {
            p.iter().all(|p| {
                image(p, "sidecar-2") == "envoy:v2"
                    && image(p, "sidecar-1") == EMPTY
                    && available(p)
            })
        })
        .await;
    let after_v2 = s(&[EMPTY, "envoy:v2", "sidecar-2", "0", &rv2, &rv2, "0"]);
    assert!(
        pods.iter().all(|p| hot_view(p) == after_v2),
        "after v2: {:?}",
        hot_view(&pods[0])
    );
    let upgraded = s(&["envoy:v1", "envoy:v2", "sidecar-2", "1", &rv2, &rv2, "1"]);
    let seen: Vec<[String; 7]> = states
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .map(hot_view)
        .collect();
    assert!(
        seen.contains(&upgraded),
        "the upgrade step before the reset: {seen:?}"
    );
    env.wait_status(SS, "v2 ready", |st| st["updatedReadyPods"] == 3)
        .await;
    assert!(!env.wait_event("ResetContainerSucceed").await.is_empty());

    let v3 = env.update_sidecarset(SS, set_image("envoy:v3")).await;
    let rv3 = v3.metadata.resource_version.clone().unwrap_or_default();
    let pods = env
        .wait_pods("v3 working, old twin reset", |p| {
            p.iter().all(|p| {
                image(p, "sidecar-1") == "envoy:v3"
                    && image(p, "sidecar-2") == EMPTY
                    && available(p)
            })
        })
        .await;
    let after_v3 = s(&["envoy:v3", EMPTY, "sidecar-1", &rv3, "0", "0", &rv3]);
    assert!(
        pods.iter().all(|p| hot_view(p) == after_v3),
        "after v3: {:?}",
        hot_view(&pods[0])
    );
    let upgraded = s(&["envoy:v3", "envoy:v2", "sidecar-1", &rv3, &rv2, &rv2, &rv3]);
    let seen: Vec<[String; 7]> = states
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .map(hot_view)
        .collect();
    assert!(
        seen.contains(&upgraded),
        "the v3 upgrade step before the reset: {seen:?}"
    );
    env.wait_status(SS, "v3 ready", |st| {
        st["updatedReadyPods"] == 3 && st["readyPods"] == 3
    })
    .await;
    task.abort();
}

/// A change beyond images cannot be applied in place: pods keep running, get the condition,
/// the SidecarSet gets a NotUpgradablePods event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_image_change_marks_pods_not_upgradable() {
    let env = Env::start().await;
    let ss = env
        .create_sidecarset(cold_sidecarset(
            SS,
            "envoy:v1",
            json!({ "maxUnavailable": 5 }),
        ))
        .await;
    env.create_injected_pods(&ss, "web", 5, |_| BTreeMap::new())
        .await;
    env.wait_pods("5 pods available", |p| {
        p.len() == 5 && p.iter().all(available)
    })
    .await;
    let controller = env.controller("a");
    controller.wait_ready().await;
    env.wait_status(SS, "5 updated", |st| st["updatedPods"] == 5)
        .await;

    env.update_sidecarset(SS, |v| {
        v["spec"]["containers"][0]["image"] = json!("envoy:v2");
        v["spec"]["containers"][0]["env"] = json!([{ "name": "MODE", "value": "strict" }]);
    })
    .await;
    let pods = env
        .wait_pods("condition on every pod", |p| {
            p.iter()
                .all(|p| condition(p, "SidecarSetUpgradable")["status"] == "False")
        })
        .await;
    for pod in &pods {
        let c = condition(pod, "SidecarSetUpgradable");
        assert_eq!(c["reason"], "UpdateImmutableField");
        let message: Value =
            serde_json::from_str(c["message"].as_str().unwrap_or("")).unwrap_or(Value::Null);
        assert_eq!(message, json!({ SS: false }));
        assert_eq!(image(pod, "sidecar"), "envoy:v1", "not touched");
    }
    let events = env.wait_event("NotUpgradablePods").await;
    assert!(
        events.iter().any(|e| e["message"]
            .as_str()
            .unwrap_or("")
            .contains("5 not upgradable")),
        "{events:?}"
    );
    env.wait_status(SS, "nothing updated", |st| {
        st["matchedPods"] == 5 && st["updatedPods"] == 0
    })
    .await;
    env.poke(&controller, "web-0").await;
    assert_eq!(count_image(&env.all_pods(), "sidecar", "envoy:v1"), 5);
}
