//! A pod container's env vars by name. A container read by shape (`pod::SHAPE`) keeps its env as
//! text: its vars are found there without building any, and a var is built only when a sidecar
//! copies it (pods carry dozens, a sidecar takes two or three).

use crate::inject::pod::{list, name_of};
use crate::rawjson::{Cursor, ScanError, plain_ascii_string, plain_str};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// One env var of a pod container: built, or its JSON text (checked by the shaped read).
#[derive(Debug, Clone, Copy)]
pub(crate) enum EnvVar<'a> {
    Built(&'a Value),
    Text(&'a [u8]),
}

impl EnvVar<'_> {
    /// The var as a JSON value, built from its text when it was not built.
    pub(crate) fn to_value(self) -> Value {
        match self {
            EnvVar::Built(value) => value.clone(),
            // The shaped read took this text only because serde_json reads it the same way.
            EnvVar::Text(text) => crate::rawjson::value::parse(text)
                .or_else(|| serde_json::from_slice(text).ok())
                .unwrap_or(Value::Null),
        }
    }

    /// Whether its `value` member is the string `wanted` (how upstream reads `IS_INJECTED`).
    pub(crate) fn value_is(self, wanted: &str) -> bool {
        let value_is = |var: &Value| var.get("value").and_then(Value::as_str) == Some(wanted);
        match self {
            EnvVar::Built(var) => value_is(var),
            EnvVar::Text(_) => value_is(&self.to_value()),
        }
    }
}

/// A named env var: the name as `name_of` reads it ("" when it is not a string).
pub(crate) type NamedEnvVar<'a> = (Cow<'a, str>, EnvVar<'a>);

/// Where a container read by shape keeps its env's text (`Shape::Text`).
const ENV_TEXT: &str = "\u{2}env";

fn env_text(container: &Map<String, Value>) -> Option<&[u8]> {
    container
        .get(ENV_TEXT)
        .and_then(Value::as_str)
        .map(str::as_bytes)
}

/// The env vars of a pod container, in order; empty when its env is absent or not a list of
/// objects (`check_shape` rejects that pod first; the shaped read keeps only lists of objects
/// as text).
pub(crate) fn env_of(container: &Map<String, Value>) -> Vec<NamedEnvVar<'_>> {
    match env_text(container) {
        Some(text) => text_items(text)
            .unwrap_or_default()
            .into_iter()
            .map(|(item, name)| (name, EnvVar::Text(item)))
            .collect(),
        None => list(container, "env")
            .iter()
            .map(|var| (Cow::Borrowed(name_of(var)), EnvVar::Built(var)))
            .collect(),
    }
}

/// An env var's text and its name.
type ItemText<'a> = (&'a [u8], Cow<'a, str>);

/// The items of an env's text with their names (none for null). The shaped read checked the
/// text and its shape, so this fails only on text from elsewhere.
fn text_items(env: &[u8]) -> Result<Vec<ItemText<'_>>, ScanError> {
    let mut items = Vec::new();
    let mut cursor = Cursor::new(env);
    let Some(mut list) = cursor.array()? else {
        return Ok(items);
    };
    while cursor.next_item(&mut list)? {
        let at = cursor.position();
        // Most vars are `{"name":…,"value":…}` as the API server writes them: read in one go.
        if let Some((name, end)) = compact_var(env, at) {
            cursor = Cursor::at(env, end);
            items.push((env.get(at..end).unwrap_or_default(), Cow::Borrowed(name)));
            continue;
        }
        let item = cursor.skip()?;
        if item.first() != Some(&b'{') {
            return Err(ScanError(at));
        }
        items.push((item, name_in(item)));
    }
    Ok(items)
}

/// A var written `{"name":"…"}` or `{"name":"…","value":"…"}` with plain ASCII strings at `at`:
/// its name and end. Nothing else is in it, so that name is the one a map keeps.
fn compact_var(text: &[u8], at: usize) -> Option<(&str, usize)> {
    const NAME: &[u8] = b"{\"name\":\"";
    const VALUE: &[u8] = b",\"value\":\"";
    if !text.get(at..)?.starts_with(NAME) {
        return None;
    }
    let (name, after) = plain_ascii_string(text, at + NAME.len() - 1)?;
    let end = match text.get(after)? {
        b'}' => after,
        b',' if text.get(after..)?.starts_with(VALUE) => {
            plain_ascii_string(text, after + VALUE.len() - 1)?.1
        }
        _ => return None,
    };
    (text.get(end) == Some(&b'}')).then_some((name, end + 1))
}

/// `name_of` over an env var's text: its last `name` member when that is a string, else "".
fn name_in(item: &[u8]) -> Cow<'_, str> {
    let mut cursor = Cursor::new(item);
    let mut name = None;
    if let Ok(Some(mut members)) = cursor.object() {
        while let Ok(Some(key)) = cursor.next_name(&mut members) {
            let Ok(value) = cursor.skip() else { break };
            if key.is("name") {
                name = Some(value);
            }
        }
    }
    match name {
        Some(text) if text.first() == Some(&b'"') => plain_str(text).map_or_else(
            || Cow::Owned(serde_json::from_slice(text).unwrap_or_default()),
            Cow::Borrowed,
        ),
        _ => Cow::Borrowed(""),
    }
}

#[cfg(test)]
mod tests;
