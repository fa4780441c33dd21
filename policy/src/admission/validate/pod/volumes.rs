//! Pod volumes (`ValidateVolumes`): names, exactly one source, and the basic per-source checks.

use super::super::errors::FieldError;
use super::super::k8s_names::is_dns1123_label;
use super::downward_api::validate_volume_file_source;
use super::json::{Object, int_at, obj_at, objects_at, str_at};
use crate::quantity::Quantity;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Every core/v1 VolumeSource member (Kubernetes 1.33).
const SOURCES: [&str; 30] = [
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cephfs",
    "cinder",
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "fc",
    "flexVolume",
    "flocker",
    "gcePersistentDisk",
    "gitRepo",
    "glusterfs",
    "hostPath",
    "image",
    "iscsi",
    "nfs",
    "persistentVolumeClaim",
    "photonPersistentDisk",
    "portworxVolume",
    "projected",
    "quobyte",
    "rbd",
    "scaleIO",
    "secret",
    "storageos",
    "vsphereVolume",
];

const FILE_MODE_MSG: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// The valid volumes by name, with their source type (`persistentVolumeClaim`, `emptyDir`…).
pub type VolumeMap<'a> = BTreeMap<&'a str, &'static str>;

/// Validates `volumes` (paths `spec.volumes[i]`); returns the valid ones, as upstream does: a
/// volume with errors is left out of the map, so mounts referencing it are "not found" too.
pub fn validate_volumes<'a>(volumes: &'a [Value], errs: &mut Vec<FieldError>) -> VolumeMap<'a> {
    let mut map = VolumeMap::new();
    for (i, volume) in volumes.iter().enumerate() {
        let path = format!("spec.volumes[{i}]");
        let Value::Object(volume) = volume else {
            errs.push(FieldError::invalid(
                path,
                volume.to_string(),
                "must be an object (a core/v1 Volume)",
            ));
            continue;
        };
        let mut el = Vec::new();
        let name = str_at(volume, "name", &path, &mut el);
        let source = validate_source(volume, &path, &mut el);
        if name.is_empty() {
            el.push(FieldError::required(format!("{path}.name"), ""));
        } else {
            for msg in is_dns1123_label(name) {
                el.push(FieldError::invalid_str(format!("{path}.name"), name, &msg));
            }
        }
        if map.contains_key(name) {
            el.push(FieldError::duplicate(format!("{path}.name"), name));
        }
        match source {
            Some(source) if el.is_empty() => {
                map.insert(name, source);
            }
            _ => errs.extend(el),
        }
    }
    map
}

