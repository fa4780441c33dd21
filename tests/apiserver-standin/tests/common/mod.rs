//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::time::Duration;

use std::sync::Arc;

use apiserver_standin::store::StoredEvent;
use apiserver_standin::{KubeletConfig, Options, StandIn};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value, json};
use tokio::sync::broadcast;

pub const TIMEOUT: Duration = Duration::from_secs(10);

pub async fn start() -> StandIn {
    StandIn::start(Options::default())
        .await
        .expect("start stand-in")
}

pub async fn start_with(opts: Options) -> StandIn {
    StandIn::start(opts).await.expect("start stand-in")
}

pub fn pod_json(name: &str, labels: Value, containers: &[(&str, &str)]) -> Value {
    let cs: Vec<Value> = containers
        .iter()
        .map(|(n, i)| json!({ "name": n, "image": i }))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": { "name": name, "labels": labels },
        "spec": { "containers": cs }
    })
}

pub fn pod(name: &str, labels: Value, containers: &[(&str, &str)]) -> Pod {
    serde_json::from_value(pod_json(name, labels, containers)).expect("pod")
}

pub fn sidecarset_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.kruise.io", "v1alpha1", "SidecarSet"),
        "sidecarsets",
    )
}

pub fn sidecarset(name: &str, image: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": { "name": name },
        "spec": {
            "selector": { "matchLabels": { "app": "web" } },
            "containers": [{ "name": "sidecar", "image": image }]
        }
    }))
    .expect("sidecarset")
}

/// The API status of a kube error (panics on other errors).
pub fn status(err: kube::Error) -> kube::core::Status {
    match err {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// A stand-in running the kubelet simulator with `cfg`.
pub async fn start_with_kubelet(cfg: KubeletConfig) -> StandIn {
    start_with(Options {
        kubelet: Some(cfg),
        ..Options::default()
    })
    .await
}

/// The status of container `name` in a pod's status list (`containerStatuses`,
/// `initContainerStatuses`), or null.
pub fn container_status<'a>(pod: &'a Value, list: &str, name: &str) -> &'a Value {
    pod["status"][list]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or(&Value::Null)
}

/// The pod condition of type `kind`, or null.
pub fn pod_condition(pod: &Value, kind: &str) -> Value {
    pod["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind))
        .cloned()
        .unwrap_or(Value::Null)
}

/// Appends to `seen` every stored state of pod `name` from `rx` (a subscription taken before
/// the change under test) until `done` holds.
pub async fn pod_states_until(
    mut rx: broadcast::Receiver<Arc<StoredEvent>>,
    name: &str,
    mut seen: Vec<Value>,
    done: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    tokio::time::timeout(TIMEOUT, async {
        loop {
            let ev = rx.recv().await.expect("store events");
            if ev.storage == "pods" && ev.object["metadata"]["name"] == name {
                let finished = done(&ev.object);
                seen.push(ev.object.clone());
                if finished {
                    return;
                }
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{name} timed out; states seen: {seen:#?}"));
    seen
}
