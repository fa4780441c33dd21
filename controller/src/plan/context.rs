//! What the planner derives once per SidecarSet and once per matched pod.

use super::pod;
use super::predicates;
use k8s_openapi::api::core::v1::Pod;
use sidecarset_policy::annotations::{self, InPlaceUpdateContainerStatus, InPlaceUpdateStates};
use sidecarset_policy::api::SidecarSet;
use sidecarset_policy::hash::SidecarSetHashes;
use sidecarset_policy::hotupgrade::{HotUpgradeState, twin_names};
use sidecarset_policy::revision::current_hashes;
use std::collections::{BTreeMap, BTreeSet};

/// One HotUpgrade container of the SidecarSet.
pub(crate) struct HotSidecar<'a> {
    pub name: &'a str,
    pub empty_image: &'a str,
    pub twins: [String; 2],
}

pub(crate) struct SidecarSetContext<'a> {
    pub sidecarset: &'a SidecarSet,
    pub name: &'a str,
    pub hashes: SidecarSetHashes,
    /// §5.6 sidecar container names: each container, or both twins of a hot one.
    pub sidecar_names: Vec<String>,
    pub hot: Vec<HotSidecar<'a>>,
    /// The `sidecarList` of the refreshed hash entry: native init sidecars ∪ containers, sorted.
    pub sidecar_list: Vec<String>,
    pub resource_version: &'a str,
    pub latest_revision: &'a str,
}

impl<'a> SidecarSetContext<'a> {
    pub fn new(sidecarset: &'a SidecarSet) -> Self {
        let mut sidecar_names = Vec::new();
        let mut hot = Vec::new();
        for container in &sidecarset.spec.containers {
            if container.is_hot_upgrade() {
                let twins = twin_names(&container.name);
                sidecar_names.extend(twins.iter().cloned());
                hot.push(HotSidecar {
                    name: &container.name,
                    empty_image: &container.upgrade_strategy.hot_upgrade_empty_image,
                    twins,
                });
            } else {
                sidecar_names.push(container.name.clone());
            }
        }
        let sidecar_list: BTreeSet<String> = sidecarset
            .spec
            .init_containers
            .iter()
            .filter(|c| c.is_native_sidecar())
            .chain(&sidecarset.spec.containers)
            .map(|c| c.name.clone())
            .collect();
        SidecarSetContext {
            sidecarset,
            name: sidecarset.name(),
            hashes: current_hashes(sidecarset),
            sidecar_names,
            hot,
            sidecar_list: sidecar_list.into_iter().collect(),
            resource_version: sidecarset
                .metadata
                .resource_version
                .as_deref()
                .unwrap_or(""),
            latest_revision: sidecarset
                .status
                .as_ref()
                .and_then(|s| s.latest_revision.as_deref())
                .unwrap_or(""),
        }
    }

    /// §5.3: the view of `pod` when it is active, injected by this SidecarSet and consistent
    /// with it; `None` otherwise.
    pub fn matched_view<'p>(&self, pod: &'p Pod) -> Option<PodView<'p>> {
        if !pod::is_active(pod) || !self.is_injected(pod) {
            return None;
        }
        let working = working_map(self, pod);
        self.is_consistent_with_sidecarset(pod, &working)
            .then(|| PodView::with_working_map(self, pod, working))
    }

    /// The injected-list names this SidecarSet (a membership test; the format is policy's).
    fn is_injected(&self, pod: &Pod) -> bool {
        !self.name.is_empty()
            && pod::annotation(pod, annotations::INJECTED_LIST)
                .is_some_and(|list| list.split(',').any(|name| name == self.name))
    }

    /// Every container present; hot ones with a working-map entry and both twins.
    fn is_consistent_with_sidecarset(&self, pod: &Pod, working: &BTreeMap<String, String>) -> bool {
        let mut hot = self.hot.iter();
        self.sidecarset.spec.containers.iter().all(|c| {
            if c.is_hot_upgrade() {
                // `hot` holds the hot containers in spec order, their twin names precomputed.
                hot.next().is_some_and(|hot| {
                    working.contains_key(&c.name)
                        && hot
                            .twins
                            .iter()
                            .all(|twin| pod::container(pod, twin).is_some())
                })
            } else {
                pod::container(pod, &c.name).is_some()
            }
        })
    }
}

