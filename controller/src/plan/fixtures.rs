//! Test fixtures shaped like upstream's (`podDemo`, `factoryPods`, `sidecarSetDemo`), plus a tiny
//! API server and kubelet: apply a plan's patches and conditions, restart containers.

use super::{Plan, Snapshot, plan};
use crate::cached_pod::CachedPod;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};
use sidecarset_policy::annotations::{
    INJECTED_LIST, SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE, WORKING_HOT_UPGRADE_CONTAINER,
};
use sidecarset_policy::api::SidecarSet;

pub const NOW: &str = "2025-01-02T03:04:05Z";
pub const SIDECARSET: &str = "test-sidecarset";

/// The imageID a fake runtime reports for `image`.
pub fn image_id(image: &str) -> String {
    format!("docker-pullable://{image}@sha256:{:0>64}", image.len())
}

/// `factorySidecarSet`: hash `bbb`, without-image `without-aaa`, one cold `test-sidecar:v2`.
pub fn sidecarset() -> Value {
    json!({
        "metadata": {
            "name": SIDECARSET,
            "generation": 1,
            "resourceVersion": "22",
            "annotations": {
                SIDECARSET_HASH: "bbb",
                SIDECARSET_HASH_WITHOUT_IMAGE: "without-aaa",
            },
        },
        "spec": {
            "selector": {"matchLabels": {"app": "sidecar"}},
            "containers": [{"name": "test-sidecar", "image": "test-image:v2"}],
            "updateStrategy": {},
        },
    })
}

pub fn typed(sidecarset: &Value) -> SidecarSet {
    SidecarSet::deserialize_value(sidecarset).unwrap_or_default()
}

/// Set `spec.updateStrategy.<field>`.
pub fn strategy(sidecarset: &mut Value, field: &str, value: Value) {
    sidecarset["spec"]["updateStrategy"][field] = value;
}

/// A running, ready pod with `nginx` and `test-sidecar:v1`, injected by the SidecarSet at `aaa`,
/// created `created` seconds after the epoch of the fixtures.
pub fn pod(name: &str, created: i64) -> Value {
    json!({
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": format!("uid-{name}"),
            "resourceVersion": "100",
            "creationTimestamp": sidecarset_policy::annotations::rfc3339(1_700_000_000 + created),
            "labels": {"app": "sidecar"},
            "annotations": {
                INJECTED_LIST: SIDECARSET,
                SIDECARSET_HASH: format!(r#"{{"{SIDECARSET}":{{"hash":"aaa","sidecarList":["test-sidecar"]}}}}"#),
                SIDECARSET_HASH_WITHOUT_IMAGE: format!(r#"{{"{SIDECARSET}":{{"hash":"without-aaa"}}}}"#),
            },
        },
        "spec": {
            "nodeName": "node-1",
            "containers": [
                {"name": "nginx", "image": "nginx:1.15.1"},
                {"name": "test-sidecar", "image": "test-image:v1",
                 "env": [{"name": "IS_INJECTED", "value": "true"}]},
            ],
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True",
                            "lastTransitionTime": "2024-01-01T00:00:00Z"}],
            "containerStatuses": [
                status("nginx", "nginx:1.15.1", true),
                status("test-sidecar", "test-image:v1", true),
            ],
        },
    })
}

pub fn status(name: &str, image: &str, ready: bool) -> Value {
    json!({"name": name, "image": image, "imageID": image_id(image), "ready": ready,
           "restartCount": 0})
}

/// The pod as the controller caches it.
pub fn typed_pod(pod: &Value) -> CachedPod {
    CachedPod::from(serde_json::from_value::<Pod>(pod.clone()).unwrap_or_default())
}

pub fn typed_pods(pods: &[Value]) -> Vec<CachedPod> {
    pods.iter().map(typed_pod).collect()
}

/// `factoryPods(count, upgraded, upgradedAndReady)` through the planner's own upgrade edit: the
/// first `upgraded` pods carry v2 and hash `bbb`, the first `upgraded_and_ready` run it.
pub fn factory_pods(count: usize, upgraded: usize, upgraded_and_ready: usize) -> Vec<Value> {
    let mut one_by_one = sidecarset();
    strategy(&mut one_by_one, "maxUnavailable", json!(count.max(1)));
    (0..count)
        .map(|i| {
            let mut pod = pod(&format!("pod-{i}"), i64::try_from(i).unwrap_or(0));
            if i < upgraded {
                let plan = run(&one_by_one, std::slice::from_ref(&pod));
                apply(&mut pod, &plan);
                if i < upgraded_and_ready {
                    restart(&mut pod, "test-sidecar");
                }
            }
            pod
        })
        .collect()
}

