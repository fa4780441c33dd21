//! The shell of §3.3: fetches the ControllerRevision a SidecarSet names and restores the history
//! SidecarSet from it; the decisions are `revision`'s.

use super::Cluster;
use crate::api::SidecarSet;
use crate::revision::{self, HistoryError, InjectedVersion, RevisionQuery};
use crate::selector::Labels;
use std::borrow::Cow;

/// Upstream's `GetHistorySidecarSet`: `None` when the SidecarSet names no revision.
pub(super) fn history(
    cluster: &mut dyn Cluster,
    namespace: &str,
    sidecarset: &SidecarSet,
) -> Option<Result<SidecarSet, HistoryError>> {
    let revision = match RevisionQuery::of(sidecarset)? {
        RevisionQuery::Named(name) => cluster
            .get_controller_revision(namespace, name)
            .map_err(HistoryError::Lookup),
        RevisionQuery::CustomVersion {
            sidecarset: owner,
            version,
        } => cluster
            .list_controller_revisions(namespace, &RevisionQuery::label_selector(owner, version))
            .map_err(HistoryError::Lookup)
            .and_then(|listed| {
                revision::newest(&listed, owner, version)
                    .cloned()
                    .ok_or_else(|| HistoryError::NotFound(owner.to_string()))
            }),
    };
    Some(revision.and_then(|revision| revision::restore(sidecarset, &revision)))
}

/// §3.3: the version of a matched SidecarSet a new pod gets; a revision that cannot be found
/// or restored denies the pod, as upstream.
pub(super) fn injected_version<'a>(
    sidecarset: Cow<'a, SidecarSet>,
    labels: &Labels,
    namespace: &str,
    cluster: &mut dyn Cluster,
    draw: &mut dyn FnMut() -> f64,
) -> Result<Cow<'a, SidecarSet>, String> {
    let failed = |error: &dyn std::fmt::Display| {
        format!(
            "SidecarSet {}: cannot inject spec.injectionStrategy.revision: {error}",
            sidecarset.name()
        )
    };
    let history = match history(cluster, namespace, &sidecarset) {
        None => return Ok(sidecarset),
        Some(Ok(history)) => history,
        Some(Err(error)) => return Err(failed(&error)),
    };
    match revision::choose_version(&sidecarset, labels, draw) {
        Ok(InjectedVersion::History) => Ok(Cow::Owned(history)),
        Ok(InjectedVersion::Current) => Ok(sidecarset),
        Err(error) => Err(failed(&error)),
    }
}

#[cfg(test)]
mod tests;
