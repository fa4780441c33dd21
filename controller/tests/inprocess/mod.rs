//! Harness of the in-process reconciler tests: the API-server stand-in (with its kubelet
//! simulator), caches filled by listing on demand, and single reconcile passes called directly,
//! so a test decides exactly what the caches hold and when a pass runs.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use apiserver_standin::fault::{RequestInfo, Verb};
use apiserver_standin::selectors::Filter;
use apiserver_standin::{KubeletConfig, Options, StandIn, resources};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, ListParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::reflector::{self, ObjectRef, store::Writer};
use kube::runtime::watcher;
use serde_json::{Value, json};
use sidecarset_controller::backoff::ErrorBackoff;
use sidecarset_controller::cached_pod::CachedPod;
use sidecarset_controller::error::Error;
use sidecarset_controller::expectations::Expectations;
use sidecarset_controller::leader::Leadership;
use sidecarset_controller::metrics::Metrics;
use sidecarset_controller::reconciler::{self, Context};
use sidecarset_controller::selection::PodIndex;
use sidecarset_policy::api::SidecarSet;

pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The stand-in, a client, and the writers behind the context's caches.
pub struct Harness {
    pub standin: StandIn,
    pub client: kube::Client,
    pub ctx: Arc<Context>,
    sidecarsets: Writer<SidecarSet>,
    pods: Writer<CachedPod>,
    namespaces: Writer<Namespace>,
}

impl Harness {
    pub async fn start() -> Harness {
        let standin = StandIn::start(Options {
            kubelet: Some(KubeletConfig::fast()),
            ..Options::default()
        })
        .await
        .expect("start stand-in");
        let client = standin.client().expect("client");
        let (ss_store, sidecarsets) = reflector::store();
        let (pod_store, pods) = reflector::store();
        let (ns_store, namespaces) = reflector::store();
        let reporter = Reporter {
            controller: "sidecarset-controller".into(),
            instance: Some("test".into()),
        };
        let ctx = Arc::new(Context {
            client: client.clone(),
            sidecarsets: ss_store,
            pods: pod_store,
            pod_index: Arc::new(PodIndex::default()),
            namespaces: ns_store,
            expectations: Arc::new(Expectations::new(Duration::from_secs(30))),
            metrics: Arc::new(Metrics::default()),
            leadership: Leadership::always(),
            recorder: Recorder::new(client.clone(), reporter),
            ready: Arc::new(AtomicBool::new(true)),
            backoff: ErrorBackoff::default(),
        });
        Harness {
            standin,
            client,
            ctx,
            sidecarsets,
            pods,
            namespaces,
        }
    }

    pub fn sidecarset_api(&self) -> Api<SidecarSet> {
        Api::all(self.client.clone())
    }

    pub fn pod_api(&self, namespace: &str) -> Api<Pod> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// Creates a SidecarSet after the admission defaults and hashes (as the policy would).
    pub async fn create_sidecarset(&self, mut value: Value) -> SidecarSet {
        sidecarset_policy::admission::apply_defaults(&mut value);
        let ss: SidecarSet = serde_json::from_value(value).expect("sidecarset json");
        self.sidecarset_api()
            .create(&PostParams::default(), &ss)
            .await
            .expect("create sidecarset")
    }

    /// Edits a stored SidecarSet as a user would (defaults and hashes recomputed).
    pub async fn update_sidecarset(&self, name: &str, edit: impl Fn(&mut Value)) -> SidecarSet {
        let current = self.sidecarset_api().get(name).await.expect("get");
        let mut value = serde_json::to_value(&current).expect("json");
        edit(&mut value);
        sidecarset_policy::admission::apply_defaults(&mut value);
        let ss: SidecarSet = serde_json::from_value(value).expect("sidecarset json");
        self.sidecarset_api()
            .replace(name, &PostParams::default(), &ss)
            .await
            .expect("replace sidecarset")
    }

