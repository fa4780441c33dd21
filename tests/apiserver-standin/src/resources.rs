//! The resources the stand-in serves and how each behaves (the "strategy" of each type).

/// How a stored object is shown through one API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Stored as served.
    Native,
    /// events.k8s.io/v1 view of core/v1 events (the API server stores both in one place).
    EventsV1,
}

/// One served resource (group, version, plural) and its rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDef {
    /// API group, `""` for core.
    pub group: &'static str,
    /// API version, e.g. `v1`.
    pub version: &'static str,
    /// Plural resource name, e.g. `pods`.
    pub plural: &'static str,
    /// Singular name, e.g. `pod`.
    pub singular: &'static str,
    /// Kind, e.g. `Pod`.
    pub kind: &'static str,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// kubectl short names.
    pub short_names: &'static [&'static str],
    /// kubectl categories (e.g. `all`).
    pub categories: &'static [&'static str],
    /// Has a `/status` subresource (status only written there, spec never there).
    pub status_subresource: bool,
    /// Has a `/scale` subresource (autoscaling/v1 Scale over `spec.replicas`).
    pub scale_subresource: bool,
    /// `metadata.generation` is maintained and bumped on spec changes (custom resources).
    pub tracks_generation: bool,
    /// A PUT of a missing object creates it (leases, events).
    pub allow_create_on_update: bool,
    /// A PUT without `metadata.resourceVersion` is accepted (false for custom resources).
    pub allow_unconditional_update: bool,
    /// DELETE answers the deleted object (true) or a Success Status (false).
    pub return_deleted_object: bool,
    /// A custom resource: strategic merge patch is refused with 415.
    pub custom: bool,
    /// Storage key shared by all views of the same objects.
    pub storage: &'static str,
    /// How objects are converted for this API.
    pub view: View,
}

