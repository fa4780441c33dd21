//! §2.2 rules 6 (`injectionStrategy.revision`) and 7 (`updateStrategy`).

use super::errors::FieldError;
use super::selectors::{conversion_error, validate_selector};
use crate::api::{IntOrString, SidecarSetInjectionStrategy, SidecarSetUpdateStrategy, values};
use crate::selector;
use std::collections::BTreeSet;

/// Rule 6; `unresolved` is why the named ControllerRevision could not be found or restored.
pub fn validate_injection_strategy(
    strategy: &SidecarSetInjectionStrategy,
    unresolved: Option<&str>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(revision) = &strategy.revision else {
        return errs;
    };
    let field = "spec.injectionStrategy.revision";
    if revision.revision_name.is_none() && revision.custom_version.is_none() {
        errs.push(FieldError::invalid(
            field,
            "{}",
            "revisionName and customVersion cannot be empty simultaneously",
        ));
    } else if let Some(reason) = unresolved {
        errs.push(FieldError::invalid(
            field,
            "null",
            &format!("Cannot find specific ControllerRevision, err: {reason}"),
        ));
    }
    match revision.policy.as_str() {
        "" | "Always" | "Partial" => {}
        other => errs.push(FieldError::invalid_str(
            format!("{field}.policy"),
            other,
            &format!("Invalid policy {other}, supported: [Always, Partial]"),
        )),
    }
    errs
}

/// `intStrIsSet`: a string, or an int other than 0.
fn int_str_is_set(value: Option<&IntOrString>) -> bool {
    match value {
        None => false,
        Some(IntOrString::String(_)) => true,
        Some(IntOrString::Int(i)) => *i != 0,
    }
}

/// `ValidatePositiveIntOrPercent`: int ≥ 0, or a string matching `^[0-9]+%$`.
fn validate_int_or_percent(value: &IntOrString, field: &str) -> Vec<FieldError> {
    match value {
        IntOrString::Int(i) if *i < 0 => vec![FieldError::invalid(
            field,
            i,
            "must be greater than or equal to 0",
        )],
        IntOrString::Int(_) => Vec::new(),
        IntOrString::String(s) => {
            let digits = s.strip_suffix('%').unwrap_or("");
            if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
                Vec::new()
            } else {
                vec![FieldError::invalid_str(
                    field,
                    s,
                    &super::k8s_names::regex_error(
                        "a valid percent string must be a numeric string followed by an ending '%'",
                        "[0-9]+%",
                        &["1%", "93%"],
                    ),
                )]
            }
        }
    }
}

/// Rule 7, only for `RollingUpdate`.
pub fn validate_update_strategy(strategy: &SidecarSetUpdateStrategy) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if strategy.type_ != values::ROLLING_UPDATE {
        return errs;
    }
    let field = "spec.updateStrategy";
    if int_str_is_set(strategy.partition.as_ref()) && strategy.selector.is_some() {
        errs.push(FieldError::invalid(
            format!("{field}.partition"),
            "{…}",
            "Partition and Selector cannot be used together",
        ));
    }
    if let Some(sel) = &strategy.selector {
        errs.extend(validate_selector(sel, &format!("{field}.selector")));
    }
    if let Some(partition) = &strategy.partition {
        errs.extend(validate_int_or_percent(
            partition,
            &format!("{field}.partition"),
        ));
    }
    if let Some(max) = &strategy.max_unavailable {
        errs.extend(validate_int_or_percent(
            max,
            &format!("{field}.maxUnavailable"),
        ));
    }
    if let Some(msg) = priority_error(strategy) {
        errs.push(FieldError::required(
            format!("{field}.priorityStrategy"),
            &msg,
        ));
    }
    if let Some(msg) = scatter_error(strategy) {
        errs.push(FieldError::required(
            format!("{field}.scatterStrategy"),
            &msg,
        ));
    }
    errs
}

/// `UpdatePriorityStrategy.FieldsValidation`: the first problem only.
fn priority_error(strategy: &SidecarSetUpdateStrategy) -> Option<String> {
    let priority = strategy.priority_strategy.as_ref()?;
    if !priority.weight_priority.is_empty() && !priority.order_priority.is_empty() {
        return Some("only one of weightPriority and orderPriority can be used".into());
    }
    for term in &priority.weight_priority {
        if !(0..=100).contains(&term.weight) {
            return Some("weight must be valid number in the range 1-100".into());
        }
        if selector::is_empty(&term.match_selector) {
            return Some("selector can not be empty".into());
        }
        if let Some(reason) = conversion_error(&term.match_selector) {
            return Some(format!("invalid selector {reason}"));
        }
    }
    if priority
        .order_priority
        .iter()
        .any(|o| o.ordered_key.is_empty())
    {
        return Some("order key can not be empty".into());
    }
    None
}

/// `UpdateScatterStrategy.FieldsValidation`: the first problem only.
fn scatter_error(strategy: &SidecarSetUpdateStrategy) -> Option<String> {
    let mut seen = BTreeSet::new();
    for term in &strategy.scatter_strategy {
        if term.key.is_empty() {
            return Some("key should not be empty".into());
        }
        // Upstream's id is the joined text: `a:b`/`c` and `a`/`b:c` are the same term.
        if !seen.insert(format!("{}:{}", term.key, term.value)) {
            return Some(format!("duplicated key={} value={}", term.key, term.value));
        }
    }
    None
}
