//! Which webhooks a request calls, as kube-apiserver's `ShouldCallHook` decides: the namespace
//! selector, the object selector, then the rules (the request's own resource first, then, with
//! `matchPolicy: Equivalent`, the resources that share its storage).

use serde_json::Value;

use super::Attributes;
use super::configuration::Webhook;
use crate::error::ApiError;
use crate::resources::{self, ResourceDef};

/// The resource (and so the version) a webhook is called with.
#[derive(Debug, Clone, Copy)]
pub struct Invocation {
    /// The resource of the AdmissionRequest's `kind`/`resource`; the request's own one unless
    /// the webhook matched an equivalent.
    pub def: &'static ResourceDef,
}

fn listed(list: Option<&Value>, value: &str) -> bool {
    list.and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v == "*" || v == value))
}

fn split_resource(r: &str) -> (&str, &str) {
    r.split_once('/').unwrap_or((r, ""))
}

/// `rules.Matcher.Matches`: operation, group, version, resource and subresource, scope.
pub fn rule_matches(rule: &Value, attrs: &Attributes, def: &ResourceDef) -> bool {
    let resources_match = rule
        .get("resources")
        .and_then(Value::as_array)
        .is_some_and(|rs| {
            rs.iter().filter_map(Value::as_str).any(|r| {
                let (res, sub) = split_resource(r);
                (res == "*" || res == def.plural) && (sub == "*" || sub == attrs.subresource)
            })
        });
    let is_namespace = def.group.is_empty() && def.plural == "namespaces";
    let scope_match = match rule.get("scope").and_then(Value::as_str).unwrap_or("*") {
        "Namespaced" => !is_namespace && !attrs.namespace.is_empty(),
        "Cluster" => is_namespace || attrs.namespace.is_empty(),
        _ => true,
    };
    listed(rule.get("operations"), attrs.operation.as_str())
        && listed(rule.get("apiGroups"), def.group)
        && listed(rule.get("apiVersions"), def.version)
        && resources_match
        && scope_match
}

/// The labels `namespaceSelector` is matched against: the object itself for a namespace being
/// created or updated, else the request's namespace (`None`: a cluster-scoped object, always selected).
pub fn namespace_labels(
    attrs: &Attributes,
    lookup: impl Fn(&str) -> Result<Value, ApiError>,
) -> Result<Option<Value>, ApiError> {
    let is_namespace = attrs.def.group.is_empty() && attrs.def.plural == "namespaces";
    if attrs.namespace.is_empty() && !is_namespace {
        return Ok(None);
    }
    if is_namespace
        && attrs.subresource.is_empty()
        && matches!(
            attrs.operation,
            super::Operation::Create | super::Operation::Update
        )
    {
        let labels = attrs
            .object
            .as_ref()
            .and_then(|o| o.get("metadata"))
            .and_then(|m| m.get("labels"))
            .cloned();
        return Ok(Some(labels.unwrap_or(Value::Null)));
    }
    let ns = lookup(&attrs.namespace)?;
    Ok(Some(
        ns.get("metadata")
            .and_then(|m| m.get("labels"))
            .cloned()
            .unwrap_or(Value::Null),
    ))
}

fn labels(obj: Option<&Value>) -> Option<&Value> {
    obj.and_then(|o| o.get("metadata"))
        .and_then(|m| m.get("labels"))
}

/// Decides whether `hook` is called for `attrs`; `ns_labels` is [`namespace_labels`]'s answer.
pub fn should_call(
    hook: &Webhook,
    attrs: &Attributes,
    ns_labels: &Result<Option<Value>, ApiError>,
) -> Result<Option<Invocation>, ApiError> {
    let ns_match = match ns_labels {
        Ok(None) => true,
        Ok(Some(l)) => {
            hook.namespace_selector_empty
                || hook
                    .namespace_selector
                    .matches(Some(l).filter(|l| !l.is_null()))
        }
        // An error only counts when a rule matches (upstream returns it after the rules).
        Err(_) => true,
    };
    if !ns_match {
        return Ok(None);
    }
    let obj_match = hook.object_selector_empty
        || [attrs.object.as_ref(), attrs.old_object.as_ref()]
            .into_iter()
            .flatten()
            .any(|o| hook.object_selector.matches(labels(Some(o))));
    if !obj_match {
        return Ok(None);
    }
    let mut invocation = hook
        .rules
        .iter()
        .any(|r| rule_matches(r, attrs, attrs.def))
        .then_some(Invocation { def: attrs.def });
    if invocation.is_none() && hook.equivalent {
        let equivalents: Vec<&'static ResourceDef> = resources::RESOURCES
            .iter()
            .filter(|d| d.storage == attrs.def.storage && *d != attrs.def)
            .filter(|d| attrs.subresource.is_empty() || d.status_subresource)
            .collect();
        invocation = hook.rules.iter().find_map(|r| {
            equivalents
                .iter()
                .find(|d| rule_matches(r, attrs, d))
                .map(|d| Invocation { def: d })
        });
    }
    match (invocation, ns_labels) {
        (None, _) => Ok(None),
        (Some(_), Err(e)) => Err(e.clone()),
        (Some(i), Ok(_)) => Ok(Some(i)),
    }
}
