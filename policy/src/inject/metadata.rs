//! §3.6 patchPodMetadata: Retain, Overwrite and MergePatchJson on pod annotations.

use crate::api::{PatchPodMetadata, values};
use crate::selector::Labels;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("patchPodMetadata MergePatchJson of annotation {key}: {reason}")]
pub struct PatchMetadataError {
    pub key: String,
    pub reason: String,
}

/// Apply every entry, in order, to `annotations`. Unknown policies are ignored, as upstream.
pub fn patch_pod_metadata(
    annotations: &mut Labels,
    patches: &[PatchPodMetadata],
) -> Result<(), PatchMetadataError> {
    for patch in patches {
        match patch.patch_policy.as_str() {
            "" | values::RETAIN => {
                for (key, value) in &patch.annotations {
                    annotations
                        .entry(key.clone())
                        .or_insert_with(|| value.clone());
                }
            }
            values::OVERWRITE => {
                for (key, value) in &patch.annotations {
                    annotations.insert(key.clone(), value.clone());
                }
            }
            values::MERGE_PATCH_JSON => {
                for (key, value) in &patch.annotations {
                    let merged = match annotations.get(key).filter(|v| !v.is_empty()) {
                        Some(existing) => {
                            merge_json(existing, value).map_err(|reason| PatchMetadataError {
                                key: key.clone(),
                                reason,
                            })?
                        }
                        None => value.clone(),
                    };
                    annotations.insert(key.clone(), merged);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// RFC 7386 merge of two JSON documents, re-serialised compactly with sorted keys.
fn merge_json(existing: &str, patch: &str) -> Result<String, String> {
    let mut document: Value =
        serde_json::from_str(existing).map_err(|e| format!("existing value is not JSON: {e}"))?;
    let patch: Value =
        serde_json::from_str(patch).map_err(|e| format!("configured value is not JSON: {e}"))?;
    merge_patch(&mut document, &patch);
    serde_json::to_string(&document).map_err(|e| e.to_string())
}

fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    if let Value::Object(target) = target {
        for (key, value) in patch {
            if value.is_null() {
                target.remove(key);
            } else {
                merge_patch(target.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(policy: &str, pairs: &[(&str, &str)]) -> PatchPodMetadata {
        PatchPodMetadata {
            annotations: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            patch_policy: policy.into(),
        }
    }

    fn map(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn retain_and_overwrite() {
        let patches = [
            patch("Retain", &[("key1", "value1")]),
            patch("Overwrite", &[("key2", "value2")]),
        ];
        let mut fresh = Labels::new();
        patch_pod_metadata(&mut fresh, &patches).unwrap();
        assert_eq!(fresh, map(&[("key1", "value1"), ("key2", "value2")]));
        let mut old = map(&[("key1", "old"), ("key2", "old")]);
        patch_pod_metadata(&mut old, &patches).unwrap();
        assert_eq!(old, map(&[("key1", "old"), ("key2", "value2")]));
    }

    #[test]
    fn merge_patch_json_sorts_keys() {
        let mut pod = map(&[
            ("key1", r#"{"log-agent":1}"#),
            ("key2", r#"{"log-agent":1}"#),
        ]);
        let patches = [patch(
            "MergePatchJson",
            &[
                ("key1", r#"{"log-agent":1}"#),
                ("key2", r#"{"envoy":2}"#),
                ("key3", r#"{"probe":5}"#),
            ],
        )];
        patch_pod_metadata(&mut pod, &patches).unwrap();
        assert_eq!(pod["key1"], r#"{"log-agent":1}"#);
        assert_eq!(pod["key2"], r#"{"envoy":2,"log-agent":1}"#);
        assert_eq!(pod["key3"], r#"{"probe":5}"#);
        let before = pod.clone();
        patch_pod_metadata(&mut pod, &patches[..1]).unwrap();
        assert_eq!(pod, before, "merging the same value changes nothing");
    }

    #[test]
    fn merge_patch_json_rejects_invalid_json() {
        let mut pod = map(&[("key", "not json")]);
        let error = patch_pod_metadata(&mut pod, &[patch("MergePatchJson", &[("key", "{}")])]);
        assert!(error.is_err());
    }
}
