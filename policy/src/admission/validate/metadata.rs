//! §2.2 rule 1: `ValidateObjectMeta` for a cluster-scoped object with the SidecarSet name rule.

use super::errors::{FieldError, quote};
use super::k8s_names::{is_qualified_name, validate_annotations, validate_labels};
use crate::api::ObjectMeta;

const NAME_MAX_LEN: usize = 63;
const NAME_MSG: &str = "sidecarset name must consist of alphanumeric characters or '-'";
const NAME_FMT: &str = "^[a-zA-Z0-9\\-]+$";
/// metav1's `FinalizerOrphanDependents` and `FinalizerDeleteDependents`: never both.
const ORPHAN_DEPENDENTS: &str = "orphan";
const DELETE_DEPENDENTS: &str = "foregroundDeletion";

/// Upstream's `validateSidecarSetName`: `^[a-zA-Z0-9\-]+$` (uppercase allowed), ≤ 63 characters.
pub fn validate_sidecarset_name(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
        errs.push(super::k8s_names::regex_error(
            NAME_MSG,
            NAME_FMT,
            &["example-com"],
        ));
    }
    if name.len() > NAME_MAX_LEN {
        errs.push(super::k8s_names::max_len_error(NAME_MAX_LEN));
    }
    errs
}

/// `genericvalidation.ValidateObjectMeta(meta, requiresNamespace=false, validateSidecarSetName)`.
pub fn validate_object_meta(meta: &ObjectMeta, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let generate_name = meta.generate_name.as_deref().unwrap_or("");
    if !generate_name.is_empty() {
        for msg in validate_sidecarset_name(generate_name) {
            errs.push(FieldError::invalid_str(
                format!("{field}.generateName"),
                generate_name,
                &msg,
            ));
        }
    }
    let name = meta.name.as_deref().unwrap_or("");
    if name.is_empty() {
        errs.push(FieldError::required(
            format!("{field}.name"),
            "name or generateName is required",
        ));
    } else {
        for msg in validate_sidecarset_name(name) {
            errs.push(FieldError::invalid_str(format!("{field}.name"), name, &msg));
        }
    }
    if meta.namespace.as_deref().is_some_and(|ns| !ns.is_empty()) {
        errs.push(FieldError::forbidden(
            format!("{field}.namespace"),
            "not allowed on this type",
        ));
    }
    if let Some(generation) = meta.generation
        && generation < 0
    {
        errs.push(FieldError::invalid(
            format!("{field}.generation"),
            generation,
            "must be greater than or equal to 0",
        ));
    }
    if let Some(labels) = &meta.labels {
        errs.extend(validate_labels(labels, &format!("{field}.labels")));
    }
    if let Some(annotations) = &meta.annotations {
        errs.extend(validate_annotations(
            annotations,
            &format!("{field}.annotations"),
        ));
    }
    let owners = meta.owner_references.as_deref().unwrap_or(&[]);
    for (i, owner) in owners.iter().enumerate() {
        let path = format!("{field}.ownerReferences[{i}]");
        let version = owner.api_version.rsplit('/').next().unwrap_or("");
        if version.is_empty() {
            errs.push(FieldError::invalid_str(
                format!("{path}.apiVersion"),
                &owner.api_version,
                "version must not be empty",
            ));
        }
        for (child, value) in [
            ("kind", &owner.kind),
            ("name", &owner.name),
            ("uid", &owner.uid),
        ] {
            if value.is_empty() {
                errs.push(FieldError::invalid_str(
                    format!("{path}.{child}"),
                    value,
                    "must not be empty",
                ));
            }
        }
    }
    if owners.iter().filter(|o| o.controller == Some(true)).count() > 1 {
        errs.push(FieldError::invalid(
            format!("{field}.ownerReferences"),
            "[…]",
            "Only one reference can have Controller set to true",
        ));
    }
    let finalizers = meta.finalizers.as_deref().unwrap_or_default();
    for (i, finalizer) in finalizers.iter().enumerate() {
        for msg in is_qualified_name(finalizer) {
            errs.push(FieldError::invalid_str(
                format!("{field}.finalizers[{i}]"),
                finalizer,
                &msg,
            ));
        }
    }
    let has = |name: &str| finalizers.iter().any(|f| f == name);
    if has(ORPHAN_DEPENDENTS) && has(DELETE_DEPENDENTS) {
        errs.push(FieldError::invalid(
            format!("{field}.finalizers"),
            // Go's `%#v` of the list.
            format!(
                "[]string{{{}}}",
                finalizers
                    .iter()
                    .map(|f| quote(f))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            &format!("finalizer {ORPHAN_DEPENDENTS} and {DELETE_DEPENDENTS} cannot be both set"),
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        }
    }

    #[test]
    fn sidecarset_names() {
        assert!(validate_object_meta(&meta("Test-Sidecarset-1"), "metadata").is_empty());
        let errs = validate_object_meta(&meta("bad.name"), "metadata");
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "metadata.name");
        assert_eq!(
            validate_object_meta(&meta(&"a".repeat(64)), "metadata").len(),
            1
        );
        assert_eq!(validate_object_meta(&meta(""), "metadata").len(), 1);
    }

    #[test]
    fn namespace_labels_annotations() {
        let mut m = meta("ok");
        m.namespace = Some("default".into());
        m.labels = Some([("bad key".to_string(), "v".to_string())].into());
        m.annotations = Some([("/x".to_string(), "v".to_string())].into());
        m.finalizers = Some(vec!["example.com/f".into(), "bad finalizer".into()]);
        let fields: Vec<String> = validate_object_meta(&m, "metadata")
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert!(fields.contains(&"metadata.namespace".to_string()));
        assert!(fields.contains(&"metadata.labels".to_string()));
        assert!(fields.contains(&"metadata.annotations".to_string()));
        assert!(fields.contains(&"metadata.finalizers[1]".to_string()));
        assert!(!fields.contains(&"metadata.finalizers[0]".to_string()));
    }

    #[test]
    fn orphan_and_foreground_deletion_finalizers_are_never_both_set() {
        let mut m = meta("ok");
        m.finalizers = Some(vec!["orphan".into(), "foregroundDeletion".into()]);
        let errs = validate_object_meta(&m, "metadata");
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "metadata.finalizers");
        assert!(
            errs[0].message.contains("cannot be both set"),
            "{}",
            errs[0].message
        );
        assert!(
            errs[0]
                .message
                .contains(r#"[]string{"orphan", "foregroundDeletion"}"#)
        );
        m.finalizers = Some(vec!["orphan".into(), "example.com/f".into()]);
        assert!(validate_object_meta(&m, "metadata").is_empty());
    }
}
