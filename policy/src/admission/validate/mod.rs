//! SidecarSet validation: §2.2 rules 1–15 (the validating webhook), pure and panic-free.
//!
//! Runs on a SidecarSet after the defaults of §2.1. v1alpha1 `spec.namespace` is treated as
//! the `kubernetes.io/metadata.name` namespaceSelector it converts to (§1.8).

mod canary;
mod conflicts;
mod containers;
mod errors;
pub mod k8s_names;
mod metadata;
mod patch_metadata;
mod pod;
mod resources_policy;
mod selectors;
mod strategy;
mod update;

#[cfg(test)]
mod tests;

pub use canary::{BASE_ANNOTATION, CANARY_ANNOTATION, canary_base};
pub use conflicts::is_selector_overlapping;
pub use errors::{FieldError, summarize};
pub use resources_policy::check_expression;
pub use selectors::{conversion_error, validate_selector};

use crate::api::SidecarSet;

/// What validation needs beyond the object itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidationContext<'a> {
    /// UPDATE: the old object.
    pub old: Option<&'a SidecarSet>,
    /// Every other SidecarSet that can be listed (rule 2 base lookup, rule 15). The object
    /// itself may be in the list; it is skipped by name.
    pub others: &'a [SidecarSet],
    /// The §2.3 whitelist from the policy settings; `None` = no whitelist configured.
    pub allowed_patch_keys: Option<&'a [regex_lite::Regex]>,
    /// Rule 6: why the ControllerRevision that `injectionStrategy.revision` names could not be
    /// found or restored; `None` when it was, or when no cluster was asked.
    pub unresolved_revision: Option<&'a str>,
}

/// §2.2 rules 1–15 over a SidecarSet after defaults (§2.1) were applied. Returns every problem;
/// the cluster-wide conflicts (rule 15) are only looked for when everything else passed.
pub fn validate(sidecarset: &SidecarSet, ctx: &ValidationContext) -> Vec<FieldError> {
    let mut errs = metadata::validate_object_meta(&sidecarset.metadata, "metadata");
    errs.extend(canary::validate_canary(sidecarset, ctx.old, ctx.others));
    errs.extend(validate_spec(sidecarset, ctx));
    if let Some(old) = ctx.old {
        errs.extend(update::validate_container_identity(sidecarset, old));
    }
    if errs.is_empty() {
        errs.extend(conflicts::validate_conflicts(sidecarset, ctx.others));
    }
    errs
}

/// Rules 3–13.
fn validate_spec(sidecarset: &SidecarSet, ctx: &ValidationContext) -> Vec<FieldError> {
    let spec = &sidecarset.spec;
    let mut errs = containers::validate_native_sidecar_update(spec);
    match &spec.selector {
        None => errs.push(FieldError::required(
            "spec.selector",
            "no selector defined for SidecarSet",
        )),
        Some(selector) => errs.extend(validate_selector(selector, "spec.selector")),
    }
    if let Some(ns_selector) = sidecarset.effective_namespace_selector() {
        let field = if spec.namespace.is_empty() {
            "spec.namespaceSelector"
        } else {
            "spec.namespace"
        };
        errs.extend(validate_selector(&ns_selector, field));
    }
    errs.extend(strategy::validate_injection_strategy(
        &spec.injection_strategy,
        ctx.unresolved_revision,
    ));
    errs.extend(strategy::validate_update_strategy(&spec.update_strategy));
    if spec.init_containers.is_empty() && spec.containers.is_empty() {
        errs.push(FieldError::required(
            "spec.containers",
            "no initContainer or container defined for SidecarSet",
        ));
    } else {
        errs.extend(containers::validate_init_containers(spec));
        errs.extend(containers::validate_containers(spec));
        // rule 8 (volume conversion) is part of the pod's volume checks
        errs.extend(pod::validate_pod(spec));
    }
    errs.extend(patch_metadata::validate_patch_pod_metadata(
        &spec.patch_pod_metadata,
        ctx.allowed_patch_keys,
    ));
    errs
}
