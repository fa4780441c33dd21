//! `SidecarSetHead` read from JSON text with a `rawjson` cursor, in the same pass that finds the
//! item's end: exact for the shapes it accepts; anything else (wrong types, duplicate fields) is
//! `Fallback`, and the caller lets serde decide.

use super::{HeadInjectionStrategy, HeadMetadata, HeadSpec, SELECTION_ANNOTATIONS, SidecarSetHead};
use crate::api::LabelSelector;
use crate::rawjson::{Cursor, Members, ScanError, plain_contents, plain_str};
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
    let mut head = SidecarSetHead::default();
    let mut members = object(cursor)?.ok_or(Fallback)?;
    let mut seen = Seen::default();
    while let Some(key) = cursor.next_name(&mut members)? {
        if key.is("metadata") {
            seen.once(0)?;
            head.metadata = metadata(cursor)?;
        } else if key.is("spec") {
            seen.once(1)?;
            head.spec = spec(cursor)?;
        } else {
            cursor.skip()?;
        }
    }
    Ok(head)
}

fn metadata(cursor: &mut Cursor<'_>) -> Read<HeadMetadata> {
    let mut metadata = HeadMetadata::default();
    let Some(mut members) = object(cursor)? else {
        return Ok(metadata);
    };
    let mut seen = Seen::default();
    while let Some(key) = cursor.next_name(&mut members)? {
        if key.is("name") {
            seen.once(0)?;
            metadata.name = string_or_null(cursor)?.unwrap_or_default();
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
                if let Some(wanted) = SELECTION_ANNOTATIONS.iter().find(|k| key.is(k)) {
                    let value = serde_json::from_slice(value)?;
                    if metadata
                        .annotations
                        .insert(wanted.to_string(), value)
                        .is_some()
                    {
                        return Err(Fallback);
                    }
                }
            }
        } else {
            cursor.skip()?;
        }
    }
    Ok(metadata)
}

fn spec(cursor: &mut Cursor<'_>) -> Read<HeadSpec> {
    let mut spec = HeadSpec::default();
    let Some(mut members) = object(cursor)? else {
        return Ok(spec);
    };
    let mut seen = Seen::default();
    while let Some(key) = cursor.next_name(&mut members)? {
        if key.is("selector") {
            seen.once(0)?;
            spec.selector = selector(cursor)?;
        } else if key.is("namespace") {
            seen.once(1)?;
            spec.namespace = string_or_null(cursor)?.unwrap_or_default();
        } else if key.is("namespaceSelector") {
            seen.once(2)?;
            spec.namespace_selector = selector(cursor)?;
        } else if key.is("injectionStrategy") {
            seen.once(3)?;
            spec.injection_strategy = injection_strategy(cursor)?;
        } else {
            cursor.skip()?;
        }
    }
    Ok(spec)
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
fn string_or_null(cursor: &mut Cursor<'_>) -> Read<Option<String>> {
    let text = cursor.skip()?;
    if text == b"null" {
        return Ok(None);
    }
    match plain_str(text) {
        Some(plain) => Ok(Some(plain.to_string())),
        None => Ok(serde_json::from_slice(text)?),
    }
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
