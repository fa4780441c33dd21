//! §5.1 pod event handler, with upstream's TestPodEventHandler (§6.4 case 46) and
//! TestGetPodMatchedSidecarSets (case 47).

use super::*;
use serde_json::{Value, json};
use sidecarset_policy::annotations::WORKING_HOT_UPGRADE_CONTAINER;
use std::collections::BTreeMap;

fn sidecarset(name: &str, strategy: Value) -> Arc<SidecarSet> {
    let mut value = json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": { "name": name },
        "spec": {
            "selector": { "matchLabels": { "app": "nginx" } },
            "updateStrategy": strategy,
            "containers": [{ "name": "test-sidecar", "image": "test-image:v2" }]
        }
    });
    sidecarset_policy::admission::apply_defaults(&mut value);
    Arc::new(serde_json::from_value(value).expect("sidecarset"))
}

/// upstream's podDemo: `nginx` and `test-sidecar:v1`, Running and Ready, injected by `injected`.
fn pod(injected: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {
            "name": "test-pod-1", "namespace": "default", "resourceVersion": "1",
            "labels": { "app": "nginx" },
            "annotations": { INJECTED_LIST: injected }
        },
        "spec": { "containers": [
            { "name": "nginx", "image": "nginx:1.15.1" },
            { "name": "test-sidecar", "image": "test-image:v1" }
        ] },
        "status": {
            "phase": "Running",
            "conditions": [{ "type": "Ready", "status": "True" }],
            "containerStatuses": [
                { "name": "nginx", "image": "nginx:1.15.1", "imageID": "docker-pullable://nginx@sha256:a", "ready": true, "restartCount": 0 },
                { "name": "test-sidecar", "image": "test-image:v1", "imageID": "docker-pullable://test-image@sha256:b", "ready": true, "restartCount": 0 }
            ]
        }
    }))
    .expect("pod")
}

