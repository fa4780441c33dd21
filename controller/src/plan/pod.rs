//! Total accessors over a cached pod: absent fields read as empty, never panic.

use crate::cached_pod::{
    CONTAINER_READY, CachedContainer, CachedContainerStatus, CachedPod, DIGEST_IMAGE,
    RUNS_SPEC_IMAGE, Section,
};
use k8s_openapi::api::core::v1::PodCondition;
use sidecarset_policy::selector::Labels;

static EMPTY_MAP: Labels = Labels::new();

/// Read from the packed names, next to what the sorts compare.
pub(crate) fn name(pod: &CachedPod) -> &str {
    pod.facts.names.name(Section::Identity, 1)
}

/// Read from the packed names, next to what the sorts compare.
pub(crate) fn namespace(pod: &CachedPod) -> &str {
    pod.facts.names.name(Section::Identity, 0)
}

pub(crate) fn uid(pod: &CachedPod) -> &str {
    pod.uid()
}

pub(crate) fn labels(pod: &CachedPod) -> &Labels {
    pod.labels()
}

/// The value of label `key`, read from the packed names.
pub(crate) fn label<'p>(pod: &'p CachedPod, key: &str) -> Option<&'p str> {
    pod.facts.names.value(Section::Labels, key)
}

pub(crate) fn annotations(pod: &CachedPod) -> &Labels {
    pod.annotations.as_ref().unwrap_or(&EMPTY_MAP)
}

pub(crate) fn containers(pod: &CachedPod) -> &[CachedContainer] {
    &pod.containers
}

pub(crate) fn container<'p>(pod: &'p CachedPod, name: &str) -> Option<&'p CachedContainer> {
    // The packed names are the containers' names in order.
    pod.containers.get(container_position(pod, name)?)
}

/// Where container `name` is among the pod's containers (what the patch addresses).
pub(crate) fn container_position(pod: &CachedPod, name: &str) -> Option<usize> {
    pod.facts.names.position(Section::Containers, name)
}

/// Each container's name, whether its spec image is a digest reference and whether a status of
/// its name runs that digest, in container order (one pass over the packed names).
pub(crate) fn container_names_and_flags(
    pod: &CachedPod,
) -> impl Iterator<Item = (&str, bool, bool)> {
    pod.facts
        .names
        .entries(Section::Containers)
        .map(|(name, flags)| {
            (
                name,
                flags & DIGEST_IMAGE != 0,
                flags & RUNS_SPEC_IMAGE != 0,
            )
        })
}

/// Each container status's name in status order, read from the packed names.
pub(crate) fn status_names(pod: &CachedPod) -> impl Iterator<Item = &str> {
    pod.facts
        .names
        .entries(Section::Statuses)
        .map(|(name, _)| name)
}

/// The pod's working container of hot sidecar `sidecar`.
pub(crate) fn working_container<'p>(pod: &'p CachedPod, sidecar: &str) -> Option<&'p str> {
    pod.facts.names.value(Section::Working, sidecar)
}

/// Whether the injected-list names `sidecarset`.
pub(crate) fn is_injected_by(pod: &CachedPod, sidecarset: &str) -> bool {
    pod.facts
        .names
        .position(Section::Injected, sidecarset)
        .is_some()
}

/// The spec image of container `name`, `""` when the container or its image is absent.
pub(crate) fn image_of<'p>(pod: &'p CachedPod, name: &str) -> &'p str {
    container_position(pod, name).map_or("", |position| image_at(pod, position))
}

/// The spec image of the `position`th container (`""` when absent), from the packed names.
pub(crate) fn image_at(pod: &CachedPod, position: usize) -> &str {
    pod.facts.names.name(Section::Images, position)
}

/// Whether the status of container `name` is ready (false without one).
pub(crate) fn is_container_ready(pod: &CachedPod, name: &str) -> bool {
    let names = &pod.facts.names;
    names
        .position(Section::Statuses, name)
        .is_some_and(|position| names.has_flag(Section::Statuses, position, CONTAINER_READY))
}

pub(crate) fn container_statuses(pod: &CachedPod) -> &[CachedContainerStatus] {
    &pod.container_statuses
}

pub(crate) fn container_status<'p>(
    pod: &'p CachedPod,
    name: &str,
) -> Option<&'p CachedContainerStatus> {
    let position = pod.facts.names.position(Section::Statuses, name)?;
    pod.container_statuses.get(position)
}

pub(crate) fn condition<'p>(pod: &'p CachedPod, type_: &str) -> Option<&'p PodCondition> {
    pod.conditions.iter().find(|c| c.type_ == type_)
}

/// util.IsRunningAndReady: Running, Ready and not being deleted.
pub(crate) fn is_running_and_ready(pod: &CachedPod) -> bool {
    pod.facts.running_and_ready
}

/// §5.3 "active": not Succeeded/Failed and no deletionTimestamp.
pub(crate) fn is_active(pod: &CachedPod) -> bool {
    pod.facts.active
}
