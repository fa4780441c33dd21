//! §5.10 hot upgrade: which twin takes the new image, and the reset of the old twin.

use super::context::{HotSidecar, PodView, SidecarSetContext, TwinState};
use super::edit::{PodEdit, read_annotations, record_update_state};
use super::predicates::is_state_consistent;
use super::{Plan, UpdateKind, pod};
use sidecarset_policy::annotations::INPLACE_UPDATE_STATE;

/// (container to upgrade, the other twin): an empty twin first, else the not-ready one when
/// exactly one is ready, else the idle one.
pub(crate) fn choose_twin<'a>(
    hot: &'a HotSidecar,
    state: TwinState<'a>,
    view: &PodView,
) -> (&'a str, &'a str) {
    let [first, second] = &hot.twins;
    let pod = view.pod;
    if pod::image_of(pod, first) == hot.empty_image {
        return (first, second);
    }
    if pod::image_of(pod, second) == hot.empty_image {
        return (second, first);
    }
    let ready =
        |name: &str| pod::is_container_ready(pod, name) && is_state_consistent(view, &[name]);
    match (ready(first), ready(second)) {
        (true, false) => (second, first),
        (false, true) => (first, second),
        _ => (state.idle, state.working),
    }
}

/// Step 2 of §5.10's sequence: an idle twin is off the empty image, the rest is consistent, and
/// the pod is ready enough to lose the old twin.
fn needs_reset(context: &SidecarSetContext, view: &PodView) -> bool {
    if !view.in_hot_upgrading {
        return false;
    }
    let pod = view.pod;
    let is_idle = |name: &str| view.hot_states.iter().any(|state| state.idle == name);
    let active: Vec<&str> = context
        .sidecar_names
        .iter()
        .map(String::as_str)
        .filter(|name| !is_idle(name))
        .collect();
    if !is_state_consistent(view, &active) {
        return false;
    }
    pod::is_running_and_ready(pod)
        || pod::container_statuses(pod)
            .iter()
            .all(|s| is_idle(&s.name) || s.ready)
}

/// Idle twins back to the empty image, their versions to "0"; hashes and conditions untouched.
fn reset_edit(context: &SidecarSetContext, view: &PodView, now: &str) -> PodEdit {
    let pod = view.pod;
    // Only the update state is read below; the versions are overwritten.
    let mut annotations = read_annotations(pod, [INPLACE_UPDATE_STATE]);
    let mut images = Vec::new();
    for (hot, state) in context.hot.iter().zip(&view.hot_states) {
        if pod::image_of(pod, state.idle) == hot.empty_image {
            continue;
        }
        images.push((state.idle.to_string(), hot.empty_image.to_string()));
        annotations.insert(
            hot.version_keys_of(state.idle).0.to_string(),
            "0".to_string(),
        );
        annotations.insert(
            hot.version_keys_of(state.working).1.to_string(),
            "0".to_string(),
        );
    }
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
    edit
}

/// §5.2 step 9: plan a reset for every matched pod that needs one.
pub(crate) fn plan_resets(
    context: &SidecarSetContext,
    matched: &[PodView],
    now: &str,
    plan: &mut Plan,
) {
    for view in matched.iter().filter(|v| needs_reset(context, v)) {
        match reset_edit(context, view, now).into_update(
            view.pod,
            UpdateKind::HotUpgradeReset,
            &context.pointers,
        ) {
            Ok(update) => plan.pod_updates.push(update),
            Err(error) => plan.skip(view.pod, error),
        }
    }
}
