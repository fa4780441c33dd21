//! The resourcesPolicy checks of §2.2 rules 10/11; expressions are evaluated by §3.7.7's
//! calculator with a dummy variable, as upstream's webhook does.

use super::errors::FieldError;
use crate::api::SidecarContainer;
use crate::resources::calculator::{self, CalcValue};
use serde_json::Value;

/// Checks one container's `resourcesPolicy` (kept as JSON). `path` is the container's path.
pub fn validate_resources_policy(
    container: &SidecarContainer,
    policy: &Value,
    path: &str,
) -> Vec<FieldError> {
    let field = format!("{path}.resourcesPolicy");
    let resources = container.container.get("resources");
    let non_empty = |key: &str| {
        resources
            .and_then(|r| r.get(key))
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
    };
    if non_empty("limits") || non_empty("requests") {
        return vec![FieldError::forbidden(
            field,
            "resources and resourcesPolicy cannot be configured together",
        )];
    }
    let Some(policy) = policy.as_object() else {
        return vec![FieldError::invalid(field, "…", "must be an object")];
    };
    let mut errs = Vec::new();
    let regex = policy
        .get("targetContainersNameRegex")
        .and_then(Value::as_str)
        .unwrap_or("");
    if regex.is_empty() {
        errs.push(FieldError::required(
            format!("{field}.targetContainersNameRegex"),
            "targetContainersNameRegex must be set",
        ));
    } else if let Err(e) = regex_lite::Regex::new(regex) {
        errs.push(FieldError::invalid_str(
            format!("{field}.targetContainersNameRegex"),
            regex,
            &format!("invalid regex: {e}"),
        ));
    }
    let expr = policy.get("resourcesExpr").and_then(Value::as_object);
    let limits = expr.and_then(|e| e.get("limits")).filter(|v| !v.is_null());
    let requests = expr
        .and_then(|e| e.get("requests"))
        .filter(|v| !v.is_null());
    if limits.is_none() && requests.is_none() {
        errs.push(FieldError::required(
            format!("{field}.resourcesExpr"),
            "at least one of limits or requests must be set",
        ));
    }
    for (name, part) in [("limits", limits), ("requests", requests)] {
        for resource in ["cpu", "memory"] {
            let text = part
                .and_then(|p| p.get(resource))
                .and_then(Value::as_str)
                .unwrap_or("");
            if text.is_empty() {
                continue;
            }
            if let Err(reason) = check_expression(text, resource) {
                errs.push(FieldError::invalid_str(
                    format!("{field}.resourcesExpr.{name}.{resource}"),
                    text,
                    &format!("invalid expression: {reason}"),
                ));
            }
        }
    }
    errs
}

/// Upstream's `validateResourceExpression`: the expression must evaluate with the field's
/// variable bound to the number 1 (so a negative result or a division by zero is an error too).
pub fn check_expression(text: &str, variable: &str) -> Result<(), String> {
    calculator::evaluate(text, variable, &CalcValue::Number(1.0))
        .map(drop)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions() {
        for ok in [
            "cpu*50%",
            "(200m+400m)*50%",
            "max(cpu*50%, 50m)",
            "500m",
            "1Gi",
            "-cpu + 1e3",
            "min(CPU, 2)",
        ] {
            assert_eq!(check_expression(ok, "cpu"), Ok(()), "{ok}");
        }
        assert_eq!(
            check_expression("max(memory*20% + 100Mi, 200Mi)", "memory"),
            Ok(())
        );
        // Evaluated with the variable at 1: these fail upstream too.
        for bad in ["cpu - 2", "1/(cpu-1)", "-500m"] {
            assert!(check_expression(bad, "cpu").is_err(), "{bad}");
        }
        for bad in [
            "",
            "cpu*",
            "memory*50%",
            "foo(cpu, 1)",
            "max(cpu)",
            "max(cpu, 1, 2)",
            "1Gi*1Gi",
            "cpu/1m",
            "(cpu",
            "cpu cpu",
            "cpu $ 1",
        ] {
            assert!(check_expression(bad, "cpu").is_err(), "{bad}");
        }
        let deep = format!("{}cpu{}", "(".repeat(500), ")".repeat(500));
        assert!(check_expression(&deep, "cpu").is_err());
    }
}
