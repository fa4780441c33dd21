//! §5.6 predicates and §5.7 upgradability.

use super::context::{PodView, RecordedStatuses, SidecarSetContext};
use super::pod;

/// §5.6 state-consistent on `names`: digest images are compared with status imageIDs, anything
/// else falls back to "the kubelet has restarted the container on a new image".
pub(crate) fn is_state_consistent<N: AsRef<str>>(view: &PodView, names: &[N]) -> bool {
    let pod = view.pod;
    if pod::containers(pod).len() != pod::container_statuses(pod).len() {
        return false;
    }
    // The packed names hold one entry per container, so this visits every container.
    for (name, digest_image, runs_spec_image) in pod::container_names_and_flags(pod) {
        if !names.iter().any(|n| n.as_ref() == name) {
            continue;
        }
        if !digest_image {
            return is_update_completed(view, names);
        }
        // No status of this name, or one running another image.
        if !runs_spec_image {
            return false;
        }
    }
    true
}

/// IsSidecarContainerUpdateCompleted for this SidecarSet: no container among `names` still shows
/// the imageID recorded before its update while its spec image differs from the running one.
pub(crate) fn is_update_completed<N: AsRef<str>>(view: &PodView, names: &[N]) -> bool {
    let recorded = match &view.recorded {
        RecordedStatuses::NoAnnotation => return true,
        RecordedStatuses::Unparsable => return false,
        RecordedStatuses::Recorded(recorded) => recorded,
    };
    // The packed names hold one entry per status, in status order.
    let statuses = pod::container_statuses(view.pod).iter();
    statuses
        .zip(pod::status_names(view.pod))
        .all(|(status, name)| {
            if !names.iter().any(|n| n.as_ref() == name) {
                return true;
            }
            match recorded.get(name) {
                Some(old) => {
                    old.image_id != status.image_id || pod::image_of(view.pod, name) == status.image
                }
                None => true,
            }
        })
}

/// §5.6 sidecar-ready: every idle hot twin sits on the empty image, and the pod is Running+Ready.
pub(crate) fn is_sidecar_ready(context: &SidecarSetContext, view: &PodView) -> bool {
    let idle_on_empty = context
        .hot
        .iter()
        .zip(&view.hot_states)
        .all(|(hot, state)| {
            hot.empty_image.is_empty()
                || state
                    .idle_image
                    .is_none_or(|image| image == hot.empty_image)
        });
    idle_on_empty && pod::is_running_and_ready(view.pod)
}

/// §5.7 `IsSidecarSetUpgradable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Upgradability {
    /// (true, true): goes to the wait list.
    Upgradable,
    /// (true, false): a previous upgrade is still in flight; skipped this round.
    InFlight,
    /// (false, _): something besides images changed; the pod must be recreated.
    NotUpgradable,
}

pub(crate) fn upgradability(context: &SidecarSetContext, view: &PodView) -> Upgradability {
    let pod = view.pod;
    if pod.facts.hash_without_image_of(context.name) != context.hashes.without_image {
        return Upgradability::NotUpgradable;
    }
    let in_flight = context.sidecar_names.iter().any(|name| {
        pod::is_container_ready(pod, name) && !is_state_consistent(view, std::slice::from_ref(name))
    });
    if in_flight {
        Upgradability::InFlight
    } else {
        Upgradability::Upgradable
    }
}
