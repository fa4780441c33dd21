//! `SidecarSetHead` read from JSON text with a `rawjson` cursor, in the same pass that finds the
//! item's end: exact for the shapes it accepts; anything else (wrong types, duplicate fields) is
//! `Fallback`, and the caller lets serde decide.

use super::{HeadInjectionStrategy, SELECTION_ANNOTATIONS, SidecarSetHead};
use crate::api::LabelSelector;
use crate::rawjson::{Cursor, Members, ScanError, plain_contents, plain_str};
use crate::selector::Labels;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;

/// Not the plain shape: serde decides.
#[derive(Debug)]
pub(crate) struct Fallback;

impl From<ScanError> for Fallback {
    fn from(_: ScanError) -> Self {
        Fallback
    }
}

impl From<serde_json::Error> for Fallback {
    fn from(_: serde_json::Error) -> Self {
        Fallback
    }
}

type Read<T> = Result<T, Fallback>;

/// The head of the object at the cursor, which ends up just after it.
pub(crate) fn head(cursor: &mut Cursor<'_>) -> Read<SidecarSetHead> {
    head_text(cursor)?.decode()
}

/// The texts of the selection fields of one SidecarSet, found in one structural pass (duplicated
/// fields and non-string annotations already refused): most listed SidecarSets do not select the
/// pod, and those are then dropped without decoding (allocating) anything.
#[derive(Debug, Default)]
pub(crate) struct HeadText<'a> {
    name: Option<&'a [u8]>,
    /// The values of `SELECTION_ANNOTATIONS`, in its order.
    annotations: [Option<&'a [u8]>; 2],
    selector: Option<&'a [u8]>,
    namespace: Option<&'a [u8]>,
    namespace_selector: Option<&'a [u8]>,
    injection_strategy: HeadInjectionStrategy,
}

/// The selection fields' texts of the object at the cursor, which ends up just after it.
pub(crate) fn head_text<'a>(cursor: &mut Cursor<'a>) -> Read<HeadText<'a>> {
    let mut head = HeadText::default();
    let mut members = object(cursor)?.ok_or(Fallback)?;
    let mut seen = Seen::default();
    while let Some(key) = cursor.next_name(&mut members)? {
        if key.is("metadata") {
            seen.once(0)?;
            metadata(cursor, &mut head)?;
        } else if key.is("spec") {
            seen.once(1)?;
            spec(cursor, &mut head)?;
        } else {
            cursor.skip()?;
        }
    }
    Ok(head)
}

impl HeadText<'_> {
    /// The head these texts decode to, exactly as the one-pass scan read it.
    pub(crate) fn decode(&self) -> Read<SidecarSetHead> {
        let mut head = SidecarSetHead::default();
        if let Some(name) = self.name {
            head.metadata.name = string_or_null(name)?.unwrap_or_default();
        }
        for (wanted, value) in SELECTION_ANNOTATIONS.iter().zip(self.annotations) {
            if let Some(value) = value {
                let value = serde_json::from_slice(value)?;
                head.metadata.annotations.insert(wanted.to_string(), value);
            }
        }
        if let Some(selector) = self.selector {
            head.spec.selector = selector_text(selector)?;
        }
        if let Some(namespace) = self.namespace {
            head.spec.namespace = string_or_null(namespace)?.unwrap_or_default();
        }
        if let Some(selector) = self.namespace_selector {
            head.spec.namespace_selector = selector_text(selector)?;
        }
        head.spec.injection_strategy = self.injection_strategy.clone();
        Ok(head)
    }

    /// Whether the head decodes (as `decode` would) and certainly does not select a pod with
    /// `labels` (§3.2 `pod_matches` is `Ok(false)` whatever the Namespace): its pod selector is
    /// plain `matchLabels` that do not match (or none), its namespaceSelector plain or absent.
    /// `false` when unsure: the head is then decoded and selection decides.
    pub(crate) fn cannot_select(&self, labels: &Labels) -> bool {
        let plain = |text: &[u8]| {
            let inner = text.strip_prefix(b"\"").and_then(|t| t.strip_suffix(b"\""));
            inner.is_some_and(reads_as_itself)
        };
        let plain_or_null = |text: Option<&[u8]>| text.is_none_or(|t| t == b"null" || plain(t));
        plain_or_null(self.name)
            && self.annotations.iter().all(|v| v.is_none_or(plain))
            && plain_or_null(self.namespace)
            && self
                .namespace_selector
                .is_none_or(|text| plain_selects(text, labels).is_some())
            && self
                .selector
                .is_none_or(|text| plain_selects(text, labels) == Some(false))
    }
}

