//! A pod as the controller caches it: only the fields it reads (an allow-list, so fields a newer
//! API adds are dropped too), in compact types, plus the facts every plan reads, derived once when
//! the pod enters the cache instead of once per plan. A k8s-openapi `Pod` keeps the full inline
//! size of every `Container` and `ContainerStatus` even with their fields dropped (~15 KB a pod).
//!
//! Readers, all in this crate: the planner (`plan/pod.rs` accessors: name, namespace, uid,
//! resourceVersion, labels, annotations, creation and deletion timestamps; containers and init
//! containers by name with image and restartPolicy, nodeName; phase, the Ready and
//! SidecarSetUpgradable conditions — only ever looked up by type; the patch copies the latter in
//! full —, container and init container statuses' name, image, imageID, ready, restartCount), the
//! patch builder (container positions: every container is kept, in order), the pod event handler
//! (`watches.rs`: the same fields), selection (namespace, labels) and the expectations (uid,
//! resourceVersion).

mod facts;
mod image;
mod names;

use std::borrow::Cow;

use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod, PodCondition};
use k8s_openapi::jiff::Timestamp;
use kube::runtime::reflector::Lookup;
use sidecarset_policy::annotations::UPGRADABLE_CONDITION;
use sidecarset_policy::selector::Labels;

pub(crate) use facts::{PodFacts, UpdateStates};
pub(crate) use names::{CONTAINER_READY, DIGEST_IMAGE, RUNS_SPEC_IMAGE, Section};

const READY: &str = "Ready";

/// What the controller keeps of a pod. Built only from a `Pod` ([`CachedPod::from`]): the facts
/// derive from the other fields, so nothing changes them afterwards.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CachedPod {
    pub(crate) name: Option<String>,
    pub(crate) namespace: Option<String>,
    pub(crate) uid: Option<String>,
    pub(crate) resource_version: Option<String>,
    pub(crate) labels: Labels,
    /// `None` and empty differ for the patch (one `add` of the whole map).
    pub(crate) annotations: Option<Labels>,
    pub(crate) creation_timestamp: Option<Timestamp>,
    /// A deletionTimestamp is set.
    pub(crate) terminating: bool,
    /// Every container, in order (the patch addresses them by position).
    pub(crate) containers: Vec<CachedContainer>,
    pub(crate) init_containers: Vec<CachedContainer>,
    pub(crate) node_name: Option<String>,
    pub(crate) phase: Option<String>,
    /// The Ready and SidecarSetUpgradable conditions, in order (only ever looked up by type).
    pub(crate) conditions: Vec<PodCondition>,
    pub(crate) container_statuses: Vec<CachedContainerStatus>,
    pub(crate) init_container_statuses: Vec<CachedContainerStatus>,
    pub(crate) facts: PodFacts,
}

/// A spec container: what the planner and the patch read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CachedContainer {
    pub(crate) name: String,
    /// `None` and `""` differ for the patch (`add` instead of `replace`).
    pub(crate) image: Option<String>,
    pub(crate) restart_policy: Option<String>,
    /// The spec image is a digest reference (util.IsImageDigest).
    pub(crate) digest_image: bool,
    /// A status of this name exists and its imageID is the spec image (§5.6, digest images).
    pub(crate) runs_spec_image: bool,
}

/// A container status: what the planner and the event handler read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CachedContainerStatus {
    pub(crate) name: String,
    pub(crate) image: String,
    pub(crate) image_id: String,
    pub(crate) ready: bool,
    pub(crate) restart_count: i32,
}

