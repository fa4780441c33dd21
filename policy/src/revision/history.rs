//! History SidecarSets (§3.3 step 2): which ControllerRevision `injectionStrategy.revision`
//! names, and the SidecarSet that revision restores (upstream's `GetHistorySidecarSet`).

use super::hashed_spec;
use crate::annotations::{
    CUSTOM_VERSION_LABEL, REVISION_SIDECARSET_LABEL, SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE,
};
use crate::api::{SidecarSet, SidecarSetStatus};
use crate::hash;
use serde_json::{Map, Value};

/// The ControllerRevision a SidecarSet asks to inject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevisionQuery<'a> {
    /// `revisionName`: that revision, whichever SidecarSet it belongs to (as upstream).
    Named(&'a str),
    /// `customVersion`: the newest revision of this SidecarSet with that custom version.
    CustomVersion {
        sidecarset: &'a str,
        version: &'a str,
    },
}

impl<'a> RevisionQuery<'a> {
    /// `None` when there is no revision to look up (§3.3 step 1): the current one is injected.
    pub fn of(sidecarset: &'a SidecarSet) -> Option<Self> {
        let revision = sidecarset.spec.injection_strategy.revision.as_ref()?;
        match (&revision.revision_name, &revision.custom_version) {
            (Some(name), _) => Some(Self::Named(name)),
            (None, Some(version)) => Some(Self::CustomVersion {
                sidecarset: sidecarset.name(),
                version,
            }),
            (None, None) => None,
        }
    }

    /// The label selector of the `customVersion` list.
    pub fn label_selector(sidecarset: &str, version: &str) -> String {
        format!("{REVISION_SIDECARSET_LABEL}={sidecarset},{CUSTOM_VERSION_LABEL}={version}")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// No revision of the SidecarSet carries the custom version (upstream's NotFound text).
    #[error("ControllerRevision.apps {0:?} not found")]
    NotFound(String),
    /// The cluster could not answer.
    #[error("{0}")]
    Lookup(String),
    #[error("ControllerRevision {revision:?} does not restore a SidecarSet: {reason}")]
    Restore { revision: String, reason: String },
}

/// The newest listed revision that carries both labels, by (revision, creationTimestamp, name)
/// as `history.SortControllerRevisions` orders them.
pub fn newest<'v>(revisions: &'v [Value], sidecarset: &str, version: &str) -> Option<&'v Value> {
    let label = |revision: &Value, key: &str| {
        revision
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    // API-server timestamps are canonical UTC RFC 3339, so text order is time order.
    let order = |revision: &Value| {
        let meta = revision.get("metadata");
        let text = |key| meta.and_then(|m| m.get(key)).and_then(Value::as_str);
        (
            revision
                .get("revision")
                .and_then(Value::as_i64)
                .unwrap_or(0),
            text("creationTimestamp").unwrap_or("").to_string(),
            text("name").unwrap_or("").to_string(),
        )
    };
    revisions
        .iter()
        .filter(|r| label(r, REVISION_SIDECARSET_LABEL).as_deref() == Some(sidecarset))
        .filter(|r| label(r, CUSTOM_VERSION_LABEL).as_deref() == Some(version))
        .max_by_key(|r| order(r))
}

/// The SidecarSet `revision` recorded (upstream's strategic merge of the revision's data onto
/// `current`): Kruise records `{"spec": {"$patch": "replace", ...}}`, so the spec is the
/// recorded one and the rest the current object's. Then the hash annotations the revision
/// carries (computed from the restored containers when it has none) and `status.latestRevision`
/// set to the revision's name. Data in any other shape is refused rather than half-applied.
pub fn restore(current: &SidecarSet, revision: &Value) -> Result<SidecarSet, HistoryError> {
    let name = revision
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let spec = match revision.get("data") {
        None | Some(Value::Null) => return Ok(restored(current.clone(), revision, name)),
        Some(data) => recorded_spec(data).ok_or_else(|| HistoryError::Restore {
            revision: name.to_string(),
            reason: format!(
                "its data is not a SidecarSet revision as Kruise records it \
                 ({{\"spec\": {{\"$patch\": \"replace\", ...}}}}): {data}"
            ),
        })?,
    };
    let decoded =
        SidecarSet::deserialize_value(&serde_json::json!({ "spec": spec })).map_err(|e| {
            HistoryError::Restore {
                revision: name.to_string(),
                reason: e.to_string(),
            }
        })?;
    let mut history = current.clone();
    history.spec = decoded.spec;
    Ok(restored(history, revision, name))
}

/// The spec a `{"spec": {"$patch": "replace", ...}}` patch leaves, its directives removed.
fn recorded_spec(data: &Value) -> Option<Value> {
    let data = data.as_object()?;
    let spec = data.get("spec")?.as_object()?;
    let only_spec = data.keys().all(|k| k == "spec" || k.starts_with('$'));
    let replaced = spec.get("$patch").is_some_and(|d| d == "replace");
    (only_spec && replaced).then(|| Value::Object(without_directives(spec)))
}

/// A replacement map with its `$` directives removed, nested maps included.
fn without_directives(map: &Map<String, Value>) -> Map<String, Value> {
    // Inserted one by one: collecting into the map would link another sort into the module.
    let mut out = Map::new();
    for (key, value) in map.iter().filter(|(key, _)| !key.starts_with('$')) {
        let value = match value {
            Value::Object(inner) => Value::Object(without_directives(inner)),
            other => other.clone(),
        };
        out.insert(key.clone(), value);
    }
    out
}

/// `restoreRevisionInfo`: the revision's hashes (or the restored containers') and its name.
fn restored(mut restored: SidecarSet, revision: &Value, name: &str) -> SidecarSet {
    let recorded = |key: &str| {
        revision
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let (hash, without_image) = (
        recorded(SIDECARSET_HASH),
        recorded(SIDECARSET_HASH_WITHOUT_IMAGE),
    );
    let computed =
        (hash.is_none() || without_image.is_none()).then(|| hash::compute(&hashed_spec(&restored)));
    let annotations = restored.metadata.annotations.get_or_insert_default();
    for (key, value, fallback) in [
        (SIDECARSET_HASH, hash, computed.as_ref().map(|c| &c.hash)),
        (
            SIDECARSET_HASH_WITHOUT_IMAGE,
            without_image,
            computed.as_ref().map(|c| &c.without_image),
        ),
    ] {
        if let Some(value) = value.or_else(|| fallback.cloned()) {
            annotations.insert(key.to_string(), value);
        }
    }
    restored
        .status
        .get_or_insert_with(SidecarSetStatus::default)
        .latest_revision = Some(name.to_string());
    restored
}

#[cfg(test)]
mod tests;
