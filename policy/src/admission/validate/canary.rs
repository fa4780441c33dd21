//! §2.2 rule 2: canary SidecarSets (`apps.kruise.io/sidecarset-canary: "true"` plus a base).

use super::errors::FieldError;
use crate::api::{SidecarSet, values};

pub const CANARY_ANNOTATION: &str = "apps.kruise.io/sidecarset-canary";
pub const BASE_ANNOTATION: &str = "apps.kruise.io/sidecarset-base";

/// The base name when `sidecarset` is a canary (annotation exactly `"true"`, non-empty base).
pub fn canary_base(sidecarset: &SidecarSet) -> Option<&str> {
    if sidecarset.annotation(CANARY_ANNOTATION) != Some("true") {
        return None;
    }
    sidecarset
        .annotation(BASE_ANNOTATION)
        .filter(|b| !b.is_empty())
}

/// Base must differ from the object, be unchanged on UPDATE, exist among `others` and not be a
/// canary itself; a canary must use `NotUpdate`.
pub fn validate_canary(
    sidecarset: &SidecarSet,
    old: Option<&SidecarSet>,
    others: &[SidecarSet],
) -> Vec<FieldError> {
    let Some(base) = canary_base(sidecarset) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    let meta_error = |detail: &str| FieldError::invalid("metadata", "{…}", detail);
    if base == sidecarset.name() {
        errs.push(meta_error("base sidecarSet cannot be itself"));
    } else if let Some(old) = old
        && old.annotation(BASE_ANNOTATION).unwrap_or("") != base
    {
        errs.push(meta_error(&format!(
            "annotations[{BASE_ANNOTATION}] is immutable"
        )));
    } else {
        match others.iter().find(|s| s.name() == base) {
            None => errs.push(meta_error(&format!(
                "fetch base sidecarSet[{base}] failed: sidecarsets.apps.kruise.io {base:?} not found"
            ))),
            Some(found) if canary_base(found).is_some() => {
                errs.push(meta_error("base sidecarSet cannot be canary"));
            }
            Some(_) => {}
        }
    }
    if sidecarset.spec.update_strategy.type_ == values::ROLLING_UPDATE {
        errs.push(meta_error(
            "RollingUpdate is not supported for canary sidecarSet",
        ));
    }
    errs
}
