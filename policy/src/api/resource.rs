//! k8s-openapi resource traits, so kube-rs clients (`Api<SidecarSet>`) work with the type.

use super::{ObjectMeta, SidecarSet};

impl k8s_openapi::Resource for SidecarSet {
    const API_VERSION: &'static str = "apps.kruise.io/v1alpha1";
    const GROUP: &'static str = "apps.kruise.io";
    const KIND: &'static str = "SidecarSet";
    const VERSION: &'static str = "v1alpha1";
    const URL_PATH_SEGMENT: &'static str = "sidecarsets";
    type Scope = k8s_openapi::ClusterResourceScope;
}

impl k8s_openapi::ListableResource for SidecarSet {
    const LIST_KIND: &'static str = "SidecarSetList";
}

impl k8s_openapi::Metadata for SidecarSet {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}
