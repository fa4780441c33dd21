//! The Deployment strategy: apps/v1 defaults and the selector rules (no controller runs: status
//! stays as clients write it).

use serde_json::{Value, json};

use super::set_default;
use crate::error::Cause;
use crate::selectors::LabelSelector;
use crate::store::pod;

/// `SetDefaults_Deployment` and the pod template's defaults.
pub fn apply_defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec") else {
        return;
    };
    set_default(spec, "replicas", json!(1));
    set_default(spec, "revisionHistoryLimit", json!(10));
    set_default(spec, "progressDeadlineSeconds", json!(600));
    set_default(spec, "strategy", json!({}));
    if let Some(strategy) = spec.get_mut("strategy") {
        set_default(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
            set_default(strategy, "rollingUpdate", json!({}));
            if let Some(ru) = strategy.get_mut("rollingUpdate") {
                set_default(ru, "maxUnavailable", json!("25%"));
                set_default(ru, "maxSurge", json!("25%"));
            }
        }
    }
    if let Some(template) = spec.get_mut("template") {
        pod::apply_defaults(template);
    }
}

/// `ValidateDeploymentSpec`'s selector rules (the ones clients meet first).
pub fn validate(obj: &Value) -> Vec<Cause> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let Some(selector) = spec.get("selector").filter(|s| !s.is_null()) else {
        return vec![Cause::required("spec.selector", "")];
    };
    let mut causes = Vec::new();
    let empty = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(|m| m.is_empty())
        && selector
            .get("matchExpressions")
            .and_then(Value::as_array)
            .is_none_or(|e| e.is_empty());
    if empty {
        causes.push(Cause::invalid(
            "spec.selector",
            selector,
            "empty selector is invalid for deployment",
        ));
    }
    let labels = spec
        .pointer("/template/metadata/labels")
        .cloned()
        .unwrap_or_else(|| json!({}));
    match LabelSelector::from_api(selector) {
        Ok(sel) if !empty && !sel.matches(Some(&labels)) => causes.push(Cause::invalid(
            "spec.template.metadata.labels",
            &labels,
            "`selector` does not match template `labels`",
        )),
        Ok(_) => {}
        Err(e) => causes.push(Cause::invalid("spec.selector", selector, e)),
    }
    if spec
        .get("replicas")
        .and_then(Value::as_i64)
        .is_some_and(|r| r < 0)
    {
        causes.push(Cause::invalid(
            "spec.replicas",
            &spec["replicas"],
            "must be greater than or equal to 0",
        ));
    }
    causes
}

/// `spec.selector` may not change after create (apps/v1).
pub fn validate_update(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = validate(new);
    let (o, n) = (old.pointer("/spec/selector"), new.pointer("/spec/selector"));
    if o != n {
        causes.push(Cause::invalid(
            "spec.selector",
            n.unwrap_or(&Value::Null),
            "field is immutable",
        ));
    }
    causes
}
