//! Reading and editing a pod as JSON: only what injection touches, everything else untouched.

use super::InjectError;
use crate::rawjson::shaped::{Rest, Shape};
use crate::selector::Labels;
use serde_json::{Map, Value};

/// What injection reads of a pod, for reading admission requests (`rawjson::shaped`): every
/// member listed here is built, the others stay text and come out unchanged. A field that a
/// reader here starts to use must be listed. Pod containers and volumes are only ever moved or
/// replaced whole, so their text is kept whole; a container's env is kept as its text too
/// (`share::env` scans it): only the few vars a sidecar copies are ever built.
pub(crate) const SHAPE: Shape = Shape::Object {
    keep: &[
        ("metadata", &METADATA),
        ("spec", &SPEC),
        ("status", &Shape::Full),
    ],
    rest: Rest::Text,
};
const METADATA: Shape = Shape::Object {
    keep: &[
        ("name", &Shape::Full),
        ("generateName", &Shape::Full),
        ("namespace", &Shape::Full),
        ("labels", &Shape::Full),
        ("annotations", &Shape::Full),
        ("deletionTimestamp", &Shape::Full),
    ],
    rest: Rest::Text,
};
const SPEC: Shape = Shape::Object {
    keep: &[
        ("containers", &Shape::Items(&CONTAINER)),
        ("initContainers", &Shape::Items(&CONTAINER)),
        ("volumes", &Shape::Items(&VOLUME)),
        ("imagePullSecrets", &Shape::Full),
    ],
    rest: Rest::Text,
};
const CONTAINER: Shape = Shape::Object {
    keep: &[
        ("name", &Shape::Full),
        ("env", &Shape::Text),
        ("volumeMounts", &Shape::Full),
        ("volumeDevices", &Shape::Full),
    ],
    rest: Rest::Verbatim,
};
const VOLUME: Shape = Shape::Object {
    keep: &[("name", &Shape::Full)],
    rest: Rest::Verbatim,
};

/// Why a pod with a container list member of the wrong shape is refused.
pub(crate) const LISTS_OF_OBJECTS: &str =
    "container env, volumeMounts and volumeDevices must be arrays of objects";

/// Checks the shape of the pod parts injection reads, so later edits cannot fail.
pub(crate) fn check_shape(pod: &Value) -> Result<(), InjectError> {
    let object = pod
        .as_object()
        .ok_or(InjectError::Malformed("the pod is not a JSON object"))?;
    if let Some(metadata) = non_null(object.get("metadata")) {
        let metadata = metadata
            .as_object()
            .ok_or(InjectError::Malformed("metadata must be an object"))?;
        for key in ["labels", "annotations"] {
            if let Some(map) = non_null(metadata.get(key)) {
                let map = map.as_object().ok_or(InjectError::Malformed(
                    "metadata labels/annotations must be objects",
                ))?;
                if !map.values().all(Value::is_string) {
                    return Err(InjectError::Malformed(
                        "metadata labels/annotations values must be strings",
                    ));
                }
            }
        }
    }
    if let Some(spec) = non_null(object.get("spec")) {
        let spec = spec
            .as_object()
            .ok_or(InjectError::Malformed("spec must be an object"))?;
        for key in [
            "containers",
            "initContainers",
            "volumes",
            "imagePullSecrets",
        ] {
            if let Some(list) = non_null(spec.get(key)) {
                let list = list
                    .as_array()
                    .ok_or(InjectError::Malformed("spec lists must be arrays"))?;
                if !list.iter().all(Value::is_object) {
                    return Err(InjectError::Malformed("spec list items must be objects"));
                }
            }
        }
        for container in ["containers", "initContainers"]
            .into_iter()
            .flat_map(|key| list(spec, key))
        {
            for key in ["env", "volumeMounts", "volumeDevices"] {
                if let Some(items) = non_null(container.get(key)) {
                    let ok = items
                        .as_array()
                        .is_some_and(|items| items.iter().all(Value::is_object));
                    if !ok {
                        return Err(InjectError::Malformed(LISTS_OF_OBJECTS));
                    }
                }
            }
        }
    }
    Ok(())
}

fn non_null(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !v.is_null())
}

/// The array under `key`, empty when absent or not an array.
pub(crate) fn list<'a>(object: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    crate::api::json_list(object, key)
}

