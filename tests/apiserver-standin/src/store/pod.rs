//! The pod strategy: defaults, create validation, the update immutability rule, initial status.

use serde_json::{Map, Value, json};

use crate::error::Cause;

/// The message the API server gives for a forbidden pod spec update.
pub const POD_UPDATE_FORBIDDEN: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

const CONTAINER_LISTS: [&str; 2] = ["containers", "initContainers"];

fn set_default(map: &mut Map<String, Value>, key: &str, v: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_string(), v);
    }
}

fn default_pull_policy(image: &str) -> &'static str {
    let without_digest = image.split('@').next().unwrap_or("");
    let last = without_digest.rsplit('/').next().unwrap_or("");
    if image.contains('@') {
        return "IfNotPresent";
    }
    match last.split_once(':') {
        None => "Always",
        Some((_, "latest")) => "Always",
        Some(_) => "IfNotPresent",
    }
}

/// Applies the API server's defaults for the pod fields that matter to clients.
pub fn apply_defaults(pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "securityContext", json!({}));
    set_default(spec, "enableServiceLinks", json!(true));
    set_default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    set_default(spec, "priority", json!(0));
    for list in CONTAINER_LISTS {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in containers.iter_mut().filter_map(Value::as_object_mut) {
            let image = c
                .get("image")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
            set_default(c, "terminationMessagePolicy", json!("File"));
            set_default(c, "imagePullPolicy", json!(default_pull_policy(&image)));
            set_default(c, "resources", json!({}));
            if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
                for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                    set_default(p, "protocol", json!("TCP"));
                }
            }
        }
    }
}

/// Validation of a new pod.
pub fn validate_create(pod: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let spec = pod.get("spec");
    let containers = spec
        .and_then(|s| s.get("containers"))
        .and_then(Value::as_array);
    if containers.is_none_or(Vec::is_empty) {
        causes.push(Cause::required("spec.containers", ""));
    }
    let mut seen: Vec<&str> = Vec::new();
    for list in CONTAINER_LISTS {
        let items = spec.and_then(|s| s.get(list)).and_then(Value::as_array);
        for (i, c) in items.into_iter().flatten().enumerate() {
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            let field = format!("spec.{list}[{i}]");
            if name.is_empty() {
                causes.push(Cause::required(format!("{field}.name"), ""));
            } else if !crate::meta::is_dns_label(name) {
                causes.push(Cause::invalid(
                    format!("{field}.name"),
                    &json!(name),
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                ));
            } else if seen.contains(&name) {
                causes.push(Cause {
                    reason: "FieldValueDuplicate",
                    field: format!("{field}.name"),
                    message: format!("Duplicate value: \"{name}\""),
                });
            } else {
                seen.push(name);
            }
            if c.get("image")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                causes.push(Cause::required(format!("{field}.image"), ""));
            }
        }
    }
    causes
}

fn has_resources(c: &Value, kind: &str) -> bool {
    c.get("resources")
        .and_then(|r| r.get(kind))
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty())
}

