//! Kubernetes Events the controller publishes (events.k8s.io/v1 through kube's Recorder).

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType, Recorder};

/// Reason on the SidecarSet when some matched pods cannot be upgraded in place.
pub const NOT_UPGRADABLE_PODS: &str = "NotUpgradablePods";
/// Reason on a pod whose idle hot-upgrade twin was reset to the empty image.
pub const RESET_CONTAINER_SUCCEED: &str = "ResetContainerSucceed";
/// Reason on a pod whose reset failed.
pub const RESET_CONTAINER_FAILED: &str = "ResetContainerFailed";

/// Publishes one event; failures are logged only (an event is never worth failing a reconcile).
pub async fn publish(
    recorder: &Recorder,
    regarding: &ObjectReference,
    warning: bool,
    reason: &str,
    action: &str,
    note: String,
) {
    let event = Event {
        type_: if warning {
            EventType::Warning
        } else {
            EventType::Normal
        },
        reason: reason.to_string(),
        note: Some(note),
        action: action.to_string(),
        secondary: None,
    };
    if let Err(e) = recorder.publish(&event, regarding).await {
        tracing::warn!(error = %e, reason, "could not publish event");
    }
}

/// A reference to a pod by namespace, name and uid.
pub fn pod_ref(namespace: &str, name: &str, uid: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: Some(namespace.to_string()),
        name: Some(name.to_string()),
        uid: Some(uid.to_string()).filter(|u| !u.is_empty()),
        ..ObjectReference::default()
    }
}