pub fn run(sidecarset: &Value, pods: &[Value]) -> Plan {
    let sidecarset = typed(sidecarset);
    let pods = typed_pods(pods);
    plan(&Snapshot {
        sidecarset: &sidecarset,
        pods: &pods,
        now: NOW,
    })
}

/// Apply every write of `plan` that targets `pod` (patches, then conditions), as the API would.
pub fn apply(pod: &mut Value, plan: &Plan) {
    let name = pod["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for update in plan.pod_updates.iter().filter(|u| u.name == name) {
        json_patch::patch(pod, &update.patch).expect("the plan's patch applies");
        bump_resource_version(pod);
    }
    for condition in plan.conditions.iter().filter(|c| c.name == name) {
        let conditions = pod["status"]["conditions"]
            .as_array_mut()
            .expect("fixture pods have conditions");
        conditions.retain(|c| c["type"] != condition.condition["type"]);
        conditions.push(condition.condition.clone());
    }
}

pub fn apply_all(pods: &mut [Value], plan: &Plan) {
    for pod in pods {
        apply(pod, plan);
    }
}

fn bump_resource_version(pod: &mut Value) {
    let version: u64 = pod["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pod["metadata"]["resourceVersion"] = json!((version + 1).to_string());
}

/// The kubelet restarted `container` on its spec image.
pub fn restart(pod: &mut Value, container: &str) {
    let image = spec_image(pod, container);
    for status in pod["status"]["containerStatuses"]
        .as_array_mut()
        .expect("fixture pods have statuses")
    {
        if status["name"] == container {
            status["image"] = json!(image);
            status["imageID"] = json!(image_id(&image));
        }
    }
}

pub fn spec_image(pod: &Value, container: &str) -> String {
    pod["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == container))
        .and_then(|c| c["image"].as_str())
        .unwrap_or_default()
        .to_string()
}

pub fn annotation(pod: &Value, key: &str) -> String {
    pod["metadata"]["annotations"][key]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

pub fn counts(plan: &Plan) -> [i32; 4] {
    let s = &plan.status;
    [
        s.matched_pods,
        s.updated_pods,
        s.ready_pods,
        s.updated_ready_pods,
    ]
}

pub fn updated_names(plan: &Plan) -> Vec<&str> {
    plan.pod_updates.iter().map(|u| u.name.as_str()).collect()
}

/// A hot-upgrade SidecarSet (upstream case 48): resourceVersion 22, `test-sidecar` v2.
pub fn hot_sidecarset() -> Value {
    let mut sidecarset = sidecarset();
    sidecarset["metadata"]["annotations"][SIDECARSET_HASH_WITHOUT_IMAGE] = json!("111111111");
    sidecarset["spec"]["containers"] = json!([{
        "name": "test-sidecar", "image": "test-image:v2",
        "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "hotupgrade:empty"},
    }]);
    sidecarset
}

/// A pod injected with the hot pair: `test-sidecar-1` works on v1, `-2` idles on the empty image.
pub fn hot_pod(name: &str) -> Value {
    let mut pod = pod(name, 0);
    let annotations = &mut pod["metadata"]["annotations"];
    annotations[SIDECARSET_HASH_WITHOUT_IMAGE] =
        json!(format!(r#"{{"{SIDECARSET}":{{"hash":"111111111"}}}}"#));
    annotations[WORKING_HOT_UPGRADE_CONTAINER] = json!(r#"{"test-sidecar":"test-sidecar-1"}"#);
    annotations["version.sidecarset.kruise.io/test-sidecar-1"] = json!("1");
    annotations["version.sidecarset.kruise.io/test-sidecar-2"] = json!("1");
    pod["spec"]["containers"] = json!([
        {"name": "nginx", "image": "nginx:1.15.1"},
        {"name": "test-sidecar-1", "image": "test-image:v1"},
        {"name": "test-sidecar-2", "image": "hotupgrade:empty"},
    ]);
    pod["status"]["containerStatuses"] = json!([
        status("nginx", "nginx:1.15.1", true),
        status("test-sidecar-1", "test-image:v1", true),
        status("test-sidecar-2", "hotupgrade:empty", true),
    ]);
    pod
}
