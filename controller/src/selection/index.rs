//! The cached pods by the SidecarSet names of their injected-list annotation (§5.1 maps pods to
//! SidecarSets that way), so a reconcile reads only its SidecarSet's pods instead of all of them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use kube::runtime::reflector::{ObjectRef, Store};

use crate::cached_pod::CachedPod;

/// One snapshot of the pod cache, indexed: keys, not pods, so it keeps no pod version alive.
#[derive(Debug, Default)]
pub struct InjectedIndex {
    /// Per SidecarSet name, its pods sorted by namespace/name.
    by_sidecarset: HashMap<String, Vec<ObjectRef<CachedPod>>>,
}

impl InjectedIndex {
    /// Indexes every pod of `pods` under each name of its injected-list.
    pub fn build(pods: &Store<CachedPod>) -> Self {
        let mut by_sidecarset: HashMap<String, Vec<ObjectRef<CachedPod>>> = HashMap::new();
        for pod in pods.state() {
            let names = &pod.facts.injected;
            if names.is_empty() {
                continue;
            }
            // The store's own key; its `extra` (uid, resourceVersion) is not part of it.
            let mut key = ObjectRef::from_obj(&*pod);
            key.extra.resource_version = None;
            key.extra.uid = None;
            for name in names {
                by_sidecarset
                    .entry(name.clone())
                    .or_default()
                    .push(key.clone());
            }
        }
        for keys in by_sidecarset.values_mut() {
            keys.sort_unstable_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        }
        InjectedIndex { by_sidecarset }
    }

    /// The pods whose injected-list names `sidecarset`, by namespace/name.
    pub fn pods_of(&self, sidecarset: &str) -> &[ObjectRef<CachedPod>] {
        self.by_sidecarset
            .get(sidecarset)
            .map_or(&[], Vec::as_slice)
    }
}

/// The index of the pod cache, rebuilt on the first read after the cache changed: a full pass
/// over many SidecarSets builds it once.
#[derive(Debug, Default)]
pub struct PodIndex {
    /// Bumped after every change applied to the pod cache.
    changes: AtomicU64,
    built: Mutex<Option<(u64, Arc<InjectedIndex>)>>,
}

impl PodIndex {
    /// Call after applying a change to the pod cache (the next read rebuilds).
    pub fn changed(&self) {
        self.changes.fetch_add(1, Ordering::SeqCst);
    }

    /// The index of `pods` as of now.
    pub fn current(&self, pods: &Store<CachedPod>) -> Arc<InjectedIndex> {
        // Held while building, so concurrent reconciles wait for one build instead of each doing one.
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        let changes = self.changes.load(Ordering::SeqCst);
        if let Some((at, index)) = built.as_ref()
            && *at == changes
        {
            return index.clone();
        }
        // Read after `changes`: a change applied meanwhile is in this build or bumps `changes` again.
        let index = Arc::new(InjectedIndex::build(pods));
        *built = Some((changes, index.clone()));
        index
    }
}
