//! `SidecarSetHead` read from JSON text with a `rawjson` cursor, in the same pass that finds the
//! item's end: exact for the shapes it accepts; anything else (wrong types, duplicate fields) is
//! `Fallback`, and the caller lets serde decide.

use super::{HeadInjectionStrategy, HeadMetadata, HeadSpec, SELECTION_ANNOTATIONS, SidecarSetHead};
use crate::rawjson::{Cursor, Members, ScanError, key_is};
use serde::de::DeserializeOwned;

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
    while let Some(key) = cursor.next_key(&mut members)? {
        if key_is(key, "metadata") {
            seen.once("metadata")?;
            head.metadata = metadata(cursor)?;
        } else if key_is(key, "spec") {
            seen.once("spec")?;
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
    while let Some(key) = cursor.next_key(&mut members)? {
        if key_is(key, "name") {
            seen.once("name")?;
            metadata.name = decode::<Option<String>>(cursor)?.unwrap_or_default();
        } else if key_is(key, "annotations") {
            seen.once("annotations")?;
            let Some(mut annotations) = object(cursor)? else {
                continue;
            };
            while let Some(key) = cursor.next_key(&mut annotations)? {
                let value = cursor.skip()?;
                // serde would reject a non-string value anywhere in the map.
                if value.first() != Some(&b'"') {
                    return Err(Fallback);
                }
                if let Some(wanted) = SELECTION_ANNOTATIONS.iter().find(|k| key_is(key, k)) {
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
    while let Some(key) = cursor.next_key(&mut members)? {
        if key_is(key, "selector") {
            seen.once("selector")?;
            spec.selector = decode(cursor)?;
        } else if key_is(key, "namespace") {
            seen.once("namespace")?;
            spec.namespace = decode::<Option<String>>(cursor)?.unwrap_or_default();
        } else if key_is(key, "namespaceSelector") {
            seen.once("namespaceSelector")?;
            spec.namespace_selector = decode(cursor)?;
        } else if key_is(key, "injectionStrategy") {
            seen.once("injectionStrategy")?;
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
    while let Some(key) = cursor.next_key(&mut members)? {
        if key_is(key, "paused") {
            seen.once("paused")?;
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

/// serde rejects a duplicate field; so does the scan, by handing over.
#[derive(Default)]
struct Seen(Vec<&'static str>);

impl Seen {
    fn once(&mut self, field: &'static str) -> Read<()> {
        if self.0.contains(&field) {
            return Err(Fallback);
        }
        self.0.push(field);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
