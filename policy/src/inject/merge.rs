//! §3.8: merging injected containers, volumes and pull secrets into the pod.

use super::build::Injected;
use super::pod::str_of;
use crate::api::values;
use serde_json::Value;
use std::collections::BTreeSet;

/// A pod container with a sidecar's name is replaced in place; new ones go before or after
/// the pod's own, by `podInjectPolicy` (anything but BeforeAppContainer means after).
pub(crate) fn merge_containers(existing: Vec<Value>, injected: Vec<Injected>) -> Vec<Value> {
    let mut result = existing;
    let mut before = Vec::new();
    let mut after = Vec::new();
    for item in injected {
        let name = item.name().to_string();
        if let Some(slot) = result.iter_mut().find(|c| str_of(c, "name") == name) {
            *slot = Value::Object(item.container);
        } else if item.policy == values::BEFORE_APP_CONTAINER {
            before.push(Value::Object(item.container));
        } else {
            after.push(Value::Object(item.container));
        }
    }
    before.extend(result);
    before.extend(after);
    before
}

/// Volumes: the pod's own are kept as they are; injected ones whose name is new are appended
/// (first wins among SidecarSets).
pub(crate) fn merge_volumes(existing: Vec<Value>, injected: Vec<Value>) -> Vec<Value> {
    let mut out = existing;
    for volume in injected {
        // A handful of volumes: a scan costs less than a set of copied names.
        let name = str_of(&volume, "name");
        if !out.iter().any(|v| str_of(v, "name") == name) {
            out.push(volume);
        }
    }
    out
}

/// Pull secrets: the pod's first, then the SidecarSets', de-duplicated by name (first kept),
/// the pod's own duplicates included, as upstream.
pub(crate) fn merge_by_name(existing: Vec<Value>, injected: Vec<Value>) -> Vec<Value> {
    let mut seen = BTreeSet::new();
    existing
        .into_iter()
        .chain(injected)
        .filter(|item| seen.insert(str_of(item, "name").to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn injected(name: &str, policy: &str) -> Injected {
        let container = json!({"name": name});
        Injected {
            container: container.as_object().cloned().unwrap_or_default(),
            policy: policy.into(),
        }
    }

    fn names(list: &[Value]) -> Vec<&str> {
        list.iter().map(|c| str_of(c, "name")).collect()
    }

    fn sorted_all() -> Vec<Injected> {
        // Upstream's TestMergeSidecarContainers stable-sorts the injected list by name first.
        vec![
            injected("new-sidecar-1", "BeforeAppContainer"),
            injected("sidecar-1", "AfterAppContainer"),
            injected("sidecar-2", "AfterAppContainer"),
        ]
    }

    #[test]
    fn merge_containers_cases() {
        let app = [json!({"name": "app-container"})];
        let all = [
            json!({"name": "sidecar-1"}),
            json!({"name": "app-container"}),
            json!({"name": "sidecar-2"}),
        ];
        assert_eq!(
            names(&merge_containers(app.to_vec(), sorted_all())),
            ["new-sidecar-1", "app-container", "sidecar-1", "sidecar-2"]
        );
        assert_eq!(
            names(&merge_containers(
                app.to_vec(),
                vec![injected("new-sidecar-1", "BeforeAppContainer")]
            )),
            ["new-sidecar-1", "app-container"]
        );
        let two = || {
            vec![
                injected("sidecar-1", "AfterAppContainer"),
                injected("sidecar-2", "AfterAppContainer"),
            ]
        };
        assert_eq!(
            names(&merge_containers(app.to_vec(), two())),
            ["app-container", "sidecar-1", "sidecar-2"]
        );
        assert_eq!(
            names(&merge_containers(all.to_vec(), two())),
            ["sidecar-1", "app-container", "sidecar-2"]
        );
        assert_eq!(
            names(&merge_containers(all.to_vec(), sorted_all())),
            ["new-sidecar-1", "sidecar-1", "app-container", "sidecar-2"]
        );
        assert_eq!(
            names(&merge_containers(Vec::new(), sorted_all())),
            ["new-sidecar-1", "sidecar-1", "sidecar-2"]
        );
    }

    #[test]
    fn init_container_sort_cases() {
        let origins = [json!({"name": "app1-init"}), json!({"name": "app2-init"})];
        let plain = || {
            vec![
                injected("a-init", ""),
                injected("b-init", ""),
                injected("c-init", ""),
            ]
        };
        assert_eq!(
            names(&merge_containers(Vec::new(), plain())),
            ["a-init", "b-init", "c-init"]
        );
        assert_eq!(
            names(&merge_containers(origins.to_vec(), plain())),
            ["app1-init", "app2-init", "a-init", "b-init", "c-init"]
        );
        let mixed = vec![
            injected("a-init", "AfterAppContainer"),
            injected("b-init", "BeforeAppContainer"),
            injected("c-init", "BeforeAppContainer"),
        ];
        assert_eq!(
            names(&merge_containers(origins.to_vec(), mixed)),
            ["b-init", "c-init", "app1-init", "app2-init", "a-init"]
        );
    }

    #[test]
    fn volumes_keep_the_pods_own_list() {
        let volume = |n: &str| json!({"name": n});
        let pod = vec![volume("a"), volume("a"), volume("b")];
        let merged = merge_volumes(pod, vec![volume("b"), volume("c"), volume("c")]);
        assert_eq!(names(&merged), ["a", "a", "b", "c"]);
    }

    #[test]
    fn secrets_merge_dedupes() {
        let secret = |n: &str| json!({"name": n});
        let pod = [secret("s2"), secret("s3"), secret("s3")];
        let merged = merge_by_name(pod.to_vec(), vec![secret("s0"), secret("s1"), secret("s2")]);
        assert_eq!(names(&merged), ["s2", "s3", "s0", "s1"]);
    }
}
