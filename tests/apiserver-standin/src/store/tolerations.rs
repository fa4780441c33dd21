//! Pod tolerations as `core/validation` checks them: `ValidateTolerations` and, on update,
//! `validateOnlyAddedTolerations`.

use serde_json::{Value, json};

use super::objectmeta::{label_value_errors, qualified_name_errors};
use crate::error::Cause;

const FIELD: &str = "spec.tolerations";
const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

fn text<'a>(t: &'a Value, key: &str) -> &'a str {
    t.get(key).and_then(Value::as_str).unwrap_or("")
}

fn list(spec: &Value) -> Vec<Value> {
    spec.get("tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn not_supported(field: String, value: &str, supported: &[&str]) -> Cause {
    let quoted: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    Cause {
        reason: "FieldValueNotSupported",
        field,
        message: format!(
            "Unsupported value: {}: supported values: {}",
            json!(value),
            quoted.join(", ")
        ),
    }
}

/// `ValidateTolerations` on `spec.tolerations`.
pub fn validate(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, t) in list(spec).iter().enumerate() {
        let at = |f: &str| format!("{FIELD}[{i}].{f}");
        let (key, operator, value, effect) = (
            text(t, "key"),
            text(t, "operator"),
            text(t, "value"),
            text(t, "effect"),
        );
        if !key.is_empty() {
            for msg in qualified_name_errors(key) {
                causes.push(Cause::invalid(at("key"), &json!(key), msg));
            }
        }
        if key.is_empty() && operator != "Exists" {
            causes.push(Cause::invalid(
                at("operator"),
                &json!(operator),
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if t.get("tolerationSeconds").is_some_and(|v| !v.is_null()) && effect != "NoExecute" {
            causes.push(Cause::invalid(
                at("effect"),
                &json!(effect),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            "Equal" | "" => {
                let errs = label_value_errors(value);
                if !errs.is_empty() {
                    causes.push(Cause::invalid(
                        at("operator"),
                        &json!(value),
                        errs.join(";"),
                    ));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    causes.push(Cause::invalid(
                        at("operator"),
                        &json!(value),
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            other => causes.push(not_supported(at("operator"), other, &["Equal", "Exists"])),
        }
        if !effect.is_empty() && !EFFECTS.contains(&effect) {
            causes.push(not_supported(at("effect"), effect, &EFFECTS));
        }
    }
    causes
}

/// `validateOnlyAddedTolerations`: every existing toleration must still be there, equal but
/// for `tolerationSeconds` (which may change freely); additions are allowed. Then the new
/// list is validated.
pub fn validate_only_added(old_spec: &Value, new_spec: &Value) -> Vec<Cause> {
    let fields = ["key", "operator", "value", "effect"];
    let new = list(new_spec);
    for old in list(old_spec) {
        let found = new
            .iter()
            .any(|n| fields.iter().all(|f| text(n, f) == text(&old, f)));
        if !found {
            return vec![Cause::forbidden(
                FIELD,
                "existing toleration can not be modified except its tolerationSeconds",
            )];
        }
    }
    validate(new_spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(tolerations: Value) -> Value {
        json!({ "tolerations": tolerations })
    }

    #[test]
    fn seconds_may_change_and_additions_are_allowed() {
        let old = spec(
            json!([{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]),
        );
        let longer = spec(
            json!([{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]),
        );
        assert!(validate_only_added(&old, &longer).is_empty());
        let unset = spec(json!([{"key": "k", "operator": "Exists", "effect": "NoExecute"}]));
        assert!(validate_only_added(&old, &unset).is_empty());
        let added = spec(
            json!([{"key": "z", "operator": "Exists"}, {"key": "k", "operator": "Exists", "effect": "NoExecute"}]),
        );
        assert!(validate_only_added(&old, &added).is_empty());
    }

    #[test]
    fn changed_or_removed_is_forbidden() {
        let old = spec(json!([{"key": "k", "operator": "Exists"}]));
        for new in [
            spec(json!([])),
            spec(json!([{"key": "k", "operator": "Exists", "effect": "NoSchedule"}])),
        ] {
            let causes = validate_only_added(&old, &new);
            assert_eq!(causes.len(), 1);
            assert_eq!(
                causes[0].message,
                "Forbidden: existing toleration can not be modified except its tolerationSeconds"
            );
        }
    }

    #[test]
    fn seconds_need_no_execute() {
        let causes = validate(&spec(
            json!([{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]),
        ));
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "spec.tolerations[0].effect");
        assert_eq!(
            causes[0].message,
            "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"
        );
    }
}
