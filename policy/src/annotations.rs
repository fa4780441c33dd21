//! Every pod and SidecarSet annotation key and value format (§0, §3.9, §5.9), byte-compatible
//! with OpenKruise. Policy, controller and host use only this module for them.

use crate::api::nullable::or_default;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

mod timestamp;
mod upgrade_spec;

pub use timestamp::rfc3339;

pub const SIDECARSET_HASH: &str = "kruise.io/sidecarset-hash";
pub const SIDECARSET_HASH_WITHOUT_IMAGE: &str = "kruise.io/sidecarset-hash-without-image";
pub const INJECTED_LIST: &str = "kruise.io/sidecarset-injected-list";
pub const WORKING_HOT_UPGRADE_CONTAINER: &str = "kruise.io/sidecarset-working-hotupgrade-container";
pub const INPLACE_UPDATE_STATE: &str = "kruise.io/sidecarset-inplace-update-state";
pub const VERSION_PREFIX: &str = "version.sidecarset.kruise.io/";
pub const VERSION_ALT_PREFIX: &str = "versionalt.sidecarset.kruise.io/";
pub const CANARY: &str = "apps.kruise.io/sidecarset-canary";
pub const CANARY_BASE: &str = "apps.kruise.io/sidecarset-base";
pub const CUSTOM_VERSION_LABEL: &str = "apps.kruise.io/sidecarset-custom-version";
/// ControllerRevision label naming the SidecarSet it records (§0.3).
pub const REVISION_SIDECARSET_LABEL: &str = "kruise.io/sidecarset-name";
/// Where Kruise keeps SidecarSet ControllerRevisions unless told otherwise (§0.3).
pub const DEFAULT_REVISION_NAMESPACE: &str = "kruise-system";
/// Pod condition type written by the controller (§5.11).
pub const UPGRADABLE_CONDITION: &str = "SidecarSetUpgradable";

/// Env var every injected container carries.
pub const IS_INJECTED_ENV: &str = "IS_INJECTED";
pub const SIDECARSET_VERSION_ENV: &str = "SIDECARSET_VERSION";
pub const SIDECARSET_VERSION_ALT_ENV: &str = "SIDECARSET_VERSION_ALT";

/// `version.sidecarset.kruise.io/<container>`.
pub fn version_key(container: &str) -> String {
    format!("{VERSION_PREFIX}{container}")
}

/// `versionalt.sidecarset.kruise.io/<container>`.
pub fn version_alt_key(container: &str) -> String {
    format!("{VERSION_ALT_PREFIX}{container}")
}

/// One SidecarSet's entry of the pod hash annotations, fields in Go declaration order. It is
/// read as Go reads it (`upgrade_spec`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpgradeSpec {
    /// RFC 3339 UTC seconds; `None` is Go's zero time, written as `null`.
    pub update_timestamp: Option<String>,
    pub hash: String,
    pub sidecar_set_name: String,
    /// Not omitempty upstream: `null` when absent.
    pub sidecar_list: Option<Vec<String>>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub controller_revision: String,
}

/// SidecarSet name → entry; a BTreeMap so keys serialise sorted, as Go maps do.
pub type HashAnnotation = BTreeMap<String, UpgradeSpec>;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("annotation {key} is neither a map of UpgradeSpec nor of strings: {reason}")]
pub struct HashAnnotationError {
    pub key: &'static str,
    pub reason: String,
}

/// Parse a pod hash annotation: the struct form, else the legacy `{"name":"hash"}` form (§3.7).
/// Absent or empty values give an empty map.
pub fn parse_hash_annotation(
    key: &'static str,
    value: Option<&str>,
) -> Result<HashAnnotation, HashAnnotationError> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Ok(HashAnnotation::new());
    };
    match serde_json::from_str::<HashAnnotation>(value) {
        Ok(parsed) => Ok(parsed),
        Err(struct_error) => legacy_hashes(value).ok_or_else(|| HashAnnotationError {
            key,
            reason: struct_error.to_string(),
        }),
    }
}

/// The legacy `{"name":"hash"}` form (Go reads a `null` hash as ""). Read through `Value`, whose
/// decoder the module has anyway: a map decoder of its own would cost kilobytes of wasm.
fn legacy_hashes(value: &str) -> Option<HashAnnotation> {
    let serde_json::Value::Object(legacy) = serde_json::from_slice(value.as_bytes()).ok()? else {
        return None;
    };
    let mut entries = Vec::with_capacity(legacy.len());
    for (name, hash) in legacy {
        let hash = match hash {
            serde_json::Value::Null => String::new(),
            serde_json::Value::String(hash) => hash,
            _ => return None,
        };
        let spec = UpgradeSpec {
            hash,
            sidecar_set_name: name.clone(),
            ..UpgradeSpec::default()
        };
        entries.push((name, spec));
    }
    Some(crate::order::map_of(entries))
}

/// The hash entry of one SidecarSet on a pod, `""` when absent or unparsable (§6.3 case 21).
pub fn pod_hash_of(key: &'static str, value: Option<&str>, sidecarset: &str) -> String {
    parse_hash_annotation(key, value)
        .ok()
        .and_then(|mut map| map.remove(sidecarset))
        .map(|spec| spec.hash)
        .unwrap_or_default()
}