fn metadata<'a>(cursor: &mut Cursor<'a>, head: &mut HeadText<'a>) -> Read<()> {
    let Some(mut members) = object(cursor)? else {
        return Ok(());
    };
    let mut seen = Seen::default();
    while let Some(key) = cursor.next_name(&mut members)? {
        if key.is("name") {
            seen.once(0)?;
            head.name = Some(cursor.skip()?);
        } else if key.is("annotations") {
            seen.once(1)?;
            let Some(mut annotations) = object(cursor)? else {
                continue;
            };
            while let Some(key) = cursor.next_name(&mut annotations)? {
                let value = cursor.skip()?;
                // serde would reject a non-string value anywhere in the map.
                if value.first() != Some(&b'"') {
                    return Err(Fallback);
                }
                let wanted = SELECTION_ANNOTATIONS.iter().position(|k| key.is(k));
                if let Some(slot) = wanted.and_then(|index| head.annotations.get_mut(index))
                    && slot.replace(value).is_some()
                {
                    return Err(Fallback);
                }
            }
        } else {
            cursor.skip()?;
        }
    }
    Ok(())
}

fn spec<'a>(cursor: &mut Cursor<'a>, head: &mut HeadText<'a>) -> Read<()> {
    let Some(mut members) = object(cursor)? else {
        return Ok(());
    };
    let mut seen = Seen::default();
    while let Some(key) = cursor.next_name(&mut members)? {
        if key.is("selector") {
            seen.once(0)?;
            head.selector = Some(cursor.skip()?);
        } else if key.is("namespace") {
            seen.once(1)?;
            head.namespace = Some(cursor.skip()?);
        } else if key.is("namespaceSelector") {
            seen.once(2)?;
            head.namespace_selector = Some(cursor.skip()?);
        } else if key.is("injectionStrategy") {
            seen.once(3)?;
            head.injection_strategy = injection_strategy(cursor)?;
        } else {
            cursor.skip()?;
        }
    }
    Ok(())
}

fn injection_strategy(cursor: &mut Cursor<'_>) -> Read<HeadInjectionStrategy> {
    let mut strategy = HeadInjectionStrategy::default();
    let Some(mut members) = object(cursor)? else {
        return Ok(strategy);
    };
    let mut seen = Seen::default();
    while let Some(key) = cursor.next_name(&mut members)? {
        if key.is("paused") {
            seen.once(0)?;
            strategy.paused = decode::<Option<bool>>(cursor)?.unwrap_or_default();
        } else {
            cursor.skip()?;
        }
    }
    Ok(strategy)
}

/// An object, or `None` for `null` (which `or_default` decodes as the default).
fn object(cursor: &mut Cursor<'_>) -> Read<Option<Members>> {
    Ok(cursor.object()?)
}

fn decode<T: DeserializeOwned>(cursor: &mut Cursor<'_>) -> Read<T> {
    Ok(serde_json::from_slice(cursor.skip()?)?)
}

/// An `Option<String>` as serde reads it; plain strings and `null` without serde's machinery.
fn string_or_null(text: &[u8]) -> Read<Option<String>> {
    if text == b"null" {
        return Ok(None);
    }
    match plain_str(text) {
        Some(plain) => Ok(Some(plain.to_string())),
        None => Ok(serde_json::from_slice(text)?),
    }
}

/// `selector` over a value's whole text.
fn selector_text(text: &[u8]) -> Read<Option<LabelSelector>> {
    let mut cursor = Cursor::new(text);
    let selector = selector(&mut cursor)?;
    cursor.end()?;
    Ok(selector)
}

