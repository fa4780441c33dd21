//! Total accessors over a typed Pod: absent fields read as empty, never panic.

use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod, PodCondition};
use sidecarset_policy::selector::Labels;

static EMPTY_MAP: Labels = Labels::new();

pub(crate) const PHASE_RUNNING: &str = "Running";
pub(crate) const CONDITION_READY: &str = "Ready";
pub(crate) const CONDITION_TRUE: &str = "True";

pub(crate) fn name(pod: &Pod) -> &str {
    pod.metadata.name.as_deref().unwrap_or("")
}

pub(crate) fn namespace(pod: &Pod) -> &str {
    pod.metadata.namespace.as_deref().unwrap_or("")
}

pub(crate) fn uid(pod: &Pod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or("")
}

pub(crate) fn labels(pod: &Pod) -> &Labels {
    pod.metadata.labels.as_ref().unwrap_or(&EMPTY_MAP)
}

pub(crate) fn annotations(pod: &Pod) -> &Labels {
    pod.metadata.annotations.as_ref().unwrap_or(&EMPTY_MAP)
}

pub(crate) fn annotation<'p>(pod: &'p Pod, key: &str) -> Option<&'p str> {
    annotations(pod).get(key).map(String::as_str)
}

pub(crate) fn containers(pod: &Pod) -> &[Container] {
    pod.spec
        .as_ref()
        .map_or(&[], |spec| spec.containers.as_slice())
}

pub(crate) fn init_containers(pod: &Pod) -> &[Container] {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.init_containers.as_deref())
        .unwrap_or(&[])
}

pub(crate) fn container<'p>(pod: &'p Pod, name: &str) -> Option<&'p Container> {
    containers(pod).iter().find(|c| c.name == name)
}

/// The spec image of container `name`, `""` when the container or its image is absent.
pub(crate) fn image_of<'p>(pod: &'p Pod, name: &str) -> &'p str {
    container(pod, name).map_or("", image)
}

pub(crate) fn image(container: &Container) -> &str {
    container.image.as_deref().unwrap_or("")
}

pub(crate) fn container_statuses(pod: &Pod) -> &[ContainerStatus] {
    pod.status
        .as_ref()
        .and_then(|status| status.container_statuses.as_deref())
        .unwrap_or(&[])
}

pub(crate) fn init_container_statuses(pod: &Pod) -> &[ContainerStatus] {
    pod.status
        .as_ref()
        .and_then(|status| status.init_container_statuses.as_deref())
        .unwrap_or(&[])
}

pub(crate) fn container_status<'p>(pod: &'p Pod, name: &str) -> Option<&'p ContainerStatus> {
    container_statuses(pod).iter().find(|s| s.name == name)
}

pub(crate) fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|status| status.phase.as_deref())
        .unwrap_or("")
}

pub(crate) fn conditions(pod: &Pod) -> &[PodCondition] {
    pod.status
        .as_ref()
        .and_then(|status| status.conditions.as_deref())
        .unwrap_or(&[])
}

pub(crate) fn condition<'p>(pod: &'p Pod, type_: &str) -> Option<&'p PodCondition> {
    conditions(pod).iter().find(|c| c.type_ == type_)
}

/// podutil.IsPodReady: the `Ready` condition is `True`.
pub(crate) fn is_ready(pod: &Pod) -> bool {
    condition(pod, CONDITION_READY).is_some_and(|c| c.status == CONDITION_TRUE)
}

pub(crate) fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// util.IsRunningAndReady: Running, Ready and not being deleted.
pub(crate) fn is_running_and_ready(pod: &Pod) -> bool {
    phase(pod) == PHASE_RUNNING && is_ready(pod) && !is_terminating(pod)
}

/// §5.3 "active": not Succeeded/Failed and no deletionTimestamp.
pub(crate) fn is_active(pod: &Pod) -> bool {
    !matches!(phase(pod), "Succeeded" | "Failed") && !is_terminating(pod)
}
