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
use sidecarset_policy::annotations::{INJECTED_LIST, parse_injected_list};
use sidecarset_policy::api::SidecarSet;

use crate::expectations::Expectations;
use crate::metrics::Metrics;

/// The three caches.
#[derive(Clone)]
pub struct Caches {
    /// SidecarSets (cluster-scoped).
    pub sidecarsets: Store<SidecarSet>,
    /// Pods in all namespaces.
    pub pods: Store<Pod>,
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
async fn ready<K: kube::Resource<DynamicType = ()> + Clone + 'static>(store: &Store<K>) -> bool {
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
    /// Pods created, changed or deleted (mapped to SidecarSets by [`sidecarsets_of_pod`]).
    pub pods: BoxStream<'static, Result<Pod, watcher::Error>>,
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
    let pod_stream = watcher(Api::<Pod>::all(client.clone()), watcher::Config::default())
        .default_backoff()
        .reflect(pod_writer)
        .touched_objects();

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
            namespaces,
        },
        Streams {
            sidecarsets: ss_stream.boxed(),
            pods: pod_stream.boxed(),
        },
    )
}

/// The SidecarSets a pod event concerns: the names in its injected-list annotation (§5.1).
pub fn sidecarsets_of_pod(pod: Pod) -> Vec<ObjectRef<SidecarSet>> {
    let names = parse_injected_list(pod.annotations().get(INJECTED_LIST).map(String::as_str));
    names
        .into_iter()
        .map(|name| ObjectRef::new(&name))
        .collect()
}
