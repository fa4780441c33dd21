//! §2.2 rule 13 and §2.3: `patchPodMetadata` entries and the annotation-key whitelist.

use super::errors::FieldError;
use super::k8s_names::validate_annotations;
use crate::api::PatchPodMetadata;
use regex_lite::Regex;
use std::collections::BTreeSet;

/// Rule 13. `allowed_keys` is the whitelist from the policy settings (`None`: not configured).
/// An empty whitelist allows nothing, like upstream when no rule applies.
pub fn validate_patch_pod_metadata(
    patches: &[PatchPodMetadata],
    allowed_keys: Option<&[Regex]>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if patches.is_empty() {
        return errs;
    }
    match allowed_keys {
        Some(regexes) if !regexes.is_empty() => {
            for (i, patch) in patches.iter().enumerate() {
                for key in patch.annotations.keys() {
                    if !regexes.iter().any(|r| r.is_match(key)) {
                        errs.push(FieldError::forbidden(
                            format!("spec.patchPodMetadata[{i}].annotations"),
                            &format!(
                                "sidecarSet patch metadata annotation({key}) not in whitelist (allowPatchPodMetadataKeys)"
                            ),
                        ));
                    }
                }
            }
        }
        _ => errs.push(FieldError::required(
            "spec.patchPodMetadata",
            "SidecarSet patch metadata whitelist not found (setting allowPatchPodMetadataKeys)",
        )),
    }
    let mut seen = BTreeSet::new();
    for (i, patch) in patches.iter().enumerate() {
        let path = format!("spec.patchPodMetadata[{i}]");
        if patch.annotations.is_empty() {
            errs.push(FieldError::required(
                format!("{path}.annotations"),
                "no annotations defined for SidecarSet",
            ));
        } else {
            errs.extend(validate_annotations(
                &patch.annotations,
                &format!("{path}.annotations"),
            ));
        }
        if patch.patch_policy.is_empty() {
            errs.push(FieldError::required(
                format!("{path}.patchPolicy"),
                "no patchPolicy defined for patchPodMetadata",
            ));
        }
        for key in patch.annotations.keys() {
            if !seen.insert(key.as_str()) {
                errs.push(FieldError::required(
                    format!("{path}.annotations"),
                    &format!("patch annotation[{key}] already exist"),
                ));
            }
        }
    }
    errs
}
