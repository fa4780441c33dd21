//! The part of a SidecarSet that selection (§3.2) reads. A pod CREATE decodes every listed
//! SidecarSet only this far, and the few that match in full.

use super::LabelSelector;
use super::nullable::or_default;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct SidecarSetHead {
    #[serde(default, deserialize_with = "or_default")]
    pub metadata: HeadMetadata,
    #[serde(default, deserialize_with = "or_default")]
    pub spec: HeadSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct HeadMetadata {
    #[serde(default, deserialize_with = "or_default")]
    pub name: String,
    #[serde(default, deserialize_with = "or_default")]
    pub annotations: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeadSpec {
    #[serde(default)]
    pub selector: Option<LabelSelector>,
    #[serde(default, deserialize_with = "or_default")]
    pub namespace: String,
    #[serde(default)]
    pub namespace_selector: Option<LabelSelector>,
    #[serde(default, deserialize_with = "or_default")]
    pub injection_strategy: HeadInjectionStrategy,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct HeadInjectionStrategy {
    #[serde(default, deserialize_with = "or_default")]
    pub paused: bool,
}
