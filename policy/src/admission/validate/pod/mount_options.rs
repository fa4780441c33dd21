//! `validateMountPropagation` and `validateMountRecursiveReadOnly` on one volume mount.

use super::super::errors::FieldError;
use super::json::{Object, bool_at, opt_str_at};

/// Sorted, as upstream lists them (`sets.List`).
const PROPAGATION_MODES: [&str; 3] = ["Bidirectional", "HostToContainer", "None"];
const RECURSIVE_READ_ONLY_MODES: [&str; 3] = ["Disabled", "Enabled", "IfPossible"];

/// Checks `mountPropagation` and `recursiveReadOnly` of the mount at `mpath`, in a container
/// that is `privileged` or not.
pub fn validate_mount_options(
    mount: &Object,
    mpath: &str,
    privileged: bool,
    errs: &mut Vec<FieldError>,
) {
    let propagation = opt_str_at(mount, "mountPropagation", mpath, errs);
    if let Some(mode) = propagation {
        let field = format!("{mpath}.mountPropagation");
        if !PROPAGATION_MODES.contains(&mode) {
            errs.push(FieldError::not_supported(&field, mode, &PROPAGATION_MODES));
        }
        if mode == "Bidirectional" && !privileged {
            errs.push(FieldError::forbidden(
                field,
                "Bidirectional mount propagation is available only to privileged containers",
            ));
        }
    }
    let read_only = bool_at(mount, "readOnly", mpath, errs).unwrap_or(false);
    let Some(mode) = opt_str_at(mount, "recursiveReadOnly", mpath, errs) else {
        return;
    };
    let field = format!("{mpath}.recursiveReadOnly");
    match mode {
        "Disabled" => {}
        "Enabled" | "IfPossible" => {
            if !read_only {
                errs.push(FieldError::forbidden(
                    &field,
                    "may only be specified when readOnly is true",
                ));
            }
            if propagation.is_some_and(|p| p != "None") {
                errs.push(FieldError::forbidden(
                    field,
                    "may only be specified when mountPropagation is None or not specified",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            field,
            other,
            &RECURSIVE_READ_ONLY_MODES,
        )),
    }
}
