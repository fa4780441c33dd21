//! Watch caches and the trigger streams of the controller (§5.1).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use sidecarset_policy::annotations::{INJECTED_LIST, INPLACE_UPDATE_STATE, parse_injected_list};
use sidecarset_policy::api::{SidecarSet, values};
use sidecarset_policy::hotupgrade::twin_names;

use crate::cached_pod::CachedPod;
use crate::expectations::Expectations;
use crate::metrics::Metrics;
use crate::selection::PodIndex;

/// Upstream enqueues this late when only a pod's sidecar state consistency changed.
pub const CONSISTENCY_DELAY: Duration = Duration::from_secs(5);

/// The three caches.
#[derive(Clone)]
pub struct Caches {
    /// SidecarSets (cluster-scoped).
    pub sidecarsets: Store<SidecarSet>,
    /// Pods in all namespaces, as [`CachedPod`]s.
    pub pods: Store<CachedPod>,
    /// `pods` by injected SidecarSet.
    pub pod_index: Arc<PodIndex>,
    /// Namespaces.
    pub namespaces: Store<Namespace>,
}

impl Caches {
    /// Resolves once every cache has completed its initial list.
    pub async fn synced(&self) -> bool {
        ready(&self.sidecarsets).await && ready(&self.pods).await && ready(&self.namespaces).await
    }
}

/// Waits for a store's initial list. kube's readiness future wakes only its most recent
/// poller (the controller also waits on it), so re-poll on a short tick instead of trusting one wake.
async fn ready<K: reflector::Lookup<DynamicType = ()> + Clone + 'static>(store: &Store<K>) -> bool {
    loop {
        match tokio::time::timeout(Duration::from_millis(100), store.wait_until_ready()).await {
            Ok(result) => return result.is_ok(),
            Err(_) => continue,
        }
    }
}

/// The trigger streams that keep the caches filled while the controller polls them.
pub struct Streams {
    /// SidecarSets whose (uid, generation) is new: creation, spec change, recreation.
    pub sidecarsets: BoxStream<'static, Result<SidecarSet, watcher::Error>>,
    /// SidecarSets that pod events concern ([`pod_triggers`]), the delayed ones when due.
    pub pod_triggers: BoxStream<'static, ObjectRef<SidecarSet>>,
}

/// A SidecarSet's identity and generation: status writes (ours included) do not re-trigger.
fn uid_generation(sidecarset: &SidecarSet) -> Option<u64> {
    let mut h = DefaultHasher::new();
    (
        sidecarset.metadata.uid.as_deref(),
        sidecarset.metadata.generation,
    )
        .hash(&mut h);
    Some(h.finish())
}

/// Starts the reflectors; the namespace reflector is driven by its own task.
pub fn start(
    client: &Client,
    expectations: Arc<Expectations>,
    metrics: Arc<Metrics>,
) -> (Caches, Streams) {
    let (sidecarsets, ss_writer) = reflector::store();
    let ss_stream = watcher(
        Api::<SidecarSet>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .reflect(ss_writer)
    .inspect_ok(move |event| {
        // Deleted SidecarSets leave no gauges or expectations behind.
        if let watcher::Event::Delete(ss) = event {
            metrics.forget(&ss.name_any());
            expectations.forget(&ss.name_any());
        }
    })
    .applied_objects()
    .predicate_filter(uid_generation, Default::default());

    let (pods, pod_writer) = reflector::store();
    let pod_index = Arc::new(PodIndex::default());
    let pod_triggers =
        pod_trigger_stream(client, pod_writer, pod_index.clone(), sidecarsets.clone());

    let (namespaces, ns_writer) = reflector::store();
    let ns_stream = watcher(
        Api::<Namespace>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .reflect(ns_writer)
    .touched_objects();
    tokio::spawn(async move {
        let mut ns_stream = std::pin::pin!(ns_stream);
        while let Some(event) = ns_stream.next().await {
            if let Err(e) = event {
                tracing::warn!(error = %e, "namespace watch error");
            }
        }
    });

    (
        Caches {
            sidecarsets,
            pods,
            pod_index,
            namespaces,
        },
        Streams {
            sidecarsets: ss_stream.boxed(),
            pod_triggers,
        },
    )
}

/// The pod watch, reflected into `writer`'s store, as the SidecarSets to enqueue. Each event
/// is compared with the cached pod before the cache takes it (the handler needs old and new).
fn pod_trigger_stream(
    client: &Client,
    mut writer: reflector::store::Writer<CachedPod>,
    index: Arc<PodIndex>,
    sidecarsets: Store<SidecarSet>,
) -> BoxStream<'static, ObjectRef<SidecarSet>> {
    let cache = writer.as_reader();
    let (delayed_tx, delayed_rx) = tokio::sync::mpsc::unbounded_channel();
    let immediate = watcher(Api::<Pod>::all(client.clone()), pod_watch_config())
        .default_backoff()
        .map(move |event| match event {
            Ok(event) => {
                // Before the handler and the cache see it: cached pods keep only what is read.
                let event = cached_event(event);
                let triggers = event_triggers(&event, &cache, &sidecarsets);
                writer.apply_watcher_event(&event);
                // Before the triggers go out, so their reconciles read a fresh index.
                index.changed();
                triggers
            }
            Err(e) => {
                tracing::warn!(error = %e, "pod watch error");
                Vec::new()
            }
        })
        .flat_map(futures::stream::iter)
        .filter_map(move |trigger| {
            let now = if trigger.delay.is_zero() {
                Some(trigger.sidecarset)
            } else {
                let tx = delayed_tx.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(trigger.delay).await;
                    // The receiver is gone only when the controller stopped.
                    let _ = tx.send(trigger.sidecarset);
                });
                None
            };
            futures::future::ready(now)
        });
    let delayed = futures::stream::unfold(delayed_rx, |mut rx| async move {
        rx.recv().await.map(|r| (r, rx))
    });
    futures::stream::select(immediate, delayed).boxed()
}