fn validate_source(
    volume: &Object,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> Option<&'static str> {
    let present: Vec<&'static str> = SOURCES
        .iter()
        .copied()
        .filter(|key| volume.get(*key).is_some_and(|v| !v.is_null()))
        .collect();
    let source = match present.as_slice() {
        [] => {
            errs.push(FieldError::required(path, "must specify a volume type"));
            return None;
        }
        [one] => *one,
        [first, ..] => {
            for extra in present.iter().skip(1) {
                errs.push(FieldError::forbidden(
                    format!("{path}.{extra}"),
                    "may not specify more than 1 volume type",
                ));
            }
            *first
        }
    };
    let spath = format!("{path}.{source}");
    let body = obj_at(volume, source, path, errs)?;
    match source {
        "hostPath" => {
            if str_at(body, "path", &spath, errs).is_empty() {
                errs.push(FieldError::required(format!("{spath}.path"), ""));
            }
            let types = [
                "",
                "DirectoryOrCreate",
                "Directory",
                "FileOrCreate",
                "File",
                "Socket",
                "CharDevice",
                "BlockDevice",
            ];
            let t = str_at(body, "type", &spath, errs);
            if !types.contains(&t) {
                errs.push(FieldError::not_supported(
                    format!("{spath}.type"),
                    t,
                    &types,
                ));
            }
        }
        "emptyDir" => {
            let medium = str_at(body, "medium", &spath, errs);
            if !(medium.is_empty() || medium == "Memory" || medium.starts_with("HugePages")) {
                errs.push(FieldError::not_supported(
                    format!("{spath}.medium"),
                    medium,
                    &["", "Memory", "HugePages"],
                ));
            }
            size_limit(body, &spath, errs);
        }
        "secret" => {
            required_str(body, "secretName", &spath, errs);
            file_mode(body, "defaultMode", &spath, errs);
            key_to_paths(body, &spath, errs);
        }
        "configMap" => {
            required_str(body, "name", &spath, errs);
            file_mode(body, "defaultMode", &spath, errs);
            key_to_paths(body, &spath, errs);
        }
        "persistentVolumeClaim" => required_str(body, "claimName", &spath, errs),
        "nfs" => {
            required_str(body, "server", &spath, errs);
            let p = str_at(body, "path", &spath, errs);
            if p.is_empty() {
                errs.push(FieldError::required(format!("{spath}.path"), ""));
            } else if !p.starts_with('/') {
                errs.push(FieldError::invalid_str(
                    format!("{spath}.path"),
                    p,
                    "must be an absolute path",
                ));
            }
        }
        "csi" => required_str(body, "driver", &spath, errs),
        "ephemeral" if obj_at(body, "volumeClaimTemplate", &spath, errs).is_none() => {
            errs.push(FieldError::required(
                format!("{spath}.volumeClaimTemplate"),
                "",
            ));
        }
        "downwardAPI" => {
            file_mode(body, "defaultMode", &spath, errs);
            for (ipath, item) in objects_at(body, "items", &spath, errs) {
                downward_api_file(item, &ipath, errs);
            }
        }
        "projected" => {
            file_mode(body, "defaultMode", &spath, errs);
            validate_projections(body, &spath, errs);
        }
        _ => {}
    }
    Some(source)
}

/// `emptyDir.sizeLimit`: a quantity, not negative.
fn size_limit(body: &Object, path: &str, errs: &mut Vec<FieldError>) {
    let Some(value) = body.get("sizeLimit").filter(|v| !v.is_null()) else {
        return;
    };
    let field = format!("{path}.sizeLimit");
    match Quantity::from_json(value) {
        Some(Ok(q)) if q.milli_value() < 0 => errs.push(FieldError::forbidden(
            field,
            "SizeLimit field must be a valid resource quantity",
        )),
        Some(Ok(_)) => {}
        Some(Err(e)) => errs.push(FieldError::invalid(
            field,
            value.to_string(),
            &e.to_string(),
        )),
        None => errs.push(FieldError::invalid(
            field,
            value.to_string(),
            "must be a quantity string",
        )),
    }
}

/// `validateDownwardAPIVolumeFile` (`path` = the item's path).
fn downward_api_file(item: &Object, path: &str, errs: &mut Vec<FieldError>) {
    relative_path(item, "path", path, errs);
    validate_volume_file_source(item, path, errs);
    file_mode(item, "mode", path, errs);
}

fn required_str(body: &Object, key: &str, path: &str, errs: &mut Vec<FieldError>) {
    if str_at(body, key, path, errs).is_empty() {
        errs.push(FieldError::required(format!("{path}.{key}"), ""));
    }
}

fn file_mode(body: &Object, key: &str, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(mode) = int_at(body, key, path, errs)
        && !(0..=0o777).contains(&mode)
    {
        errs.push(FieldError::invalid(
            format!("{path}.{key}"),
            mode,
            FILE_MODE_MSG,
        ));
    }
}

/// `validateLocalNonReservedPath`: required, relative, no `..` element, not starting with `..`.
fn relative_path(body: &Object, key: &str, path: &str, errs: &mut Vec<FieldError>) {
    let value = str_at(body, key, path, errs);
    let field = format!("{path}.{key}");
    if value.is_empty() {
        errs.push(FieldError::required(field, ""));
        return;
    }
    errs.extend(local_descending_path(value, &field));
    if value.starts_with("..") {
        errs.push(FieldError::invalid_str(
            field,
            value,
            "must not start with '..'",
        ));
    }
}

