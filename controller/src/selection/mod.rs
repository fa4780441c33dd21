//! The cached pods one SidecarSet's reconcile plans from (§5.3).

mod index;

pub use index::{InjectedIndex, PodIndex};

use std::cell::RefCell;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use sidecarset_policy::api::{LabelSelector, SidecarSet};
use sidecarset_policy::inject::{Selectable, pod_matches};
use sidecarset_policy::selector::{self, Labels};

use crate::cached_pod::CachedPod;
use crate::error::Result;

/// Pods selected by `spec.selector` in namespaces allowed by `namespaceSelector`, by
/// namespace/name, among the pods whose injected-list names the SidecarSet: `plan` keeps only
/// those (§5.3 step 3), so its plan is the one of every selected pod. With an invalid selector,
/// whether selection fails depends on which namespaces hold pods, so then every cached pod is
/// read, as before the index. Returns the cache's own `Arc`s.
pub fn selected_pods(
    sidecarset: &SidecarSet,
    pods: &Store<CachedPod>,
    index: &InjectedIndex,
    namespaces: &Store<Namespace>,
) -> Result<Vec<Arc<CachedPod>>> {
    if !selectors_valid(sidecarset) {
        return all_selected_pods(sidecarset, pods, namespaces);
    }
    let mut lookup = namespace_lookup(namespaces);
    let mut selected = Vec::new();
    for key in index.pods_of(sidecarset.name()) {
        // Gone since the index was built: the next change rebuilds it.
        let Some(pod) = pods.get(key) else {
            continue;
        };
        let namespace = pod.namespace();
        if pod_matches(sidecarset, namespace, pod.labels(), &mut lookup).map_err(Box::new)? {
            selected.push(pod);
        }
    }
    Ok(selected)
}

/// Whether `pod_matches` can fail for this SidecarSet (only its selectors' shapes decide).
fn selectors_valid(sidecarset: &SidecarSet) -> bool {
    let valid = |s: &LabelSelector| selector::check(s).is_ok();
    Selectable::selector(sidecarset).is_none_or(valid)
        && Selectable::namespace_selector(sidecarset).is_none_or(|s| valid(&s))
}

fn namespace_lookup(namespaces: &Store<Namespace>) -> impl FnMut(&str) -> Option<Labels> + '_ {
    |namespace: &str| {
        namespaces
            .get(&ObjectRef::new(namespace))
            .map(|n| n.labels().clone())
    }
}

/// Every cached pod `spec.selector` and `namespaceSelector` select, by namespace/name; the
/// first selection error (as a full scan meets it) fails the whole selection.
pub fn all_selected_pods(
    sidecarset: &SidecarSet,
    pods: &Store<CachedPod>,
    namespaces: &Store<Namespace>,
) -> Result<Vec<Arc<CachedPod>>> {
    let lookup = RefCell::new(namespace_lookup(namespaces));
    // The store's filter takes a plain predicate: keep the first error and select nothing after it.
    let failure = RefCell::new(None);
    let mut selected = pods.state_filter(|pod| {
        if failure.borrow().is_some() {
            return false;
        }
        let namespace = pod.namespace();
        match pod_matches(
            sidecarset,
            namespace,
            pod.labels(),
            &mut *lookup.borrow_mut(),
        ) {
            Ok(matches) => matches,
            Err(error) => {
                *failure.borrow_mut() = Some(error);
                false
            }
        }
    });
    if let Some(error) = failure.into_inner() {
        return Err(Box::new(error).into());
    }
    selected.sort_by(|a, b| {
        (a.namespace.as_deref(), a.name.as_deref())
            .cmp(&(b.namespace.as_deref(), b.name.as_deref()))
    });
    Ok(selected)
}

#[cfg(test)]
mod tests;
