//! Downward-API selectors: `validateObjectFieldSelector` (env vars and volume files),
//! `validateContainerResourceFieldSelector` and the source part of
//! `validateDownwardAPIVolumeFile`.

use super::super::errors::FieldError;
use super::super::k8s_names::is_qualified_name;
use super::json::{Object, obj_at, str_at};
use crate::quantity::Quantity;

/// `validEnvDownwardAPIFieldPathExpressions`, sorted as upstream lists them.
pub const ENV_FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// `validVolumeDownwardAPIFieldPathExpressions`, sorted (subscripted labels and annotations
/// are allowed too). `spec.nodeName`, `status.podIP`… are for env vars only.
pub const VOLUME_FIELD_PATHS: [&str; 5] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];

/// The field labels `ConvertDownwardAPIFieldLabel` knows for v1 (plus `spec.host`, an alias
/// of `spec.nodeName`).
const CONVERTIBLE: [&str; 14] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.serviceAccountName",
    "spec.schedulerName",
    "status.phase",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// `validContainerResourceFieldPathExpressions`, sorted.
const RESOURCE_FIELD_PATHS: [&str; 6] = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];
const HUGEPAGES_PREFIXES: [&str; 2] = ["limits.hugepages-", "requests.hugepages-"];
const BYTE_DIVISORS: [&str; 13] = [
    "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei",
];

/// `fieldpath.SplitMaybeSubscriptedPath`: `path['key']` → (path, key).
fn split_subscripted(field_path: &str) -> Option<(&str, &str)> {
    let inner = field_path.strip_suffix("']")?;
    let (path, key) = inner.split_once("['")?;
    (!path.is_empty()).then_some((path, key))
}

/// `validateObjectFieldSelector`: `fs` at `path`, unsubscripted paths limited to `expressions`.
pub fn validate_object_field_selector(
    fs: &Object,
    expressions: &[&str],
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let api = str_at(fs, "apiVersion", path, errs);
    let field_path = str_at(fs, "fieldPath", path, errs);
    if api.is_empty() {
        errs.push(FieldError::required(format!("{path}.apiVersion"), ""));
        return;
    }
    if field_path.is_empty() {
        errs.push(FieldError::required(format!("{path}.fieldPath"), ""));
        return;
    }
    let conversion_error = |reason: String| {
        FieldError::invalid_str(
            format!("{path}.fieldPath"),
            field_path,
            &format!("error converting fieldPath: {reason}"),
        )
    };
    // `ConvertDownwardAPIFieldLabel`
    let internal = if api != "v1" {
        Err(format!("unsupported pod version: {api}"))
    } else {
        match split_subscripted(field_path) {
            Some(("metadata.annotations" | "metadata.labels", _)) => Ok(field_path),
            Some(_) => Err(format!(
                "field label does not support subscript: {field_path}"
            )),
            None if field_path == "spec.host" => Ok("spec.nodeName"),
            None if CONVERTIBLE.contains(&field_path) => Ok(field_path),
            None => Err(format!("field label not supported: {field_path}")),
        }
    };
    let internal = match internal {
        Ok(internal) => internal,
        Err(reason) => {
            errs.push(conversion_error(reason));
            return;
        }
    };
    match split_subscripted(internal) {
        Some(("metadata.annotations", key)) => {
            let key = key.to_lowercase();
            for msg in is_qualified_name(&key) {
                errs.push(FieldError::invalid_str(path, &key, &msg));
            }
        }
        Some(("metadata.labels", key)) => {
            for msg in is_qualified_name(key) {
                errs.push(FieldError::invalid_str(path, key, &msg));
            }
        }
        Some((other, _)) => errs.push(FieldError::invalid_str(
            path,
            other,
            "does not support subscript",
        )),
        None if expressions.contains(&internal) => {}
        None => errs.push(FieldError::not_supported(
            format!("{path}.fieldPath"),
            internal,
            expressions,
        )),
    }
}

/// `validateContainerResourceFieldSelector`: a volume file must also name its container.
pub fn validate_resource_field_selector(
    fs: &Object,
    volume: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let container = str_at(fs, "containerName", path, errs);
    let resource = str_at(fs, "resource", path, errs);
    if volume && container.is_empty() {
        errs.push(FieldError::required(format!("{path}.containerName"), ""));
    } else if resource.is_empty() {
        errs.push(FieldError::required(format!("{path}.resource"), ""));
    } else if !RESOURCE_FIELD_PATHS.contains(&resource)
        && !HUGEPAGES_PREFIXES.iter().any(|p| resource.starts_with(p))
    {
        errs.push(FieldError::not_supported(
            format!("{path}.resource"),
            resource,
            &RESOURCE_FIELD_PATHS,
        ));
    }
    validate_divisor(fs, resource, path, errs);
}

/// `validateContainerResourceDivisor`.
fn validate_divisor(fs: &Object, resource: &str, path: &str, errs: &mut Vec<FieldError>) {
    let Some(value) = fs.get("divisor").filter(|v| !v.is_null()) else {
        return;
    };
    let field = format!("{path}.divisor");
    let divisor = match Quantity::from_json(value) {
        Some(Ok(q)) => q,
        Some(Err(e)) => {
            errs.push(FieldError::invalid(
                field,
                value.to_string(),
                &e.to_string(),
            ));
            return;
        }
        None => {
            errs.push(FieldError::invalid(
                field,
                value.to_string(),
                "must be a quantity string",
            ));
            return;
        }
    };
    if divisor.is_zero() {
        return;
    }
    let shown = divisor.to_string();
    let hugepages = HUGEPAGES_PREFIXES.iter().any(|p| resource.starts_with(p));
    let (allowed, message): (&[&str], String) = match resource {
        "limits.cpu" | "requests.cpu" => (
            &["1m", "1"],
            "only divisor's values 1m and 1 are supported with the cpu resource".into(),
        ),
        "limits.memory" | "requests.memory" => (&BYTE_DIVISORS, byte_divisor_message("memory")),
        "limits.ephemeral-storage" | "requests.ephemeral-storage" => (
            &BYTE_DIVISORS,
            byte_divisor_message("local ephemeral storage"),
        ),
        _ if hugepages => (&BYTE_DIVISORS, byte_divisor_message("hugepages")),
        _ => return,
    };
    if !allowed.contains(&shown.as_str()) {
        errs.push(FieldError::invalid_str(field, resource, &message));
    }
}

fn byte_divisor_message(what: &str) -> String {
    format!(
        "only divisor's values {} are supported with the {what} resource",
        BYTE_DIVISORS.join(", ")
    )
}

/// The source of a downward-API volume file (`item` at `path`): exactly one of `fieldRef`
/// (volume field paths only) and `resourceFieldRef`.
pub fn validate_volume_file_source(item: &Object, path: &str, errs: &mut Vec<FieldError>) {
    let field_ref = obj_at(item, "fieldRef", path, errs);
    let resource_ref = obj_at(item, "resourceFieldRef", path, errs);
    match (field_ref, resource_ref) {
        (Some(fs), other) => {
            validate_object_field_selector(
                fs,
                &VOLUME_FIELD_PATHS,
                &format!("{path}.fieldRef"),
                errs,
            );
            if other.is_some() {
                errs.push(FieldError::invalid_str(
                    path,
                    "resource",
                    "fieldRef and resourceFieldRef can not be specified simultaneously",
                ));
            }
        }
        (None, Some(fs)) => {
            validate_resource_field_selector(fs, true, &format!("{path}.resourceFieldRef"), errs)
        }
        (None, None) => errs.push(FieldError::required(
            path,
            "one of fieldRef and resourceFieldRef is required",
        )),
    }
}