/// The same event with its pods as the cache keeps them.
fn cached_event(event: watcher::Event<Pod>) -> watcher::Event<CachedPod> {
    match event {
        watcher::Event::Apply(pod) => watcher::Event::Apply(pod.into()),
        watcher::Event::Delete(pod) => watcher::Event::Delete(pod.into()),
        watcher::Event::InitApply(pod) => watcher::Event::InitApply(pod.into()),
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitDone => watcher::Event::InitDone,
    }
}

/// Pods per page of the initial list: a page is decoded in full before it is slimmed, so smaller
/// pages lower the peak (the default is 500).
const POD_LIST_PAGE: u32 = 100;

fn pod_watch_config() -> watcher::Config {
    watcher::Config::default().page_size(POD_LIST_PAGE)
}

/// The triggers of one watcher event; the cache still holds the previous version of the pod.
fn event_triggers(
    event: &watcher::Event<CachedPod>,
    cache: &Store<CachedPod>,
    sidecarsets: &Store<SidecarSet>,
) -> Vec<Trigger> {
    let lookup = |name: &str| sidecarsets.get(&ObjectRef::new(name));
    match event {
        // A relist replays every pod: compared with the cache, unchanged ones enqueue nothing.
        watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => {
            match cache.get(&ObjectRef::from_obj(pod)) {
                Some(old) => pod_triggers(
                    PodChange::Updated {
                        old: &old,
                        new: pod,
                    },
                    lookup,
                ),
                None => pod_triggers(PodChange::Created(pod), lookup),
            }
        }
        watcher::Event::Delete(pod) => pod_triggers(PodChange::Deleted(pod), lookup),
        watcher::Event::Init | watcher::Event::InitDone => Vec::new(),
    }
}

/// A pod event as upstream's handler sees it.
#[derive(Debug, Clone, Copy)]
pub enum PodChange<'a> {
    /// The pod appeared.
    Created(&'a CachedPod),
    /// The pod changed from `old` to `new`.
    Updated {
        /// As cached before.
        old: &'a CachedPod,
        /// As just received.
        new: &'a CachedPod,
    },
    /// The pod is gone.
    Deleted(&'a CachedPod),
}

/// One SidecarSet to reconcile, after `delay`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trigger {
    /// The SidecarSet.
    pub sidecarset: ObjectRef<SidecarSet>,
    /// Zero for at once.
    pub delay: Duration,
}

/// §5.1 pod event handler: create → every SidecarSet of the pod; delete → nothing (expectations
/// of vanished pods drop themselves); update → per rolling SidecarSet of the pod, at once on a
/// deletionTimestamp or Ready flip, after [`CONSISTENCY_DELAY`] when the sidecars' state may have
/// changed, at once on a label change when `updateStrategy.selector` is set; else nothing.
pub fn pod_triggers(
    change: PodChange<'_>,
    lookup: impl Fn(&str) -> Option<Arc<SidecarSet>>,
) -> Vec<Trigger> {
    let trigger = |ss: &SidecarSet, delay: Duration| Trigger {
        sidecarset: ObjectRef::from_obj(ss),
        delay,
    };
    match change {
        PodChange::Created(pod) => sidecarsets_of_pod(pod, lookup)
            .iter()
            .map(|ss| trigger(ss, Duration::ZERO))
            .collect(),
        PodChange::Deleted(_) => Vec::new(),
        PodChange::Updated { old, new } => {
            if old.resource_version == new.resource_version {
                return Vec::new();
            }
            sidecarsets_of_pod(new, lookup)
                .iter()
                .filter(|ss| ss.spec.update_strategy.type_ != values::NOT_UPDATE)
                .filter_map(|ss| update_delay(old, new, ss).map(|delay| trigger(ss, delay)))
                .collect()
        }
    }
}

