//! §2.2 rules 3, 10 and 11: SidecarSet-specific checks of init containers and containers.

use super::errors::FieldError;
use super::k8s_names::is_qualified_name;
use super::resources_policy::validate_resources_policy;
use crate::api::{ObjectFieldSelector, SidecarContainer, SidecarSetSpec, values};

/// Rule 3: native-sidecar init containers cannot be upgraded in place.
pub fn validate_native_sidecar_update(spec: &SidecarSetSpec) -> Vec<FieldError> {
    if spec.update_strategy.type_ != values::ROLLING_UPDATE {
        return Vec::new();
    }
    spec.init_containers
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_native_sidecar())
        .map(|(i, c)| {
            FieldError::required(
                "spec.updateStrategy.type",
                &format!(
                    "The initContainer in-place upgrade is not currently supported. \
                     (spec.initContainers[{i}] {:?} has restartPolicy Always; use updateStrategy.type NotUpdate)",
                    c.name
                ),
            )
        })
        .collect()
}

/// Rule 10: resourcesPolicy on init containers only for native sidecars.
pub fn validate_init_containers(spec: &SidecarSetSpec) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, c) in spec.init_containers.iter().enumerate() {
        let path = format!("spec.initContainers[{i}]");
        if let Some(policy) = &c.resources_policy {
            if !c.is_native_sidecar() {
                errs.push(FieldError::forbidden(
                    format!("{path}.resourcesPolicy"),
                    "resourcesPolicy is only supported for native sidecar init containers (restartPolicy: Always)",
                ));
            }
            errs.extend(validate_resources_policy(c, policy, &path));
        }
    }
    errs
}

/// Rule 11: podInjectPolicy, shareVolumePolicy, transferEnv field references, resourcesPolicy.
pub fn validate_containers(spec: &SidecarSetSpec) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, c) in spec.containers.iter().enumerate() {
        let path = format!("spec.containers[{i}]");
        errs.extend(validate_container(c, &path));
    }
    errs
}

fn validate_container(c: &SidecarContainer, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if c.pod_inject_policy != values::BEFORE_APP_CONTAINER
        && c.pod_inject_policy != values::AFTER_APP_CONTAINER
    {
        errs.push(FieldError::invalid_str(
            format!("{path}.podInjectPolicy"),
            &c.pod_inject_policy,
            "unsupported pod inject policy",
        ));
    }
    let share = &c.share_volume_policy.type_;
    if share != values::SHARE_ENABLED && share != values::SHARE_DISABLED {
        errs.push(FieldError::invalid_str(
            format!("{path}.shareVolumePolicy.type"),
            share,
            "unsupported share volume policy",
        ));
    }
    for (j, transfer) in c.transfer_env.iter().enumerate() {
        let field_ref = transfer
            .source_container_name_from
            .as_ref()
            .and_then(|from| from.field_ref.as_ref());
        if let Some(field_ref) = field_ref {
            let p = format!("{path}.transferEnv[{j}].sourceContainerNameFrom.fieldRef");
            errs.extend(validate_field_ref(field_ref, &p));
        }
    }
    if let Some(policy) = &c.resources_policy {
        errs.extend(validate_resources_policy(c, policy, path));
    }
    errs
}

/// `fieldpath.SplitMaybeSubscriptedPath`: `path['key']` → (path, key).
fn split_subscripted(field_path: &str) -> Option<(&str, &str)> {
    let inner = field_path.strip_suffix("']")?;
    let (path, key) = inner.split_once("['")?;
    (!path.is_empty()).then_some((path, key))
}

/// `validateObjectFieldSelector` for a transferEnv source: `v1`, and a subscripted
/// `metadata.annotations['k']` / `metadata.labels['k']` with a qualified-name key.
fn validate_field_ref(fs: &ObjectFieldSelector, path: &str) -> Vec<FieldError> {
    if fs.api_version.is_empty() {
        return vec![FieldError::required(format!("{path}.apiVersion"), "")];
    }
    if fs.field_path.is_empty() {
        return vec![FieldError::required(format!("{path}.fieldPath"), "")];
    }
    let fp = &fs.field_path;
    let conversion = |reason: String| {
        vec![FieldError::invalid_str(
            format!("{path}.fieldPath"),
            fp,
            &format!("error converting fieldPath: {reason}"),
        )]
    };
    if fs.api_version != "v1" {
        return conversion(format!("unsupported pod version: {}", fs.api_version));
    }
    let Some((base, key)) = split_subscripted(fp) else {
        return conversion(format!("field label not supported: {fp}"));
    };
    let msgs = match base {
        "metadata.annotations" => is_qualified_name(&key.to_lowercase()),
        "metadata.labels" => is_qualified_name(key),
        _ => return conversion(format!("field label does not support subscript: {fp}")),
    };
    msgs.into_iter()
        .map(|msg| FieldError::invalid_str(path, key, &msg))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_ref(api: &str, path: &str) -> ObjectFieldSelector {
        ObjectFieldSelector {
            api_version: api.into(),
            field_path: path.into(),
        }
    }

    #[test]
    fn transfer_env_field_refs() {
        assert!(validate_field_ref(&field_ref("v1", "metadata.labels['app']"), "p").is_empty());
        assert!(
            validate_field_ref(
                &field_ref("v1", "metadata.annotations['Example.com/X']"),
                "p"
            )
            .is_empty()
        );
        for (api, path) in [
            ("", "metadata.labels['a']"),
            ("v1", ""),
            ("v2", "metadata.labels['a']"),
            ("v1", "metadata.name"),
            ("v1", "spec.nodeName['x']"),
            ("v1", "metadata.labels['bad key']"),
        ] {
            assert_eq!(
                validate_field_ref(&field_ref(api, path), "p").len(),
                1,
                "{api} {path}"
            );
        }
    }
}