    pub async fn create_namespace(&self, name: &str, labels: BTreeMap<String, String>) {
        let ns: Namespace = serde_json::from_value(json!({
            "metadata": { "name": name, "labels": labels }
        }))
        .expect("namespace");
        Api::<Namespace>::all(self.client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .expect("create namespace");
    }

    /// Creates pod `namespace/name` (container `app` plus whatever `ss` injects) on node-1.
    pub async fn create_injected_pod(
        &self,
        ss: &SidecarSet,
        namespace: &str,
        name: &str,
        labels: BTreeMap<String, String>,
    ) {
        let mut pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": { "name": name, "namespace": namespace, "labels": labels },
            "spec": { "nodeName": "node-1", "containers": [{ "name": "app", "image": "nginx:1" }] }
        });
        let changed = sidecarset_policy::inject::inject(&mut pod, &[ss], "2026-01-01T00:00:00Z")
            .expect("inject");
        assert!(changed, "the SidecarSet selects the pod");
        let pod: Pod = serde_json::from_value(pod).expect("pod json");
        self.pod_api(namespace)
            .create(&PostParams::default(), &pod)
            .await
            .expect("create pod");
    }

    /// Every stored pod (all namespaces).
    pub fn stored_pods(&self) -> Vec<Value> {
        self.standin
            .store()
            .list(resources::pods(), &Filter::default(), None, None)
            .map(|page| page.items)
            .unwrap_or_default()
    }

    pub fn stored_pod(&self, namespace: &str, name: &str) -> Value {
        self.stored_pods()
            .into_iter()
            .find(|p| p["metadata"]["namespace"] == namespace && p["metadata"]["name"] == name)
            .unwrap_or(Value::Null)
    }

    /// Waits until `pred` holds over the stored pods (the kubelet simulator moves them).
    pub async fn wait_pods(&self, what: &str, pred: impl Fn(&[Value]) -> bool) {
        let mut events = self.standin.store().subscribe();
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            if pred(&self.stored_pods()) {
                return;
            }
            tokio::select! {
                _ = events.recv() => {}
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                _ = tokio::time::sleep_until(deadline) => panic!("timed out waiting for {what}"),
            }
        }
    }

    /// Makes the caches show exactly what the API server stores now.
    pub async fn refresh_caches(&mut self) {
        fill(&mut self.sidecarsets, Api::all(self.client.clone()), |s| s).await;
        // Cached as the controller's pod watch does.
        fill(
            &mut self.pods,
            Api::<Pod>::all(self.client.clone()),
            CachedPod::from,
        )
        .await;
        self.ctx.pod_index.changed();
        fill(&mut self.namespaces, Api::all(self.client.clone()), |n| n).await;
    }

    /// One reconcile of `name` as the controller runs it, on the caches as they are.
    pub async fn reconcile(&self, name: &str) -> Result<Action, Error> {
        let ss = self
            .ctx
            .sidecarsets
            .get(&ObjectRef::new(name))
            .expect("SidecarSet in the cache (refresh_caches first)");
        reconciler::reconcile(ss, self.ctx.clone()).await
    }

    /// Every request the stand-in served so far.
    pub fn requests(&self) -> Vec<RequestInfo> {
        self.standin.faults().requests()
    }

    /// Requests with `verb` on `resource[/subresource]` for object `name`.
    pub fn count(&self, verb: Verb, resource: &str, name: &str) -> usize {
        let (plural, sub) = match resource.split_once('/') {
            Some((p, s)) => (p, Some(s)),
            None => (resource, None),
        };
        self.requests()
            .iter()
            .filter(|r| {
                r.verb == verb
                    && r.resource == plural
                    && r.subresource.as_deref() == sub
                    && r.name.as_deref() == Some(name)
            })
            .count()
    }

    /// Stored events (core/v1 view) with `reason`.
    pub fn events(&self, reason: &str) -> Vec<Value> {
        let def = resources::RESOURCES
            .iter()
            .find(|r| r.plural == "events" && r.group.is_empty())
            .expect("events resource");
        self.standin
            .store()
            .list(def, &Filter::default(), None, None)
            .map(|p| p.items)
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e["reason"] == reason)
            .collect()
    }
}

async fn fill<S, K>(writer: &mut Writer<K>, api: Api<S>, cache: impl Fn(S) -> K)
where
    S: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    K: reflector::Lookup<DynamicType = ()> + Clone + 'static,
{
    let list = api.list(&ListParams::default()).await.expect("list");
    writer.apply_watcher_event(&watcher::Event::Init);
    for item in list.items {
        writer.apply_watcher_event(&watcher::Event::InitApply(cache(item)));
    }
    writer.apply_watcher_event(&watcher::Event::InitDone);
}

/// A cold-upgrade SidecarSet selecting `app=web` with one sidecar `sidecar` on `image`.
pub fn cold_sidecarset(name: &str, image: &str, strategy: Value) -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": { "name": name },
        "spec": {
            "selector": { "matchLabels": { "app": "web" } },
            "updateStrategy": strategy,
            "containers": [{ "name": "sidecar", "image": image }]
        }
    })
}

pub fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub fn image<'a>(pod: &'a Value, container: &str) -> &'a str {
    pod["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == container))
        .and_then(|c| c["image"].as_str())
        .unwrap_or("")
}

pub fn condition<'a>(pod: &'a Value, kind: &str) -> &'a Value {
    pod["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind))
        .unwrap_or(&Value::Null)
}

/// Running, Ready and every container running its spec image.
pub fn available(pod: &Value) -> bool {
    let status = |name: &str| {
        pod["status"]["containerStatuses"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["name"] == name))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let ready = pod["status"]["phase"] == "Running" && condition(pod, "Ready")["status"] == "True";
    ready
        && pod["spec"]["containers"].as_array().is_some_and(|cs| {
            cs.iter()
                .all(|c| status(c["name"].as_str().unwrap_or(""))["image"] == c["image"])
        })
}
