//! §3.2: which SidecarSets a new pod gets, in upstream's order.

use super::InjectError;
use crate::annotations;
use crate::api::{LabelSelector, SidecarSet, SidecarSetHead, namespace_selector_of, values};
use crate::order::{set_of, sort_by_text};
use crate::selector::{self, Labels};
use std::borrow::Cow;
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

/// What §3.2 reads of a SidecarSet: the full object and its head (decoded alone) both have it.
pub trait Selectable {
    fn name(&self) -> &str;
    fn annotation(&self, key: &str) -> Option<&str>;
    fn selector(&self) -> Option<&LabelSelector>;
    fn injection_paused(&self) -> bool;
    /// The v1beta1 namespaceSelector (§1.8 conversion applied).
    fn namespace_selector(&self) -> Option<Cow<'_, LabelSelector>>;
}

impl<S: Selectable> Selectable for &S {
    fn name(&self) -> &str {
        (*self).name()
    }
    fn annotation(&self, key: &str) -> Option<&str> {
        (*self).annotation(key)
    }
    fn selector(&self) -> Option<&LabelSelector> {
        (*self).selector()
    }
    fn injection_paused(&self) -> bool {
        (*self).injection_paused()
    }
    fn namespace_selector(&self) -> Option<Cow<'_, LabelSelector>> {
        (*self).namespace_selector()
    }
}

impl Selectable for SidecarSet {
    fn name(&self) -> &str {
        SidecarSet::name(self)
    }
    fn annotation(&self, key: &str) -> Option<&str> {
        SidecarSet::annotation(self, key)
    }
    fn selector(&self) -> Option<&LabelSelector> {
        self.spec.selector.as_ref()
    }
    fn injection_paused(&self) -> bool {
        self.spec.injection_strategy.paused
    }
    fn namespace_selector(&self) -> Option<Cow<'_, LabelSelector>> {
        namespace_selector_of(&self.spec.namespace, self.spec.namespace_selector.as_ref())
    }
}

impl Selectable for SidecarSetHead {
    fn name(&self) -> &str {
        &self.metadata.name
    }
    fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata.annotations.get(key).map(String::as_str)
    }
    fn selector(&self) -> Option<&LabelSelector> {
        self.spec.selector.as_ref()
    }
    fn injection_paused(&self) -> bool {
        self.spec.injection_strategy.paused
    }
    fn namespace_selector(&self) -> Option<Cow<'_, LabelSelector>> {
        namespace_selector_of(&self.spec.namespace, self.spec.namespace_selector.as_ref())
    }
}

/// The index a SidecarSet is filed under: the namespaces its selector names, or cluster scope.
fn indexed_namespaces(namespace_selector: Option<&LabelSelector>) -> Option<&[String]> {
    let selector = namespace_selector?;
    if let Some(name) = selector
        .match_labels
        .as_ref()
        .and_then(|m| m.get(values::NAMESPACE_NAME_LABEL))
    {
        return Some(std::slice::from_ref(name));
    }
    selector
        .match_expressions
        .iter()
        .flatten()
        .find(|e| e.key == values::NAMESPACE_NAME_LABEL && e.operator == "In")
        .map(|e| e.values.as_deref().unwrap_or_default())
}

/// Candidates in order: those indexed under the pod's namespace, then cluster-scoped ones,
/// by name inside each group.
fn candidates<'a, S: Selectable>(namespace: &str, all: &'a [S]) -> Vec<&'a S> {
    let mut scoped = Vec::new();
    let mut cluster = Vec::new();
    for sidecarset in all {
        let namespace_selector = sidecarset.namespace_selector();
        match indexed_namespaces(namespace_selector.as_deref()) {
            Some(names) if names.iter().any(|n| n == namespace) => scoped.push(sidecarset),
            Some(_) => {}
            None => cluster.push(sidecarset),
        }
    }
    sort_by_text(&mut scoped, |s| s.name());
    sort_by_text(&mut cluster, |s| s.name());
    scoped.extend(cluster);
    scoped
}

/// Whether `sidecarset` selects a pod with `labels` in `namespace` (paused is checked by caller).
/// The Namespace is read only when the answer depends on it.
pub fn pod_matches<S: Selectable>(
    sidecarset: &S,
    namespace: &str,
    labels: &Labels,
    namespaces: &mut dyn NamespaceLookup,
) -> Result<bool, InjectError> {
    let pod_selected = match sidecarset.selector() {
        Some(pod_selector) if !selector::is_empty(pod_selector) => {
            selector::matches_validated(pod_selector, labels)
                .map_err(|e| InjectError::selector(sidecarset.name(), "spec.selector", e))
        }
        _ => Ok(false),
    };
    if let Some(namespace_selector) = sidecarset.namespace_selector() {
        // Upstream (`IsSelectorNamespace`) checks the Namespace first: a namespaceSelector that
        // does not convert, or a Namespace that cannot be read, is "no match", never an error.
        let converts = selector::matches_validated(&namespace_selector, &Labels::new()).is_ok();
        if !converts || matches!(pod_selected, Ok(false)) {
            return Ok(false);
        }
        let Some(namespace_labels) = namespaces.namespace_labels(namespace) else {
            return Ok(false);
        };
        if !selector::matches_validated(&namespace_selector, &namespace_labels).unwrap_or(false) {
            return Ok(false);
        }
    }
    pod_selected
}

/// The canary's base name — only when the annotation is exactly "true" and a base is named.
pub fn canary_base<S: Selectable>(sidecarset: &S) -> Option<&str> {
    let base = sidecarset
        .annotation(annotations::CANARY_BASE)
        .filter(|b| !b.is_empty())?;
    (sidecarset.annotation(annotations::CANARY) == Some("true")).then_some(base)
}

/// §3.2 steps 1–4: the unpaused SidecarSets that select the pod, in injection order.
pub fn matching<'a, S: Selectable>(
    namespace: &str,
    labels: &Labels,
    all: &'a [S],
    namespaces: &mut dyn NamespaceLookup,
) -> Result<Vec<&'a S>, InjectError> {
    let namespace = if namespace.is_empty() {
        "default"
    } else {
        namespace
    };
    let mut matched = Vec::new();
    for sidecarset in candidates(namespace, all) {
        if !sidecarset.injection_paused() && pod_matches(sidecarset, namespace, labels, namespaces)?
        {
            matched.push(sidecarset);
        }
    }
    Ok(matched)
}

/// §3.2 step 7: a pod matched by a canary and its base gets only the canary.
pub fn drop_canary_bases<S: Selectable>(matched: &mut Vec<S>) {
    let bases: BTreeSet<String> = set_of(
        matched
            .iter()
            .filter_map(|s| canary_base(s))
            .map(str::to_string),
    );
    matched.retain(|s| !bases.contains(s.name()));
}

/// §3.2 steps 1–8: the SidecarSets to inject into a new pod, in injection order.
pub fn select<'a, S: Selectable>(
    namespace: &str,
    labels: &Labels,
    all: &'a [S],
    namespaces: &mut dyn NamespaceLookup,
) -> Result<Vec<&'a S>, InjectError> {
    let mut matched = matching(namespace, labels, all, namespaces)?;
    drop_canary_bases(&mut matched);
    Ok(matched)
}
