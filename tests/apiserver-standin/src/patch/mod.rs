//! The patch types kube-apiserver accepts: JSON patch, JSON merge patch and strategic merge patch.

mod strategic;

pub use strategic::{Schema, strategic_merge};

use serde_json::Value;

use crate::error::ApiError;
use crate::resources::ResourceDef;

/// The patch type named by the request's Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply; refused).
    Apply,
}

impl PatchType {
    /// Parses a Content-Type header.
    pub fn from_content_type(ct: &str) -> Result<PatchType, ApiError> {
        let base = ct.split(';').next().unwrap_or("").trim();
        match base {
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Ok(PatchType::Apply),
            other => Err(ApiError::unsupported_media_type(format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got \"{other}\")"
            ))),
        }
    }
}

/// Applies `patch` (raw bytes) of type `ty` to `current`, returning the patched object.
pub fn apply(
    def: &ResourceDef,
    ty: PatchType,
    current: &Value,
    patch: &[u8],
) -> Result<Value, ApiError> {
    match ty {
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_slice(patch)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            let mut doc = current.clone();
            json_patch::patch(&mut doc, &ops).map_err(|e| {
                tracing::debug!("json patch not applicable: {e}");
                ApiError::json_patch_not_applicable()
            })?;
            Ok(doc)
        }
        PatchType::Merge => {
            let p: Value = serde_json::from_slice(patch)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            if !p.is_object() {
                return Err(ApiError::bad_request("invalid JSON Patch"));
            }
            let mut doc = current.clone();
            json_patch::merge(&mut doc, &p);
            Ok(doc)
        }
        PatchType::Strategic => {
            if def.custom {
                return Err(ApiError::unsupported_media_type(format!(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (strategic merge patch is not supported for {})",
                    def.qualified()
                )));
            }
            let p: Value = serde_json::from_slice(patch)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            if !p.is_object() {
                return Err(ApiError::bad_request(
                    "unable to unmarshal patch: not a JSON object",
                ));
            }
            let schema = Schema::for_storage(def.storage);
            strategic_merge(current, &p, &schema)
        }
        PatchType::Apply => Err(ApiError::unsupported_media_type(
            "server-side apply (application/apply-patch+yaml) is not supported by this API server stand-in; use kubectl apply without --server-side",
        )),
    }
}
