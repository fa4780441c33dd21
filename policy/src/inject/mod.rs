//! Pod injection (§3): a pure function over (pod, namespace, SidecarSets), editing the pod as
//! JSON so that fields unknown to this crate pass through untouched.

mod build;
mod merge;
mod metadata;
pub mod pod;
mod select;
mod share;

pub use metadata::{PatchMetadataError, patch_pod_metadata};
pub use select::{
    NamespaceLookup, Selectable, canary_base, drop_canary_bases, matching, pod_matches, select,
};

use crate::annotations::HashAnnotationError;
use crate::api::SidecarSet;
use crate::selector::{Labels, SelectorError};
use build::{PodView, build_sidecars};
use serde_json::Value;
use std::borrow::Cow;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InjectError {
    #[error("malformed pod: {0}")]
    Malformed(&'static str),
    #[error("SidecarSet {sidecarset}: invalid {field}: {source}")]
    Selector {
        sidecarset: String,
        field: &'static str,
        source: SelectorError,
    },
    #[error("SidecarSet {sidecarset}: container {container}: resourcesPolicy: {source}")]
    ResourcesPolicy {
        sidecarset: String,
        container: String,
        source: Box<crate::resources::ResourcesPolicyError>,
    },
    #[error("SidecarSet {sidecarset}: {source}")]
    PatchMetadata {
        sidecarset: String,
        source: PatchMetadataError,
    },
    #[error("pod {0}")]
    HashAnnotation(#[from] HashAnnotationError),
}

impl InjectError {
    fn selector(sidecarset: &str, field: &'static str, source: SelectorError) -> Self {
        InjectError::Selector {
            sidecarset: sidecarset.to_string(),
            field,
            source,
        }
    }
}

/// §3.5–§3.9: inject `sidecarsets` (already selected, in order) into `pod`.
/// `now` is the RFC 3339 time recorded in the hash annotations. Returns whether the pod changed.
pub fn inject(
    pod: &mut Value,
    sidecarsets: &[&SidecarSet],
    now: &str,
) -> Result<bool, InjectError> {
    let labels = pod::labels(pod);
    let sidecarsets = sidecarsets.iter().map(|s| Cow::Borrowed(*s)).collect();
    inject_selected(pod, &labels, sidecarsets, now)
}

/// `inject` for a caller that has read the pod's labels (`pod::labels`) and may hand over the
/// SidecarSets: the containers of owned ones move into the pod instead of being copied.
pub(crate) fn inject_selected(
    pod: &mut Value,
    labels: &Labels,
    sidecarsets: Vec<Cow<'_, SidecarSet>>,
    now: &str,
) -> Result<bool, InjectError> {
    pod::check_shape(pod)?;
    if sidecarsets.is_empty() {
        return Ok(false);
    }
    let mut annotations = pod::annotations(pod);
    // Kept only when patchPodMetadata may change the annotations (to tell whether it did).
    let original_annotations = sidecarsets
        .iter()
        .any(|s| !s.spec.patch_pod_metadata.is_empty())
        .then(|| annotations.clone());
    for sidecarset in &sidecarsets {
        patch_pod_metadata(&mut annotations, &sidecarset.spec.patch_pod_metadata).map_err(
            |source| InjectError::PatchMetadata {
                sidecarset: sidecarset.name().to_string(),
                source,
            },
        )?;
    }
    let view = PodView {
        init_containers: pod::spec_list(pod, "initContainers"),
        containers: pod::spec_list(pod, "containers"),
        labels,
        annotations: &annotations,
    };
    let mut built = build_sidecars(view, sidecarsets, now)?;
    if built.init_containers.is_empty() && built.containers.is_empty() {
        if original_annotations.is_none_or(|original| original == annotations) {
            return Ok(false);
        }
        pod::set_annotations(pod, &annotations)?;
        return Ok(true);
    }

    crate::order::sort_by_text(&mut built.init_containers, |c| c.name());
    // The pod's lists are moved out and back, never cloned: pods can be large.
    let init = pod::take_spec_list(pod, "initContainers");
    let containers = pod::take_spec_list(pod, "containers");
    let volumes = pod::take_spec_list(pod, "volumes");
    let secrets = pod::take_spec_list(pod, "imagePullSecrets");
    let merged = [
        (
            "initContainers",
            merge::merge_containers(init.items, built.init_containers),
            init.present,
        ),
        (
            "containers",
            merge::merge_containers(containers.items, built.containers),
            true,
        ),
        (
            "volumes",
            merge::merge_volumes(volumes.items, built.volumes),
            volumes.present,
        ),
        (
            "imagePullSecrets",
            merge::merge_by_name(secrets.items, built.secrets),
            secrets.present,
        ),
    ];
    for (key, list, present) in merged {
        pod::restore_spec_list(pod, key, list, present)?;
    }
    annotations.extend(built.annotations);
    pod::set_annotations(pod, &annotations)?;
    Ok(true)
}

#[cfg(test)]
mod tests;