/// A string member, `""` when absent.
pub(crate) fn str_of<'a>(object: &'a Value, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `str_of(item, "name")` without searching the map when `name` is its first (smallest) key, as
/// in env vars (`name`, `value`/`valueFrom`), which injection scans by the dozen.
pub(crate) fn name_of(item: &Value) -> &str {
    if let Some((key, value)) = item.as_object().and_then(|object| object.iter().next())
        && key == "name"
    {
        return value.as_str().unwrap_or("");
    }
    str_of(item, "name")
}

pub(crate) fn spec(pod: &Value) -> Option<&Map<String, Value>> {
    pod.get("spec").and_then(Value::as_object)
}

/// `spec.<key>` of the pod as a slice.
pub(crate) fn spec_list<'a>(pod: &'a Value, key: &str) -> &'a [Value] {
    spec(pod).map(|s| list(s, key)).unwrap_or(&[])
}

pub(crate) fn string_map(pod: &Value, key: &str) -> Labels {
    pod.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_object)
        .map(|map| {
            crate::order::map_of(
                map.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))),
            )
        })
        .unwrap_or_default()
}

pub fn labels(pod: &Value) -> Labels {
    string_map(pod, "labels")
}

pub fn annotations(pod: &Value) -> Labels {
    string_map(pod, "annotations")
}

/// A mutable object member, created (or replacing `null`) when missing.
pub(crate) fn object_mut<'a>(
    object: &'a mut Map<String, Value>,
    key: &str,
) -> Result<&'a mut Map<String, Value>, InjectError> {
    // Looked up first: the key is allocated only when the member is missing.
    if !object.contains_key(key) {
        object.insert(key.to_string(), Value::Object(Map::new()));
    }
    let slot = object
        .get_mut(key)
        .ok_or(InjectError::Malformed("expected a JSON object"))?;
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
        .ok_or(InjectError::Malformed("expected a JSON object"))
}

/// Write the pod's whole annotations map (only called when it changed).
pub(crate) fn set_annotations(pod: &mut Value, annotations: &Labels) -> Result<(), InjectError> {
    let root = pod
        .as_object_mut()
        .ok_or(InjectError::Malformed("the pod is not a JSON object"))?;
    let metadata = object_mut(root, "metadata")?;
    let target = object_mut(metadata, "annotations")?;
    for (key, value) in annotations {
        if target.get(key).and_then(Value::as_str) != Some(value.as_str()) {
            target.insert(key.clone(), Value::String(value.clone()));
        }
    }
    Ok(())
}

/// A list moved out of the pod, remembering whether the pod had the field at all.
pub(crate) struct TakenList {
    pub items: Vec<Value>,
    pub present: bool,
}

/// Move `spec.<key>` out of the pod (its slot is left `null` until restored).
pub(crate) fn take_spec_list(pod: &mut Value, key: &str) -> TakenList {
    match pod.get_mut("spec").and_then(|s| s.get_mut(key)) {
        Some(slot) => match slot.take() {
            Value::Array(items) => TakenList {
                items,
                present: true,
            },
            other => {
                *slot = other;
                TakenList {
                    items: Vec::new(),
                    present: true,
                }
            }
        },
        None => TakenList {
            items: Vec::new(),
            present: false,
        },
    }
}

/// Put a list back: a field the pod did not have stays absent when the list is empty.
pub(crate) fn restore_spec_list(
    pod: &mut Value,
    key: &str,
    items: Vec<Value>,
    present: bool,
) -> Result<(), InjectError> {
    if items.is_empty() && !present {
        return Ok(());
    }
    set_spec_list(pod, key, items)
}

/// Replace `spec.<key>` with `items`.
pub(crate) fn set_spec_list(
    pod: &mut Value,
    key: &str,
    items: Vec<Value>,
) -> Result<(), InjectError> {
    let root = pod
        .as_object_mut()
        .ok_or(InjectError::Malformed("the pod is not a JSON object"))?;
    let spec = object_mut(root, "spec")?;
    // Replaced in place: the key is allocated only when the pod did not have the list.
    match spec.get_mut(key) {
        Some(slot) => *slot = Value::Array(items),
        None => {
            spec.insert(key.to_string(), Value::Array(items));
        }
    }
    Ok(())
}
