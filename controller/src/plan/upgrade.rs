//! §5.8–§5.9: choose this round's pods and plan their in-place upgrade.

use super::condition::condition_update;
use super::context::{PodView, SidecarSetContext};
use super::edit::{PodEdit, read_annotations, record_update_state};
use super::hotupgrade::choose_twin;
use super::{Plan, PlanError, UpdateKind, budget, json, pod, select};
use crate::cached_pod::CachedPod;
use sidecarset_policy::annotations::{
    self, HashAnnotation, SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE, UpgradeSpec,
    WORKING_HOT_UPGRADE_CONTAINER,
};
use sidecarset_policy::inject::patch_pod_metadata;
use sidecarset_policy::selector::Labels;
use std::collections::BTreeMap;

/// §5.2 step 11: filter, sort, partition, budget; then conditions and one patch per chosen pod.
pub(crate) fn plan_rollout(
    context: &SidecarSetContext,
    matched: &[PodView],
    sort_inputs: &select::SortInputs,
    now: &str,
    plan: &mut Plan,
) {
    let strategy = &context.sidecarset.spec.update_strategy;
    let mut selection = select::filter(matched);
    select::sort(strategy, matched, sort_inputs, &mut selection.wait);

    let total = matched.len();
    let partition = budget::partition(strategy.partition.as_ref(), total);
    let max_unavailable = budget::max_unavailable(strategy.max_unavailable.as_ref(), total);
    let unavailable = matched
        .iter()
        .filter(|v| v.is_updated_unavailable())
        .count();
    let chosen: Vec<usize> = budget::take(
        selection.wait.len(),
        partition,
        max_unavailable,
        i64::try_from(unavailable).unwrap_or(i64::MAX),
        |position| matched[selection.wait[position]].sidecar_ready,
    )
    .into_iter()
    .map(|position| selection.wait[position])
    .collect();

    for &index in &selection.not_upgradable {
        push_condition(plan, matched[index].pod, context.name, false, now);
    }
    plan.not_upgradable = selection.not_upgradable.len();

    let mut upgraded = Vec::new();
    for index in chosen {
        let view = &matched[index];
        let update = upgrade_edit(context, view, now)
            .and_then(|edit| edit.into_update(view.pod, UpdateKind::Upgrade, &context.pointers));
        match update {
            Ok(update) => {
                plan.pod_updates.push(update);
                upgraded.push(view.pod);
            }
            Err(error) => plan.skip(view.pod, error),
        }
    }
    for pod in upgraded {
        push_condition(plan, pod, context.name, true, now);
    }
}

fn push_condition(plan: &mut Plan, pod: &CachedPod, sidecarset: &str, upgradable: bool, now: &str) {
    match condition_update(pod, sidecarset, upgradable, now) {
        Ok(Some(update)) => plan.conditions.push(update),
        Ok(None) => {}
        Err(error) => plan.skip(pod, error),
    }
}

/// §5.9 a–e for one pod.
pub(crate) fn upgrade_edit(
    context: &SidecarSetContext,
    view: &PodView,
    now: &str,
) -> Result<PodEdit, PlanError> {
    let pod = view.pod;
    let mut annotations = read_annotations(pod, context.upgrade_reads.iter().map(String::as_str));
    let mut images = Vec::new();
    let mut working = view.working.clone();
    let mut hot = context.hot.iter().zip(&view.hot_states);
    for container in &context.sidecarset.spec.containers {
        let hot_sidecar = if container.is_hot_upgrade() {
            hot.next()
        } else {
            None
        };
        let (target, other) = hot_sidecar.map_or(
            (container.name.as_str(), container.name.as_str()),
            |(hot, &state)| choose_twin(hot, state, view),
        );
        let image = container.image();
        if image == pod::image_of(pod, other) {
            continue;
        }
        images.push((target.to_string(), image.to_string()));
        if let Some((hot, _)) = hot_sidecar {
            working.insert(container.name.clone(), target.to_string());
            let (target_version, target_alt) = hot.version_keys_of(target);
            let (other_version_key, other_alt) = hot.version_keys_of(other);
            let other_version = annotations
                .get(other_version_key)
                .cloned()
                .unwrap_or_default();
            annotations.insert(
                target_version.to_string(),
                context.resource_version.to_string(),
            );
            annotations.insert(target_alt.to_string(), other_version);
            annotations.insert(other_alt.to_string(), context.resource_version.to_string());
            annotations.insert(
                WORKING_HOT_UPGRADE_CONTAINER.to_string(),
                json::string_map(&working),
            );
        }
    }
    refresh_hash_entry_of(context, pod, &mut annotations, now);
    let mut edit = PodEdit {
        images,
        annotations,
    };
    let changed = edit.changed_containers();
    record_update_state(
        &mut edit.annotations,
        pod,
        context.name,
        &context.hashes.hash,
        &changed,
        now,
    );
    patch_pod_metadata(
        &mut edit.annotations,
        &context.sidecarset.spec.patch_pod_metadata,
    )?;
    Ok(edit)
}

