//! The index narrows selection without changing any plan or error: for random caches and
//! selectors (invalid ones included), planning from `selected_pods` equals planning from every
//! selected pod, and both fail alike.

use super::*;
use crate::plan::{Snapshot, plan};
use kube::runtime::reflector::{self, store::Writer};
use kube::runtime::watcher;
use proptest::prelude::*;
use serde_json::{Value, json};

const NOW: &str = "2025-01-02T03:04:05Z";

fn sidecarset(name: &str, selector: Value, namespace_selector: Option<Value>) -> SidecarSet {
    let mut value = json!({
        "metadata": {"name": name, "generation": 1, "resourceVersion": "7",
                     "annotations": {"kruise.io/sidecarset-hash": "new", "kruise.io/sidecarset-hash-without-image": "w"}},
        "spec": {"selector": selector, "containers": [{"name": "sidecar", "image": "sidecar:v2"}],
                 "updateStrategy": {"maxUnavailable": "50%"}},
    });
    if let Some(namespace_selector) = namespace_selector {
        value["spec"]["namespaceSelector"] = namespace_selector;
    }
    SidecarSet::deserialize_value(&value).expect("valid SidecarSet")
}

/// A pod as the watch caches it.
fn pod(index: usize, namespace: &str, app: &str, injected: &str) -> CachedPod {
    let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
        "metadata": {
            "name": format!("pod-{index}"), "namespace": namespace, "uid": format!("u{index}"),
            "resourceVersion": "3", "labels": {"app": app},
            "annotations": {
                "kruise.io/sidecarset-injected-list": injected,
                "kruise.io/sidecarset-hash": r#"{"a":{"hash":"old"},"b":{"hash":"old"}}"#,
                "kruise.io/sidecarset-hash-without-image": r#"{"a":{"hash":"w"},"b":{"hash":"w"}}"#,
            },
        },
        "spec": {"containers": [{"name": "app", "image": "app:1"}, {"name": "sidecar", "image": "sidecar:v1"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [
                       {"name": "app", "image": "app:1", "imageID": "i1", "ready": true, "restartCount": 0},
                       {"name": "sidecar", "image": "sidecar:v1", "imageID": "i2", "ready": true, "restartCount": 0}]},
    }))
    .expect("valid pod");
    CachedPod::from(pod)
}

fn store<K>(objects: Vec<K>) -> (Store<K>, Writer<K>)
where
    K: kube::runtime::reflector::Lookup<DynamicType = ()> + Clone + 'static,
{
    let (store, mut writer) = reflector::store();
    for object in objects {
        writer.apply_watcher_event(&watcher::Event::Apply(object));
    }
    (store, writer)
}

fn selector() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        json!({"matchLabels": {"app": "x"}}),
        json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["x", "y"]}]}),
        json!({}),
        json!({"matchExpressions": [{"key": "app", "operator": "Bad"}]}),
        json!({"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}),
    ])
}

fn namespace_selector() -> impl Strategy<Value = Option<Value>> {
    prop::sample::select(vec![
        None,
        Some(json!({"matchLabels": {"team": "a"}})),
        Some(json!({"matchExpressions": [{"key": "team", "operator": "Exists", "values": ["v"]}]})),
    ])
}

/// (namespace, app label, injected-list) of each pod.
fn pods() -> impl Strategy<Value = Vec<(usize, usize, usize)>> {
    prop::collection::vec((0..4usize, 0..3usize, 0..5usize), 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn narrowed_selection_plans_and_fails_as_the_full_scan(
        selector in selector(),
        namespace_selector in namespace_selector(),
        name in prop::sample::select(vec!["a", "b"]),
        shape in pods(),
    ) {
        let sidecarset = sidecarset(name, selector, namespace_selector);
        let pods: Vec<CachedPod> = shape
            .iter()
            .enumerate()
            .map(|(i, &(ns, app, injected))| {
                let injected = ["a", "b", "a,b", "", "ab,b"][injected];
                pod(i, ["ns-0", "ns-1", "ns-2", "ns-absent"][ns], ["x", "y", "z"][app], injected)
            })
            .collect();
        let namespaces: Vec<Namespace> = (0..3)
            .map(|i| serde_json::from_value(json!({"metadata": {"name": format!("ns-{i}"),
                "labels": if i == 0 { json!({"team": "a"}) } else { json!({}) }}})).expect("namespace"))
            .collect();
        let (pods, _pod_writer) = store(pods);
        let (namespaces, _ns_writer) = store(namespaces);
        let index = InjectedIndex::build(&pods);

        let full = all_selected_pods(&sidecarset, &pods, &namespaces);
        let narrowed = selected_pods(&sidecarset, &pods, &index, &namespaces);
        match (full, narrowed) {
            (Ok(full), Ok(narrowed)) => {
                let planned = |pods: &[Arc<CachedPod>]| plan(&Snapshot { sidecarset: &sidecarset, pods, now: NOW });
                prop_assert_eq!(planned(&full), planned(&narrowed));
            }
            (Err(full), Err(narrowed)) => prop_assert_eq!(full.to_string(), narrowed.to_string()),
            (full, narrowed) => prop_assert!(false, "full {:?}, narrowed {:?}", full.map(|p| p.len()), narrowed.map(|p| p.len())),
        }
    }
}

#[test]
fn the_index_is_rebuilt_after_a_change() {
    let (pods, mut writer) = store(vec![pod(0, "ns-0", "x", "a")]);
    let index = PodIndex::default();
    assert_eq!(index.current(&pods).pods_of("a").len(), 1);
    writer.apply_watcher_event(&watcher::Event::Apply(pod(1, "ns-0", "x", "a,b")));
    assert_eq!(index.current(&pods).pods_of("a").len(), 1, "not told yet");
    index.changed();
    let current = index.current(&pods);
    assert_eq!(current.pods_of("a").len(), 2);
    assert_eq!(current.pods_of("b").len(), 1);
    assert!(current.pods_of("").is_empty());
}
