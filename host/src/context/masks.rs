//! Field masks and list clean-up, as Kubewarden's reflector-backed host applies them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// A tree of mask paths; a node with `keep_all` keeps its whole subtree.
#[derive(Debug, Default)]
struct MaskTree {
    keep_all: bool,
    children: BTreeMap<String, MaskTree>,
}

impl MaskTree {
    fn build(masks: &BTreeSet<String>) -> Self {
        let mut root = Self::default();
        for mask in masks {
            let mut node = &mut root;
            for part in mask.split('.').filter(|p| !p.is_empty()) {
                node = node.children.entry(part.to_string()).or_default();
            }
            node.keep_all = true;
        }
        root
    }

    fn prune(&self, value: &mut Value) -> bool {
        if self.keep_all {
            return true;
        }
        match value {
            Value::Object(map) => {
                map.retain(|key, child| {
                    self.children
                        .get(key)
                        .is_some_and(|subtree| subtree.prune(child))
                });
                true
            }
            // Paths traverse arrays implicitly: the mask applies to every element.
            Value::Array(items) => {
                items.iter_mut().for_each(|item| {
                    self.prune(item);
                });
                true
            }
            _ => false,
        }
    }
}

/// Keeps `apiVersion`, `kind`, `metadata` and the masked paths; `None` or empty keeps everything.
pub(crate) fn apply_field_masks(object: &mut Value, masks: Option<&BTreeSet<String>>) {
    let Some(masks) = masks.filter(|m| !m.is_empty()) else {
        return;
    };
    let tree = MaskTree::build(masks);
    if let Value::Object(map) = object {
        map.retain(|key, child| {
            matches!(key.as_str(), "apiVersion" | "kind" | "metadata")
                || tree.children.get(key).is_some_and(|t| t.prune(child))
        });
    }
}

/// Reflectors drop `managedFields` and kubectl's last-applied annotation from listed objects.
pub(crate) fn strip_for_list(object: &mut Value) {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
        if let Some(annotations) = metadata
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_keep_metadata_and_traverse_arrays() {
        let mut pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "i"}], "nodeName": "n"},
            "status": {"phase": "Running"}
        });
        let masks: BTreeSet<String> = ["spec.containers.image".to_string()].into();
        apply_field_masks(&mut pod, Some(&masks));
        assert_eq!(
            pod,
            json!({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "p", "labels": {"a": "b"}},
                   "spec": {"containers": [{"image": "i"}]}})
        );
    }
}
