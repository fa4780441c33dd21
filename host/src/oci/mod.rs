//! Publishing and fetching policies as OCI artifacts with Kubewarden's layout: an OCI image
//! manifest, a `{}` config blob (`application/vnd.wasm.config.v1+json`) and one
//! `application/vnd.wasm.content.layer.v1+wasm` layer.

pub mod auth;
pub mod client;
pub mod reference;

use std::collections::BTreeMap;
use std::path::Path;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

pub use auth::{Credentials, credentials_for, default_docker_config};
pub use client::RegistryClient;
pub use reference::Reference;

use crate::annotate::{SOURCE_ANNOTATION, embedded_metadata};

/// Media type of the manifest.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// Media type of the `{}` config blob.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v1+json";
/// Media type of the wasm layer.
pub const LAYER_MEDIA_TYPE: &str = "application/vnd.wasm.content.layer.v1+wasm";
/// OCI annotation Renovate reads.
pub const OCI_SOURCE_ANNOTATION: &str = "org.opencontainers.image.source";

/// Errors of push and pull.
#[derive(Debug, Error)]
pub enum OciError {
    /// Malformed `registry://` reference.
    #[error("invalid reference {0}")]
    Reference(String),
    /// The Docker config cannot be read.
    #[error("Docker config: {0}")]
    Config(String),
    /// Network / HTTP failure.
    #[error("{0}")]
    Http(String),
    /// The registry refused.
    #[error("{0}")]
    Registry(String),
    /// Authentication failed.
    #[error("authentication failed: {0}")]
    Unauthorized(String),
    /// The artifact is not a Kubewarden policy.
    #[error("{0}")]
    Artifact(String),
}

/// One descriptor of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// Media type.
    pub media_type: String,
    /// `sha256:…`.
    pub digest: String,
    /// Size in bytes.
    pub size: u64,
    /// Descriptor annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// An OCI image manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always 2.
    pub schema_version: u32,
    /// [`MANIFEST_MEDIA_TYPE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The config blob.
    pub config: Descriptor,
    /// The layers (one for a policy).
    pub layers: Vec<Descriptor>,
    /// Manifest annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// `sha256:<hex>` of `data`.
pub fn sha256_digest(data: &[u8]) -> String {
    let hash = Sha256::digest(data);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// kwctl's manifest annotations: the metadata's, minus multi-line values, plus
/// `org.opencontainers.image.source` from `io.kubewarden.policy.source`.
pub fn manifest_annotations(wasm: &[u8]) -> Result<Option<BTreeMap<String, String>>, OciError> {
    let metadata = embedded_metadata(wasm).map_err(|e| OciError::Artifact(e.to_string()))?;
    let Some(annotations) = metadata.and_then(|m| m.annotations) else {
        return Ok(None);
    };
    let mut out: BTreeMap<String, String> = annotations
        .into_iter()
        .filter(|(_, value)| !value.contains('\n'))
        .collect();
    if let Some(source) = out.get(SOURCE_ANNOTATION).cloned() {
        out.insert(OCI_SOURCE_ANNOTATION.into(), source);
    }
    Ok(Some(out))
}

/// The manifest bytes of a policy artifact for `wasm`.
pub fn build_manifest(wasm: &[u8], config: &[u8]) -> Result<Vec<u8>, OciError> {
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.into()),
        config: Descriptor {
            media_type: CONFIG_MEDIA_TYPE.into(),
            digest: sha256_digest(config),
            size: config.len() as u64,
            annotations: None,
        },
        layers: vec![Descriptor {
            media_type: LAYER_MEDIA_TYPE.into(),
            digest: sha256_digest(wasm),
            size: wasm.len() as u64,
            annotations: None,
        }],
        annotations: manifest_annotations(wasm)?,
    };
    serde_json::to_vec(&manifest).map_err(|e| OciError::Artifact(e.to_string()))
}

