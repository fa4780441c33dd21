//! Decoding the SidecarSets in force. A pod CREATE decodes each listed SidecarSet only as far as
//! selection needs (`SidecarSetHead`) and the matched ones in full: most do not select the pod.

use crate::admission;
use crate::api::{LabelSelector, SidecarSet, SidecarSetHead};
use crate::inject::{self, InjectError, NamespaceLookup, Selectable};
use crate::selector::Labels;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;

pub(super) enum SelectError {
    Inject(InjectError),
    List(String),
}

impl From<InjectError> for SelectError {
    fn from(error: InjectError) -> Self {
        SelectError::Inject(error)
    }
}

/// A `SidecarSetList` with its items left as raw JSON: building a `Value` tree of every item
/// costs more than scanning each twice.
#[derive(Deserialize)]
struct RawList<'a> {
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

fn raw_items(list: &[u8]) -> Result<Vec<&RawValue>, String> {
    serde_json::from_slice::<RawList>(list)
        .map(|list| list.items.unwrap_or_default())
        .map_err(|e| format!("the SidecarSet list is not a SidecarSetList: {e}"))
}

/// A listed SidecarSet: its head for selection, its raw JSON for the full decode.
struct Listed<'a> {
    head: SidecarSetHead,
    raw: &'a RawValue,
}

impl Selectable for Listed<'_> {
    fn name(&self) -> &str {
        self.head.name()
    }
    fn annotation(&self, key: &str) -> Option<&str> {
        self.head.annotation(key)
    }
    fn selector(&self) -> Option<&LabelSelector> {
        self.head.selector()
    }
    fn injection_paused(&self) -> bool {
        self.head.injection_paused()
    }
    fn namespace_selector(&self) -> Option<Cow<'_, LabelSelector>> {
        self.head.namespace_selector()
    }
}

/// §3.2 over the cluster's list, in injection order.
pub(super) fn select(
    list: &[u8],
    namespace: &str,
    labels: &Labels,
    lookup: &mut dyn NamespaceLookup,
    warnings: &mut Vec<String>,
) -> Result<Vec<SidecarSet>, SelectError> {
    let items = raw_items(list).map_err(SelectError::List)?;
    let mut listed = Vec::with_capacity(items.len());
    for raw in items {
        match serde_json::from_str::<SidecarSetHead>(raw.get()) {
            Ok(head) => listed.push(Listed { head, raw }),
            Err(error) => warnings.push(undecodable(raw, &error)),
        }
    }
    let mut matched = Vec::new();
    for item in inject::matching(namespace, labels, &listed, lookup)? {
        matched.extend(full(item.raw, warnings));
    }
    inject::drop_canary_bases(&mut matched);
    Ok(matched)
}

/// Every listed SidecarSet in full (SidecarSet admission compares with all of them).
pub(super) fn decode_all(
    list: &[u8],
    warnings: &mut Vec<String>,
) -> Result<Vec<SidecarSet>, String> {
    let mut out = Vec::new();
    for raw in raw_items(list)? {
        out.extend(full(raw, warnings));
    }
    Ok(out)
}

/// The settings' inline SidecarSets, with the defaults a kubectl-created one would get.
pub(super) fn decode_inline(inline: &[Value], warnings: &mut Vec<String>) -> Vec<SidecarSet> {
    let mut out = Vec::with_capacity(inline.len());
    for item in inline {
        let mut item = item.clone();
        admission::apply_defaults(&mut item);
        out.extend(decode_value(&item, warnings));
    }
    out
}

/// Through `Value`, the one decoder the full type is compiled for (a second doubles its code).
fn full(raw: &RawValue, warnings: &mut Vec<String>) -> Option<SidecarSet> {
    match serde_json::from_str::<Value>(raw.get()) {
        Ok(item) => decode_value(&item, warnings),
        Err(error) => {
            warnings.push(ignoring("", &error));
            None
        }
    }
}

/// One item in full; one that does not decode is skipped with a warning, as an informer drops it.
fn decode_value(item: &Value, warnings: &mut Vec<String>) -> Option<SidecarSet> {
    SidecarSet::deserialize_value(item)
        .map_err(|error| warnings.push(ignoring(name_of(item), &error)))
        .ok()
}

fn undecodable(raw: &RawValue, error: &serde_json::Error) -> String {
    let item = serde_json::from_str::<Value>(raw.get()).unwrap_or_default();
    ignoring(name_of(&item), error)
}

fn name_of(item: &Value) -> &str {
    item.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn ignoring(name: &str, error: &serde_json::Error) -> String {
    format!("ignoring SidecarSet {name:?} that does not decode: {error}")
}
