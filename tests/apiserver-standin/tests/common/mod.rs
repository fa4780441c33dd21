//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::time::Duration;

use apiserver_standin::{Options, StandIn};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value, json};

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
