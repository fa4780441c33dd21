//! §5.11 the pod condition `SidecarSetUpgradable`: one boolean per SidecarSet in its message.

use super::{ConditionUpdate, PlanError, json, pod};
use crate::cached_pod::CachedPod;
use serde_json::{Map, Value};
use sidecarset_policy::annotations::UPGRADABLE_CONDITION;
use std::collections::BTreeMap;

pub const CONDITION_REASON_ALL_UPGRADABLE: &str = "AllSidecarsetUpgradable";
pub const CONDITION_REASON_NOT_UPGRADABLE: &str = "UpdateImmutableField";

/// The condition with this SidecarSet's entry set to `upgradable`, or `None` when nothing changes.
pub(crate) fn condition_update(
    pod: &CachedPod,
    sidecarset: &str,
    upgradable: bool,
    now: &str,
) -> Result<Option<ConditionUpdate>, PlanError> {
    let old = pod::condition(pod, UPGRADABLE_CONDITION);
    let mut entries: BTreeMap<String, bool> = match old
        .and_then(|c| c.message.as_deref())
        .filter(|m| !m.is_empty())
    {
        Some(message) => {
            serde_json::from_str(message).map_err(|e| PlanError::ConditionMessage(e.to_string()))?
        }
        None => BTreeMap::new(),
    };
    entries.insert(sidecarset.to_string(), upgradable);
    let (status, reason) = if entries.values().all(|v| *v) {
        ("True", CONDITION_REASON_ALL_UPGRADABLE)
    } else {
        ("False", CONDITION_REASON_NOT_UPGRADABLE)
    };
    let message = json::bool_map(&entries);
    if let Some(old) = old
        && old.status == status
        && old.reason.as_deref() == Some(reason)
        && old.message.as_deref() == Some(message.as_str())
    {
        return Ok(None);
    }
    let status_flipped = old.is_none_or(|o| o.status != status);
    // A new condition starts from its type alone, which is all a default PodCondition serialises.
    let mut condition = match old {
        Some(old) => serde_json::to_value(old).unwrap_or_else(|_| Value::Object(Map::new())),
        None => Value::Object(Map::new()),
    };
    if let Value::Object(fields) = &mut condition {
        fields.insert("type".into(), UPGRADABLE_CONDITION.into());
        fields.insert("status".into(), status.into());
        fields.insert("reason".into(), reason.into());
        fields.insert("message".into(), message.into());
        if status_flipped {
            fields.insert("lastTransitionTime".into(), now.into());
        }
    }
    Ok(Some(ConditionUpdate {
        namespace: pod::namespace(pod).to_string(),
        name: pod::name(pod).to_string(),
        condition,
    }))
}
