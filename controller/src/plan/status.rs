//! §5.5 status counts and the rule for when to write them.

use super::context::PodView;
use sidecarset_policy::api::{SidecarSet, SidecarSetStatus};

pub(crate) fn compute(sidecarset: &SidecarSet, matched: &[PodView]) -> SidecarSetStatus {
    let count = |keep: &dyn Fn(&PodView) -> bool| {
        // Counts of one list of pods fit an i32 as the API type requires; saturate regardless.
        i32::try_from(matched.iter().filter(|v| keep(v)).count()).unwrap_or(i32::MAX)
    };
    SidecarSetStatus {
        observed_generation: sidecarset.metadata.generation,
        matched_pods: count(&|_| true),
        updated_pods: count(&|v| v.updated),
        ready_pods: count(&|v| v.is_ready()),
        updated_ready_pods: count(&|v| v.updated && v.is_ready()),
        latest_revision: None,
        collision_count: None,
    }
}

/// Write only if observedGeneration increased or a count differs (revision fields are the shell's).
pub(crate) fn changed(old: Option<&SidecarSetStatus>, new: &SidecarSetStatus) -> bool {
    let Some(old) = old else {
        return true;
    };
    new.observed_generation > old.observed_generation
        || old.matched_pods != new.matched_pods
        || old.updated_pods != new.updated_pods
        || old.ready_pods != new.ready_pods
        || old.updated_ready_pods != new.updated_ready_pods
}
