//! `validateContainerCommon`: what Kubernetes checks on every container of a new pod.

use super::super::errors::FieldError;
use super::super::k8s_names::{
    is_dns1123_label, is_dns1123_subdomain, is_relaxed_env_var_name, is_valid_port_name,
    is_valid_port_num,
};
use super::downward_api::{
    ENV_FIELD_PATHS, validate_object_field_selector, validate_resource_field_selector,
};
use super::json::{Object, int_at, obj_at, objects_at, str_at};
use super::mount_options::validate_mount_options;
use super::security_context::{is_privileged, validate_security_context};
use super::volumes::{VolumeMap, local_descending_path};
use crate::order::map_of;
use std::collections::{BTreeMap, BTreeSet};

/// Name, image, termination message policy, pull policy, ports, env, envFrom, volume mounts
/// and volume devices of one container (`path` = its SidecarSet path).
pub fn validate_common(
    name: &str,
    c: &Object,
    volumes: &VolumeMap,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if name.is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    } else {
        for msg in is_dns1123_label(name) {
            errs.push(FieldError::invalid_str(format!("{path}.name"), name, &msg));
        }
    }
    let image = str_at(c, "image", path, errs);
    if image.is_empty() {
        errs.push(FieldError::required(format!("{path}.image"), ""));
    } else if image.trim() != image {
        errs.push(FieldError::invalid_str(
            format!("{path}.image"),
            image,
            "must not have leading or trailing whitespace",
        ));
    }
    one_of(
        c,
        "terminationMessagePolicy",
        &["File", "FallbackToLogsOnError"],
        path,
        errs,
    );
    one_of(
        c,
        "imagePullPolicy",
        &["Always", "IfNotPresent", "Never"],
        path,
        errs,
    );
    validate_ports(c, path, errs);
    validate_env(c, path, errs);
    validate_env_from(c, path, errs);
    let mounts = objects_at(c, "volumeMounts", path, errs);
    let devices = objects_at(c, "volumeDevices", path, errs);
    let mut scratch = Vec::new();
    let mount_map: BTreeMap<&str, &str> = map_of(mounts.iter().map(|(p, m)| {
        (
            str_at(m, "name", p, &mut scratch),
            str_at(m, "mountPath", p, &mut scratch),
        )
    }));
    let device_map: BTreeMap<&str, &str> = map_of(devices.iter().map(|(p, d)| {
        (
            str_at(d, "name", p, &mut scratch),
            str_at(d, "devicePath", p, &mut scratch),
        )
    }));
    // type errors of the reads above are reported once, by `validate_mounts`/`validate_devices`
    validate_mounts(&mounts, &device_map, volumes, is_privileged(c), errs);
    validate_devices(&devices, &mount_map, volumes, errs);
    super::resources::validate_resources(c, path, errs);
    super::resize_policy::validate_resize_policy(c, path, errs);
    validate_security_context(c, path, errs);
}

/// A required member restricted to `supported` (empty → Required, other → NotSupported).
fn one_of(c: &Object, key: &str, supported: &[&str], path: &str, errs: &mut Vec<FieldError>) {
    let value = str_at(c, key, path, errs);
    if value.is_empty() {
        errs.push(FieldError::required(format!("{path}.{key}"), ""));
    } else if !supported.contains(&value) {
        errs.push(FieldError::not_supported(
            format!("{path}.{key}"),
            value,
            supported,
        ));
    }
}

fn validate_ports(c: &Object, path: &str, errs: &mut Vec<FieldError>) {
    let mut names = BTreeSet::new();
    for (ppath, port) in objects_at(c, "ports", path, errs) {
        let name = str_at(port, "name", &ppath, errs);
        if !name.is_empty() {
            let msgs = is_valid_port_name(name);
            if !msgs.is_empty() {
                for msg in msgs {
                    errs.push(FieldError::invalid_str(format!("{ppath}.name"), name, &msg));
                }
            } else if !names.insert(name) {
                errs.push(FieldError::duplicate(format!("{ppath}.name"), name));
            }
        }
        match int_at(port, "containerPort", &ppath, errs) {
            None | Some(0) => errs.push(FieldError::required(format!("{ppath}.containerPort"), "")),
            Some(n) => {
                for msg in is_valid_port_num(n) {
                    errs.push(FieldError::invalid(
                        format!("{ppath}.containerPort"),
                        n,
                        &msg,
                    ));
                }
            }
        }
        if let Some(n) = int_at(port, "hostPort", &ppath, errs).filter(|n| *n != 0) {
            for msg in is_valid_port_num(n) {
                errs.push(FieldError::invalid(format!("{ppath}.hostPort"), n, &msg));
            }
        }
        one_of(port, "protocol", &["SCTP", "TCP", "UDP"], &ppath, errs);
    }
}

