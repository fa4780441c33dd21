//! §2.2 rule 14 (UPDATE only): sidecar containers keep their names and upgrade types.

use super::errors::FieldError;
use crate::api::SidecarSet;

/// Every container of `new` must exist in `old` (adding/renaming is forbidden, removing is
/// allowed), and a non-empty old `upgradeType` may not change.
pub fn validate_container_identity(new: &SidecarSet, old: &SidecarSet) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, container) in new.spec.containers.iter().enumerate() {
        let previous = old
            .spec
            .containers
            .iter()
            .rfind(|c| c.name == container.name);
        match previous {
            None => errs.push(FieldError::invalid_str(
                format!("spec.containers[{i}].name"),
                &container.name,
                &format!(
                    "container {} is not found (sidecar containers cannot be added or renamed on update; create a new SidecarSet)",
                    container.name
                ),
            )),
            Some(prev) => {
                let old_type = &prev.upgrade_strategy.upgrade_type;
                if !old_type.is_empty() && *old_type != container.upgrade_strategy.upgrade_type {
                    errs.push(FieldError::invalid_str(
                        format!("spec.containers[{i}].upgradeStrategy.upgradeType"),
                        &container.upgrade_strategy.upgrade_type,
                        &format!("container {} upgradeType is immutable", container.name),
                    ));
                }
            }
        }
    }
    errs
}