impl From<Pod> for CachedPod {
    fn from(pod: Pod) -> Self {
        let metadata = pod.metadata;
        let spec = pod.spec.unwrap_or_default();
        let status = pod.status.unwrap_or_default();
        let (containers, container_statuses) =
            cached_containers(spec.containers, status.container_statuses);
        let (init_containers, init_container_statuses) = cached_containers(
            spec.init_containers.unwrap_or_default(),
            status.init_container_statuses,
        );
        let mut cached = CachedPod {
            name: metadata.name,
            namespace: metadata.namespace,
            uid: metadata.uid,
            resource_version: metadata.resource_version,
            labels: metadata.labels.unwrap_or_default(),
            annotations: metadata.annotations,
            creation_timestamp: metadata.creation_timestamp.map(|time| time.0),
            terminating: metadata.deletion_timestamp.is_some(),
            containers,
            init_containers,
            node_name: spec.node_name,
            phase: status.phase,
            conditions: status
                .conditions
                .unwrap_or_default()
                .into_iter()
                .filter(|c| c.type_ == READY || c.type_ == UPGRADABLE_CONDITION)
                .collect(),
            container_statuses,
            init_container_statuses,
            facts: PodFacts::default(),
        };
        cached.facts = PodFacts::of(&cached);
        cached.shrink();
        cached
    }
}

/// Containers with the facts read from their statuses, and those statuses.
fn cached_containers(
    containers: Vec<Container>,
    statuses: Option<Vec<ContainerStatus>>,
) -> (Vec<CachedContainer>, Vec<CachedContainerStatus>) {
    let statuses: Vec<CachedContainerStatus> = statuses
        .unwrap_or_default()
        .into_iter()
        .map(CachedContainerStatus::from)
        .collect();
    let containers = containers
        .into_iter()
        .map(|c| CachedContainer::new(c, &statuses))
        .collect();
    (containers, statuses)
}

impl CachedPod {
    /// Drops spare capacity left by decoding: the cache holds every pod for its lifetime.
    fn shrink(&mut self) {
        self.containers.shrink_to_fit();
        self.init_containers.shrink_to_fit();
        self.conditions.shrink_to_fit();
        self.container_statuses.shrink_to_fit();
        self.init_container_statuses.shrink_to_fit();
    }

    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }

    pub fn uid(&self) -> &str {
        self.uid.as_deref().unwrap_or("")
    }

    pub fn resource_version(&self) -> &str {
        self.resource_version.as_deref().unwrap_or("")
    }

    pub fn labels(&self) -> &Labels {
        &self.labels
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .map(String::as_str)
    }
}

impl CachedContainer {
    fn new(container: Container, statuses: &[CachedContainerStatus]) -> Self {
        let spec_image = container.image.as_deref().unwrap_or("");
        let status = statuses.iter().find(|s| s.name == container.name);
        let digest_image = image::is_digest_image(spec_image);
        let runs_spec_image = status.is_some_and(|s| {
            image::images_equal(spec_image, image::strip_image_id_scheme(&s.image_id))
        });
        CachedContainer {
            name: container.name,
            image: container.image,
            restart_policy: container.restart_policy,
            digest_image,
            runs_spec_image,
        }
    }
}

impl From<ContainerStatus> for CachedContainerStatus {
    fn from(status: ContainerStatus) -> Self {
        CachedContainerStatus {
            name: status.name,
            image: status.image,
            image_id: status.image_id,
            ready: status.ready,
            restart_count: status.restart_count,
        }
    }
}

/// The reflector's key and the expectations' identity, as for a `Pod`.
impl Lookup for CachedPod {
    type DynamicType = ();

    fn kind(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("Pod")
    }

    fn group(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn version(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("v1")
    }

    fn plural(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("pods")
    }

    fn name(&self) -> Option<Cow<'_, str>> {
        self.name.as_deref().map(Cow::Borrowed)
    }

    fn namespace(&self) -> Option<Cow<'_, str>> {
        self.namespace.as_deref().map(Cow::Borrowed)
    }

    fn resource_version(&self) -> Option<Cow<'_, str>> {
        self.resource_version.as_deref().map(Cow::Borrowed)
    }

    fn uid(&self) -> Option<Cow<'_, str>> {
        self.uid.as_deref().map(Cow::Borrowed)
    }
}

#[cfg(test)]
mod tests;