/// Credentials for the reference's registry from `docker_config` (or the default location).
pub fn credentials(
    reference: &Reference,
    docker_config: Option<&Path>,
) -> Result<Option<Credentials>, OciError> {
    let path = match docker_config {
        Some(path) if path.is_dir() => path.join("config.json"),
        Some(path) => path.to_path_buf(),
        None => match default_docker_config() {
            Some(path) => path,
            None => return Ok(None),
        },
    };
    credentials_for(&path, &reference.registry)
}

/// Pushes `wasm`; returns the manifest digest.
pub async fn push(
    wasm: &[u8],
    reference: &Reference,
    credentials: Option<Credentials>,
) -> Result<String, OciError> {
    let tag = reference
        .tag
        .as_deref()
        .ok_or_else(|| OciError::Reference("push needs a tag, not a digest".into()))?;
    let client = RegistryClient::new(reference, credentials)?;
    let config = Bytes::from_static(b"{}");
    let manifest = build_manifest(wasm, &config)?;
    let digest = sha256_digest(&manifest);
    client.upload_blob(&sha256_digest(&config), config).await?;
    client
        .upload_blob(&sha256_digest(wasm), Bytes::copy_from_slice(wasm))
        .await?;
    let reported = client
        .put_manifest(tag, MANIFEST_MEDIA_TYPE, Bytes::from(manifest))
        .await?;
    if let Some(reported) = reported
        && reported != digest
    {
        return Err(OciError::Registry(format!(
            "the registry stored the manifest as {reported}, expected {digest}"
        )));
    }
    Ok(digest)
}

/// Fetches the raw manifest of `reference`.
pub async fn fetch_manifest(
    reference: &Reference,
    credentials: Option<Credentials>,
) -> Result<Bytes, OciError> {
    let client = RegistryClient::new(reference, credentials)?;
    client
        .get_manifest(reference.manifest_reference(), MANIFEST_MEDIA_TYPE)
        .await
}

/// A pulled policy: the module and the digest of the manifest that named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    /// The wasm module (the layer's bytes).
    pub wasm: Vec<u8>,
    /// `sha256:…` of the raw manifest, the digest `push` printed.
    pub manifest_digest: String,
}

/// Pulls the policy module of `reference`, checking every digest.
pub async fn pull(
    reference: &Reference,
    credentials: Option<Credentials>,
) -> Result<Vec<u8>, OciError> {
    pull_with_digest(reference, credentials)
        .await
        .map(|pulled| pulled.wasm)
}

/// Like [`pull`], also returning the manifest digest.
pub async fn pull_with_digest(
    reference: &Reference,
    credentials: Option<Credentials>,
) -> Result<Pulled, OciError> {
    let client = RegistryClient::new(reference, credentials)?;
    let raw = client
        .get_manifest(reference.manifest_reference(), MANIFEST_MEDIA_TYPE)
        .await?;
    let manifest_digest = sha256_digest(&raw);
    if let Some(digest) = &reference.digest
        && manifest_digest != *digest
    {
        return Err(OciError::Artifact(format!(
            "manifest digest mismatch: wanted {digest}"
        )));
    }
    let manifest: Manifest = serde_json::from_slice(&raw)
        .map_err(|e| OciError::Artifact(format!("not an OCI image manifest: {e}")))?;
    let layer = manifest
        .layers
        .iter()
        .find(|l| l.media_type == LAYER_MEDIA_TYPE)
        .ok_or_else(|| {
            OciError::Artifact(format!(
                "no {LAYER_MEDIA_TYPE} layer: not a Kubewarden policy"
            ))
        })?;
    let wasm = client.get_blob(&layer.digest).await?;
    if sha256_digest(&wasm) != layer.digest || wasm.len() as u64 != layer.size {
        return Err(OciError::Artifact(format!(
            "layer {} does not match its digest or size",
            layer.digest
        )));
    }
    Ok(Pulled {
        wasm: wasm.to_vec(),
        manifest_digest,
    })
}
