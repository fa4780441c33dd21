//! The kubelet simulator: startup, in-place image change as a restart, failure switches.

mod common;

use std::sync::Arc;
use std::time::Duration;

use apiserver_standin::store::{EventType, StoredEvent};
use apiserver_standin::{KubeletConfig, StandIn, image_id};
use common::*;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::sync::broadcast;

async fn kubelet_standin() -> StandIn {
    start_with_kubelet(KubeletConfig::fast()).await
}

fn container<'a>(pod: &'a Value, name: &str) -> &'a Value {
    container_status(pod, "containerStatuses", name)
}

fn ready_condition(pod: &Value) -> Value {
    pod_condition(pod, "Ready")
}

fn is_ready(pod: Option<&Value>) -> bool {
    pod.is_some_and(|p| p["status"]["phase"] == "Running" && ready_condition(p)["status"] == "True")
}

/// Collects every stored state of one pod until `done` holds: its current state, then the
/// changes from `rx`, a subscription taken before the change under test was made.
async fn states_until(
    s: &StandIn,
    rx: broadcast::Receiver<Arc<StoredEvent>>,
    name: &str,
    done: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    if let Ok(p) = s
        .store()
        .get(apiserver_standin::resources::pods(), "default", name)
    {
        if done(&p) {
            return vec![p];
        }
        return pod_states_until(rx, name, vec![p], done).await;
    }
    pod_states_until(rx, name, Vec::new(), done).await
}

#[tokio::test]
async fn pods_start_and_an_image_change_restarts_only_that_container() {
    let s = kubelet_standin().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    pods.create(
        &PostParams::default(),
        &pod("p", json!({}), &[("app", "nginx:1"), ("side", "envoy:1")]),
    )
    .await
    .expect("create");
    let running = s
        .wait_for("pods", "default", "p", TIMEOUT, is_ready)
        .await
        .expect("ready");
    let ready = ready_condition(&running);
    assert!(ready["lastTransitionTime"].is_string());
    let side = container(&running, "side");
    assert_eq!(side["image"], "envoy:1");
    assert_eq!(side["imageID"], image_id("envoy:1"));
    assert_eq!(side["restartCount"], 0);
    assert_eq!(
        (side["ready"].clone(), side["started"].clone()),
        (json!(true), json!(true))
    );
    assert!(side["state"]["running"]["startedAt"].is_string());
    let app_before = container(&running, "app").clone();

    let smp = json!({"spec": {"containers": [{"name": "side", "image": "envoy:2"}]}});
    let rx = s.store().subscribe();
    pods.patch("p", &PatchParams::default(), &Patch::Strategic(&smp))
        .await
        .expect("image change");
    let states = states_until(&s, rx, "p", |p| {
        container(p, "side")["image"] == "envoy:2"
            && container(p, "side")["ready"] == true
            && is_ready(Some(p))
    })
    .await;
    // Somewhere in between: the sidecar not ready and the pod not Ready.
    assert!(
        states
            .iter()
            .any(|p| container(p, "side")["ready"] == false
                && ready_condition(p)["status"] == "False"),
        "no not-ready state seen: {states:#?}"
    );
    let last = states.last().expect("a state");
    let side = container(last, "side");
    assert_eq!(side["imageID"], image_id("envoy:2"));
    assert_ne!(side["imageID"], image_id("envoy:1"));
    assert_eq!(side["restartCount"], 1);
    assert_eq!(
        container(last, "app"),
        &app_before,
        "other containers untouched"
    );
    // Every intermediate state keeps the app container as it was.
    assert!(states.iter().all(|p| container(p, "app") == &app_before));
}