/// An `Option<LabelSelector>` as serde reads it. The common shape (only `matchLabels`, plain
/// strings) is read directly; any other goes to serde whole, so the result is always serde's.
fn selector(cursor: &mut Cursor<'_>) -> Read<Option<LabelSelector>> {
    let mut probe = cursor.clone();
    if let Some(selector) = match_labels_only(&mut probe) {
        *cursor = probe;
        return Ok(selector);
    }
    decode(cursor)
}

/// `null`, or an object whose members are all `matchLabels` (an object of plain strings, or
/// `null`); `None` for anything else. Strict where the scan is lenient: it stands for serde.
fn match_labels_only(cursor: &mut Cursor<'_>) -> Option<Option<LabelSelector>> {
    let Some(mut members) = cursor.object().ok()? else {
        return Some(None);
    };
    let mut selector = LabelSelector::default();
    while let Some(key) = cursor.next_key(&mut members).ok()? {
        if key != b"matchLabels" {
            return None;
        }
        // serde keeps the last of duplicated members.
        selector.match_labels = string_map(cursor)?;
    }
    Some(Some(selector))
}

/// `null` or an object of plain string keys and values; `None` for anything else.
fn string_map(cursor: &mut Cursor<'_>) -> Option<Option<BTreeMap<String, String>>> {
    let Some(mut members) = cursor.object().ok()? else {
        return Some(None);
    };
    let mut map = BTreeMap::new();
    while let Some(key) = cursor.next_key(&mut members).ok()? {
        let key = plain_contents(key)?;
        let value = plain_str(cursor.skip().ok()?)?;
        map.insert(key.to_string(), value.to_string());
    }
    Some(Some(map))
}

/// Whether the selector text, when it has the shape `match_labels_only` reads, selects `labels`
/// (non-empty `matchLabels`, all present); `None` for any other shape. Nothing is allocated.
fn plain_selects(text: &[u8], labels: &Labels) -> Option<bool> {
    let mut cursor = Cursor::new(text);
    let selects = match cursor.object().ok()? {
        None => false,
        Some(mut members) => {
            // serde keeps the last of duplicated members.
            let mut last = false;
            while let Some(key) = cursor.next_key(&mut members).ok()? {
                if key != b"matchLabels" {
                    return None;
                }
                last = match_labels_select(&mut cursor, labels)?;
            }
            last
        }
    };
    cursor.end().ok()?;
    Some(selects)
}

/// The longest `matchLabels` judged without decoding; longer ones are decoded.
const MAX_PLAIN_LABELS: usize = 8;

/// Whether a `matchLabels` as `string_map` reads it is non-empty and in `labels`; `None` for
/// other shapes and for duplicated keys (the map would keep the last).
fn match_labels_select(cursor: &mut Cursor<'_>, labels: &Labels) -> Option<bool> {
    let Some(mut members) = cursor.object().ok()? else {
        return Some(false);
    };
    let mut keys: [&[u8]; MAX_PLAIN_LABELS] = [&[]; MAX_PLAIN_LABELS];
    let mut count = 0;
    let mut all_present = true;
    while let Some(key) = cursor.next_key(&mut members).ok()? {
        let value = cursor.skip().ok()?;
        let value = value.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
        if !reads_as_itself(key) || !reads_as_itself(value) || keys.get(..count)?.contains(&key) {
            return None;
        }
        *keys.get_mut(count)? = key;
        count += 1;
        // Compared as bytes: the pod has a handful of labels, and no `str` is needed.
        all_present &= labels
            .iter()
            .any(|(k, v)| k.as_bytes() == key && v.as_bytes() == value);
    }
    Some(count > 0 && all_present)
}

/// Whether a string's contents decode to themselves (`plain_contents`).
fn reads_as_itself(inner: &[u8]) -> bool {
    plain_contents(inner).is_some()
}

/// serde rejects a duplicate field; so does the scan, by handing over. Fields by index.
#[derive(Default)]
struct Seen(u8);

impl Seen {
    fn once(&mut self, field: u8) -> Read<()> {
        let bit = 1u8 << field;
        if self.0 & bit != 0 {
            return Err(Fallback);
        }
        self.0 |= bit;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
