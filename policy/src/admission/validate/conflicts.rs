//! §2.2 rule 15: conflicts with the other SidecarSets that can select the same pods, and the
//! selector-overlap algorithm upstream uses for it (`util.IsSelectorOverlapping`).

use super::canary::canary_base;
use super::errors::{FieldError, quote};
use crate::api::{LabelSelector, SidecarSet, values};
use crate::hash::canonical_volume;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Whether two selectors may select a common label set: neither is disjoint from the other.
/// A heuristic, exactly upstream's: only contradictions on a key both mention are detected, and an
/// `Exists` requirement on a key the other selector does not name counts as disjoint.
pub fn is_selector_overlapping(a: &LabelSelector, b: &LabelSelector) -> bool {
    !(is_disjoint(a, b) || is_disjoint(b, a))
}

#[derive(Default)]
struct Allowed<'a> {
    all: bool,
    values: BTreeSet<&'a str>,
}

fn is_disjoint(s1: &LabelSelector, s2: &LabelSelector) -> bool {
    let mut allowed: BTreeMap<&str, Allowed> = BTreeMap::new();
    for (key, value) in s1.match_labels.iter().flatten() {
        allowed.entry(key).or_default().values.insert(value);
    }
    for req in s1.match_expressions.iter().flatten() {
        match req.operator.as_str() {
            "In" => {
                let entry = allowed.entry(&req.key).or_default();
                entry
                    .values
                    .extend(req.values.iter().flatten().map(String::as_str));
            }
            "Exists" => allowed.entry(&req.key).or_default().all = true,
            _ => {}
        }
    }
    for (key, value) in s2.match_labels.iter().flatten() {
        if let Some(a) = allowed.get(key.as_str())
            && !a.all
            && !a.values.contains(value.as_str())
        {
            return true;
        }
    }
    for req in s2.match_expressions.iter().flatten() {
        let values = req.values.as_deref().unwrap_or(&[]);
        let entry = allowed.get(req.key.as_str());
        let disjoint = match req.operator.as_str() {
            "In" => entry
                .is_some_and(|a| !a.all && !values.iter().any(|v| a.values.contains(v.as_str()))),
            "NotIn" => entry
                .is_some_and(|a| !a.all && a.values.iter().all(|v| values.iter().any(|n| n == v))),
            "Exists" => entry.is_none(),
            "DoesNotExist" => entry.is_some(),
            _ => false,
        };
        if disjoint {
            return true;
        }
    }
    false
}

/// Namespace scopes overlap when either is unrestricted, or both selectors overlap.
fn namespaces_overlap(a: &SidecarSet, b: &SidecarSet) -> bool {
    match (
        a.effective_namespace_selector(),
        b.effective_namespace_selector(),
    ) {
        (Some(x), Some(y)) => is_selector_overlapping(&x, &y),
        _ => true,
    }
}

fn selector_of(s: &SidecarSet) -> LabelSelector {
    s.spec.selector.clone().unwrap_or_default()
}

/// Drops `null` members recursively, so `{"x": null}` and `{}` compare equal as Go's typed
/// structs would (the fallback for volumes Go could not decode at all).
fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (key, value) in map.iter().filter(|(_, v)| !v.is_null()) {
                out.insert(key.clone(), without_nulls(value));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// Upstream's `reflect.DeepEqual` on the decoded core/v1 `Volume`s, as equal canonical Go encodings.
fn same_volume(a: &Value, b: &Value) -> bool {
    match (canonical_volume(a), canonical_volume(b)) {
        (Some(a), Some(b)) => a == b,
        _ => without_nulls(a) == without_nulls(b),
    }
}

fn volume_name(volume: &Value) -> &str {
    volume.get("name").and_then(Value::as_str).unwrap_or("")
}

/// Rule 15 over `others` (every listed SidecarSet; `sidecarset` itself is skipped by name).
pub fn validate_conflicts(sidecarset: &SidecarSet, others: &[SidecarSet]) -> Vec<FieldError> {
    let own_name = sidecarset.name();
    let base = canary_base(sidecarset);
    let own_selector = selector_of(sidecarset);
    let matched = others.iter().filter(|other| {
        other.name() != own_name
            && base != Some(other.name())
            && namespaces_overlap(sidecarset, other)
            && is_selector_overlapping(&own_selector, &selector_of(other))
    });

    let mut init_in_others: BTreeMap<&str, &SidecarSet> = BTreeMap::new();
    let mut containers_in_others: BTreeMap<&str, &SidecarSet> = BTreeMap::new();
    let mut volumes_in_others: BTreeMap<&str, &SidecarSet> = BTreeMap::new();
    // Every other SidecarSet per key, not the last one: an Overwrite must not hide behind a Merge.
    let mut annotations_in_others: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for other in matched {
        for c in &other.spec.init_containers {
            init_in_others.insert(&c.name, other);
        }
        for c in &other.spec.containers {
            containers_in_others.insert(&c.name, other);
        }
        for v in &other.spec.volumes {
            volumes_in_others.insert(volume_name(v), other);
        }
        for patch in &other.spec.patch_pod_metadata {
            if patch.patch_policy == values::RETAIN {
                continue;
            }
            for key in patch.annotations.keys() {
                let patching = annotations_in_others.entry(key).or_default();
                patching.push((other.name(), &patch.patch_policy));
            }
        }
    }

    let mut errs = Vec::new();
    for (list, found, kind) in [
        (
            &sidecarset.spec.init_containers,
            &init_in_others,
            "initContainers",
        ),
        (
            &sidecarset.spec.containers,
            &containers_in_others,
            "containers",
        ),
    ] {
        for (i, c) in list.iter().enumerate() {
            if let Some(other) = found.get(c.name.as_str()) {
                errs.push(FieldError::invalid_str(
                    format!("spec.{kind}[{i}].name"),
                    &c.name,
                    &format!("container {} already exist in {}", c.name, other.name()),
                ));
            }
        }
    }
    for (i, volume) in sidecarset.spec.volumes.iter().enumerate() {
        let name = volume_name(volume);
        let Some(other) = volumes_in_others.get(name) else {
            continue;
        };
        let theirs = other.spec.volumes.iter().find(|v| volume_name(v) == name);
        if !theirs.is_some_and(|theirs| same_volume(theirs, volume)) {
            errs.push(FieldError::invalid_str(
                format!("spec.volumes[{i}].name"),
                name,
                &format!(
                    "volume {name} is in conflict with sidecarset {}",
                    other.name()
                ),
            ));
        }
    }
    for (i, patch) in sidecarset.spec.patch_pod_metadata.iter().enumerate() {
        if patch.patch_policy == values::RETAIN {
            continue;
        }
        for key in patch.annotations.keys() {
            let others = annotations_in_others.get(key.as_str());
            let conflicting = others.and_then(|others| {
                let overwrites = patch.patch_policy == values::OVERWRITE;
                others
                    .iter()
                    .find(|(_, policy)| overwrites || *policy == values::OVERWRITE)
            });
            if let Some((other, _)) = conflicting {
                errs.push(FieldError::invalid(
                    format!("spec.patchPodMetadata[{i}].annotations"),
                    quote(key),
                    &format!("annotation {key} is in conflict with sidecarset {other}"),
                ));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests;
