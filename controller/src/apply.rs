//! The writes a plan asks for, one API call each, with their outcome classified.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::json;
use sidecarset_policy::api::{SidecarSet, SidecarSetStatus};

use crate::error::{Error, Result};

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
    /// The pod changed since it was read (failed `test`, 409 or 422) or is gone:
    /// the plan is stale and must be recomputed, never retried as is.
    Stale,
}

fn written(pod: &Pod) -> Written {
    Written::Applied {
        uid: pod.uid().unwrap_or_default(),
        resource_version: pod.resource_version().unwrap_or_default(),
    }
}

/// Whether an API error means "your view was stale" rather than "try the same again".
fn is_stale(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if matches!(s.code, 404 | 409 | 422))
}

/// Applies a planned JSON patch (it starts with a resourceVersion `test`) to a pod.
pub async fn patch_pod(
    client: &Client,
    namespace: &str,
    name: &str,
    patch: &json_patch::Patch,
) -> Result<Written> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    match api
        .patch(
            name,
            &PatchParams::default(),
            &Patch::<()>::Json(patch.clone()),
        )
        .await
    {
        Ok(pod) => Ok(written(&pod)),
        Err(e) if is_stale(&e) => Ok(Written::Stale),
        Err(e) => Err(Error::kube(format!("patch pod {namespace}/{name}"), e)),
    }
}

/// Sets one pod condition with a strategic merge on the status subresource (merged by `type`).
pub async fn patch_condition(
    client: &Client,
    namespace: &str,
    name: &str,
    condition: &serde_json::Value,
) -> Result<Written> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let body = json!({ "status": { "conditions": [condition] } });
    match api
        .patch_status(name, &PatchParams::default(), &Patch::Strategic(body))
        .await
    {
        Ok(pod) => Ok(written(&pod)),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Written::Stale),
        Err(e) => Err(Error::kube(
            format!("patch pod status {namespace}/{name}"),
            e,
        )),
    }
}

/// Writes a SidecarSet's status through the status subresource.
pub async fn patch_sidecarset_status(
    client: &Client,
    name: &str,
    status: &SidecarSetStatus,
) -> Result<()> {
    let api: Api<SidecarSet> = Api::all(client.clone());
    let status = serde_json::to_value(status).map_err(|source| Error::Encode {
        what: "SidecarSet status",
        source,
    })?;
    match api
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
    {
        Ok(_) => Ok(()),
        // Deleted meanwhile: nothing to report on.
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(Error::kube(format!("patch sidecarset status {name}"), e)),
    }
}