/// The same pod at the next resourceVersion, edited.
fn changed(pod: &Pod, edit: impl FnOnce(&mut Value)) -> Pod {
    let mut value = serde_json::to_value(pod).expect("to json");
    edit(&mut value);
    let rv: u64 = value["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    value["metadata"]["resourceVersion"] = json!((rv + 1).to_string());
    serde_json::from_value(value).expect("pod")
}

fn existing(sets: Vec<Arc<SidecarSet>>) -> impl Fn(&str) -> Option<Arc<SidecarSet>> {
    let by_name: BTreeMap<String, Arc<SidecarSet>> =
        sets.into_iter().map(|s| (s.name_any(), s)).collect();
    move |name| by_name.get(name).cloned()
}

/// The pod as the watch caches it.
fn cached(pod: &Pod) -> CachedPod {
    CachedPod::from(pod.clone())
}

fn update(old: &Pod, new: &Pod, sets: Vec<Arc<SidecarSet>>) -> Vec<Trigger> {
    let (old, new) = (&cached(old), &cached(new));
    pod_triggers(PodChange::Updated { old, new }, existing(sets))
}

fn at_once(name: &str) -> Trigger {
    Trigger {
        sidecarset: ObjectRef::new(name),
        delay: Duration::ZERO,
    }
}

#[test]
fn upstream_pod_event_handler() {
    let set = || vec![sidecarset("test-sidecarset", json!({}))];
    let pod = pod("test-sidecarset");
    assert_eq!(
        pod_triggers(PodChange::Created(&cached(&pod)), existing(set())),
        vec![at_once("test-sidecarset")],
        "create"
    );
    let not_ready = changed(&pod, |p| {
        p["status"]["conditions"][0]["status"] = json!("False")
    });
    assert_eq!(
        update(&pod, &not_ready, set()),
        vec![at_once("test-sidecarset")],
        "Ready → False"
    );
    let app_image = changed(&pod, |p| {
        p["spec"]["containers"][0]["image"] = json!("nginx:1.16")
    });
    assert_eq!(update(&pod, &app_image, set()), vec![], "app image only");
    assert_eq!(
        pod_triggers(PodChange::Deleted(&cached(&pod)), existing(set())),
        vec![],
        "delete"
    );
}

#[test]
fn upstream_get_pod_matched_sidecarsets() {
    let sets = || {
        [
            "test-sidecarset-1",
            "test-sidecarset-2",
            "test-sidecarset-3",
        ]
        .map(|n| sidecarset(n, json!({})))
        .to_vec()
    };
    let names = |injected: &str| -> Vec<String> {
        sidecarsets_of_pod(&cached(&pod(injected)), existing(sets()))
            .iter()
            .map(|s| s.name_any())
            .collect()
    };
    assert_eq!(names("test-sidecarset-2"), ["test-sidecarset-2"]);
    assert_eq!(
        names("test-sidecarset-1,test-sidecarset-3"),
        ["test-sidecarset-1", "test-sidecarset-3"]
    );
    assert!(names("test-sidecarset-4").is_empty(), "absent SidecarSet");
    assert!(
        sidecarsets_of_pod(&cached(&pod("")), existing(sets())).is_empty(),
        "no injected-list"
    );
}

#[test]
fn pods_missing_a_sidecar_container_concern_no_sidecarset() {
    let other = {
        let mut value = serde_json::to_value(&*sidecarset("other", json!({}))).expect("json");
        value["spec"]["containers"][0]["name"] = json!("log-agent");
        Arc::new(serde_json::from_value::<SidecarSet>(value).expect("sidecarset"))
    };
    assert!(sidecarsets_of_pod(&cached(&pod("other")), existing(vec![other])).is_empty());
}

#[test]
fn hot_upgrade_sidecarsets_need_the_working_entry_and_both_twins() {
    let hot = {
        let mut value = serde_json::to_value(&*sidecarset("hot", json!({}))).expect("json");
        value["spec"]["containers"][0]["upgradeStrategy"] =
            json!({ "upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1" });
        Arc::new(serde_json::from_value::<SidecarSet>(value).expect("sidecarset"))
    };
    let twins = changed(&pod("hot"), |p| {
        p["spec"]["containers"] = json!([
            { "name": "nginx", "image": "nginx:1" },
            { "name": "test-sidecar-1", "image": "test-image:v1" },
            { "name": "test-sidecar-2", "image": "empty:1" }
        ]);
    });
    assert!(sidecarsets_of_pod(&cached(&twins), existing(vec![hot.clone()])).is_empty());
    let working = changed(&twins, |p| {
        p["metadata"]["annotations"][WORKING_HOT_UPGRADE_CONTAINER] =
            json!(r#"{"test-sidecar":"test-sidecar-1"}"#)
    });
    assert_eq!(
        sidecarsets_of_pod(&cached(&working), existing(vec![hot])).len(),
        1
    );
}

#[test]
fn a_sidecar_restart_enqueues_after_the_consistency_delay() {
    let set = || vec![sidecarset("ss", json!({}))];
    let pod = pod("ss");
    let restarted = changed(&pod, |p| {
        p["status"]["containerStatuses"][1]["imageID"] =
            json!("docker-pullable://test-image@sha256:c")
    });
    assert_eq!(
        update(&pod, &restarted, set()),
        vec![Trigger {
            sidecarset: ObjectRef::new("ss"),
            delay: CONSISTENCY_DELAY
        }]
    );
    let annotated = changed(&pod, |p| {
        p["metadata"]["annotations"][INPLACE_UPDATE_STATE] = json!("{}")
    });
    assert_eq!(update(&pod, &annotated, set())[0].delay, CONSISTENCY_DELAY);
    let app_restart = changed(&pod, |p| {
        p["status"]["containerStatuses"][0]["restartCount"] = json!(1)
    });
    assert_eq!(update(&pod, &app_restart, set()), vec![]);
}

#[test]
fn deletion_timestamps_and_unchanged_resource_versions() {
    let set = || vec![sidecarset("ss", json!({}))];
    let pod = pod("ss");
    let deleting = changed(&pod, |p| {
        p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z")
    });
    assert_eq!(update(&pod, &deleting, set()), vec![at_once("ss")]);
    let deleting_not_ready = changed(&deleting, |p| {
        p["status"]["conditions"][0]["status"] = json!("False")
    });
    assert_eq!(
        update(&deleting, &deleting_not_ready, set()),
        vec![],
        "already being deleted: a Ready flip does not count"
    );
    let mut same_version = changed(&pod, |p| {
        p["status"]["conditions"][0]["status"] = json!("False")
    });
    same_version.metadata.resource_version = pod.metadata.resource_version.clone();
    assert_eq!(update(&pod, &same_version, set()), vec![], "resync");
}

#[test]
fn label_changes_count_only_with_an_update_selector() {
    let relabelled =
        |pod: &Pod| changed(pod, |p| p["metadata"]["labels"]["canary"] = json!("true"));
    let pod = pod("ss");
    assert_eq!(
        update(&pod, &relabelled(&pod), vec![sidecarset("ss", json!({}))]),
        vec![]
    );
    let canary = sidecarset(
        "ss",
        json!({ "selector": { "matchLabels": { "canary": "true" } } }),
    );
    assert_eq!(
        update(&pod, &relabelled(&pod), vec![canary]),
        vec![at_once("ss")]
    );
}

#[test]
fn not_update_sidecarsets_hear_only_of_creations() {
    let set = || vec![sidecarset("ss", json!({ "type": "NotUpdate" }))];
    let pod = pod("ss");
    let not_ready = changed(&pod, |p| {
        p["status"]["conditions"][0]["status"] = json!("False")
    });
    assert_eq!(update(&pod, &not_ready, set()), vec![]);
    assert_eq!(
        pod_triggers(PodChange::Created(&cached(&pod)), existing(set())),
        vec![at_once("ss")]
    );
}

#[test]
fn readiness_is_the_first_ready_condition_as_upstream_reads_it() {
    let set = || vec![sidecarset("ss", json!({}))];
    // podutil.IsPodReady reads the first `Ready` condition only: a second one is noise.
    let pod = changed(&pod("ss"), |p| {
        p["status"]["conditions"] =
            json!([{ "type": "Ready", "status": "False" }, { "type": "Ready", "status": "True" }]);
    });
    let second_flipped = changed(&pod, |p| {
        p["status"]["conditions"][1]["status"] = json!("False")
    });
    assert_eq!(update(&pod, &second_flipped, set()), vec![]);
    let first_flipped = changed(&pod, |p| {
        p["status"]["conditions"][0]["status"] = json!("True")
    });
    assert_eq!(update(&pod, &first_flipped, set()), vec![at_once("ss")]);
}
