//! `ValidateResourceRequirements`: resource names, non-negative quantities, requests ≤ limits.

use super::super::errors::FieldError;
use super::super::k8s_names::is_qualified_name;
use super::json::{Object, obj_at};
use crate::quantity::Quantity;
use std::collections::BTreeMap;

const STANDARD: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];

/// Native resources (no domain, or `kubernetes.io/`) may be overcommitted, hugepages excepted.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.starts_with("kubernetes.io/")
}

fn overcommit_allowed(name: &str) -> bool {
    is_native(name) && !name.starts_with("hugepages-")
}

fn validate_name(name: &str, field: &str, errs: &mut Vec<FieldError>) {
    let msgs = is_qualified_name(name);
    if !msgs.is_empty() {
        for msg in msgs {
            errs.push(FieldError::invalid_str(field, name, &msg));
        }
        return;
    }
    let short = name.strip_prefix("kubernetes.io/").unwrap_or(name);
    if is_native(name) && !STANDARD.contains(&short) && !short.starts_with("hugepages-") {
        errs.push(FieldError::invalid_str(
            field,
            name,
            "must be a standard resource for containers",
        ));
    }
}

/// Parses and checks one resource list; returns the parsed quantities.
fn quantities<'a>(
    list: Option<&'a Object>,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> BTreeMap<&'a str, Quantity> {
    let mut out = BTreeMap::new();
    for (name, value) in list.into_iter().flatten() {
        let field = format!("{path}[{name}]");
        validate_name(name, &field, errs);
        match Quantity::from_json(value) {
            Some(Ok(q)) => {
                if q.milli_value() < 0 {
                    errs.push(FieldError::invalid_str(
                        &field,
                        &q.to_string(),
                        "must be greater than or equal to 0",
                    ));
                } else if !is_native(name) && q.milli_value() % 1000 != 0 {
                    errs.push(FieldError::invalid_str(
                        &field,
                        &q.to_string(),
                        "must be an integer",
                    ));
                }
                out.insert(name.as_str(), q);
            }
            Some(Err(e)) => errs.push(FieldError::invalid(
                field,
                value.to_string(),
                &e.to_string(),
            )),
            None if value.is_null() => {}
            None => errs.push(FieldError::invalid(
                field,
                value.to_string(),
                "must be a quantity string",
            )),
        }
    }
    out
}

/// Checks `resources` of one container. Quantities are compared at milli precision (exact for
/// objects defaulted by §2.1, which rounds them to milli precision).
pub fn validate_resources(c: &Object, path: &str, errs: &mut Vec<FieldError>) {
    let Some(resources) = obj_at(c, "resources", path, errs) else {
        return;
    };
    let rpath = format!("{path}.resources");
    let limits_obj = obj_at(resources, "limits", &rpath, errs);
    let requests_obj = obj_at(resources, "requests", &rpath, errs);
    let limits = quantities(limits_obj, &format!("{rpath}.limits"), errs);
    let requests = quantities(requests_obj, &format!("{rpath}.requests"), errs);
    let req_path = format!("{rpath}.requests");
    for (name, request) in &requests {
        match limits.get(name) {
            Some(limit) => {
                let (r, l) = (request.milli_value(), limit.milli_value());
                if r != l && !overcommit_allowed(name) {
                    errs.push(FieldError::invalid_str(
                        &req_path,
                        &request.to_string(),
                        &format!("must be equal to {name} limit of {limit}"),
                    ));
                } else if r > l {
                    errs.push(FieldError::invalid_str(
                        &req_path,
                        &request.to_string(),
                        &format!("must be less than or equal to {name} limit of {limit}"),
                    ));
                }
            }
            None if !overcommit_allowed(name) => errs.push(FieldError::required(
                format!("{rpath}.limits"),
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
    }
}