#[tokio::test]
async fn failure_switches_never_ready_stopped_node_and_deletion() {
    let s = kubelet_standin().await;
    let kubelet = s.kubelet().expect("kubelet");
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let on_node = |name: &str, node: &str| {
        let mut p = pod(name, json!({}), &[("app", "nginx:1")]);
        if let Some(spec) = p.spec.as_mut() {
            spec.node_name = Some(node.to_string());
        }
        p
    };
    let pp = PostParams::default();
    pods.create(&pp, &on_node("a", "node-a")).await.expect("a");
    pods.create(&pp, &on_node("b", "node-b")).await.expect("b");
    s.wait_for("pods", "default", "a", TIMEOUT, is_ready)
        .await
        .expect("a ready");
    s.wait_for("pods", "default", "b", TIMEOUT, is_ready)
        .await
        .expect("b ready");

    // An image that never becomes ready: the container runs it but stays unready.
    kubelet.set_never_ready("nginx:broken", true);
    let bad = json!({"spec": {"containers": [{"name": "app", "image": "nginx:broken"}]}});
    pods.patch("a", &PatchParams::default(), &Patch::Strategic(&bad))
        .await
        .expect("patch");
    let a = s
        .wait_for("pods", "default", "a", TIMEOUT, |p| {
            p.is_some_and(|p| {
                container(p, "app")["image"] == "nginx:broken"
                    && container(p, "app")["started"] == true
            })
        })
        .await
        .expect("restarted on the broken image");
    assert_eq!(container(&a, "app")["ready"], false);
    assert_eq!(ready_condition(&a)["status"], "False");
    assert_eq!(ready_condition(&a)["reason"], "ContainersNotReady");

    // A stopped node: its pods keep reporting the old state while others move on.
    kubelet.stop_node("node-b");
    let next = json!({"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}});
    pods.patch("b", &PatchParams::default(), &Patch::Strategic(&next))
        .await
        .expect("patch b");
    let good = json!({"spec": {"containers": [{"name": "app", "image": "nginx:3"}]}});
    pods.patch("a", &PatchParams::default(), &Patch::Strategic(&good))
        .await
        .expect("patch a");
    s.wait_for("pods", "default", "a", TIMEOUT, |p| {
        p.is_some_and(|p| container(p, "app")["image"] == "nginx:3" && is_ready(Some(p)))
    })
    .await
    .expect("a moved on");
    let b = s
        .store()
        .get(apiserver_standin::resources::pods(), "default", "b")
        .expect("b");
    assert_eq!(container(&b, "app")["image"], "nginx:1");
    assert_eq!(container(&b, "app")["ready"], true);
    kubelet.resume_node("node-b");
    s.wait_for("pods", "default", "b", TIMEOUT, |p| {
        p.is_some_and(|p| container(p, "app")["image"] == "nginx:2" && is_ready(Some(p)))
    })
    .await
    .expect("b caught up");

    // Graceful deletion of a scheduled pod is confirmed by the kubelet.
    pods.delete("b", &DeleteParams::default())
        .await
        .expect("delete");
    s.wait_for("pods", "default", "b", TIMEOUT, |p| p.is_none())
        .await
        .expect("b gone");

    // Deleting a pod in the middle of a restart: a restart that cannot finish on its own
    // (an hour away) guarantees the pod is deleted mid-restart.
    kubelet.set_config(KubeletConfig {
        restart_delay: Duration::from_secs(3600),
        ..KubeletConfig::fast()
    });
    pods.create(&pp, &on_node("c", "node-a")).await.expect("c");
    s.wait_for("pods", "default", "c", TIMEOUT, is_ready)
        .await
        .expect("c ready");
    let roll = json!({"spec": {"containers": [{"name": "app", "image": "nginx:4"}]}});
    pods.patch("a", &PatchParams::default(), &Patch::Strategic(&roll))
        .await
        .expect("patch");
    s.wait_for("pods", "default", "a", TIMEOUT, |p| {
        p.is_some_and(|p| container(p, "app")["state"]["waiting"].is_object())
    })
    .await
    .expect("a restarting");
    let mut rx = s.store().subscribe();
    kubelet
        .delete_pod("default", "a")
        .expect("delete mid-restart");
    // Restarts now finish at once: had the kubelet kept `a`, its restart would be due
    // before c's, which is the barrier below.
    kubelet.set_config(KubeletConfig::fast());
    let restart_c = json!({"spec": {"containers": [{"name": "app", "image": "nginx:5"}]}});
    pods.patch("c", &PatchParams::default(), &Patch::Strategic(&restart_c))
        .await
        .expect("patch c");
    let mut after_delete = Vec::new();
    tokio::time::timeout(TIMEOUT, async {
        loop {
            let ev = rx.recv().await.expect("store events");
            if ev.storage != "pods" {
                continue;
            }
            let name = ev.object["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .to_string();
            if name == "a" {
                after_delete.push((ev.kind, ev.object.clone()));
            }
            if name == "c"
                && container(&ev.object, "app")["image"] == "nginx:5"
                && is_ready(Some(&ev.object))
            {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("c never restarted; events of a: {after_delete:#?}"));
    assert_eq!(
        after_delete.len(),
        1,
        "the kubelet wrote or recreated a after deleting it: {after_delete:#?}"
    );
    let (kind, last) = &after_delete[0];
    assert_eq!(*kind, EventType::Deleted);
    assert!(
        container(last, "app")["state"]["waiting"].is_object(),
        "deleted while restarting: {last:#?}"
    );
    assert!(
        s.store()
            .get(apiserver_standin::resources::pods(), "default", "a")
            .is_err(),
        "a is gone"
    );
}

/// A controller's condition survives the kubelet's status syncs, as with the real kubelet.
#[tokio::test]
async fn conditions_the_kubelet_does_not_own_survive_its_syncs() {
    let s = kubelet_standin().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let names = ["p0", "p1", "p2"];
    for name in names {
        let mut on_node = pod_json(name, json!({}), &[("app", "nginx:1"), ("side", "envoy:1")]);
        on_node["spec"]["nodeName"] = json!("node-1");
        pods.create(
            &PostParams::default(),
            &serde_json::from_value(on_node).unwrap(),
        )
        .await
        .expect("create");
    }
    for name in names {
        s.wait_for("pods", "default", name, TIMEOUT, is_ready)
            .await
            .expect("ready");
    }
    let condition = json!({"type": "SidecarSetUpgradable", "status": "False",
                           "reason": "UpdateImmutableField", "message": "{\"s\":false}",
                           "lastTransitionTime": "2026-01-01T00:00:00Z"});
    for name in names {
        pods.patch_status(
            name,
            &PatchParams::default(),
            &Patch::Strategic(json!({"status": {"conditions": [condition]}})),
        )
        .await
        .expect("patch status");
    }
    // An image change makes the kubelet rewrite the status several times.
    pods.patch(
        "p0",
        &PatchParams::default(),
        &Patch::Json::<()>(
            serde_json::from_value(json!([
            {"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:2"}]))
            .unwrap(),
        ),
    )
    .await
    .expect("image change");
    s.wait_for("pods", "default", "p0", TIMEOUT, |p| {
        is_ready(p) && p.is_some_and(|p| container(p, "app")["image"] == "nginx:2")
    })
    .await
    .expect("restarted");
    for name in names {
        let pod = s
            .store()
            .get(apiserver_standin::resources::pods(), "default", name)
            .unwrap();
        let kept = pod["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "SidecarSetUpgradable"))
            .cloned();
        assert_eq!(kept.as_ref(), Some(&condition), "{name}: {}", pod["status"]);
    }
}
