//! The writes a plan asks for, one API call each (plus a re-read where the API server's answer
//! is ambiguous), with their outcome classified.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use kube::core::Status;
use kube::{Client, ResourceExt};
use serde_json::json;
use sidecarset_policy::api::{SidecarSet, SidecarSetStatus};

use crate::error::{Error, Result};

/// Attempts of a SidecarSet status write: client-go's `retry.DefaultBackoff` (4 steps, 10 ms × 5ⁿ)
/// that upstream's `RetryOnConflict` uses.
const STATUS_ATTEMPTS: u32 = 4;
const STATUS_FIRST_BACKOFF: Duration = Duration::from_millis(10);

/// Result of a guarded pod write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// Applied; the pod's uid and new resourceVersion.
    Applied {
        /// Pod uid.
        uid: String,
        /// resourceVersion after the write.
        resource_version: String,
    },
    /// The pod changed since it was read (its resourceVersion precondition failed): the plan is
    /// stale and must be recomputed, never retried as is.
    Stale,
}

fn written(pod: &Pod) -> Written {
    Written::Applied {
        uid: pod.uid().unwrap_or_default(),
        resource_version: pod.resource_version().unwrap_or_default(),
    }
}

/// A 422 without a kind is what the API server answers for a JSON patch that does not apply
/// (a failed `test` included, with the generic "the server rejected our request due to an error
/// in our request"); a 422 naming the kind is a validation failure of the patched object.
fn is_unapplied_patch(status: &Status) -> bool {
    status.code == 422 && status.details.as_ref().is_none_or(|d| d.kind.is_empty())
}

/// The resourceVersion a planned patch tests for (its leading `test` operation).
pub fn tested_resource_version(patch: &json_patch::Patch) -> Option<&str> {
    patch.0.iter().find_map(|op| match op {
        json_patch::PatchOperation::Test(t) if t.path.as_str() == "/metadata/resourceVersion" => {
            t.value.as_str()
        }
        _ => None,
    })
}

/// Applies a planned JSON patch (it starts with a resourceVersion `test`) to a pod.
///
/// A pod that is gone is an error, as upstream's update returns one (§6.4 case 37); so is a
/// patch the API server refuses while the pod still has the tested resourceVersion.
pub async fn patch_pod(
    client: &Client,
    namespace: &str,
    name: &str,
    patch: &json_patch::Patch,
) -> Result<Written> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let action = format!("patch pod {namespace}/{name}");
    match api
        .patch(
            name,
            &PatchParams::default(),
            &Patch::<()>::Json(patch.clone()),
        )
        .await
    {
        Ok(pod) => Ok(written(&pod)),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(Written::Stale),
        Err(kube::Error::Api(s)) if is_unapplied_patch(&s) => {
            // The answer does not say whether the `test` failed: the current resourceVersion does.
            let current = api
                .get(name)
                .await
                .map_err(|e| Error::kube(format!("get pod {namespace}/{name}"), e))?;
            match tested_resource_version(patch) {
                Some(tested) if current.resource_version().as_deref() != Some(tested) => {
                    Ok(Written::Stale)
                }
                _ => Err(Error::kube(
                    format!("{action} (the pod is unchanged: the patch itself does not apply)"),
                    kube::Error::Api(s),
                )),
            }
        }
        Err(e) => Err(Error::kube(action, e)),
    }
}

/// Sets one pod condition with a strategic merge on the status subresource (merged by `type`).
/// A pod that is gone is an error, as in upstream's condition update.
pub async fn patch_condition(
    client: &Client,
    namespace: &str,
    name: &str,
    condition: &serde_json::Value,
) -> Result<Written> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let body = json!({ "status": { "conditions": [condition] } });
    api.patch_status(name, &PatchParams::default(), &Patch::Strategic(body))
        .await
        .map(|pod| written(&pod))
        .map_err(|e| Error::kube(format!("patch pod status {namespace}/{name}"), e))
}

