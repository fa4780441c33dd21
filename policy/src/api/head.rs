//! The part of a SidecarSet that selection (§3.2) reads. A pod CREATE decodes every listed
//! SidecarSet only this far, and the few that match in full.

use super::LabelSelector;
use super::nullable::or_default;
use crate::annotations::{CANARY, CANARY_BASE};
use crate::rawjson::{Cursor, ScanError};
use crate::selector::Labels;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

mod scan;

/// The annotations selection reads (canary ones); the rest are not kept.
const SELECTION_ANNOTATIONS: [&str; 2] = [CANARY, CANARY_BASE];

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
    /// Only the annotations selection reads.
    #[serde(default, deserialize_with = "selection_annotations")]
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

fn selection_annotations<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    let mut all: BTreeMap<String, String> = or_default(deserializer)?;
    all.retain(|key, _| SELECTION_ANNOTATIONS.contains(&key.as_str()));
    Ok(all)
}

/// A list item's text and its head, or the error serde gives for it.
pub(crate) type ListItem<'a> = (&'a [u8], Result<SidecarSetHead, serde_json::Error>);

impl SidecarSetHead {
    /// The head of one SidecarSet's JSON text: read by scanning (only the selection fields are
    /// decoded), or by serde when the text has a shape the scan does not take, so the result and
    /// any error are serde's.
    pub fn from_json(item: &[u8]) -> Result<Self, serde_json::Error> {
        let mut cursor = Cursor::new(item);
        match scan::head(&mut cursor) {
            Ok(head) if cursor.end().is_ok() => Ok(head),
            _ => serde_json::from_slice(item),
        }
    }

    /// The list item at `cursor`, which moves past it: its text and its head (as `from_json`),
    /// or `None` when it reads plainly and cannot select a pod with `labels` (nothing decoded).
    pub(crate) fn next_in_list<'a>(
        cursor: &mut Cursor<'a>,
        labels: &Labels,
    ) -> Result<Option<ListItem<'a>>, ScanError> {
        let start = cursor.position();
        let mut probe = cursor.clone();
        if let Ok(text) = scan::head_text(&mut probe) {
            if text.cannot_select(labels) {
                *cursor = probe;
                return Ok(None);
            }
            if let Ok(head) = text.decode() {
                *cursor = probe;
                return Ok(Some((cursor.since(start), Ok(head))));
            }
        }
        let raw = cursor.skip()?;
        Ok(Some((raw, serde_json::from_slice(raw))))
    }
}