/// Only hot sidecars read the working map, so other SidecarSets skip decoding it.
fn working_map(context: &SidecarSetContext, pod: &Pod) -> BTreeMap<String, String> {
    if context.hot.is_empty() {
        return BTreeMap::new();
    }
    annotations::parse_working_map(pod::annotation(
        pod,
        annotations::WORKING_HOT_UPGRADE_CONTAINER,
    ))
}

/// `HotUpgradeState::of`, from the twin names computed once per SidecarSet.
fn hot_state(hot: &HotSidecar, working: &BTreeMap<String, String>) -> HotUpgradeState {
    let [first, second] = &hot.twins;
    let (working, idle) = if working.get(hot.name) == Some(first) {
        (first, second)
    } else {
        (second, first)
    };
    HotUpgradeState {
        working: working.clone(),
        idle: idle.clone(),
    }
}

/// This SidecarSet's `lastContainerStatuses` as recorded before its last in-place update.
pub(crate) enum RecordedStatuses {
    /// No inplace-update-state annotation: the pod was only ever injected.
    NoAnnotation,
    Unparsable,
    Recorded(BTreeMap<String, InPlaceUpdateContainerStatus>),
}

/// A matched pod with its annotations parsed once and the §5.5/§5.6 facts computed once.
pub(crate) struct PodView<'p> {
    pub pod: &'p Pod,
    pub working: BTreeMap<String, String>,
    pub recorded: RecordedStatuses,
    /// Working/idle twin of each hot sidecar, in `SidecarSetContext::hot` order.
    pub hot_states: Vec<HotUpgradeState>,
    pub updated: bool,
    /// State-consistent on all sidecar container names.
    pub consistent: bool,
    pub sidecar_ready: bool,
}

impl<'p> PodView<'p> {
    /// A view without the matching checks (tests build views of arbitrary pods).
    #[cfg(test)]
    pub fn new(context: &SidecarSetContext, pod: &'p Pod) -> Self {
        Self::with_working_map(context, pod, working_map(context, pod))
    }

    fn with_working_map(
        context: &SidecarSetContext,
        pod: &'p Pod,
        working: BTreeMap<String, String>,
    ) -> Self {
        let recorded = match pod::annotation(pod, annotations::INPLACE_UPDATE_STATE) {
            None => RecordedStatuses::NoAnnotation,
            Some(value) => match serde_json::from_str::<InPlaceUpdateStates>(value) {
                Ok(mut states) => RecordedStatuses::Recorded(
                    states
                        .remove(context.name)
                        .map(|state| state.last_container_statuses)
                        .unwrap_or_default(),
                ),
                Err(_) => RecordedStatuses::Unparsable,
            },
        };
        let hot_states = context
            .hot
            .iter()
            .map(|hot| hot_state(hot, &working))
            .collect();
        let mut view = PodView {
            pod,
            working,
            recorded,
            hot_states,
            updated: false,
            consistent: false,
            sidecar_ready: false,
        };
        view.updated = predicates::is_updated(context, pod);
        view.consistent = predicates::is_state_consistent(&view, &context.sidecar_names);
        view.sidecar_ready = predicates::is_sidecar_ready(context, &view);
        view
    }

    /// Consistent and sidecar-ready: what `readyPods` counts.
    pub fn is_ready(&self) -> bool {
        self.consistent && self.sidecar_ready
    }

    /// Updated but not (consistent and ready): what maxUnavailable counts.
    pub fn is_updated_unavailable(&self) -> bool {
        self.updated && !self.is_ready()
    }
}
