//! ConfigMaps and Secrets read into a container's env: a missing one (or key) keeps the
//! container waiting in `CreateContainerConfigError`, worded as the kubelet words it.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// A kind of env source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// A ConfigMap.
    ConfigMap,
    /// A Secret.
    Secret,
}

impl SourceKind {
    /// The storage plural.
    pub fn plural(self) -> &'static str {
        match self {
            SourceKind::ConfigMap => "configmaps",
            SourceKind::Secret => "secrets",
        }
    }

    // The kubelet's object managers name their resource in the singular (`corev1.Resource("configmap")`).
    fn resource(self) -> &'static str {
        match self {
            SourceKind::ConfigMap => "configmap",
            SourceKind::Secret => "secret",
        }
    }

    fn kind(self) -> &'static str {
        match self {
            SourceKind::ConfigMap => "ConfigMap",
            SourceKind::Secret => "Secret",
        }
    }

    fn env_from_field(self) -> &'static str {
        match self {
            SourceKind::ConfigMap => "configMapRef",
            SourceKind::Secret => "secretRef",
        }
    }

    fn key_field(self) -> &'static str {
        match self {
            SourceKind::ConfigMap => "configMapKeyRef",
            SourceKind::Secret => "secretKeyRef",
        }
    }
}

const KINDS: [SourceKind; 2] = [SourceKind::ConfigMap, SourceKind::Secret];

/// The data keys of the sources a pod refers to, as the store has them (`None`: not found).
#[derive(Debug, Default, Clone)]
pub struct Sources {
    /// By kind and name.
    pub found: HashMap<(SourceKind, String), Option<HashSet<String>>>,
}

impl Sources {
    fn keys(&self, kind: SourceKind, name: &str) -> Option<&HashSet<String>> {
        self.found
            .get(&(kind, name.to_string()))
            .and_then(Option::as_ref)
    }
}

/// The keys of a ConfigMap's or Secret's `data` (the kubelet reads env from `data` only).
pub fn data_keys(obj: &Value) -> HashSet<String> {
    obj.get("data")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn all_containers(pod: &Value) -> impl Iterator<Item = &Value> {
    let spec = pod.get("spec");
    ["initContainers", "containers"]
        .into_iter()
        .flat_map(move |l| {
            spec.and_then(|s| s.get(l))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
}

fn items<'a>(c: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    c.get(field).and_then(Value::as_array).into_iter().flatten()
}

fn str_of<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or("")
}

fn optional(r: &Value) -> bool {
    r.get("optional").and_then(Value::as_bool) == Some(true)
}

/// The sources the pod's containers read env from.
pub fn references(pod: &Value) -> HashSet<(SourceKind, String)> {
    let mut out = HashSet::new();
    for c in all_containers(pod) {
        for kind in KINDS {
            for e in items(c, "envFrom") {
                if let Some(r) = e.get(kind.env_from_field()) {
                    out.insert((kind, str_of(r, "name").to_string()));
                }
            }
            for e in items(c, "env") {
                if let Some(r) = e.get("valueFrom").and_then(|v| v.get(kind.key_field())) {
                    out.insert((kind, str_of(r, "name").to_string()));
                }
            }
        }
    }
    out
}

/// Why the kubelet cannot build this container's config (`makeEnvironmentVariables`: envFrom
/// first, then env in order), or `None` when it can.
pub fn config_error(c: &Value, namespace: &str, sources: &Sources) -> Option<String> {
    let not_found =
        |kind: SourceKind, name: &str| format!("{} {name:?} not found", kind.resource());
    for e in items(c, "envFrom") {
        for kind in KINDS {
            if let Some(r) = e.get(kind.env_from_field()) {
                let name = str_of(r, "name");
                if sources.keys(kind, name).is_none() && !optional(r) {
                    return Some(not_found(kind, name));
                }
            }
        }
    }
    for e in items(c, "env") {
        for kind in KINDS {
            let Some(r) = e.get("valueFrom").and_then(|v| v.get(kind.key_field())) else {
                continue;
            };
            let (name, key) = (str_of(r, "name"), str_of(r, "key"));
            match sources.keys(kind, name) {
                _ if optional(r) => {}
                None => return Some(not_found(kind, name)),
                Some(keys) if !keys.contains(key) => {
                    return Some(format!(
                        "couldn't find key {key} in {} {namespace}/{name}",
                        kind.kind()
                    ));
                }
                Some(_) => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_as_the_kubelet_writes_them() {
        let c = json!({"name": "a", "env": [
            {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}},
            {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "p"}}},
            {"name": "C", "valueFrom": {"secretKeyRef": {"name": "gone", "key": "p", "optional": true}}},
        ]});
        let pod = json!({"spec": {"containers": [c]}});
        let refs = references(&pod);
        assert!(refs.contains(&(SourceKind::ConfigMap, "cm".to_string())));
        assert!(refs.contains(&(SourceKind::Secret, "gone".to_string())));
        let mut sources = Sources::default();
        let err = config_error(&c, "ns", &sources);
        assert_eq!(err.as_deref(), Some("configmap \"cm\" not found"));
        sources.found.insert(
            (SourceKind::ConfigMap, "cm".into()),
            Some(HashSet::from(["other".to_string()])),
        );
        let err = config_error(&c, "ns", &sources);
        assert_eq!(
            err.as_deref(),
            Some("couldn't find key k in ConfigMap ns/cm")
        );
        sources.found.insert(
            (SourceKind::ConfigMap, "cm".into()),
            Some(HashSet::from(["k".to_string()])),
        );
        let err = config_error(&c, "ns", &sources);
        assert_eq!(err.as_deref(), Some("secret \"s\" not found"));
        sources.found.insert(
            (SourceKind::Secret, "s".into()),
            Some(HashSet::from(["q".to_string()])),
        );
        let err = config_error(&c, "ns", &sources);
        assert_eq!(err.as_deref(), Some("couldn't find key p in Secret ns/s"));
        sources.found.insert(
            (SourceKind::Secret, "s".into()),
            Some(HashSet::from(["p".to_string()])),
        );
        assert_eq!(config_error(&c, "ns", &sources), None);
        let from = json!({"envFrom": [{"secretRef": {"name": "x"}}]});
        assert_eq!(
            config_error(&from, "ns", &sources).as_deref(),
            Some("secret \"x\" not found")
        );
    }
}
