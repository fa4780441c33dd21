//! `ValidateSecurityContext` on one container's `securityContext`.
//!
//! The synthetic pod has no pod-level security context, so `hostUsers` is true; Kruise runs
//! with `--allow-privileged=true` (its default), so `privileged: true` itself is allowed.
//! `windowsOptions` is only type-checked.

use super::super::errors::FieldError;
use super::json::{Object, bool_at, int_at, list_at, obj_at, opt_str_at, shown, str_at};
use super::volumes::local_descending_path;
use serde_json::Value;

/// `IsValidUserID` / `IsValidGroupID`: 0 to 2^31-1.
const MAX_ID: i64 = i32::MAX as i64;
const ID_RANGE_MSG: &str = "must be between 0 and 2147483647, inclusive";
/// Seccomp and AppArmor profile types, in upstream's order.
const PROFILE_TYPES: [&str; 3] = ["Localhost", "RuntimeDefault", "Unconfined"];
/// `PATH_MAX - 1`.
const MAX_APPARMOR_LOCALHOST_PROFILE: usize = 4095;

/// Whether the container sets `securityContext.privileged: true` (wrong types read as false;
/// they are reported by [`validate_security_context`]).
pub fn is_privileged(c: &Object) -> bool {
    c.get("securityContext")
        .and_then(|sc| sc.get("privileged"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Checks `securityContext` of the container `c` (`path` = the container's path).
pub fn validate_security_context(c: &Object, path: &str, errs: &mut Vec<FieldError>) {
    let Some(sc) = obj_at(c, "securityContext", path, errs) else {
        return;
    };
    let path = format!("{path}.securityContext");
    let privileged = bool_at(sc, "privileged", &path, errs);
    for key in ["runAsNonRoot", "readOnlyRootFilesystem"] {
        bool_at(sc, key, &path, errs);
    }
    for key in ["runAsUser", "runAsGroup"] {
        if let Some(id) = int_at(sc, key, &path, errs).filter(|id| !(0..=MAX_ID).contains(id)) {
            errs.push(FieldError::invalid(
                format!("{path}.{key}"),
                id,
                ID_RANGE_MSG,
            ));
        }
    }
    if let Some(mount) = opt_str_at(sc, "procMount", &path, errs) {
        let field = format!("{path}.procMount");
        if mount != "Default" && mount != "Unmasked" {
            errs.push(FieldError::not_supported(
                &field,
                mount,
                &["Default", "Unmasked"],
            ));
        }
        if mount == "Unmasked" {
            errs.push(FieldError::invalid_str(
                field,
                mount,
                "`hostUsers` must be false to use `Unmasked`",
            ));
        }
    }
    if let Some(profile) = obj_at(sc, "seccompProfile", &path, errs) {
        validate_seccomp(profile, &format!("{path}.seccompProfile"), errs);
    }
    let capabilities = obj_at(sc, "capabilities", &path, errs);
    let mut added = Vec::new();
    if let Some(caps) = capabilities {
        let cpath = format!("{path}.capabilities");
        for key in ["add", "drop"] {
            for (i, cap) in list_at(caps, key, &cpath, errs).iter().enumerate() {
                match cap {
                    Value::String(s) if key == "add" => added.push(s.as_str()),
                    Value::String(_) => {}
                    other => errs.push(FieldError::invalid(
                        format!("{cpath}.{key}[{i}]"),
                        shown(other),
                        "must be a string",
                    )),
                }
            }
        }
    }
    if bool_at(sc, "allowPrivilegeEscalation", &path, errs) == Some(false) {
        let value = shown(&Value::Object(sc.clone()));
        if privileged == Some(true) {
            errs.push(FieldError::invalid(
                &path,
                &value,
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        // Upstream compares the literal string (not `SYS_ADMIN`), once per occurrence.
        for _ in added.iter().filter(|cap| **cap == "CAP_SYS_ADMIN") {
            errs.push(FieldError::invalid(
                &path,
                &value,
                "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
            ));
        }
    }
    obj_at(sc, "windowsOptions", &path, errs);
    obj_at(sc, "seLinuxOptions", &path, errs);
    if let Some(profile) = obj_at(sc, "appArmorProfile", &path, errs) {
        validate_app_armor(profile, &format!("{path}.appArmorProfile"), errs);
    }
}

/// `validateSeccompProfileField`.
fn validate_seccomp(profile: &Object, path: &str, errs: &mut Vec<FieldError>) {
    let kind = str_at(profile, "type", path, errs);
    if !PROFILE_TYPES.contains(&kind) {
        errs.push(profile_type_error(kind, path, "seccompProfile"));
    }
    let field = format!("{path}.localhostProfile");
    match (kind, opt_str_at(profile, "localhostProfile", path, errs)) {
        ("Localhost", None) => errs.push(FieldError::required(
            field,
            "must be set when seccomp type is Localhost",
        )),
        ("Localhost", Some(local)) => errs.extend(local_descending_path(local, &field)),
        (_, Some(_)) => errs.push(FieldError::invalid(
            field,
            shown(&Value::Object(profile.clone())),
            "can only be set when seccomp type is Localhost",
        )),
        (_, None) => {}
    }
}

/// `ValidateAppArmorProfileField`.
fn validate_app_armor(profile: &Object, path: &str, errs: &mut Vec<FieldError>) {
    let field = format!("{path}.localhostProfile");
    let local = opt_str_at(profile, "localhostProfile", path, errs);
    match str_at(profile, "type", path, errs) {
        "Localhost" => match local {
            None => errs.push(FieldError::required(
                field,
                "must be set when AppArmor type is Localhost",
            )),
            Some(local) => {
                if local.trim() != local {
                    errs.push(FieldError::invalid_str(
                        &field,
                        local,
                        "must not be padded with whitespace",
                    ));
                } else if local.is_empty() {
                    errs.push(FieldError::required(
                        &field,
                        "must be set when AppArmor type is Localhost",
                    ));
                }
                if local.len() > MAX_APPARMOR_LOCALHOST_PROFILE {
                    errs.push(FieldError::too_long_bytes(
                        field,
                        MAX_APPARMOR_LOCALHOST_PROFILE,
                    ));
                }
            }
        },
        "RuntimeDefault" | "Unconfined" => {
            if let Some(local) = local {
                errs.push(FieldError::invalid_str(
                    field,
                    local,
                    "can only be set when AppArmor type is Localhost",
                ));
            }
        }
        other => errs.push(profile_type_error(other, path, "appArmorProfile")),
    }
}

/// A profile `type` that is none of [`PROFILE_TYPES`]: missing, or not supported.
fn profile_type_error(kind: &str, path: &str, profile: &str) -> FieldError {
    let field = format!("{path}.type");
    if kind.is_empty() {
        FieldError::required(field, &format!("type is required when {profile} is set"))
    } else {
        FieldError::not_supported(field, kind, &PROFILE_TYPES)
    }
}
