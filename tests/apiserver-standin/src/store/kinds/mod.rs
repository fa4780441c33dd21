//! Type strategies of the built-in kinds beyond pods and namespaces: defaults and validation
//! on create and update, dispatched by storage key.

mod configdata;
mod crd;
mod deployment;
mod service;

use serde_json::{Value, json};

use crate::error::Cause;

/// Sets `key` of an object to `default` when it is missing or null (a Go zero value).
fn set_default(v: &mut Value, key: &str, default: Value) {
    if let Some(m) = v.as_object_mut()
        && m.get(key).is_none_or(Value::is_null)
    {
        m.insert(key.to_string(), default);
    }
}

/// Defaults and validation of a create; `None` for kinds with no rules of their own.
pub fn on_create(storage: &str, obj: &mut Value) -> Option<Vec<Cause>> {
    Some(match storage {
        "configmaps" => configdata::configmap_create(obj),
        "secrets" => configdata::secret_create(obj),
        "services" => service::create(obj),
        "deployments" => {
            deployment::apply_defaults(obj);
            deployment::validate(obj)
        }
        "customresourcedefinitions" => {
            crd::apply_defaults(obj);
            let causes = crd::validate(obj);
            let status = crd::status(obj, None);
            if let Some(m) = obj.as_object_mut() {
                m.insert("status".into(), status);
            }
            causes
        }
        _ => return None,
    })
}

/// Defaults and validation of an update of `old`; `None` for kinds with no rules of their own.
pub fn on_update(storage: &str, old: &Value, new: &mut Value) -> Option<Vec<Cause>> {
    Some(match storage {
        "configmaps" => configdata::configmap_update(old, new),
        "secrets" => configdata::secret_update(old, new),
        "services" => service::update(old, new),
        "deployments" => {
            deployment::apply_defaults(new);
            deployment::validate_update(old, new)
        }
        "customresourcedefinitions" => {
            crd::apply_defaults(new);
            let causes = crd::validate(new);
            let status = crd::status(new, old.get("status"));
            if let Some(m) = new.as_object_mut() {
                m.insert("status".into(), status);
            }
            causes
        }
        _ => return None,
    })
}

/// An empty status object for kinds whose controllers would have written one.
pub fn initial_status(storage: &str) -> Option<Value> {
    match storage {
        "services" => Some(json!({ "loadBalancer": {} })),
        "deployments" => Some(json!({})),
        "poddisruptionbudgets" => Some(json!({
            "disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0
        })),
        _ => None,
    }
}
