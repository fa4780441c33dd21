//! §3.2: which SidecarSets a new pod gets, in upstream's order.

use super::InjectError;
use crate::annotations;
use crate::api::{LabelSelector, SidecarSet, values};
use crate::selector::{self, Labels};
use std::collections::BTreeSet;

/// Namespace labels for `namespaceSelector`; `None` when the lookup failed (then: no match).
pub trait NamespaceLookup {
    fn namespace_labels(&mut self, name: &str) -> Option<Labels>;
}

impl<F: FnMut(&str) -> Option<Labels>> NamespaceLookup for F {
    fn namespace_labels(&mut self, name: &str) -> Option<Labels> {
        self(name)
    }
}

/// The index a SidecarSet is filed under: the namespaces its selector names, or cluster scope.
fn indexed_namespaces(namespace_selector: Option<&LabelSelector>) -> Option<Vec<String>> {
    let selector = namespace_selector?;
    if let Some(name) = selector
        .match_labels
        .as_ref()
        .and_then(|m| m.get(values::NAMESPACE_NAME_LABEL))
    {
        return Some(vec![name.clone()]);
    }
    selector
        .match_expressions
        .iter()
        .flatten()
        .find(|e| e.key == values::NAMESPACE_NAME_LABEL && e.operator == "In")
        .map(|e| e.values.clone().unwrap_or_default())
}

/// Candidates in order: those indexed under the pod's namespace, then cluster-scoped ones,
/// by name inside each group.
fn candidates<'a>(namespace: &str, all: &'a [SidecarSet]) -> Vec<&'a SidecarSet> {
    let mut scoped = Vec::new();
    let mut cluster = Vec::new();
    for sidecarset in all {
        match indexed_namespaces(sidecarset.effective_namespace_selector().as_ref()) {
            Some(names) if names.iter().any(|n| n == namespace) => scoped.push(sidecarset),
            Some(_) => {}
            None => cluster.push(sidecarset),
        }
    }
    scoped.sort_by(|a, b| a.name().cmp(b.name()));
    cluster.sort_by(|a, b| a.name().cmp(b.name()));
    scoped.extend(cluster);
    scoped
}

/// Whether `sidecarset` selects a pod with `labels` in `namespace` (paused is checked by caller).
pub fn pod_matches(
    sidecarset: &SidecarSet,
    namespace: &str,
    labels: &Labels,
    namespaces: &mut dyn NamespaceLookup,
) -> Result<bool, InjectError> {
    if let Some(namespace_selector) = sidecarset.effective_namespace_selector() {
        let Some(namespace_labels) = namespaces.namespace_labels(namespace) else {
            return Ok(false);
        };
        let selected = selector::matches(&namespace_selector, &namespace_labels)
            .map_err(|e| InjectError::selector(sidecarset, "spec.namespaceSelector", e))?;
        if !selected {
            return Ok(false);
        }
    }
    let Some(pod_selector) = &sidecarset.spec.selector else {
        return Ok(false);
    };
    if selector::is_empty(pod_selector) {
        return Ok(false);
    }
    selector::matches(pod_selector, labels)
        .map_err(|e| InjectError::selector(sidecarset, "spec.selector", e))
}

/// (is canary, base name) — canary only when the annotation is exactly "true" and a base is named.
pub fn canary_base(sidecarset: &SidecarSet) -> Option<&str> {
    let base = sidecarset
        .annotation(annotations::CANARY_BASE)
        .filter(|b| !b.is_empty())?;
    (sidecarset.annotation(annotations::CANARY) == Some("true")).then_some(base)
}

/// §3.2 steps 1–8: the SidecarSets to inject into a new pod, in injection order.
pub fn select<'a>(
    namespace: &str,
    labels: &Labels,
    all: &'a [SidecarSet],
    namespaces: &mut dyn NamespaceLookup,
) -> Result<Vec<&'a SidecarSet>, InjectError> {
    let namespace = if namespace.is_empty() {
        "default"
    } else {
        namespace
    };
    let mut matched = Vec::new();
    let mut canary_bases = BTreeSet::new();
    for sidecarset in candidates(namespace, all) {
        if sidecarset.spec.injection_strategy.paused
            || !pod_matches(sidecarset, namespace, labels, namespaces)?
        {
            continue;
        }
        reject_unsupported(sidecarset)?;
        if let Some(base) = canary_base(sidecarset) {
            canary_bases.insert(base);
        }
        matched.push(sidecarset);
    }
    matched.retain(|s| !canary_bases.contains(s.name()));
    Ok(matched)
}

/// Fields whose injection semantics come with a later release fail loudly instead of being ignored.
fn reject_unsupported(sidecarset: &SidecarSet) -> Result<(), InjectError> {
    if let Some(revision) = &sidecarset.spec.injection_strategy.revision
        && (revision.revision_name.is_some() || revision.custom_version.is_some())
    {
        return Err(InjectError::Unsupported {
            sidecarset: sidecarset.name().to_string(),
            field: "spec.injectionStrategy.revision".into(),
        });
    }
    let lists = [
        ("initContainers", &sidecarset.spec.init_containers),
        ("containers", &sidecarset.spec.containers),
    ];
    for (list, containers) in lists {
        if let Some(index) = containers.iter().position(|c| c.resources_policy.is_some()) {
            return Err(InjectError::Unsupported {
                sidecarset: sidecarset.name().to_string(),
                field: format!("spec.{list}[{index}].resourcesPolicy"),
            });
        }
    }
    Ok(())
}
