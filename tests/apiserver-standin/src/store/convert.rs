//! Conversion between the stored form of an object and the API that shows it.
//! core/v1 and events.k8s.io/v1 events share storage, like in kube-apiserver.

use serde_json::{Map, Value};

use crate::resources::{ResourceDef, View};

/// (core/v1 field, events.k8s.io/v1 field)
const EVENT_FIELDS: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

fn rename(obj: &Value, to_v1: bool) -> Value {
    let Some(map) = obj.as_object() else {
        return obj.clone();
    };
    let mut out = Map::new();
    for (k, v) in map {
        let renamed = EVENT_FIELDS.iter().find_map(|(core, v1)| {
            if to_v1 && k == core {
                Some(*v1)
            } else if !to_v1 && k == v1 {
                Some(*core)
            } else {
                None
            }
        });
        out.insert(renamed.unwrap_or(k).to_string(), v.clone());
    }
    Value::Object(out)
}

/// The stored object as `def` shows it (with `apiVersion` and `kind` of `def`).
pub fn to_view(def: &ResourceDef, stored: &Value) -> Value {
    let mut obj = match def.view {
        View::Native => stored.clone(),
        View::EventsV1 => rename(stored, true),
    };
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), Value::String(def.api_version()));
        m.insert("kind".into(), Value::String(def.kind.to_string()));
    }
    obj
}

/// An object sent to `def`, converted to its stored form (with the stored `apiVersion`).
pub fn from_view(def: &ResourceDef, sent: &Value) -> Value {
    let mut obj = match def.view {
        View::Native => sent.clone(),
        View::EventsV1 => rename(sent, false),
    };
    if let (Some(m), Some(canonical)) = (
        obj.as_object_mut(),
        crate::resources::by_storage(def.storage),
    ) {
        m.insert("apiVersion".into(), Value::String(canonical.api_version()));
        m.insert("kind".into(), Value::String(canonical.kind.to_string()));
    }
    obj
}
