//! §3.7.3–§3.7.5: volume mounts, volume devices and env vars taken from the app containers.

use super::pod::{list, name_of, str_of};
use crate::admission::validate::k8s_names::is_qualified_name;
use crate::annotations::IS_INJECTED_ENV;
use crate::api::{SidecarContainer, TransferEnvVar};
use crate::selector::Labels;
pub(crate) use env::NamedEnvVar;
use env::env_of;
use serde_json::{Map, Value};
use std::borrow::Cow;

mod env;

/// The pod's containers with their env vars' names read once: injection looks names up by the
/// dozen per sidecar, and reading a name out of its JSON object is the costly part.
pub(crate) struct PodEnvs<'a> {
    containers: Vec<ContainerEnvs<'a>>,
}

struct ContainerEnvs<'a> {
    object: &'a Map<String, Value>,
    /// `name` when it is a string (`None` matches no source container, not even "").
    name: Option<&'a str>,
    /// Not injected by a SidecarSet (`IS_INJECTED` is not exactly "true").
    app: bool,
    env: Vec<NamedEnvVar<'a>>,
}

impl<'a> PodEnvs<'a> {
    pub(crate) fn new(pod_containers: &'a [Value]) -> Self {
        let containers = pod_containers
            .iter()
            .filter_map(Value::as_object)
            .map(|object| {
                let env = env_of(object);
                // Upstream reads the first IS_INJECTED entry only (`GetContainerEnvValue`).
                let app = env
                    .iter()
                    .find(|(name, _)| name == IS_INJECTED_ENV)
                    .is_none_or(|(_, env)| !env.value_is("true"));
                let name = object.get("name").and_then(Value::as_str);
                ContainerEnvs {
                    object,
                    name,
                    app,
                    env,
                }
            })
            .collect();
        PodEnvs { containers }
    }

    fn apps(&self) -> impl Iterator<Item = &ContainerEnvs<'a>> {
        self.containers.iter().filter(|c| c.app)
    }
}

/// The app containers' volumeMounts, plus the env vars their `subPathExpr`s reference (both
/// borrowed: only what a sidecar takes is copied).
pub(crate) fn shared_mounts<'a>(pod: &PodEnvs<'a>) -> (Vec<&'a Value>, Vec<NamedEnvVar<'a>>) {
    let mut mounts = Vec::new();
    let mut envs = Vec::new();
    for container in pod.apps() {
        for mount in list(container.object, "volumeMounts") {
            for name in subpath_expr_vars(str_of(mount, "subPathExpr")) {
                if let Some(env) = container.env.iter().find(|(n, _)| n == name) {
                    envs.push(env.clone());
                }
            }
            mounts.push(mount);
        }
    }
    (mounts, envs)
}

/// The app containers' volumeDevices (tests: injection borrows them, `shared_devices_of`).
#[cfg(test)]
pub(crate) fn shared_devices(pod_containers: &[Value]) -> Vec<Value> {
    shared_devices_of(&PodEnvs::new(pod_containers))
        .into_iter()
        .cloned()
        .collect()
}

/// `shared_devices`, borrowed: only the ones a sidecar takes are copied.
pub(crate) fn shared_devices_of<'a>(pod: &PodEnvs<'a>) -> Vec<&'a Value> {
    pod.apps()
        .flat_map(|c| list(c.object, "volumeDevices").iter())
        .collect()
}

/// `$(NAME)` references in a subPathExpr (`\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)`).
fn subpath_expr_vars(expr: &str) -> Vec<&str> {
    let is_first = |c: char| c.is_ascii_alphabetic() || matches!(c, '-' | '.' | '_');
    let is_rest = |c: char| is_first(c) || c.is_ascii_digit();
    let mut found = Vec::new();
    if !expr.contains("$(") {
        return found;
    }
    let mut rest = expr;
    while let Some(start) = rest.find("$(") {
        let after = &rest[start + 2..];
        match after.find(')') {
            Some(end) => {
                let name = &after[..end];
                let mut chars = name.chars();
                if chars.next().is_some_and(is_first) && chars.all(is_rest) {
                    found.push(name);
                    rest = &after[end + 1..];
                } else {
                    rest = after;
                }
            }
            None => break,
        }
    }
    found
}

/// §3.7.4: env vars copied from app containers by `transferEnv` (tests: injection indexes
/// the pod once, `transfer_envs_of`).
#[cfg(test)]
pub(crate) fn transfer_envs(
    sidecar: &SidecarContainer,
    pod_containers: &[Value],
    pod_labels: &Labels,
    pod_annotations: &Labels,
) -> Vec<Value> {
    if sidecar.transfer_env.is_empty() {
        return Vec::new();
    }
    let envs = transfer_envs_of(
        sidecar,
        &PodEnvs::new(pod_containers),
        pod_labels,
        pod_annotations,
    );
    envs.into_iter().map(|(_, env)| env.to_value()).collect()
}

