//! The `/scale` subresource: an autoscaling/v1 Scale view of `spec.replicas` (the ScaleREST of
//! deployments). Scale writes go to the store directly: no webhook is called for them.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::json_response;
use super::resource::Request;
use crate::error::{ApiError, Cause};
use crate::fault::Verb;
use crate::meta;
use crate::patch;
use crate::resources::ResourceDef;
use crate::store::Subresource;

/// `metav1.FormatLabelSelector`: `a=b,c in (d,e),!f` (labels sorted, then expressions).
fn format_selector(sel: &Value) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
        let mut pairs: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect();
        pairs.sort();
        parts.extend(pairs);
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        let mut values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let values = values.join(",");
        parts.push(match e.get("operator").and_then(Value::as_str) {
            Some("In") => format!("{key} in ({values})"),
            Some("NotIn") => format!("{key} notin ({values})"),
            Some("DoesNotExist") => format!("!{key}"),
            _ => key.to_string(),
        });
    }
    parts.join(",")
}

/// The Scale of a stored object.
fn scale_of(obj: &Value) -> Value {
    let m = obj.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let mut metadata = Map::new();
    for key in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = m.get(key) {
            metadata.insert(key.to_string(), v.clone());
        }
    }
    let selector = obj
        .pointer("/spec/selector")
        .map(format_selector)
        .unwrap_or_default();
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": { "replicas": obj.pointer("/spec/replicas").cloned().unwrap_or(json!(0)) },
        "status": {
            "replicas": obj.pointer("/status/replicas").cloned().unwrap_or(json!(0)),
            "selector": selector,
        }
    })
}

fn replicas_of(def: &ResourceDef, name: &str, scale: &Value) -> Result<i64, ApiError> {
    let replicas = scale.pointer("/spec/replicas").cloned().unwrap_or(json!(0));
    match replicas.as_i64() {
        Some(r) if r >= 0 => Ok(r),
        _ => Err(ApiError::invalid(
            def,
            name,
            vec![Cause::invalid(
                "spec.replicas",
                &replicas,
                "must be greater than or equal to 0",
            )],
        )),
    }
}

/// GET, PUT and PATCH of `<resource>/<name>/scale`.
pub fn handle(verb: Verb, req: &Request<'_>) -> Result<Response, ApiError> {
    let (store, def, ns, name) = (&req.state.store, req.target.def, req.ns(), req.name()?);
    let current = store.get(def, ns, name)?;
    let scale = scale_of(&current);
    let wanted = match verb {
        Verb::Get => return Ok(json_response(StatusCode::OK, &scale)),
        Verb::Update => {
            let sent = req.json_body()?;
            let rv = meta::resource_version(&sent);
            if !rv.is_empty() && rv != meta::resource_version(&current) {
                return Err(ApiError::conflict(def, name));
            }
            sent
        }
        Verb::Patch => patch::apply(def, req.patch_type()?, &scale, &req.body)?,
        _ => {
            return Err(ApiError::method_not_allowed(format!(
                "the server does not allow this method on the requested resource ({})",
                def.qualified()
            )));
        }
    };
    let replicas = replicas_of(def, name, &wanted)?;
    let mut updated = current;
    if let Some(spec) = updated.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("replicas".into(), json!(replicas));
    }
    let (stored, _) = store.update(def, ns, name, &updated, Subresource::Main, req.dry_run())?;
    Ok(json_response(StatusCode::OK, &scale_of(&stored)))
}
