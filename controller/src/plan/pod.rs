//! Total accessors over a cached pod: absent fields read as empty, never panic.

use crate::cached_pod::{CachedContainer, CachedContainerStatus, CachedPod};
use k8s_openapi::api::core::v1::PodCondition;
use sidecarset_policy::selector::Labels;

static EMPTY_MAP: Labels = Labels::new();

pub(crate) fn name(pod: &CachedPod) -> &str {
    pod.name()
}

pub(crate) fn namespace(pod: &CachedPod) -> &str {
    pod.namespace()
}

pub(crate) fn uid(pod: &CachedPod) -> &str {
    pod.uid()
}

pub(crate) fn labels(pod: &CachedPod) -> &Labels {
    pod.labels()
}

pub(crate) fn annotations(pod: &CachedPod) -> &Labels {
    pod.annotations.as_ref().unwrap_or(&EMPTY_MAP)
}

pub(crate) fn containers(pod: &CachedPod) -> &[CachedContainer] {
    &pod.containers
}

pub(crate) fn container<'p>(pod: &'p CachedPod, name: &str) -> Option<&'p CachedContainer> {
    pod.containers.iter().find(|c| c.name == name)
}

/// The spec image of container `name`, `""` when the container or its image is absent.
pub(crate) fn image_of<'p>(pod: &'p CachedPod, name: &str) -> &'p str {
    container(pod, name).map_or("", image)
}

pub(crate) fn image(container: &CachedContainer) -> &str {
    container.image.as_deref().unwrap_or("")
}

pub(crate) fn container_statuses(pod: &CachedPod) -> &[CachedContainerStatus] {
    &pod.container_statuses
}

pub(crate) fn container_status<'p>(
    pod: &'p CachedPod,
    name: &str,
) -> Option<&'p CachedContainerStatus> {
    pod.container_statuses.iter().find(|s| s.name == name)
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
