//! Strategic merge patch for the fields this project patches: lists of containers, init
//! containers, volumes, env, ports, conditions... are merged by their key; everything else
//! behaves as a JSON merge patch. Directives `$patch` (replace/delete/merge), `$retainKeys`,
//! `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` are understood.

use serde_json::{Map, Value};

use crate::error::ApiError;

/// How a list is merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListStrategy {
    Replace,
    MergeKey(&'static str),
    MergePrimitive,
}

/// The patch strategy of one resource's lists (the `patchStrategy`/`patchMergeKey` tags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schema {
    storage: &'static str,
}

const CONTAINER_LISTS: &[&str] = &["containers", "initContainers", "ephemeralContainers"];

impl Schema {
    /// The schema of a storage key (`pods`, `namespaces`, ...).
    pub fn for_storage(storage: &str) -> Schema {
        let storage = match storage {
            "pods" => "pods",
            "namespaces" => "namespaces",
            _ => "",
        };
        Schema { storage }
    }

    fn list(&self, path: &[&str]) -> ListStrategy {
        use ListStrategy::*;
        match path {
            ["metadata", "finalizers"] => return MergePrimitive,
            ["metadata", "ownerReferences"] => return MergeKey("uid"),
            _ => {}
        }
        match (self.storage, path) {
            ("pods", ["spec", c]) if CONTAINER_LISTS.contains(c) => MergeKey("name"),
            (
                "pods",
                [
                    "spec",
                    "volumes" | "imagePullSecrets" | "schedulingGates" | "resourceClaims",
                ],
            ) => MergeKey("name"),
            ("pods", ["spec", "hostAliases"]) => MergeKey("ip"),
            ("pods", ["spec", "topologySpreadConstraints"]) => MergeKey("topologyKey"),
            ("pods", ["spec", c, field]) if CONTAINER_LISTS.contains(c) => match *field {
                "env" => MergeKey("name"),
                "ports" => MergeKey("containerPort"),
                "volumeMounts" => MergeKey("mountPath"),
                "volumeDevices" => MergeKey("devicePath"),
                _ => Replace,
            },
            ("pods", ["status", "conditions"]) => MergeKey("type"),
            ("pods", ["status", "podIPs" | "hostIPs"]) => MergeKey("ip"),
            ("pods", ["status", "resourceClaimStatuses"]) => MergeKey("name"),
            ("namespaces", ["status", "conditions"]) => MergeKey("type"),
            _ => Replace,
        }
    }
}

/// Applies a strategic merge patch to `original`.
pub fn strategic_merge(
    original: &Value,
    patch: &Value,
    schema: &Schema,
) -> Result<Value, ApiError> {
    let empty = Map::new();
    let orig = original.as_object().unwrap_or(&empty);
    let p = patch
        .as_object()
        .ok_or_else(|| ApiError::bad_request("strategic merge patch must be a JSON object"))?;
    let mut path = Vec::new();
    match merge_map(orig, p, schema, &mut path)? {
        Some(m) => Ok(Value::Object(m)),
        None => Ok(Value::Object(Map::new())),
    }
}

fn directive(m: &Map<String, Value>) -> Option<&str> {
    m.get("$patch").and_then(Value::as_str)
}

/// Removes all directives from a value that is inserted as is.
fn clean(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), clean(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(
            a.iter()
                .filter(|e| {
                    !e.as_object()
                        .is_some_and(|m| m.len() == 1 && directive(m).is_some())
                })
                .map(clean)
                .collect(),
        ),
        other => other.clone(),
    }
}

fn merge_map<'a>(
    orig: &Map<String, Value>,
    patch: &'a Map<String, Value>,
    schema: &Schema,
    path: &mut Vec<&'a str>,
) -> Result<Option<Map<String, Value>>, ApiError> {
    match directive(patch) {
        Some("replace") => {
            return Ok(match clean(&Value::Object(patch.clone())) {
                Value::Object(m) => Some(m),
                _ => None,
            });
        }
        Some("delete") => return Ok(None),
        Some("merge") | None => {}
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "Unknown patch type: {other}"
            )));
        }
    }
    let mut result = orig.clone();
    if let Some(keys) = patch.get("$retainKeys") {
        let keys: Vec<&str> = keys
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        result.retain(|k, _| keys.contains(&k.as_str()));
    }
    for (k, pv) in patch {
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(list)), Some(del)) = (result.get_mut(field), pv.as_array()) {
                list.retain(|v| !del.contains(v));
            }
            continue;
        }
        if k.starts_with('$') {
            continue;
        }
        if pv.is_null() {
            result.remove(k);
            continue;
        }
        path.push(k.as_str());
        let merged = match pv {
            Value::Object(pm) => {
                let empty = Map::new();
                let om = result.get(k).and_then(Value::as_object).unwrap_or(&empty);
                merge_map(om, pm, schema, path)?.map(Value::Object)
            }
            Value::Array(pa) => {
                let empty = Vec::new();
                let oa = result.get(k).and_then(Value::as_array).unwrap_or(&empty);
                Some(Value::Array(merge_list(oa, pa, schema, path)?))
            }
            scalar => Some(scalar.clone()),
        };
        path.pop();
        match merged {
            Some(v) => {
                result.insert(k.clone(), v);
            }
            None => {
                result.remove(k);
            }
        }
    }
    for (k, order) in patch {
        if let Some(field) = k.strip_prefix("$setElementOrder/")
            && let (Some(Value::Array(list)), Some(order)) =
                (result.get_mut(field), order.as_array())
        {
            path.push(field);
            let strategy = schema.list(path);
            path.pop();
            reorder(list, order, strategy);
        }
    }
    Ok(Some(result))
}

