//! Label selectors as apimachinery evaluates them (`metav1.LabelSelectorAsSelector`).

use crate::api::{LabelSelector, LabelSelectorRequirement};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("{0:?} is not a valid label selector operator")]
    InvalidOperator(String),
    #[error("for '{operator}' operator, the values set can't be empty (key {key:?})")]
    ValuesRequired { operator: String, key: String },
    #[error("values set must be empty for exists and does not exist (key {key:?})")]
    ValuesForbidden { key: String },
}

pub type Labels = BTreeMap<String, String>;

/// Whether `selector` selects `labels`. An empty selector selects everything.
/// (Callers decide what a `None` selector means: SidecarSets treat it as "nothing".)
pub fn matches(selector: &LabelSelector, labels: &Labels) -> Result<bool, SelectorError> {
    evaluate(selector, labels, true)
}

/// Whether `selector` selects `labels` as Kruise's `ValidatedLabelSelectorAsSelector` reads it
/// (the pod webhook: the selector was validated at admission): only an unknown operator is an
/// error; `In` without values selects nothing, `NotIn` without values anything, and `Exists` and
/// `DoesNotExist` ignore values.
pub fn matches_validated(selector: &LabelSelector, labels: &Labels) -> Result<bool, SelectorError> {
    evaluate(selector, labels, false)
}

/// `strict`: the value counts are checked as `metav1.LabelSelectorAsSelector` does.
fn evaluate(
    selector: &LabelSelector,
    labels: &Labels,
    strict: bool,
) -> Result<bool, SelectorError> {
    let mut selected = true;
    if let Some(match_labels) = &selector.match_labels {
        for (key, value) in match_labels {
            selected &= labels.get(key) == Some(value);
        }
    }
    for requirement in selector.match_expressions.iter().flatten() {
        selected &= requirement_matches(requirement, labels, strict)?;
    }
    Ok(selected)
}

/// Whether the selector has neither matchLabels nor matchExpressions.
pub fn is_empty(selector: &LabelSelector) -> bool {
    selector.match_labels.as_ref().is_none_or(|m| m.is_empty())
        && selector
            .match_expressions
            .as_ref()
            .is_none_or(|e| e.is_empty())
}

fn requirement_matches(
    requirement: &LabelSelectorRequirement,
    labels: &Labels,
    strict: bool,
) -> Result<bool, SelectorError> {
    let values = requirement.values.as_deref().unwrap_or(&[]);
    let key = &requirement.key;
    let actual = labels.get(key);
    match requirement.operator.as_str() {
        "In" | "NotIn" if strict && values.is_empty() => Err(SelectorError::ValuesRequired {
            operator: requirement.operator.clone(),
            key: key.clone(),
        }),
        "In" => Ok(actual.is_some_and(|v| values.contains(v))),
        "NotIn" => Ok(actual.is_none_or(|v| !values.contains(v))),
        "Exists" | "DoesNotExist" if strict && !values.is_empty() => {
            Err(SelectorError::ValuesForbidden { key: key.clone() })
        }
        "Exists" => Ok(actual.is_some()),
        "DoesNotExist" => Ok(actual.is_none()),
        other => Err(SelectorError::InvalidOperator(other.to_string())),
    }
}

/// Checks that a selector converts without error (operators and value counts).
pub fn check(selector: &LabelSelector) -> Result<(), SelectorError> {
    matches(selector, &Labels::new()).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn expr(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }
    }

    #[test]
    fn match_labels_and_expressions() {
        let selector = LabelSelector {
            match_labels: Some(labels(&[("app", "nginx")])),
            match_expressions: Some(vec![
                expr("tier", "In", &["web", "api"]),
                expr("canary", "DoesNotExist", &[]),
                expr("zone", "NotIn", &["b"]),
            ]),
        };
        assert!(matches(&selector, &labels(&[("app", "nginx"), ("tier", "web")])).unwrap());
        assert!(!matches(&selector, &labels(&[("app", "nginx"), ("tier", "db")])).unwrap());
        assert!(
            !matches(
                &selector,
                &labels(&[("app", "nginx"), ("tier", "web"), ("canary", "1")])
            )
            .unwrap()
        );
        assert!(
            !matches(
                &selector,
                &labels(&[("app", "nginx"), ("tier", "web"), ("zone", "b")])
            )
            .unwrap()
        );
        assert!(!matches(&selector, &labels(&[("tier", "web")])).unwrap());
    }

    #[test]
    fn empty_selector_matches_everything() {
        let selector = LabelSelector::default();
        assert!(is_empty(&selector));
        assert!(matches(&selector, &labels(&[("a", "b")])).unwrap());
    }

    #[test]
    fn invalid_requirements_are_errors() {
        let bad_op = LabelSelector {
            match_expressions: Some(vec![expr("a", "badOp", &["x"])]),
            ..Default::default()
        };
        assert!(matches!(
            check(&bad_op),
            Err(SelectorError::InvalidOperator(_))
        ));
        let no_values = LabelSelector {
            match_expressions: Some(vec![expr("a", "In", &[])]),
            ..Default::default()
        };
        assert!(check(&no_values).is_err());
        let exists_values = LabelSelector {
            match_expressions: Some(vec![expr("a", "Exists", &["x"])]),
            ..Default::default()
        };
        assert!(check(&exists_values).is_err());
    }
}