/// §5.9b / UpdatePodSidecarSetHash: this SidecarSet's entry becomes current; a legacy
/// string-format annotation is converted (with its without-image twin), garbage starts afresh.
pub(crate) fn refresh_hash_entry(context: &SidecarSetContext, annotations: &mut Labels, now: &str) {
    let raw = annotations.get(SIDECARSET_HASH).map(String::as_str);
    // The struct form is what parse_hash_annotation tries first: decode it only once.
    let parsed_struct = raw.and_then(|v| serde_json::from_str::<HashAnnotation>(v).ok());
    let struct_form = parsed_struct.is_some();
    let mut entries = match parsed_struct {
        Some(entries) => entries,
        None => annotations::parse_hash_annotation(SIDECARSET_HASH, raw).unwrap_or_default(),
    };
    if !struct_form {
        stamp(&mut entries, now);
        let without_image = annotations
            .get(SIDECARSET_HASH_WITHOUT_IMAGE)
            .map(String::as_str);
        let legacy = without_image
            .is_some_and(|v| serde_json::from_str::<BTreeMap<String, String>>(v).is_ok());
        if legacy
            && let Ok(mut converted) =
                annotations::parse_hash_annotation(SIDECARSET_HASH_WITHOUT_IMAGE, without_image)
        {
            stamp(&mut converted, now);
            annotations.insert(
                SIDECARSET_HASH_WITHOUT_IMAGE.to_string(),
                json::hash_annotation(&converted),
            );
        }
    }
    entries.insert(context.name.to_string(), current_entry(context, now));
    annotations.insert(SIDECARSET_HASH.to_string(), json::hash_annotation(&entries));
}

/// [`refresh_hash_entry`] of `pod`'s annotations: when the cached facts show the annotation holds
/// only this SidecarSet's struct-form entry, the result is that entry alone, without decoding.
pub(crate) fn refresh_hash_entry_of(
    context: &SidecarSetContext,
    pod: &CachedPod,
    annotations: &mut Labels,
    now: &str,
) {
    if pod.facts.hash_annotation_holds_only(context.name) {
        let entries =
            HashAnnotation::from([(context.name.to_string(), current_entry(context, now))]);
        annotations.insert(SIDECARSET_HASH.to_string(), json::hash_annotation(&entries));
    } else {
        refresh_hash_entry(context, annotations, now);
    }
}

/// This SidecarSet's hash entry as of `now`.
fn current_entry(context: &SidecarSetContext, now: &str) -> UpgradeSpec {
    UpgradeSpec {
        update_timestamp: Some(now.to_string()),
        hash: context.hashes.hash.clone(),
        sidecar_set_name: context.name.to_string(),
        sidecar_list: Some(context.sidecar_list.clone()),
        controller_revision: context.latest_revision.to_string(),
    }
}

/// Entries converted from the legacy form get the conversion time, as upstream.
fn stamp(entries: &mut HashAnnotation, now: &str) {
    for entry in entries.values_mut() {
        entry.update_timestamp = Some(now.to_string());
    }
}