/// The merge patch of a status write: the planned counts and observedGeneration (revision fields
/// are left as stored), guarded by `resource_version` when known.
fn status_patch(
    resource_version: Option<&str>,
    status: &SidecarSetStatus,
) -> Result<serde_json::Value> {
    let status = serde_json::to_value(status).map_err(|source| Error::Encode {
        what: "SidecarSet status",
        source,
    })?;
    Ok(match resource_version {
        Some(rv) => json!({ "metadata": { "resourceVersion": rv }, "status": status }),
        None => json!({ "status": status }),
    })
}

/// Whether the stored status already comes from a newer generation than the one planned for
/// (another writer got there first; ours would move observedGeneration back).
fn newer_status_stored(stored: &SidecarSet, planned: &SidecarSetStatus) -> bool {
    let stored_generation = stored.status.as_ref().and_then(|s| s.observed_generation);
    stored_generation > planned.observed_generation
}

/// Writes a SidecarSet's status through the status subresource (§5.5): guarded by the cached
/// resourceVersion; on conflict re-read the SidecarSet and retry, as upstream's RetryOnConflict.
pub async fn write_sidecarset_status(
    client: &Client,
    cached: &SidecarSet,
    status: &SidecarSetStatus,
) -> Result<()> {
    let api: Api<SidecarSet> = Api::all(client.clone());
    let name = cached.name_any();
    let mut resource_version = cached.resource_version();
    let mut backoff = STATUS_FIRST_BACKOFF;
    let mut attempt = 1;
    loop {
        let body = status_patch(resource_version.as_deref(), status)?;
        let conflict = match api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(body))
            .await
        {
            Ok(_) => return Ok(()),
            // Deleted meanwhile: nothing to report on.
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 && attempt < STATUS_ATTEMPTS => s,
            Err(e) => return Err(Error::kube(format!("patch sidecarset status {name}"), e)),
        };
        tracing::debug!(sidecarset = %name, attempt, error = %conflict.message, "status write conflicted; re-reading");
        tokio::time::sleep(backoff).await;
        backoff *= 5;
        attempt += 1;
        let fresh = api
            .get_opt(&name)
            .await
            .map_err(|e| Error::kube(format!("get sidecarset {name}"), e))?;
        match fresh {
            None => return Ok(()),
            Some(fresh) if newer_status_stored(&fresh, status) => return Ok(()),
            Some(fresh) => resource_version = fresh.resource_version(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, kind: &str) -> Status {
        serde_json::from_value(json!({
            "code": code, "reason": "Invalid", "message": "x", "details": { "kind": kind }
        }))
        .expect("status")
    }

    #[test]
    fn a_kindless_422_is_a_patch_that_did_not_apply() {
        assert!(is_unapplied_patch(&status(422, "")));
        assert!(is_unapplied_patch(
            &Status::failure("x", "Invalid").with_code(422)
        ));
        assert!(
            !is_unapplied_patch(&status(422, "Pod")),
            "validation failure"
        );
        assert!(!is_unapplied_patch(&status(409, "")));
    }

    #[test]
    fn the_tested_resource_version_is_read_from_the_patch() {
        let patch: json_patch::Patch = serde_json::from_value(json!([
            { "op": "test", "path": "/metadata/resourceVersion", "value": "42" },
            { "op": "replace", "path": "/spec/containers/1/image", "value": "v2" }
        ]))
        .expect("patch");
        assert_eq!(tested_resource_version(&patch), Some("42"));
        let untested: json_patch::Patch = serde_json::from_value(json!([
            { "op": "replace", "path": "/spec/containers/1/image", "value": "v2" }
        ]))
        .expect("patch");
        assert_eq!(tested_resource_version(&untested), None);
    }

    #[test]
    fn the_status_patch_carries_the_precondition_and_leaves_revision_fields_alone() {
        let planned = SidecarSetStatus {
            observed_generation: Some(3),
            matched_pods: 2,
            ..SidecarSetStatus::default()
        };
        let body = status_patch(Some("17"), &planned).expect("encode");
        assert_eq!(body["metadata"]["resourceVersion"], "17");
        assert_eq!(body["status"]["matchedPods"], 2);
        assert!(body["status"].get("latestRevision").is_none());
        assert!(
            status_patch(None, &planned)
                .expect("encode")
                .get("metadata")
                .is_none()
        );
    }
}
