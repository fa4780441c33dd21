//! The members upstream's admission patch adds beyond the defaults: its patch is against Go's
//! re-marshal of the decoded SidecarSet (§2.1), which always writes struct-typed members and
//! fields without `omitempty`. Added only where absent (or `null` for a value type), so nothing
//! this code does not know is dropped.

use super::{child_object, each_object};
use serde_json::{Map, Value, json};

/// Adds the zero-valued members Go's `json.Marshal` of the decoded object would write.
pub fn add_marshalled_members(sidecarset: &mut Value) {
    let Some(object) = sidecarset.as_object_mut() else {
        return;
    };
    // `metav1.Time` is a struct: a zero creationTimestamp is written as null.
    if let Some(metadata) = child_object(object, "metadata", true) {
        metadata.entry("creationTimestamp").or_insert(Value::Null);
    }
    if let Some(spec) = child_object(object, "spec", true) {
        child_object(spec, "updateStrategy", true);
        child_object(spec, "injectionStrategy", true);
        for key in ["initContainers", "containers"] {
            each_object(spec, key, |container| {
                zero_if_unset(container, "name", json!(""));
                for member in ["resources", "upgradeStrategy", "shareVolumePolicy"] {
                    child_object(container, member, true);
                }
            });
        }
        each_object(spec, "volumes", |volume| {
            zero_if_unset(volume, "name", json!(""))
        });
    }
    if let Some(status) = child_object(object, "status", true) {
        for counter in ["matchedPods", "updatedPods", "readyPods"] {
            zero_if_unset(status, counter, json!(0));
        }
    }
}

/// A Go value field without `omitempty`: absent or `null` is written as its zero value.
fn zero_if_unset(parent: &mut Map<String, Value>, key: &str, zero: Value) {
    if matches!(parent.get(key), None | Some(Value::Null)) {
        parent.insert(key.to_string(), zero);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_what_go_writes_and_keeps_the_rest() {
        let mut object = json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
            "metadata": {"name": "s", "creationTimestamp": "2025-01-02T03:04:05Z"},
            "spec": {
                "containers": [{"name": "c", "image": "i", "future": 1}, "junk"],
                "initContainers": [{"name": null, "resources": {"limits": {"cpu": "1"}}}],
                "volumes": [{"emptyDir": {}}],
                "injectionStrategy": {"paused": true},
                "futureSpec": {"x": 1}
            },
            "status": {"matchedPods": 3, "latestRevision": "s-1"}
        });
        add_marshalled_members(&mut object);
        assert_eq!(
            object,
            json!({
                "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
                "metadata": {"name": "s", "creationTimestamp": "2025-01-02T03:04:05Z"},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "i", "future": 1, "resources": {},
                         "upgradeStrategy": {}, "shareVolumePolicy": {}},
                        "junk"
                    ],
                    "initContainers": [{"name": "", "resources": {"limits": {"cpu": "1"}},
                                        "upgradeStrategy": {}, "shareVolumePolicy": {}}],
                    "volumes": [{"name": "", "emptyDir": {}}],
                    "injectionStrategy": {"paused": true},
                    "updateStrategy": {},
                    "futureSpec": {"x": 1}
                },
                "status": {"matchedPods": 3, "updatedPods": 0, "readyPods": 0, "latestRevision": "s-1"}
            })
        );
        let mut bare = json!({"metadata": {"name": "s"}});
        add_marshalled_members(&mut bare);
        assert_eq!(
            bare,
            json!({
                "metadata": {"name": "s", "creationTimestamp": null},
                "spec": {"updateStrategy": {}, "injectionStrategy": {}},
                "status": {"matchedPods": 0, "updatedPods": 0, "readyPods": 0}
            })
        );
        let mut not_an_object = json!([1]);
        add_marshalled_members(&mut not_an_object);
        assert_eq!(not_an_object, json!([1]));
    }
}