fn reorder(list: &mut [Value], order: &[Value], strategy: ListStrategy) {
    let rank = |v: &Value| -> usize {
        order
            .iter()
            .position(|o| match strategy {
                ListStrategy::MergeKey(key) => o.get(key).is_some() && o.get(key) == v.get(key),
                _ => o == v,
            })
            .unwrap_or(usize::MAX)
    };
    list.sort_by_key(|v| rank(v));
}

fn merge_list<'a>(
    orig: &[Value],
    patch: &'a [Value],
    schema: &Schema,
    path: &mut Vec<&'a str>,
) -> Result<Vec<Value>, ApiError> {
    let strategy = schema.list(path);
    let replace = patch.iter().any(|e| {
        e.as_object()
            .is_some_and(|m| directive(m) == Some("replace"))
    });
    if strategy == ListStrategy::Replace || replace {
        return Ok(patch
            .iter()
            .filter(|e| {
                !e.as_object()
                    .is_some_and(|m| directive(m).is_some() && m.len() == 1)
            })
            .map(clean)
            .collect());
    }
    let mut result: Vec<Value> = orig.to_vec();
    match strategy {
        ListStrategy::MergePrimitive => {
            for v in patch {
                if !result.contains(v) {
                    result.push(v.clone());
                }
            }
        }
        ListStrategy::MergeKey(key) => {
            for elem in patch {
                let em = elem.as_object().ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "unable to merge list {}: element is not an object",
                        path.join(".")
                    ))
                })?;
                let kv = em.get(key).ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "map: {elem} does not contain declared merge key: {key}"
                    ))
                })?;
                let pos = result.iter().position(|o| o.get(key) == Some(kv));
                if directive(em) == Some("delete") {
                    if let Some(i) = pos {
                        result.remove(i);
                    }
                    continue;
                }
                match pos {
                    Some(i) => {
                        let empty = Map::new();
                        let om = result[i].as_object().unwrap_or(&empty);
                        match merge_map(om, em, schema, path)? {
                            Some(m) => result[i] = Value::Object(m),
                            None => {
                                result.remove(i);
                            }
                        }
                    }
                    None => {
                        if let Some(m) = merge_map(&Map::new(), em, schema, path)? {
                            result.push(Value::Object(m));
                        }
                    }
                }
            }
        }
        ListStrategy::Replace => {}
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn containers_merge_by_name() {
        let pod = json!({"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}});
        let patch = json!({"spec": {"containers": [{"name": "b", "image": "b:2"}]}});
        let out = strategic_merge(&pod, &patch, &Schema::for_storage("pods")).unwrap_or_default();
        assert_eq!(out["spec"]["containers"][0]["image"], "a:1");
        assert_eq!(out["spec"]["containers"][1]["image"], "b:2");
    }

    #[test]
    fn conditions_merge_by_type_and_delete() {
        let pod = json!({"status": {"conditions": [
            {"type": "Ready", "status": "True"}, {"type": "X", "status": "False"}]}});
        let patch = json!({"status": {"conditions": [
            {"type": "X", "status": "True"}, {"type": "Ready", "$patch": "delete"},
            {"type": "New", "status": "True"}]}});
        let out = strategic_merge(&pod, &patch, &Schema::for_storage("pods")).unwrap_or_default();
        assert_eq!(
            out["status"]["conditions"],
            json!([
            {"type": "X", "status": "True"}, {"type": "New", "status": "True"}])
        );
    }

    #[test]
    fn finalizers_union_and_other_lists_replace() {
        let obj =
            json!({"metadata": {"finalizers": ["a"]}, "spec": {"tolerations": [{"key": "x"}]}});
        let patch =
            json!({"metadata": {"finalizers": ["b"]}, "spec": {"tolerations": [{"key": "y"}]}});
        let out = strategic_merge(&obj, &patch, &Schema::for_storage("pods")).unwrap_or_default();
        assert_eq!(out["metadata"]["finalizers"], json!(["a", "b"]));
        assert_eq!(out["spec"]["tolerations"], json!([{"key": "y"}]));
    }
}
