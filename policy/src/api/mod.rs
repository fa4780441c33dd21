//! SidecarSet API types, field-for-field compatible with `apps.kruise.io/v1alpha1`.
//!
//! Unknown fields are ignored and JSON `null` reads as the zero value, as Go's decoder does.
//! Core/v1 container fields stay JSON (`SidecarContainer::container`), so fields from newer
//! Kubernetes versions survive injection untouched.

mod container;
pub mod crd;
mod head;
pub(crate) mod nullable;
mod resource;
mod spec;

pub use container::{
    EXTENSION_KEYS, ObjectFieldSelector, ShareVolumePolicy, SidecarContainer,
    SidecarContainerUpgradeStrategy, SourceContainerNameSource, TransferEnvVar, json_list,
};
pub use head::{HeadInjectionStrategy, HeadMetadata, HeadSpec, SidecarSetHead};
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};
pub use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
pub use spec::{
    LocalObjectReference, OrderPriority, PatchPodMetadata, ScatterTerm, SidecarSet,
    SidecarSetInjectRevision, SidecarSetInjectionStrategy, SidecarSetSpec, SidecarSetStatus,
    SidecarSetUpdateStrategy, UpdatePriorityStrategy, WeightPriority, namespace_selector_of,
};

/// Container-level constants of the API (enum values).
pub mod values {
    pub const BEFORE_APP_CONTAINER: &str = "BeforeAppContainer";
    pub const AFTER_APP_CONTAINER: &str = "AfterAppContainer";
    pub const COLD_UPGRADE: &str = "ColdUpgrade";
    pub const HOT_UPGRADE: &str = "HotUpgrade";
    pub const SHARE_ENABLED: &str = "enabled";
    pub const SHARE_DISABLED: &str = "disabled";
    pub const ROLLING_UPDATE: &str = "RollingUpdate";
    pub const NOT_UPDATE: &str = "NotUpdate";
    pub const RETAIN: &str = "Retain";
    pub const OVERWRITE: &str = "Overwrite";
    pub const MERGE_PATCH_JSON: &str = "MergePatchJson";
    pub const RESTART_POLICY_ALWAYS: &str = "Always";
    pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";
}
