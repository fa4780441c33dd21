//! `validateResizePolicy` (the synthetic pod's restartPolicy is Always, so any restart policy
//! of a resize policy is allowed).

use super::super::errors::FieldError;
use super::json::{Object, objects_at, str_at};
use std::collections::BTreeSet;

const RESOURCES: [&str; 2] = ["cpu", "memory"];
const RESTART_POLICIES: [&str; 2] = ["NotRequired", "RestartContainer"];

/// Checks `resizePolicy` of the container `c` (`path` = the container's path).
pub fn validate_resize_policy(c: &Object, path: &str, errs: &mut Vec<FieldError>) {
    let mut seen = BTreeSet::new();
    for (ppath, policy) in objects_at(c, "resizePolicy", path, errs) {
        let name = str_at(policy, "resourceName", &ppath, errs);
        if !seen.insert(name) {
            errs.push(FieldError::duplicate(&ppath, name));
        }
        one_of(name, &RESOURCES, &format!("{ppath}.resourceName"), errs);
        let restart = str_at(policy, "restartPolicy", &ppath, errs);
        one_of(
            restart,
            &RESTART_POLICIES,
            &format!("{ppath}.restartPolicy"),
            errs,
        );
    }
}

fn one_of(value: &str, supported: &[&str], field: &str, errs: &mut Vec<FieldError>) {
    if value.is_empty() {
        errs.push(FieldError::required(field, ""));
    } else if !supported.contains(&value) {
        errs.push(FieldError::not_supported(field, value, supported));
    }
}