/// `validateLocalDescendingPath`: relative, without `..` elements.
pub fn local_descending_path(value: &str, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if value.starts_with('/') {
        errs.push(FieldError::invalid_str(
            field,
            value,
            "must be a relative path",
        ));
    }
    if value.split(['/', '\\']).any(|part| part == "..") {
        errs.push(FieldError::invalid_str(
            field,
            value,
            "must not contain '..'",
        ));
    }
    errs
}

fn key_to_paths(body: &Object, path: &str, errs: &mut Vec<FieldError>) {
    for (ipath, item) in objects_at(body, "items", path, errs) {
        required_str(item, "key", &ipath, errs);
        relative_path(item, "path", &ipath, errs);
        file_mode(item, "mode", &ipath, errs);
    }
}

fn validate_projections(body: &Object, path: &str, errs: &mut Vec<FieldError>) {
    const KINDS: [&str; 5] = [
        "secret",
        "configMap",
        "downwardAPI",
        "serviceAccountToken",
        "clusterTrustBundle",
    ];
    // Every file path of the projected volume, for upstream's "conflicting duplicate paths".
    let mut all_paths = BTreeSet::new();
    let mut scratch = Vec::new();
    for (spath, source) in objects_at(body, "sources", path, errs) {
        let present: Vec<&str> = KINDS
            .iter()
            .copied()
            .filter(|k| source.get(*k).is_some_and(|v| !v.is_null()))
            .collect();
        if present.len() > 1 {
            errs.push(FieldError::forbidden(
                spath.clone(),
                "may not specify more than 1 volume type",
            ));
        }
        for kind in ["secret", "configMap"] {
            if let Some(inner) = obj_at(source, kind, &spath, errs) {
                let kpath = format!("{spath}.{kind}");
                required_str(inner, "name", &kpath, errs);
                key_to_paths(inner, &kpath, errs);
                let name = str_at(inner, "name", &kpath, &mut scratch);
                for (ipath, item) in objects_at(inner, "items", &kpath, &mut scratch) {
                    let file = str_at(item, "path", &ipath, &mut scratch);
                    if !file.is_empty() && !all_paths.insert(file) {
                        errs.push(conflicting_path(path, name));
                    }
                }
            }
        }
        if let Some(downward) = obj_at(source, "downwardAPI", &spath, errs) {
            let dpath = format!("{spath}.downwardAPI");
            for (ipath, item) in objects_at(downward, "items", &dpath, errs) {
                downward_api_file(item, &ipath, errs);
                let file = str_at(item, "path", &ipath, &mut scratch);
                if !file.is_empty() && !all_paths.insert(file) {
                    errs.push(conflicting_path(path, file));
                }
            }
        }
        if let Some(token) = obj_at(source, "serviceAccountToken", &spath, errs) {
            let tpath = format!("{spath}.serviceAccountToken");
            relative_path(token, "path", &tpath, errs);
            if let Some(seconds) = int_at(token, "expirationSeconds", &tpath, errs) {
                if seconds < 600 {
                    errs.push(FieldError::invalid(
                        format!("{tpath}.expirationSeconds"),
                        seconds,
                        "may not specify a duration less than 10 minutes",
                    ));
                } else if seconds > 1 << 32 {
                    errs.push(FieldError::invalid(
                        format!("{tpath}.expirationSeconds"),
                        seconds,
                        "may not specify a duration larger than 2^32 seconds",
                    ));
                }
            }
        }
        if let Some(bundle) = obj_at(source, "clusterTrustBundle", &spath, errs) {
            let file = str_at(bundle, "path", &spath, &mut scratch);
            if !all_paths.insert(file) {
                errs.push(conflicting_path(path, file));
            }
        }
    }
}

fn conflicting_path(path: &str, value: &str) -> FieldError {
    FieldError::invalid_str(path, value, "conflicting duplicate paths")
}
