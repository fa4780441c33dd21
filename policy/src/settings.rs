//! Policy settings: the patchPodMetadata whitelist and optional inline SidecarSets.

use crate::annotations::DEFAULT_REVISION_NAMESPACE;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Unanchored regexes (§2.3); every patched annotation key must match one. `None`: a
    /// SidecarSet that patches pod metadata is rejected, as upstream without its whitelist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_patch_pod_metadata_keys: Option<Vec<String>>,
    /// When present, the whole set of SidecarSets (the cluster is not asked), e.g. for
    /// `kwctl run --settings-json` without a cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sidecar_sets: Option<Vec<Value>>,
    /// The namespace of SidecarSet ControllerRevisions (Kruise's own namespace), read when a
    /// SidecarSet sets `injectionStrategy.revision`; default `kruise-system`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_namespace: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("settings are not valid: {0}")]
    Decode(String),
    #[error(
        "allowPatchPodMetadataKeys[{index}] {pattern:?} is not a valid regular expression: {reason}"
    )]
    Regex {
        index: usize,
        pattern: String,
        reason: String,
    },
    #[error("revisionNamespace {namespace:?} is not a namespace name: {reason}")]
    RevisionNamespace { namespace: String, reason: String },
    #[error("sidecarSets[{index}]: {reason}")]
    SidecarSet { index: usize, reason: String },
}

impl Settings {
    /// Settings from the JSON the host passes; `null` means defaults.
    pub fn from_value(value: &Value) -> Result<Self, SettingsError> {
        if value.is_null() {
            return Ok(Settings::default());
        }
        Settings::deserialize(value).map_err(|e| SettingsError::Decode(e.to_string()))
    }

    /// Where ControllerRevisions are looked up.
    pub fn revision_namespace(&self) -> &str {
        self.revision_namespace
            .as_deref()
            .unwrap_or(DEFAULT_REVISION_NAMESPACE)
    }

    /// The compiled whitelist, `None` when the setting is absent.
    pub fn patch_key_patterns(&self) -> Result<Option<Vec<regex_lite::Regex>>, SettingsError> {
        let Some(patterns) = &self.allow_patch_pod_metadata_keys else {
            return Ok(None);
        };
        patterns
            .iter()
            .enumerate()
            .map(|(index, pattern)| {
                regex_lite::Regex::new(pattern).map_err(|e| SettingsError::Regex {
                    index,
                    pattern: pattern.clone(),
                    reason: e.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_and_rejects_unknown_fields() {
        let settings =
            Settings::from_value(&json!({"allowPatchPodMetadataKeys": ["^team\\.io/"]})).unwrap();
        assert_eq!(
            settings.patch_key_patterns().unwrap().map(|p| p.len()),
            Some(1)
        );
        assert_eq!(
            Settings::from_value(&Value::Null).unwrap(),
            Settings::default()
        );
        assert!(Settings::from_value(&json!({"allowPatchPodMetadataKey": []})).is_err());
        assert!(Settings::from_value(&json!([1])).is_err());
        let bad = Settings::from_value(&json!({"allowPatchPodMetadataKeys": ["("]})).unwrap();
        assert!(matches!(
            bad.patch_key_patterns(),
            Err(SettingsError::Regex { .. })
        ));
    }
}