/// §3.7.4 over the indexed pod, borrowed.
pub(crate) fn transfer_envs_of<'a>(
    sidecar: &SidecarContainer,
    pod: &PodEnvs<'a>,
    pod_labels: &Labels,
    pod_annotations: &Labels,
) -> Vec<NamedEnvVar<'a>> {
    let mut out = Vec::new();
    for item in &sidecar.transfer_env {
        let Some(source) = transfer_source(item, pod_labels, pod_annotations) else {
            continue;
        };
        // Sorted and de-duplicated (a set's order), in a slice: it is searched once per env var.
        let mut names: Vec<&str> = Vec::new();
        for name in std::iter::once(item.env_name.as_str())
            .filter(|n| !n.is_empty())
            .chain(item.env_names.iter().map(String::as_str))
        {
            if let Err(at) = names.binary_search(&name) {
                names.insert(at, name);
            }
        }
        // Upstream indexes `container/env` over the pod: the last of each name wins. Then in
        // the names' order.
        let mut last: Vec<Option<&NamedEnvVar<'a>>> = vec![None; names.len()];
        let sources = pod
            .containers
            .iter()
            .filter(|c| c.name == Some(source.as_str()));
        for env in sources.flat_map(|c| &c.env) {
            if let Some(index) = names.iter().position(|n| *n == env.0.as_ref())
                && let Some(slot) = last.get_mut(index)
            {
                *slot = Some(env);
            }
        }
        out.extend(last.into_iter().flatten().cloned());
    }
    out
}

/// The source container name; `None` skips the item (an unsupported fieldRef, as upstream logs).
pub(super) fn transfer_source(
    item: &TransferEnvVar,
    labels: &Labels,
    annotations: &Labels,
) -> Option<String> {
    let Some(field_ref) = item
        .source_container_name_from
        .as_ref()
        .and_then(|from| from.field_ref.as_ref())
    else {
        return Some(item.source_container_name.clone());
    };
    // Upstream's `ExtractContainerNameFromFieldPath`: apiVersion plays no part; the key must be
    // a qualified name (an annotation key lower-cased first).
    let (path, key) = split_subscript(&field_ref.field_path)?;
    let (map, checked) = match path {
        "metadata.annotations" => (annotations, key.to_lowercase()),
        "metadata.labels" => (labels, key.to_string()),
        _ => return None,
    };
    if !is_qualified_name(&checked).is_empty() {
        return None;
    }
    Some(map.get(key).cloned().unwrap_or_default())
}

/// `path['key']` → (path, key).
pub(crate) fn split_subscript(field_path: &str) -> Option<(&str, &str)> {
    let open = field_path.find("['")?;
    let inner = field_path[open + 2..].strip_suffix("']")?;
    (!inner.is_empty()).then(|| (&field_path[..open], inner))
}

/// The shared items whose path is not in `used` yet, in order (first wins); their paths join
/// `used`, a sorted slice of borrowed paths (no `String` per path, as a set of them would cost).
pub(crate) fn pick_by_path<'a: 'u, 'u>(
    shared: &[&'a Value],
    path_key: &str,
    used: &mut Vec<&'u str>,
) -> Vec<&'a Value> {
    let mut picked = Vec::new();
    for item in shared {
        if add_path(used, str_of(item, path_key)) {
            picked.push(*item);
        }
    }
    picked
}

/// Adds `path` to the sorted `used`; false when it was there already.
pub(crate) fn add_path<'u>(used: &mut Vec<&'u str>, path: &'u str) -> bool {
    match used.binary_search(&path) {
        Ok(_) => false,
        Err(at) => {
            used.insert(at, path);
            true
        }
    }
}

/// The first var of each name, built (the others are never copied).
pub(crate) fn first_of_each_name(vars: Vec<NamedEnvVar<'_>>) -> Vec<Value> {
    let mut out: Vec<(Cow<'_, str>, Value)> = Vec::with_capacity(vars.len());
    for (name, var) in vars {
        if !out.iter().any(|(taken, _)| *taken == name) {
            out.push((name, var.to_value()));
        }
    }
    out.into_iter().map(|(_, var)| var).collect()
}

/// Env vars whose names are not taken yet, in order (first wins).
pub(crate) fn append_missing_env(env: &mut Vec<Value>, extra: impl IntoIterator<Item = Value>) {
    for item in extra {
        let name = name_of(&item);
        if !env.iter().any(|e| name_of(e) == name) {
            env.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subpath_expr_references() {
        assert_eq!(
            subpath_expr_vars("foo/$(POD_NAME)/$(OD_NAME)/conf"),
            vec!["POD_NAME", "OD_NAME"]
        );
        assert!(subpath_expr_vars("foo").is_empty());
        assert!(subpath_expr_vars("$(1X)/$(").is_empty());
    }

    #[test]
    fn the_first_var_of_each_name_is_kept() {
        let (a, b, c) = (
            json!({"name": "A", "value": "1"}),
            json!({"name": "B"}),
            json!({"name": "A", "value": "2"}),
        );
        let vars = [("A", &a), ("B", &b), ("A", &c), ("B", &b)]
            .into_iter()
            .map(|(name, var)| (Cow::Borrowed(name), env::EnvVar::Built(var)))
            .collect();
        assert_eq!(first_of_each_name(vars), vec![a.clone(), b.clone()]);
        let text = br#"{"name":"A","value":"3"}"#;
        let vars = vec![
            (Cow::Borrowed("A"), env::EnvVar::Text(text)),
            (Cow::Borrowed("A"), env::EnvVar::Built(&a)),
        ];
        assert_eq!(
            first_of_each_name(vars),
            vec![json!({"name": "A", "value": "3"})]
        );
    }

    #[test]
    fn subscripts() {
        assert_eq!(
            split_subscript("metadata.labels['app']"),
            Some(("metadata.labels", "app"))
        );
        assert_eq!(split_subscript("metadata.name"), None);
        assert_eq!(split_subscript("metadata.labels"), None);
    }
}
