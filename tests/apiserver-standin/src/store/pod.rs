//! The pod strategy: defaults, create validation, the update immutability rule, initial status.

use serde_json::{Map, Value, json};

use super::{objectmeta, tolerations};
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

const DNS_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn array<'a>(spec: &'a Value, list: &str) -> &'a [Value] {
    spec.get(list)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn image(c: &Value) -> &str {
    c.get("image").and_then(Value::as_str).unwrap_or("")
}

/// The parts of `ValidatePodSpec` (and the pod-only container checks of
/// `validatePodMetadataAndSpec`) the stand-in implements.
pub fn validate_spec(pod: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let empty = Value::Object(Map::new());
    let spec = pod.get("spec").unwrap_or(&empty);
    if array(spec, "containers").is_empty() {
        causes.push(Cause::required("spec.containers", ""));
    }
    let mut seen: Vec<&str> = Vec::new();
    for list in CONTAINER_LISTS {
        for (i, c) in array(spec, list).iter().enumerate() {
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            let field = format!("spec.{list}[{i}]");
            if name.is_empty() {
                causes.push(Cause::required(format!("{field}.name"), ""));
            } else if !crate::meta::is_dns_label(name) {
                causes.push(Cause::invalid(
                    format!("{field}.name"),
                    &json!(name),
                    DNS_LABEL_ERR,
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
            if image(c).is_empty() {
                causes.push(Cause::required(format!("{field}.image"), ""));
            }
        }
    }
    if let Some(n) = int(spec.get("activeDeadlineSeconds"))
        && !(1..=i64::from(i32::MAX)).contains(&n)
    {
        causes.push(Cause::invalid(
            "spec.activeDeadlineSeconds",
            &json!(n),
            "must be between 1 and 2147483647, inclusive",
        ));
    }
    causes.extend(tolerations::validate(spec));
    for list in CONTAINER_LISTS {
        for (i, c) in array(spec, list).iter().enumerate() {
            causes.extend(whitespace_cause(list, i, c));
        }
    }
    causes
}

fn whitespace_cause(list: &str, i: usize, c: &Value) -> Option<Cause> {
    let img = image(c);
    (img.trim() != img).then(|| {
        Cause::invalid(
            format!("spec.{list}[{i}].image"),
            &json!(img),
            "must not have leading or trailing whitespace",
        )
    })
}

/// Validation of a new pod's spec (its metadata is checked by the caller).
pub fn validate_create(pod: &Value) -> Vec<Cause> {
    validate_spec(pod)
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

/// `ValidatePodUpdate`, in its order: metadata update, metadata and spec, then the update
/// rule (containers may not be added or removed, images, activeDeadlineSeconds, tolerations
/// additions, scheduling-gate removals, terminationGracePeriodSeconds negative to 1).
pub fn validate_update(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = objectmeta::validate_object_meta_update(new, old);
    causes.extend(objectmeta::validate_object_meta(new));
    causes.extend(validate_spec(new));
    let empty = Value::Object(Map::new());
    let old_spec = old.get("spec").unwrap_or(&empty);
    let new_spec = new.get("spec").unwrap_or(&empty);

    for list in CONTAINER_LISTS {
        let new_list = array(new_spec, list);
        if new_list.len() != array(old_spec, list).len() {
            causes.push(Cause::forbidden(
                format!("spec.{list}"),
                "pod updates may not add or remove containers",
            ));
            return causes;
        }
        for (i, c) in new_list.iter().enumerate() {
            if image(c).is_empty() {
                causes.push(Cause::required(format!("spec.{list}[{i}].image"), ""));
            }
            causes.extend(whitespace_cause(list, i, c));
        }
    }

    let old_ads = int(old_spec.get("activeDeadlineSeconds"));
    match (old_ads, int(new_spec.get("activeDeadlineSeconds"))) {
        (_, Some(n)) if !(0..=i64::from(i32::MAX)).contains(&n) => {
            causes.push(Cause::invalid(
                "spec.activeDeadlineSeconds",
                &json!(n),
                "must be between 0 and 2147483647, inclusive",
            ));
            return causes;
        }
        (Some(o), Some(n)) if o < n => {
            causes.push(Cause::invalid(
                "spec.activeDeadlineSeconds",
                &json!(n),
                "must be less than or equal to previous value",
            ));
            return causes;
        }
        (Some(_), None) => causes.push(Cause::invalid(
            "spec.activeDeadlineSeconds",
            &Value::Null,
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }

    causes.extend(tolerations::validate_only_added(old_spec, new_spec));
    causes.extend(only_deleted_scheduling_gates(old_spec, new_spec));
    if new_spec == old_spec {
        return causes;
    }

    let mut masked = new_spec.clone();
    for list in CONTAINER_LISTS {
        let old_list = array(old_spec, list);
        if let Some(items) = masked.get_mut(list).and_then(Value::as_array_mut) {
            for (c, old_c) in items.iter_mut().zip(old_list) {
                if let Some(obj) = c.as_object_mut() {
                    match old_c.get("image") {
                        Some(img) => obj.insert("image".into(), img.clone()),
                        None => obj.remove("image"),
                    };
                }
            }
        }
    }
    for key in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        restore(&mut masked, old_spec, key);
    }
    let old_tgp = int(old_spec.get("terminationGracePeriodSeconds"));
    let new_tgp = int(masked.get("terminationGracePeriodSeconds"));
    if matches!(old_tgp, Some(o) if o < 0) && new_tgp == Some(1) {
        restore(&mut masked, old_spec, "terminationGracePeriodSeconds");
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

/// `validateOnlyDeletedSchedulingGates`.
fn only_deleted_scheduling_gates(old_spec: &Value, new_spec: &Value) -> Vec<Cause> {
    let gate_names = |spec: &Value| -> Vec<String> {
        array(spec, "schedulingGates")
            .iter()
            .map(|g| {
                g.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    };
    let old = gate_names(old_spec);
    gate_names(new_spec)
        .iter()
        .enumerate()
        .filter(|(_, g)| !old.contains(g))
        .map(|(i, g)| {
            Cause::forbidden(
                format!("spec.schedulingGates[{i}].name"),
                format!("only deletion is allowed, but found new scheduling gate '{g}'"),
            )
        })
        .collect()
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