/// Compact JSON the way Go writes these annotations (sorted map keys, no whitespace).
pub fn to_json<T: Serialize>(value: &T) -> String {
    // Serialising plain maps/structs of strings cannot fail; fall back to an empty object anyway.
    serde_json::to_string(value).unwrap_or_else(|_| "{}".to_string())
}

/// `kruise.io/sidecarset-injected-list`: comma-separated names. As upstream splits a non-empty
/// value, an empty item (`a,`) is kept.
pub fn parse_injected_list(value: Option<&str>) -> BTreeSet<String> {
    match value {
        None | Some("") => BTreeSet::new(),
        Some(names) => crate::order::set_of(names.split(',').map(str::to_string)),
    }
}

/// Sorted, de-duplicated, comma-joined without spaces.
pub fn format_injected_list(names: &BTreeSet<String>) -> String {
    names
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(",")
}

/// `kruise.io/sidecarset-working-hotupgrade-container`: sidecar name → working container.
/// As upstream's `json.Unmarshal` into a `map[string]string` whose error is only logged: text
/// that is not a JSON object reads as empty, a value that is not a string as "".
pub fn parse_working_map(value: Option<&str>) -> BTreeMap<String, String> {
    let Some(serde_json::Value::Object(map)) =
        value.and_then(|v| serde_json::from_slice(v.as_bytes()).ok())
    else {
        return BTreeMap::new();
    };
    crate::order::map_of(map.into_iter().map(|(sidecar, working)| match working {
        serde_json::Value::String(working) => (sidecar, working),
        _ => (sidecar, String::new()),
    }))
}

/// `kruise.io/sidecarset-inplace-update-state` entry of one SidecarSet (§5.9). A `null` member
/// reads as its zero value, as Go's decoder reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateState {
    #[serde(default, deserialize_with = "or_default")]
    pub revision: String,
    #[serde(default)]
    pub update_timestamp: Option<String>,
    #[serde(default, deserialize_with = "or_default")]
    pub last_container_statuses: BTreeMap<String, InPlaceUpdateContainerStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateContainerStatus {
    #[serde(rename = "imageID", default, deserialize_with = "or_default")]
    pub image_id: String,
}

pub type InPlaceUpdateStates = BTreeMap<String, InPlaceUpdateState>;

/// The in-place update state annotation as upstream's `json.Unmarshal` into a map reads it:
/// `null` is the empty map. An entry that is itself `null` stays an error (upstream dereferences
/// it and panics).
pub fn parse_update_states(value: &str) -> Result<InPlaceUpdateStates, serde_json::Error> {
    Ok(serde_json::from_str::<Option<InPlaceUpdateStates>>(value)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upgrade_spec_serialises_in_go_order() {
        let spec = UpgradeSpec {
            update_timestamp: Some("2025-01-02T03:04:05Z".into()),
            hash: "h".into(),
            sidecar_set_name: "mesh".into(),
            sidecar_list: Some(vec!["envoy".into(), "log-agent".into()]),
            controller_revision: String::new(),
        };
        assert_eq!(
            to_json(&HashAnnotation::from([("mesh".to_string(), spec)])),
            r#"{"mesh":{"updateTimestamp":"2025-01-02T03:04:05Z","hash":"h","sidecarSetName":"mesh","sidecarList":["envoy","log-agent"]}}"#
        );
        let zero = UpgradeSpec::default();
        assert_eq!(
            to_json(&zero),
            r#"{"updateTimestamp":null,"hash":"","sidecarSetName":"","sidecarList":null}"#
        );
    }

    #[test]
    fn hash_annotation_forms() {
        let parsed = parse_hash_annotation(
            SIDECARSET_HASH,
            Some(r#"{"test-sidecarset":{"hash":"aaa"}}"#),
        )
        .unwrap();
        assert_eq!(parsed["test-sidecarset"].hash, "aaa");
        let legacy =
            parse_hash_annotation(SIDECARSET_HASH, Some(r#"{"test-sidecarset":"aaa"}"#)).unwrap();
        assert_eq!(legacy["test-sidecarset"].hash, "aaa");
        assert_eq!(
            legacy["test-sidecarset"].sidecar_set_name,
            "test-sidecarset"
        );
        assert!(parse_hash_annotation(SIDECARSET_HASH, Some("garbage")).is_err());
        assert!(
            parse_hash_annotation(SIDECARSET_HASH, None)
                .unwrap()
                .is_empty()
        );
        assert_eq!(pod_hash_of(SIDECARSET_HASH, Some("garbage"), "x"), "");
    }

    #[test]
    fn working_map_reads_as_go_reads_it() {
        let read = |text: &str| parse_working_map(Some(text));
        assert_eq!(
            read(r#"{"a":"a-1","b":2,"c":null,"d":{"x":1},"a":"a-2"}"#),
            BTreeMap::from([
                ("a".to_string(), "a-2".to_string()),
                ("b".to_string(), String::new()),
                ("c".to_string(), String::new()),
                ("d".to_string(), String::new()),
            ])
        );
        for empty in ["garbage", "[]", "\"a\"", "null", "{"] {
            assert!(read(empty).is_empty(), "{empty}");
        }
        assert!(parse_working_map(None).is_empty());
    }

    #[test]
    fn injected_list_round_trip() {
        let names = parse_injected_list(Some("b,a,,b"));
        // Upstream's split keeps the empty item.
        assert_eq!(format_injected_list(&names), ",a,b");
        assert!(parse_injected_list(Some("")).is_empty());
        assert!(parse_injected_list(None).is_empty());
    }
}