/// `hostIP/protocol/hostPort` of every port with a host port, for the pod-wide uniqueness check.
pub fn host_ports(c: &Object) -> Vec<(String, String)> {
    let mut ignored = Vec::new();
    objects_at(c, "ports", "", &mut ignored)
        .into_iter()
        .filter_map(|(ppath, port)| {
            let host_port = int_at(port, "hostPort", &ppath, &mut ignored).filter(|n| *n != 0)?;
            let ip = str_at(port, "hostIP", &ppath, &mut ignored);
            let protocol = str_at(port, "protocol", &ppath, &mut ignored);
            Some((
                format!("{ppath}.hostPort"),
                format!("{ip}/{protocol}/{host_port}"),
            ))
        })
        .collect()
}

fn validate_env(c: &Object, path: &str, errs: &mut Vec<FieldError>) {
    for (epath, env) in objects_at(c, "env", path, errs) {
        let name = str_at(env, "name", &epath, errs);
        if name.is_empty() {
            errs.push(FieldError::required(format!("{epath}.name"), ""));
        }
        for msg in is_relaxed_env_var_name(name) {
            errs.push(FieldError::invalid_str(format!("{epath}.name"), name, &msg));
        }
        let Some(from) = obj_at(env, "valueFrom", &epath, errs) else {
            continue;
        };
        let fpath = format!("{epath}.valueFrom");
        let mut sources = 0;
        if let Some(field_ref) = obj_at(from, "fieldRef", &fpath, errs) {
            sources += 1;
            validate_object_field_selector(
                field_ref,
                &ENV_FIELD_PATHS,
                &format!("{fpath}.fieldRef"),
                errs,
            );
        }
        if let Some(resource_ref) = obj_at(from, "resourceFieldRef", &fpath, errs) {
            sources += 1;
            validate_resource_field_selector(
                resource_ref,
                false,
                &format!("{fpath}.resourceFieldRef"),
                errs,
            );
        }
        for kind in ["configMapKeyRef", "secretKeyRef"] {
            if let Some(selector) = obj_at(from, kind, &fpath, errs) {
                sources += 1;
                let spath = format!("{fpath}.{kind}");
                object_name(
                    str_at(selector, "name", &spath, errs),
                    &format!("{spath}.name"),
                    errs,
                );
                let key = str_at(selector, "key", &spath, errs);
                if key.is_empty() {
                    errs.push(FieldError::required(format!("{spath}.key"), ""));
                } else {
                    for msg in config_map_key(key) {
                        errs.push(FieldError::invalid_str(format!("{spath}.key"), key, &msg));
                    }
                }
            }
        }
        let value = str_at(env, "value", &epath, errs);
        if sources == 0 {
            errs.push(FieldError::invalid(
                fpath,
                "\"\"",
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
            ));
        } else if !value.is_empty() {
            errs.push(FieldError::invalid(
                fpath,
                "\"\"",
                "may not be specified when `value` is not empty",
            ));
        } else if sources > 1 {
            errs.push(FieldError::invalid(
                fpath,
                "\"\"",
                "may not have more than one field specified at a time",
            ));
        }
    }
}

/// `IsConfigMapKey`.
fn config_map_key(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if !key
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"-._".contains(&c))
    {
        errs.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')".to_string());
    }
    if key == "." {
        errs.push("must not be '.'".to_string());
    } else if key == ".." {
        errs.push("must not be '..'".to_string());
    } else if key.starts_with("..") {
        errs.push("must not start with '..'".to_string());
    }
    errs
}

/// A ConfigMap/Secret name: required, a DNS-1123 subdomain.
fn object_name(name: &str, field: &str, errs: &mut Vec<FieldError>) {
    if name.is_empty() {
        errs.push(FieldError::required(field, ""));
    } else {
        for msg in is_dns1123_subdomain(name) {
            errs.push(FieldError::invalid_str(field, name, &msg));
        }
    }
}

fn validate_env_from(c: &Object, path: &str, errs: &mut Vec<FieldError>) {
    for (epath, source) in objects_at(c, "envFrom", path, errs) {
        let prefix = str_at(source, "prefix", &epath, errs);
        for msg in is_relaxed_env_var_name(prefix) {
            errs.push(FieldError::invalid_str(
                format!("{epath}.prefix"),
                prefix,
                &msg,
            ));
        }
        let mut sources = 0;
        for kind in ["configMapRef", "secretRef"] {
            if let Some(reference) = obj_at(source, kind, &epath, errs) {
                sources += 1;
                let rpath = format!("{epath}.{kind}");
                object_name(
                    str_at(reference, "name", &rpath, errs),
                    &format!("{rpath}.name"),
                    errs,
                );
            }
        }
        if sources == 0 {
            errs.push(FieldError::invalid(
                epath,
                "\"\"",
                "must specify one of: `configMapRef` or `secretRef`",
            ));
        } else if sources > 1 {
            errs.push(FieldError::invalid(
                epath,
                "\"\"",
                "may not have more than one field specified at a time",
            ));
        }
    }
}