/// The SidecarSets of a pod (§5.1): named in its injected-list, existing (absent names are
/// skipped), and consistent with the pod (every sidecar container present; hot ones with a
/// working-container entry and both twins).
pub fn sidecarsets_of_pod(
    pod: &CachedPod,
    lookup: impl Fn(&str) -> Option<Arc<SidecarSet>>,
) -> Vec<Arc<SidecarSet>> {
    let names = parse_injected_list(pod.annotation(INJECTED_LIST));
    names
        .iter()
        .filter_map(|name| lookup(name))
        .filter(|ss| is_consistent_with(pod, ss))
        .collect()
}

fn has_container(pod: &CachedPod, name: &str) -> bool {
    pod.containers.iter().any(|c| c.name == name)
}

fn is_consistent_with(pod: &CachedPod, sidecarset: &SidecarSet) -> bool {
    let working = &pod.facts.working;
    sidecarset.spec.containers.iter().all(|c| {
        if c.is_hot_upgrade() {
            working.contains_key(&c.name)
                && twin_names(&c.name)
                    .iter()
                    .all(|twin| has_container(pod, twin))
        } else {
            has_container(pod, &c.name)
        }
    })
}

/// Upstream's order of the update rules for one SidecarSet.
fn update_delay(old: &CachedPod, new: &CachedPod, sidecarset: &SidecarSet) -> Option<Duration> {
    if is_status_changed(old, new) {
        Some(Duration::ZERO)
    } else if ConsistencyInputs::of(old, sidecarset) != ConsistencyInputs::of(new, sidecarset) {
        Some(CONSISTENCY_DELAY)
    } else if old.labels() != new.labels() && sidecarset.spec.update_strategy.selector.is_some() {
        Some(Duration::ZERO)
    } else {
        None
    }
}

/// A deletionTimestamp just set, or (while not being deleted) the Ready condition flipped.
fn is_status_changed(old: &CachedPod, new: &CachedPod) -> bool {
    let deleting = |p: &CachedPod| p.terminating;
    match (deleting(old), deleting(new)) {
        (false, true) => true,
        (true, _) => false,
        (false, false) => old.facts.ready != new.facts.ready,
    }
}

/// (name, spec image, status imageID and image) of one sidecar container.
type SidecarInputs<'a> = (String, Option<&'a str>, Option<(&'a str, &'a str)>);

/// Everything §5.6 state consistency reads for one SidecarSet's sidecar containers. Comparing
/// these instead of the predicate's result enqueues on a superset of upstream's "consistency
/// flipped" (the predicate itself is the planner's) and still never on an app-only change.
#[derive(Debug, PartialEq, Eq)]
struct ConsistencyInputs<'a> {
    containers: usize,
    statuses: usize,
    sidecars: Vec<SidecarInputs<'a>>,
    update_state: Option<&'a str>,
}

impl<'a> ConsistencyInputs<'a> {
    fn of(pod: &'a CachedPod, sidecarset: &SidecarSet) -> Self {
        let containers = &pod.containers;
        let statuses = &pod.container_statuses;
        let names = sidecarset.spec.containers.iter().flat_map(|c| {
            if c.is_hot_upgrade() {
                twin_names(&c.name).to_vec()
            } else {
                vec![c.name.clone()]
            }
        });
        let sidecars = names
            .map(|name| {
                let image = containers
                    .iter()
                    .find(|c| c.name == name)
                    .and_then(|c| c.image.as_deref());
                let status = statuses
                    .iter()
                    .find(|s| s.name == name)
                    .map(|s| (s.image_id.as_str(), s.image.as_str()));
                (name, image, status)
            })
            .collect();
        ConsistencyInputs {
            containers: containers.len(),
            statuses: statuses.len(),
            sidecars,
            update_state: pod.annotation(INPLACE_UPDATE_STATE),
        }
    }
}

#[cfg(test)]
mod tests;