impl ResourceDef {
    /// `apiVersion` of objects of this resource.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The resource name qualified with its group, e.g. `sidecarsets.apps.kruise.io`.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

const BASE: ResourceDef = ResourceDef {
    group: "",
    version: "v1",
    plural: "",
    singular: "",
    kind: "",
    namespaced: true,
    short_names: &[],
    categories: &[],
    status_subresource: false,
    scale_subresource: false,
    tracks_generation: false,
    allow_create_on_update: false,
    allow_unconditional_update: true,
    return_deleted_object: false,
    custom: false,
    storage: "",
    view: View::Native,
};

/// Every resource the stand-in serves.
pub static RESOURCES: &[ResourceDef] = &[
    ResourceDef {
        plural: "namespaces",
        singular: "namespace",
        kind: "Namespace",
        namespaced: false,
        short_names: &["ns"],
        status_subresource: true,
        return_deleted_object: true,
        storage: "namespaces",
        ..BASE
    },
    ResourceDef {
        plural: "pods",
        singular: "pod",
        kind: "Pod",
        short_names: &["po"],
        categories: &["all"],
        status_subresource: true,
        return_deleted_object: true,
        storage: "pods",
        ..BASE
    },
    ResourceDef {
        plural: "events",
        singular: "event",
        kind: "Event",
        short_names: &["ev"],
        allow_create_on_update: true,
        storage: "events",
        ..BASE
    },
    ResourceDef {
        group: "events.k8s.io",
        plural: "events",
        singular: "event",
        kind: "Event",
        short_names: &["ev"],
        allow_create_on_update: true,
        storage: "events",
        view: View::EventsV1,
        ..BASE
    },
    ResourceDef {
        group: "coordination.k8s.io",
        plural: "leases",
        singular: "lease",
        kind: "Lease",
        allow_create_on_update: true,
        storage: "leases",
        ..BASE
    },
    ResourceDef {
        group: "apps",
        plural: "controllerrevisions",
        singular: "controllerrevision",
        kind: "ControllerRevision",
        storage: "controllerrevisions",
        ..BASE
    },
    ResourceDef {
        group: "apps.kruise.io",
        version: "v1alpha1",
        plural: "sidecarsets",
        singular: "sidecarset",
        kind: "SidecarSet",
        namespaced: false,
        status_subresource: true,
        tracks_generation: true,
        allow_unconditional_update: false,
        return_deleted_object: true,
        custom: true,
        storage: "sidecarsets",
        ..BASE
    },
    ResourceDef {
        group: "admissionregistration.k8s.io",
        plural: "mutatingwebhookconfigurations",
        singular: "mutatingwebhookconfiguration",
        kind: "MutatingWebhookConfiguration",
        namespaced: false,
        tracks_generation: true,
        storage: "mutatingwebhookconfigurations",
        ..BASE
    },
    ResourceDef {
        group: "admissionregistration.k8s.io",
        plural: "validatingwebhookconfigurations",
        singular: "validatingwebhookconfiguration",
        kind: "ValidatingWebhookConfiguration",
        namespaced: false,
        tracks_generation: true,
        storage: "validatingwebhookconfigurations",
        ..BASE
    },
    ResourceDef {
        plural: "configmaps",
        singular: "configmap",
        kind: "ConfigMap",
        short_names: &["cm"],
        storage: "configmaps",
        ..BASE
    },
    ResourceDef {
        plural: "secrets",
        singular: "secret",
        kind: "Secret",
        storage: "secrets",
        ..BASE
    },
    ResourceDef {
        plural: "serviceaccounts",
        singular: "serviceaccount",
        kind: "ServiceAccount",
        short_names: &["sa"],
        storage: "serviceaccounts",
        ..BASE
    },
    ResourceDef {
        plural: "services",
        singular: "service",
        kind: "Service",
        short_names: &["svc"],
        categories: &["all"],
        status_subresource: true,
        return_deleted_object: true,
        storage: "services",
        ..BASE
    },
    ResourceDef {
        group: "apps",
        plural: "deployments",
        singular: "deployment",
        kind: "Deployment",
        short_names: &["deploy"],
        categories: &["all"],
        status_subresource: true,
        scale_subresource: true,
        tracks_generation: true,
        storage: "deployments",
        ..BASE
    },
    ResourceDef {
        group: "policy",
        plural: "poddisruptionbudgets",
        singular: "poddisruptionbudget",
        kind: "PodDisruptionBudget",
        short_names: &["pdb"],
        status_subresource: true,
        tracks_generation: true,
        storage: "poddisruptionbudgets",
        ..BASE
    },
    ResourceDef {
        group: "rbac.authorization.k8s.io",
        plural: "clusterroles",
        singular: "clusterrole",
        kind: "ClusterRole",
        namespaced: false,
        storage: "clusterroles",
        ..BASE
    },
    ResourceDef {
        group: "rbac.authorization.k8s.io",
        plural: "clusterrolebindings",
        singular: "clusterrolebinding",
        kind: "ClusterRoleBinding",
        namespaced: false,
        storage: "clusterrolebindings",
        ..BASE
    },
    ResourceDef {
        group: "rbac.authorization.k8s.io",
        plural: "roles",
        singular: "role",
        kind: "Role",
        storage: "roles",
        ..BASE
    },
    ResourceDef {
        group: "rbac.authorization.k8s.io",
        plural: "rolebindings",
        singular: "rolebinding",
        kind: "RoleBinding",
        storage: "rolebindings",
        ..BASE
    },
    ResourceDef {
        group: "apiextensions.k8s.io",
        plural: "customresourcedefinitions",
        singular: "customresourcedefinition",
        kind: "CustomResourceDefinition",
        namespaced: false,
        short_names: &["crd", "crds"],
        status_subresource: true,
        tracks_generation: true,
        return_deleted_object: true,
        storage: "customresourcedefinitions",
        ..BASE
    },
];

/// Finds a resource by group, version and plural (or singular/short name, like kubectl would not; plural only here).
pub fn find(group: &str, version: &str, plural: &str) -> Option<&'static ResourceDef> {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

/// The canonical resource for a storage key (the first API serving it).
pub fn by_storage(storage: &str) -> Option<&'static ResourceDef> {
    RESOURCES.iter().find(|r| r.storage == storage)
}

/// The pods resource.
pub fn pods() -> &'static ResourceDef {
    &RESOURCES[1]
}

/// The namespaces resource.
pub fn namespaces() -> &'static ResourceDef {
    &RESOURCES[0]
}

/// The groups served under /apis, in discovery order, with their versions.
pub fn groups() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for r in RESOURCES.iter().filter(|r| !r.group.is_empty()) {
        match out.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, versions)) => {
                if !versions.contains(&r.version) {
                    versions.push(r.version);
                }
            }
            None => out.push((r.group, vec![r.version])),
        }
    }
    out
}
