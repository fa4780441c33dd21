//! SidecarSet selector validation (§2.2 rules 4, 5, 7): apimachinery's `ValidateLabelSelector`,
//! "empty selector is not valid", and a conversion (`LabelSelectorAsSelector`) check.

use super::errors::FieldError;
use super::k8s_names::{
    is_qualified_name, is_valid_label_value, validate_label_name, validate_labels,
};
use crate::api::{LabelSelector, LabelSelectorRequirement};
use crate::selector;

/// Everything upstream's `validateSelector` reports for `selector` at `field`.
/// An invalid key or value is reported by the field validation *and* by the conversion check,
/// so such a selector yields two errors, as upstream.
pub fn validate_selector(selector: &LabelSelector, field: &str) -> Vec<FieldError> {
    let mut errs = validate_label_selector(selector, field);
    if selector::is_empty(selector) {
        errs.push(FieldError::invalid(
            field,
            "{}",
            "empty selector is not valid for sidecarset.",
        ));
    }
    if let Some(reason) = conversion_error(selector) {
        errs.push(FieldError::invalid(
            format!("{field}.selector"),
            "selector",
            &format!("cannot be converted to a label selector: {reason}"),
        ));
    }
    errs
}

/// `metav1validation.ValidateLabelSelector` (default options: invalid label values rejected).
pub fn validate_label_selector(selector: &LabelSelector, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(labels) = &selector.match_labels {
        errs.extend(validate_labels(labels, &format!("{field}.matchLabels")));
    }
    for (i, requirement) in selector.match_expressions.iter().flatten().enumerate() {
        errs.extend(validate_requirement(
            requirement,
            &format!("{field}.matchExpressions[{i}]"),
        ));
    }
    errs
}

fn validate_requirement(req: &LabelSelectorRequirement, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let values = req.values.as_deref().unwrap_or(&[]);
    match req.operator.as_str() {
        "In" | "NotIn" => {
            if values.is_empty() {
                errs.push(FieldError::required(
                    format!("{field}.values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
        }
        "Exists" | "DoesNotExist" => {
            if !values.is_empty() {
                errs.push(FieldError::forbidden(
                    format!("{field}.values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
        }
        other => errs.push(FieldError::invalid_str(
            format!("{field}.operator"),
            other,
            "not a valid selector operator",
        )),
    }
    errs.extend(validate_label_name(&req.key, &format!("{field}.key")));
    for (i, value) in values.iter().enumerate() {
        for msg in is_valid_label_value(value) {
            errs.push(FieldError::invalid_str(
                format!("{field}.values[{i}]"),
                value,
                &msg,
            ));
        }
    }
    errs
}

/// Why `metav1.LabelSelectorAsSelector` would fail on `selector` (operators, value counts,
/// keys and values as `labels.NewRequirement` checks them), or `None` if it converts.
pub fn conversion_error(selector: &LabelSelector) -> Option<String> {
    if let Err(e) = selector::check(selector) {
        return Some(e.to_string());
    }
    let labels = selector.match_labels.iter().flatten();
    let pairs = labels.map(|(k, v)| (k.as_str(), std::slice::from_ref(v)));
    let exprs = selector
        .match_expressions
        .iter()
        .flatten()
        .map(|r| (r.key.as_str(), r.values.as_deref().unwrap_or(&[])));
    for (key, values) in pairs.chain(exprs) {
        if let Some(msg) = is_qualified_name(key).into_iter().next() {
            return Some(format!("key: Invalid value: {key:?}: {msg}"));
        }
        for value in values {
            if let Some(msg) = is_valid_label_value(value).into_iter().next() {
                return Some(format!("values[0][{key}]: Invalid value: {value:?}: {msg}"));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }
    }

    #[test]
    fn invalid_value_counts_twice() {
        let s = LabelSelector {
            match_labels: Some(BTreeMap::from([("a".into(), "b".into())])),
            match_expressions: Some(vec![expr("app-name", "NotIn", &["app-group", "app-risk-"])]),
        };
        let errs = validate_selector(&s, "spec.selector");
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(errs[0].field, "spec.selector.matchExpressions[0].values[1]");
    }

    #[test]
    fn empty_and_bad_operator() {
        let errs = validate_selector(&LabelSelector::default(), "spec.selector");
        assert_eq!(errs.len(), 1);
        assert!(errs[0].message.contains("empty selector is not valid"));
        let s = LabelSelector {
            match_expressions: Some(vec![expr("a", "Foo", &["x"])]),
            ..Default::default()
        };
        // field validation + conversion error
        assert_eq!(validate_selector(&s, "s").len(), 2);
        let s = LabelSelector {
            match_labels: Some(BTreeMap::from([("bad key".into(), "v".into())])),
            ..Default::default()
        };
        assert_eq!(validate_selector(&s, "s").len(), 2);
        let ok = LabelSelector {
            match_expressions: Some(vec![expr("a", "Exists", &[])]),
            ..Default::default()
        };
        assert!(validate_selector(&ok, "s").is_empty());
        assert!(conversion_error(&ok).is_none());
    }
}
