//! Decoding the SidecarSets in force. A pod CREATE decodes each listed SidecarSet only as far as
//! selection needs (`SidecarSetHead`) and the matched ones in full: most do not select the pod.

use crate::admission;
use crate::api::{LabelSelector, SidecarSet, SidecarSetHead};
use crate::inject::{self, InjectError, NamespaceLookup, Selectable};
use crate::rawjson::{self, Cursor, ScanError};
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

/// A `SidecarSetList` with its items left as raw JSON: serde's reading of the list, when the
/// scan refuses the text (then serde's error message names the problem).
#[derive(Deserialize)]
struct RawList<'a> {
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

fn serde_items(list: &[u8]) -> Result<Vec<&[u8]>, String> {
    match serde_json::from_slice::<RawList>(list) {
        Ok(list) => Ok(list
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|raw| raw.get().as_bytes())
            .collect()),
        Err(e) => Err(format!("the SidecarSet list is not a SidecarSetList: {e}")),
    }
}

/// Calls `each` with the cursor on every item of the list, in one structural pass: building a
/// `Value` tree of every item, or even one serde pass, costs more than the selection after it.
fn scan_items<'a>(
    list: &'a [u8],
    mut each: impl FnMut(&mut Cursor<'a>) -> Result<(), ScanError>,
) -> Result<(), ScanError> {
    let mut cursor = Cursor::new(list);
    let mut top = cursor.object()?.ok_or(ScanError(0))?;
    let mut seen_items = false;
    while let Some(key) = cursor.next_key(&mut top)? {
        if !rawjson::key_is(key, "items") {
            cursor.skip()?;
            continue;
        }
        if std::mem::replace(&mut seen_items, true) {
            return Err(ScanError(cursor.position()));
        }
        if let Some(mut items) = cursor.array()? {
            while cursor.next_item(&mut items)? {
                each(&mut cursor)?;
            }
        }
    }
    cursor.end()
}

fn raw_items(list: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut items = Vec::new();
    let scanned = scan_items(list, |cursor| {
        items.push(cursor.skip()?);
        Ok(())
    });
    match scanned {
        Ok(()) => Ok(items),
        Err(_) => serde_items(list),
    }
}

/// A listed SidecarSet: its head for selection, its raw JSON for the full decode.
struct Listed<'a> {
    head: SidecarSetHead,
    raw: &'a [u8],
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
    let mut heads = Vec::new();
    let scanned = scan_items(list, |cursor| {
        heads.extend(SidecarSetHead::next_in_list(cursor, labels)?);
        Ok(())
    });
    if scanned.is_err() {
        heads = serde_items(list)
            .map_err(SelectError::List)?
            .into_iter()
            .map(|raw| (raw, SidecarSetHead::from_json(raw)))
            .collect();
    }
    let mut listed = Vec::with_capacity(heads.len());
    for (raw, head) in heads {
        match head {
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
        match SidecarSet::from_value(defaulted(item)) {
            Ok(sidecarset) => out.push(sidecarset),
            // The decoder took the item: its name is read again, on this rare path only.
            Err(error) => warnings.push(ignoring(name_of(&defaulted(item)), &error)),
        }
    }
    out
}

fn defaulted(item: &Value) -> Value {
    let mut item = item.clone();
    admission::apply_defaults(&mut item);
    item
}

/// Straight from the text when it has the plain shape, else through `Value` (the reference,
/// whose messages the warnings quote); the tree moves into the result instead of being copied.
/// Invalid UTF-8 reads as U+FFFD, as Go's `json.Unmarshal` reads it.
fn full(raw: &[u8], warnings: &mut Vec<String>) -> Option<SidecarSet> {
    // `from_utf8` first: its word-at-a-time check is far cheaper than the lossy scan.
    let text = std::str::from_utf8(raw).map_or_else(|_| String::from_utf8_lossy(raw), Cow::from);
    if let Ok(sidecarset) = SidecarSet::from_plain_json(&text) {
        return Some(sidecarset);
    }
    let item = match serde_json::from_str::<Value>(&text) {
        Ok(item) => item,
        Err(error) => {
            warnings.push(ignoring("", &error));
            return None;
        }
    };
    match SidecarSet::from_value(item) {
        Ok(sidecarset) => Some(sidecarset),
        // The decoder took the item: its name is read again, on this rare path only.
        Err(error) => {
            warnings.push(undecodable(text.as_bytes(), &error));
            None
        }
    }
}

fn undecodable(raw: &[u8], error: &serde_json::Error) -> String {
    let item = serde_json::from_slice::<Value>(raw).unwrap_or_default();
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