fn validate_mounts(
    mounts: &[(String, &Object)],
    devices: &BTreeMap<&str, &str>,
    volumes: &VolumeMap,
    privileged: bool,
    errs: &mut Vec<FieldError>,
) {
    let mut mount_points = BTreeSet::new();
    for (mpath, mount) in mounts {
        let name = str_at(mount, "name", mpath, errs);
        let mount_path = str_at(mount, "mountPath", mpath, errs);
        if name.is_empty() {
            errs.push(FieldError::required(format!("{mpath}.name"), ""));
        }
        if !volumes.contains_key(name) {
            errs.push(FieldError::not_found(format!("{mpath}.name"), name));
        }
        if mount_path.is_empty() {
            errs.push(FieldError::required(format!("{mpath}.mountPath"), ""));
        }
        if !mount_points.insert(mount_path) {
            errs.push(FieldError::invalid_str(
                format!("{mpath}.mountPath"),
                mount_path,
                "must be unique",
            ));
        }
        if devices.contains_key(name) {
            errs.push(FieldError::invalid_str(
                format!("{mpath}.name"),
                name,
                "must not already exist in volumeDevices",
            ));
        }
        if devices.values().any(|p| *p == mount_path) {
            errs.push(FieldError::invalid_str(
                format!("{mpath}.mountPath"),
                mount_path,
                "must not already exist as a path in volumeDevices",
            ));
        }
        let sub_path = str_at(mount, "subPath", mpath, errs);
        if !sub_path.is_empty() {
            errs.extend(local_descending_path(sub_path, &format!("{mpath}.subPath")));
        }
        let sub_path_expr = str_at(mount, "subPathExpr", mpath, errs);
        if !sub_path_expr.is_empty() {
            if !sub_path.is_empty() {
                errs.push(FieldError::invalid_str(
                    format!("{mpath}.subPathExpr"),
                    sub_path_expr,
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            errs.extend(local_descending_path(
                sub_path_expr,
                &format!("{mpath}.subPathExpr"),
            ));
        }
        validate_mount_options(mount, mpath, privileged, errs);
    }
}

fn validate_devices(
    devices: &[(String, &Object)],
    mounts: &BTreeMap<&str, &str>,
    volumes: &VolumeMap,
    errs: &mut Vec<FieldError>,
) {
    let mut paths = BTreeSet::new();
    let mut names = BTreeSet::new();
    for (dpath, device) in devices {
        let name = str_at(device, "name", dpath, errs);
        let device_path = str_at(device, "devicePath", dpath, errs);
        let source = volumes.get(name);
        if name.is_empty() {
            errs.push(FieldError::required(format!("{dpath}.name"), ""));
        }
        if names.contains(name) {
            errs.push(FieldError::invalid_str(
                format!("{dpath}.name"),
                name,
                "must be unique",
            ));
        }
        match source {
            Some(&"persistentVolumeClaim") | Some(&"ephemeral") => {}
            Some(_) => errs.push(FieldError::invalid_str(
                format!("{dpath}.name"),
                name,
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            )),
            None => errs.push(FieldError::not_found(format!("{dpath}.name"), name)),
        }
        if device_path.is_empty() {
            errs.push(FieldError::required(format!("{dpath}.devicePath"), ""));
        }
        if paths.contains(device_path) {
            errs.push(FieldError::invalid_str(
                format!("{dpath}.devicePath"),
                device_path,
                "must be unique",
            ));
        }
        if device_path.split(['/', '\\']).any(|p| p == "..") {
            errs.push(FieldError::invalid_str(
                format!("{dpath}.devicePath"),
                device_path,
                "can not contain backsteps ('..')",
            ));
        } else {
            paths.insert(device_path);
        }
        if mounts.contains_key(name) {
            errs.push(FieldError::invalid_str(
                format!("{dpath}.name"),
                name,
                "must not already exist in volumeMounts",
            ));
        }
        if mounts.values().any(|p| *p == device_path) {
            errs.push(FieldError::invalid_str(
                format!("{dpath}.devicePath"),
                device_path,
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !name.is_empty() {
            names.insert(name);
        }
    }
}
