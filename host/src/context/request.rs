//! kwctl's `CallbackRequestType` (the variants a waPC guest can reach here) and its parsing from guest payloads.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A host-capability request, named and laid out exactly like policy-evaluator's
/// `CallbackRequestType`, so its YAML form is what kwctl writes into session files.
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum CallbackRequestType {
    /// `oci/v1/manifest_digest`
    OciManifestDigest {
        /// Image reference.
        image: String,
    },
    /// `oci/v1/oci_manifest`
    OciManifest {
        /// Image reference.
        image: String,
    },
    /// `oci/v1/oci_manifest_config`
    OciManifestAndConfig {
        /// Image reference.
        image: String,
    },
    /// `net/v1/dns_lookup_host`
    DNSLookupHost {
        /// Host name.
        host: String,
    },
    /// `kubernetes/list_resources_by_namespace`
    KubernetesListResourceNamespace {
        /// `v1` or `group/version`.
        api_version: String,
        /// Singular PascalCase kind.
        kind: String,
        /// Namespace to list.
        namespace: String,
        /// Kubernetes label selector.
        label_selector: Option<String>,
        /// Kubernetes field selector.
        field_selector: Option<String>,
        /// Fields to keep (dot paths).
        #[serde(default)]
        field_masks: Option<BTreeSet<String>>,
    },
    /// `kubernetes/list_resources_all`
    KubernetesListResourceAll {
        /// `v1` or `group/version`.
        api_version: String,
        /// Singular PascalCase kind.
        kind: String,
        /// Kubernetes label selector.
        label_selector: Option<String>,
        /// Kubernetes field selector.
        field_selector: Option<String>,
        /// Fields to keep (dot paths).
        #[serde(default)]
        field_masks: Option<BTreeSet<String>>,
    },
    /// `kubernetes/get_resource`
    KubernetesGetResource {
        /// `v1` or `group/version`.
        api_version: String,
        /// Singular PascalCase kind.
        kind: String,
        /// Object name.
        name: String,
        /// Namespace, `None` for cluster-scoped kinds.
        namespace: Option<String>,
        /// Bypass the host's 5 s cache.
        disable_cache: bool,
        /// Fields to keep (dot paths).
        #[serde(default)]
        field_masks: Option<BTreeSet<String>>,
    },
    /// `kubernetes/can_i`
    KubernetesCanI {
        /// The SDK's `SubjectAccessReview` (`groups`, `resource_attributes`, `user`).
        request: Value,
        /// Bypass the host's 5 s cache.
        disable_cache: bool,
    },
}

#[derive(Deserialize)]
struct ListByNamespace {
    api_version: String,
    kind: String,
    namespace: String,
    #[serde(default)]
    label_selector: Option<String>,
    #[serde(default)]
    field_selector: Option<String>,
    #[serde(default)]
    field_masks: Option<BTreeSet<String>>,
}

#[derive(Deserialize)]
struct ListAll {
    api_version: String,
    kind: String,
    #[serde(default)]
    label_selector: Option<String>,
    #[serde(default)]
    field_selector: Option<String>,
    #[serde(default)]
    field_masks: Option<BTreeSet<String>>,
}

#[derive(Deserialize)]
struct Get {
    api_version: String,
    kind: String,
    name: String,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    disable_cache: bool,
    #[serde(default)]
    field_masks: Option<BTreeSet<String>>,
}

#[derive(Deserialize)]
struct CanI {
    subject_access_review: Value,
    #[serde(default)]
    disable_cache: bool,
}

/// Why a guest call could not be turned into a [`CallbackRequestType`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The capability exists in Kubewarden but has no session-file form here (sigstore, crypto).
    Unsupported(String),
    /// Unknown namespace/operation or malformed payload: the text is the host error.
    Invalid(String),
}

impl CallbackRequestType {
    /// Decodes a guest's `__host_call` (namespace, operation, payload) like policy-evaluator does.
    pub fn from_host_call(
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Self, ParseError> {
        let invalid = |e: serde_json::Error| {
            ParseError::Invalid(format!(
                "cannot decode the payload of {namespace}/{operation}: {e}"
            ))
        };
        match (namespace, operation) {
            ("kubernetes", "list_resources_by_namespace") => {
                let r: ListByNamespace = serde_json::from_slice(payload).map_err(invalid)?;
                Ok(Self::KubernetesListResourceNamespace {
                    api_version: r.api_version,
                    kind: r.kind,
                    namespace: r.namespace,
                    label_selector: r.label_selector,
                    field_selector: r.field_selector,
                    field_masks: r.field_masks,
                })
            }
            ("kubernetes", "list_resources_all") => {
                let r: ListAll = serde_json::from_slice(payload).map_err(invalid)?;
                Ok(Self::KubernetesListResourceAll {
                    api_version: r.api_version,
                    kind: r.kind,
                    label_selector: r.label_selector,
                    field_selector: r.field_selector,
                    field_masks: r.field_masks,
                })
            }
            ("kubernetes", "get_resource") => {
                let r: Get = serde_json::from_slice(payload).map_err(invalid)?;
                Ok(Self::KubernetesGetResource {
                    api_version: r.api_version,
                    kind: r.kind,
                    name: r.name,
                    namespace: r.namespace,
                    disable_cache: r.disable_cache,
                    field_masks: r.field_masks,
                })
            }
            ("kubernetes", "can_i") => {
                let r: CanI = serde_json::from_slice(payload).map_err(invalid)?;
                Ok(Self::KubernetesCanI {
                    request: r.subject_access_review,
                    disable_cache: r.disable_cache,
                })
            }
            ("oci", "v1/manifest_digest") => Ok(Self::OciManifestDigest {
                image: serde_json::from_slice(payload).map_err(invalid)?,
            }),
            ("oci", "v1/oci_manifest") => Ok(Self::OciManifest {
                image: serde_json::from_slice(payload).map_err(invalid)?,
            }),
            ("oci", "v1/oci_manifest_config") => Ok(Self::OciManifestAndConfig {
                image: serde_json::from_slice(payload).map_err(invalid)?,
            }),
            ("net", "v1/dns_lookup_host") => Ok(Self::DNSLookupHost {
                host: serde_json::from_slice(payload).map_err(invalid)?,
            }),
            ("oci", "v1/verify" | "v2/verify") | ("crypto", "v1/is_certificate_trusted") => {
                Err(ParseError::Unsupported(format!("{namespace}/{operation}")))
            }
            ("kubernetes" | "oci" | "net" | "crypto", _) => Err(ParseError::Invalid(format!(
                "unknown operation: {operation}"
            ))),
            _ => Err(ParseError::Invalid(format!(
                "unknown namespace: {namespace}"
            ))),
        }
    }
}
