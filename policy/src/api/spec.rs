//! `SidecarSet`, its spec, strategies and status.

use super::nullable::or_default;
use super::values;
use super::{IntOrString, LabelSelector, ObjectMeta, SidecarContainer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;

mod text;

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSet {
    #[serde(default, deserialize_with = "or_default")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "or_default")]
    pub spec: SidecarSetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SidecarSetStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// v1alpha1 only: converted to a `kubernetes.io/metadata.name` namespaceSelector.
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub init_containers: Vec<SidecarContainer>,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub containers: Vec<SidecarContainer>,
    /// core/v1 Volumes, kept as JSON (schemaless in the CRD).
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub volumes: Vec<Value>,
    #[serde(default, deserialize_with = "or_default")]
    pub update_strategy: SidecarSetUpdateStrategy,
    #[serde(default, deserialize_with = "or_default")]
    pub injection_strategy: SidecarSetInjectionStrategy,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub patch_pod_metadata: Vec<PatchPodMetadata>,
    /// v1beta1 only.
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub custom_version: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetUpdateStrategy {
    #[serde(
        rename = "type",
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub type_: String,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "is_false"
    )]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub scatter_strategy: Vec<ScatterTerm>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityStrategy {
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub weight_priority: Vec<WeightPriority>,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub order_priority: Vec<OrderPriority>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WeightPriority {
    #[serde(default, deserialize_with = "or_default")]
    pub weight: i32,
    #[serde(default, deserialize_with = "or_default")]
    pub match_selector: LabelSelector,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderPriority {
    #[serde(default, deserialize_with = "or_default")]
    pub ordered_key: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScatterTerm {
    #[serde(default, deserialize_with = "or_default")]
    pub key: String,
    #[serde(default, deserialize_with = "or_default")]
    pub value: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectionStrategy {
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "is_false"
    )]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<SidecarSetInjectRevision>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectRevision {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_name: Option<String>,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub policy: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalObjectReference {
    #[serde(default, deserialize_with = "or_default")]
    pub name: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchPodMetadata {
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub annotations: BTreeMap<String, String>,
    #[serde(
        default,
        deserialize_with = "or_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub patch_policy: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, deserialize_with = "or_default")]
    pub matched_pods: i32,
    #[serde(default, deserialize_with = "or_default")]
    pub updated_pods: i32,
    #[serde(default, deserialize_with = "or_default")]
    pub ready_pods: i32,
    #[serde(default, deserialize_with = "or_default")]
    pub updated_ready_pods: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
}

impl Serialize for SidecarSet {
    /// Always writes `apiVersion` and `kind`, as the API server expects on create.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<'a> {
            api_version: &'static str,
            kind: &'static str,
            metadata: &'a ObjectMeta,
            spec: &'a SidecarSetSpec,
            #[serde(skip_serializing_if = "Option::is_none")]
            status: &'a Option<SidecarSetStatus>,
        }
        Wire {
            api_version: <SidecarSet as k8s_openapi::Resource>::API_VERSION,
            kind: <SidecarSet as k8s_openapi::Resource>::KIND,
            metadata: &self.metadata,
            spec: &self.spec,
            status: &self.status,
        }
        .serialize(serializer)
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl SidecarSet {
    /// Decode from JSON as served (unknown fields ignored, `null` as zero values).
    pub fn deserialize_value(value: &Value) -> Result<Self, serde_json::Error> {
        Self::from_value(value.clone())
    }

    /// As `deserialize_value`, taking the JSON: its strings and maps move into the result. The
    /// one decoder the full type is compiled for (a second would double its code in the module).
    pub fn from_value(value: Value) -> Result<Self, serde_json::Error> {
        SidecarSet::deserialize(value)
    }

    /// Straight from JSON text, without a `Value` tree (a third of the cost), when the text has
    /// the plain shape: then equal to `from_value`'s result. `Err` only says "not plain": decode
    /// through `from_value`, whose errors name the problem.
    pub fn from_plain_json(text: &str) -> Result<Self, serde_json::Error> {
        text::decode(text)
    }

    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .map(String::as_str)
    }

    /// The v1beta1 namespaceSelector: a v1alpha1 `namespace` wins over `namespaceSelector` (§1.8).
    pub fn effective_namespace_selector(&self) -> Option<LabelSelector> {
        namespace_selector_of(&self.spec.namespace, self.spec.namespace_selector.as_ref())
            .map(Cow::into_owned)
    }

    /// Whether any init container is a native sidecar (`restartPolicy: Always`).
    pub fn has_native_sidecar(&self) -> bool {
        self.spec
            .init_containers
            .iter()
            .any(SidecarContainer::is_native_sidecar)
    }
}

/// §1.8 conversion: a v1alpha1 `namespace` becomes a `kubernetes.io/metadata.name` selector and
/// wins over `namespaceSelector`; borrowed when there is nothing to convert.
pub fn namespace_selector_of<'a>(
    namespace: &str,
    namespace_selector: Option<&'a LabelSelector>,
) -> Option<Cow<'a, LabelSelector>> {
    if namespace.is_empty() {
        return namespace_selector.map(Cow::Borrowed);
    }
    Some(Cow::Owned(LabelSelector {
        match_labels: Some(BTreeMap::from([(
            values::NAMESPACE_NAME_LABEL.to_string(),
            namespace.to_string(),
        )])),
        match_expressions: None,
    }))
}
