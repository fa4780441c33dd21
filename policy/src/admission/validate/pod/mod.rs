//! §2.2 rule 12: Kubernetes pod-creation validation of the synthetic pod upstream builds
//! (name `test`, namespace `default`, restartPolicy Always, DNSPolicy ClusterFirst,
//! serviceAccountName `default`, terminationGracePeriodSeconds 30, the SidecarSet's init
//! containers, containers — a `test`/`busybox` dummy if none — and volumes), validated with
//! Kruise's `DefaultPodValidationOptions` (so no zero-second sleep hooks and no resize policy
//! on init containers).
//!
//! A subset of `corevalidation.ValidatePodCreate` (k8s 1.32): the parts a SidecarSet can get
//! wrong. Not covered yet: `windowsOptions` (only type-checked) and the per-source checks of
//! the rarer volume types.
//!
//! Errors name the SidecarSet field (`spec.containers[0].image`), not the synthetic pod's.

mod container;
mod downward_api;
mod json;
mod mount_options;
mod probes;
mod resize_policy;
mod resources;
mod security_context;
mod volumes;

#[cfg(test)]
mod tests;

use super::errors::FieldError;
use crate::api::{SidecarContainer, SidecarSetSpec};
use json::{Object, has, obj_at, str_at};
use probes::{ProbeKind, validate_lifecycle, validate_probe};
use std::collections::BTreeSet;

/// Validates the synthetic pod built from `spec`.
pub fn validate_pod(spec: &SidecarSetSpec) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let volumes = volumes::validate_volumes(&spec.volumes, &mut errs);

    // Regular containers (the dummy one is valid by construction and is not checked).
    let mut names = BTreeSet::new();
    let mut host_ports = BTreeSet::new();
    for (i, c) in spec.containers.iter().enumerate() {
        let path = format!("spec.containers[{i}]");
        let fields = &c.container;
        container::validate_common(&c.name, fields, &volumes, &path, &mut errs);
        if !names.insert(c.name.as_str()) {
            errs.push(FieldError::duplicate(format!("{path}.name"), &c.name));
        }
        probes_and_lifecycle(fields, &path, &mut errs);
        if has(fields, "restartPolicy") {
            errs.push(FieldError::forbidden(
                format!("{path}.restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
        for (field, key) in container::host_ports(fields) {
            if !host_ports.insert(key.clone()) {
                errs.push(FieldError::duplicate(field, &key));
            }
        }
    }
    if spec.containers.is_empty() {
        names.insert("test");
    }

    for (i, c) in spec.init_containers.iter().enumerate() {
        let path = format!("spec.initContainers[{i}]");
        validate_init_container(c, &volumes, &path, &mut names, &mut errs);
    }
    errs
}

fn validate_init_container<'a>(
    c: &'a SidecarContainer,
    volumes: &volumes::VolumeMap,
    path: &str,
    names: &mut BTreeSet<&'a str>,
    errs: &mut Vec<FieldError>,
) {
    let fields = &c.container;
    container::validate_common(&c.name, fields, volumes, path, errs);
    let mut restart_always = false;
    if has(fields, "restartPolicy") {
        let policy = str_at(fields, "restartPolicy", path, errs);
        if policy == "Always" {
            restart_always = true;
        } else {
            errs.push(FieldError::not_supported(
                format!("{path}.restartPolicy"),
                policy,
                &["Always"],
            ));
        }
    }
    if names.contains(c.name.as_str()) {
        errs.push(FieldError::duplicate(format!("{path}.name"), &c.name));
    } else if !c.name.is_empty() {
        names.insert(&c.name);
    }
    let mut host_ports = BTreeSet::new();
    for (field, key) in container::host_ports(fields) {
        if !host_ports.insert(key.clone()) {
            errs.push(FieldError::duplicate(field, &key));
        }
    }
    if restart_always {
        probes_and_lifecycle(fields, path, errs);
    } else {
        for key in [
            "lifecycle",
            "livenessProbe",
            "readinessProbe",
            "startupProbe",
        ] {
            if has(fields, key) {
                errs.push(FieldError::forbidden(
                    format!("{path}.{key}"),
                    "may not be set for init containers without restartPolicy=Always",
                ));
            }
        }
    }
    if !json::list_at(fields, "resizePolicy", path, errs).is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.resizePolicy"),
            "[…]",
            "must not be set for init containers",
        ));
    }
}

fn probes_and_lifecycle(fields: &Object, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(lifecycle) = obj_at(fields, "lifecycle", path, errs) {
        validate_lifecycle(lifecycle, &format!("{path}.lifecycle"), errs);
    }
    for (key, kind) in [
        ("livenessProbe", ProbeKind::Liveness),
        ("readinessProbe", ProbeKind::Readiness),
        ("startupProbe", ProbeKind::Startup),
    ] {
        if let Some(probe) = obj_at(fields, key, path, errs) {
            validate_probe(probe, kind, &format!("{path}.{key}"), errs);
        }
    }
}
