//! §3.7.7 `resourcesPolicy`: a sidecar's resources computed at pod creation from the resources of
//! the pod's target containers (upstream's `applyResourcesPolicy`).

use super::calculator::{self, CalcError, CalcValue};
use crate::inject::pod::str_of;
use crate::quantity::Quantity;
use crate::rawjson::shaped::VERBATIM;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourcesPolicyError {
    #[error("failed to get target containers: invalid regex pattern {pattern:?}: {reason}")]
    Regex { pattern: String, reason: String },
    #[error("no containers match the regex pattern {0:?}")]
    NoTarget(String),
    #[error("container {container:?} has an invalid {field}: {reason}")]
    TargetQuantity {
        container: String,
        field: String,
        reason: String,
    },
    #[error(
        "failed to evaluate {what} expression: failed to parse expression {expression:?}: {source}"
    )]
    Expression {
        what: &'static str,
        expression: String,
        source: CalcError,
    },
}

/// The `resources` a sidecar gets: `{limits, requests}`, empty maps left out. `pod_init` and
/// `pod_containers` are the pod's own lists; `sidecar_names` every container and init container
/// name of the matched SidecarSets, which are never targets.
pub fn resources_for(
    policy: &Value,
    pod_init: &[Value],
    pod_containers: &[Value],
    sidecar_names: &BTreeSet<String>,
) -> Result<Value, ResourcesPolicyError> {
    let pattern = str_of(policy, "targetContainersNameRegex");
    let regex = regex_lite::Regex::new(pattern).map_err(|e| ResourcesPolicyError::Regex {
        pattern: pattern.to_string(),
        reason: e.to_string(),
    })?;
    let native = |c: &Cow<'_, Value>| str_of(c, "restartPolicy") == "Always";
    let targets: Vec<Cow<'_, Value>> = pod_init
        .iter()
        .map(read_in_full)
        .filter(native)
        .chain(pod_containers.iter().map(read_in_full))
        .filter(|c| {
            let name = str_of(c, "name");
            !sidecar_names.contains(name) && regex.is_match(name)
        })
        .collect();
    if targets.is_empty() {
        return Err(ResourcesPolicyError::NoTarget(pattern.to_string()));
    }
    let mode = str_of(policy, "targetContainersMode");
    let expressions = policy.get("resourcesExpr");
    let mut resources = Map::new();
    for (kind, is_limit) in [("limits", true), ("requests", false)] {
        let Some(exprs) = expressions
            .and_then(|e| e.get(kind))
            .filter(|v| !v.is_null())
        else {
            continue;
        };
        let mut list = Map::new();
        for resource in ["cpu", "memory"] {
            let expression = str_of(exprs, resource);
            if expression.is_empty() {
                continue;
            }
            let aggregated = aggregate(&targets, kind, resource, mode)?;
            let value = match (aggregated, is_limit) {
                (Some(value), _) => value,
                // Some target has no limit: the sidecar gets none either.
                (None, true) => continue,
                (None, false) => Quantity::zero(),
            };
            let what = match (resource, is_limit) {
                ("cpu", true) => "CPU limits",
                ("cpu", false) => "CPU requests",
                (_, true) => "memory limits",
                (_, false) => "memory requests",
            };
            let quantity =
                evaluate(expression, value).map_err(|source| ResourcesPolicyError::Expression {
                    what,
                    expression: expression.to_string(),
                    source,
                })?;
            list.insert(resource.into(), Value::String(quantity.to_string()));
        }
        if !list.is_empty() {
            resources.insert(kind.into(), Value::Object(list));
        }
    }
    Ok(Value::Object(resources))
}

/// A pod container as written: one read by shape keeps all but the members injection edits as
/// text, which only this rare path needs (its resources, its restartPolicy).
fn read_in_full(container: &Value) -> Cow<'_, Value> {
    match container.get(VERBATIM).and_then(Value::as_str) {
        Some(text) => serde_json::from_str(text).map_or(Cow::Borrowed(container), Cow::Owned),
        None => Cow::Borrowed(container),
    }
}

/// `evaluateResourceExpression`: the variable is `memory` when the text names it as a word,
/// else `cpu`; a number result is millicores for `cpu`, bytes for `memory`.
fn evaluate(expression: &str, value: Quantity) -> Result<Quantity, CalcError> {
    let variable = if names_memory(expression) {
        "memory"
    } else {
        "cpu"
    };
    match calculator::evaluate(expression, variable, &CalcValue::Quantity(value))? {
        CalcValue::Quantity(q) => Ok(q),
        CalcValue::Number(n) if variable == "cpu" => Ok(Quantity::from_milli((n * 1000.0) as i64)),
        CalcValue::Number(n) => Ok(Quantity::from_units(n as i64)),
    }
}

/// The regex `\bmemory\b` (ASCII word characters).
fn names_memory(text: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = text.as_bytes();
    text.match_indices("memory").any(|(at, _)| {
        let before = at.checked_sub(1).and_then(|i| bytes.get(i)).copied();
        let after = bytes.get(at + "memory".len()).copied();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// The targets' `kind` (`limits`/`requests`) of `resource` by `mode`: `sum` adds, `max` takes the
/// largest; any other mode aggregates nothing. A limit is `None` when any target lacks it; a
/// request that is missing counts as 0, and a zero total is `None`.
fn aggregate(
    targets: &[Cow<'_, Value>],
    kind: &str,
    resource: &str,
    mode: &str,
) -> Result<Option<Quantity>, ResourcesPolicyError> {
    if !matches!(mode, "sum" | "max") {
        return Ok(None);
    }
    let mut total: Option<Quantity> = None;
    let mut all_present = true;
    for target in targets {
        let raw = target
            .get("resources")
            .and_then(|r| r.get(kind))
            .and_then(|l| l.get(resource));
        let quantity = match raw {
            None => None,
            Some(Value::Null) => Some(Quantity::zero()),
            Some(raw) => Some(
                Quantity::from_json(raw)
                    .unwrap_or(Err(crate::quantity::QuantityError::Format))
                    .map_err(|e| ResourcesPolicyError::TargetQuantity {
                        container: str_of(target, "name").to_string(),
                        field: format!("resources.{kind}.{resource}"),
                        reason: e.to_string(),
                    })?,
            ),
        };
        let Some(quantity) = quantity else {
            all_present = false;
            continue;
        };
        total = Some(match (total, mode) {
            (None, "sum") => {
                let mut sum = Quantity::zero();
                sum.add(&quantity);
                sum
            }
            (None, _) => quantity,
            (Some(mut sum), "sum") => {
                sum.add(&quantity);
                sum
            }
            (Some(max), _) if quantity.cmp_value(&max).is_gt() => quantity,
            (Some(max), _) => max,
        });
    }
    if kind == "limits" {
        return Ok(total.filter(|_| all_present));
    }
    Ok(total.filter(|q| mode == "max" || !q.is_zero()))
}

#[cfg(test)]
mod tests;