fn qos_class(pod: &Value) -> &'static str {
    let containers: Vec<&Value> = CONTAINER_LISTS
        .iter()
        .filter_map(|l| {
            pod.get("spec")
                .and_then(|s| s.get(*l))
                .and_then(Value::as_array)
        })
        .flatten()
        .collect();
    if !containers
        .iter()
        .any(|c| has_resources(c, "requests") || has_resources(c, "limits"))
    {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        let r = c.get("resources");
        let limits = r.and_then(|r| r.get("limits"));
        let requests = r.and_then(|r| r.get("requests"));
        ["cpu", "memory"].iter().all(|k| {
            let l = limits.and_then(|l| l.get(*k));
            l.is_some()
                && requests
                    .and_then(|q| q.get(*k))
                    .is_none_or(|q| Some(q) == l)
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// The status a pod gets on create (any status sent is dropped, as the API server does).
pub fn initial_status(pod: &Value) -> Value {
    json!({ "phase": "Pending", "qosClass": qos_class(pod) })
}

fn describe_changes(old: &Value, new: &Value, prefix: &str, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let (x, y) = (
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                );
                if x != y {
                    describe_changes(x, y, &format!("{prefix}.{k}"), out);
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if x != y {
                    describe_changes(x, y, &format!("{prefix}[{i}]"), out);
                }
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

fn int(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_i64)
}

/// The update rule for pods (main resource): only images, activeDeadlineSeconds, added
/// tolerations, terminationGracePeriodSeconds (negative to 1) and removed scheduling gates.
pub fn validate_update(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let empty = Value::Object(Map::new());
    let old_spec = old.get("spec").unwrap_or(&empty);
    let new_spec = new.get("spec").unwrap_or(&empty);
    let mut masked = new_spec.clone();

    for list in CONTAINER_LISTS {
        let old_list = old_spec.get(list).and_then(Value::as_array);
        let Some(new_list) = masked.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for (i, c) in new_list.iter_mut().enumerate() {
            if c.get("image")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                causes.push(Cause::required(format!("spec.{list}[{i}].image"), ""));
            }
            if let (Some(obj), Some(old_c)) = (c.as_object_mut(), old_list.and_then(|l| l.get(i))) {
                match old_c.get("image") {
                    Some(img) => obj.insert("image".into(), img.clone()),
                    None => obj.remove("image"),
                };
            }
        }
    }

    let old_ads = int(old_spec.get("activeDeadlineSeconds"));
    let new_ads = int(new_spec.get("activeDeadlineSeconds"));
    match (old_ads, new_ads) {
        (Some(_), None) => causes.push(Cause::invalid(
            "spec.activeDeadlineSeconds",
            &Value::Null,
            "must not update from a positive integer to nil value",
        )),
        (_, Some(n)) if n <= 0 => causes.push(Cause::invalid(
            "spec.activeDeadlineSeconds",
            &json!(n),
            "must be between 1 and 2147483647, inclusive",
        )),
        (Some(o), Some(n)) if n > o => causes.push(Cause::invalid(
            "spec.activeDeadlineSeconds",
            &json!(n),
            "must be less than or equal to previous value",
        )),
        _ => {}
    }
    restore(&mut masked, old_spec, "activeDeadlineSeconds");

    let old_tol = old_spec
        .get("tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let new_tol = new_spec
        .get("tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for t in &old_tol {
        let kept = new_tol.iter().any(|n| {
            n == t || {
                let strip = |v: &Value| {
                    let mut v = v.clone();
                    if let Some(m) = v.as_object_mut() {
                        m.remove("tolerationSeconds");
                    }
                    v
                };
                strip(n) == strip(t)
                    && t.get("effect").and_then(Value::as_str) == Some("NoExecute")
                    && match (
                        int(t.get("tolerationSeconds")),
                        int(n.get("tolerationSeconds")),
                    ) {
                        (Some(o), Some(n)) => n <= o,
                        (None, _) => false,
                        (Some(_), None) => false,
                    }
            }
        });
        if !kept {
            causes.push(Cause::forbidden(
                "spec.tolerations",
                "existing toleration can not be modified except its tolerationSeconds",
            ));
            break;
        }
    }
    restore(&mut masked, old_spec, "tolerations");

    let old_tgp = int(old_spec.get("terminationGracePeriodSeconds"));
    let new_tgp = int(new_spec.get("terminationGracePeriodSeconds"));
    if matches!(old_tgp, Some(o) if o < 0) && new_tgp == Some(1) {
        restore(&mut masked, old_spec, "terminationGracePeriodSeconds");
    }

    let old_gates = old_spec
        .get("schedulingGates")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let new_gates = new_spec
        .get("schedulingGates")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if new_gates.iter().all(|g| old_gates.contains(g)) {
        restore(&mut masked, old_spec, "schedulingGates");
    }

    if &masked != old_spec {
        let mut changed = Vec::new();
        describe_changes(old_spec, &masked, "spec", &mut changed);
        changed.truncate(5);
        causes.push(Cause::forbidden(
            "spec",
            format!("{POD_UPDATE_FORBIDDEN}\n  changed: {}", changed.join(", ")),
        ));
    }
    causes
}

fn restore(masked: &mut Value, old_spec: &Value, key: &str) {
    if let Some(m) = masked.as_object_mut() {
        match old_spec.get(key) {
            Some(v) => m.insert(key.to_string(), v.clone()),
            None => m.remove(key),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Value {
        let mut p = json!({"spec": {"containers": [{"name": "a", "image": "a:1"}],
            "tolerations": [{"key": "k", "operator": "Exists"}]}});
        apply_defaults(&mut p);
        p
    }

    #[test]
    fn image_change_allowed_env_change_forbidden() {
        let old = pod();
        let mut new = old.clone();
        new["spec"]["containers"][0]["image"] = json!("a:2");
        assert!(validate_update(&old, &new).is_empty());
        new["spec"]["containers"][0]["env"] = json!([{"name": "X", "value": "1"}]);
        let causes = validate_update(&old, &new);
        assert_eq!(causes.len(), 1);
        assert!(
            causes[0]
                .message
                .starts_with("Forbidden: pod updates may not change fields")
        );
    }

    #[test]
    fn tolerations_only_additions() {
        let old = pod();
        let mut new = old.clone();
        new["spec"]["tolerations"] =
            json!([{"key": "k", "operator": "Exists"}, {"key": "z", "operator": "Exists"}]);
        assert!(validate_update(&old, &new).is_empty());
        new["spec"]["tolerations"] = json!([]);
        assert!(!validate_update(&old, &new).is_empty());
    }

    #[test]
    fn deadline_may_only_decrease() {
        let mut old = pod();
        old["spec"]["activeDeadlineSeconds"] = json!(100);
        let mut new = old.clone();
        new["spec"]["activeDeadlineSeconds"] = json!(50);
        assert!(validate_update(&old, &new).is_empty());
        new["spec"]["activeDeadlineSeconds"] = json!(200);
        assert!(!validate_update(&old, &new).is_empty());
    }
}
