//! The CustomResourceDefinition strategy: defaults, and the status the apiextensions
//! controllers write. Only CRDs whose group and plural the stand-in already serves become
//! Established (it serves a fixed table of resources).

use serde_json::{Value, json};

use crate::error::Cause;
use crate::meta;
use crate::resources;

fn storage_version(obj: &Value) -> Option<String> {
    obj.pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name")?.as_str().map(str::to_string))
}

fn group_and_plural(obj: &Value) -> (&str, &str) {
    let text = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
    (text("/spec/group"), text("/spec/names/plural"))
}

/// Validation of the fields a CRD cannot be served without.
pub fn validate(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let (group, plural) = group_and_plural(obj);
    if group.is_empty() {
        causes.push(Cause::required("spec.group", ""));
    }
    if plural.is_empty() {
        causes.push(Cause::required("spec.names.plural", ""));
    }
    let expected = format!("{plural}.{group}");
    let name = meta::name(obj);
    if !group.is_empty() && !plural.is_empty() && name != expected {
        causes.push(Cause::invalid(
            "metadata.name",
            &json!(name),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    let storage_count = obj
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map_or(0, |vs| {
            vs.iter()
                .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                .count()
        });
    if storage_count != 1 {
        causes.push(Cause::invalid(
            "spec.versions",
            obj.pointer("/spec/versions").unwrap_or(&Value::Null),
            "must have exactly one version marked as storage version",
        ));
    }
    causes
}

/// The status after the naming and establishing controllers have run.
pub fn status(obj: &Value, old_status: Option<&Value>) -> Value {
    let (group, plural) = group_and_plural(obj);
    let served = resources::RESOURCES
        .iter()
        .any(|r| r.group == group && r.plural == plural);
    let now = meta::now_rfc3339();
    let condition = |t: &str, ok: bool, reason: &str, message: &str| {
        json!({
            "type": t,
            "status": if ok { "True" } else { "False" },
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        })
    };
    let established = if served {
        condition(
            "Established",
            true,
            "InitialNamesAccepted",
            "the initial names have been accepted",
        )
    } else {
        condition(
            "Established",
            false,
            "Installing",
            "the stand-in serves a fixed set of resources and this is not one of them",
        )
    };
    let mut stored: Vec<Value> = old_status
        .and_then(|s| s.get("storedVersions"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(v) = storage_version(obj)
        && !stored.contains(&json!(v))
    {
        stored.push(json!(v));
    }
    json!({
        "acceptedNames": obj.pointer("/spec/names").cloned().unwrap_or_else(|| json!({})),
        "conditions": [
            condition("NamesAccepted", true, "NoConflicts", "no conflicts found"),
            established,
        ],
        "storedVersions": stored,
    })
}

/// `SetDefaults_CustomResourceDefinition` for the fields kubectl shows.
pub fn apply_defaults(obj: &mut Value) {
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.entry("conversion")
            .or_insert_with(|| json!({ "strategy": "None" }));
        if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut)
            && !names.contains_key("listKind")
            && let Some(kind) = names.get("kind").and_then(Value::as_str)
        {
            let list = format!("{kind}List");
            names.insert("listKind".into(), json!(list));
        }
        if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut)
            && !names.contains_key("singular")
            && let Some(kind) = names.get("kind").and_then(Value::as_str)
        {
            let singular = kind.to_lowercase();
            names.insert("singular".into(), json!(singular));
        }
    }
}
