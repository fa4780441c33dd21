//! What the planner derives once per SidecarSet and once per matched pod.

use super::edit::PatchPointers;
use super::pod;
use super::predicates::{self, Upgradability};
use super::select::ActiveKey;
use super::twin_states::TwinStates;
use crate::cached_pod::{CachedPod, UpdateStates};
use sidecarset_policy::annotations::{
    INPLACE_UPDATE_STATE, InPlaceUpdateContainerStatus, SIDECARSET_HASH,
    SIDECARSET_HASH_WITHOUT_IMAGE, WORKING_HOT_UPGRADE_CONTAINER, version_alt_key, version_key,
};
use sidecarset_policy::api::{SidecarSet, values};
use sidecarset_policy::hash::SidecarSetHashes;
use sidecarset_policy::hotupgrade::twin_names;
use sidecarset_policy::revision::current_hashes;
use sidecarset_policy::selector;
use std::collections::{BTreeMap, BTreeSet};

/// One HotUpgrade container of the SidecarSet.
pub(crate) struct HotSidecar<'a> {
    pub name: &'a str,
    pub empty_image: &'a str,
    pub twins: [String; 2],
    /// The version annotation keys of the twins, in `twins` order.
    pub version_keys: [String; 2],
    /// The version-alt annotation keys of the twins, in `twins` order.
    pub version_alt_keys: [String; 2],
}

impl HotSidecar<'_> {
    /// (version key, version-alt key) of `twin`, one of `twins`.
    pub fn version_keys_of(&self, twin: &str) -> (&str, &str) {
        let index = usize::from(twin != self.twins[0]);
        (&self.version_keys[index], &self.version_alt_keys[index])
    }
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
    /// Whether this round may upgrade (not NotUpdate, not paused): only then are the §5.7/§5.8
    /// facts of waiting pods gathered in the first pass.
    pub rolling: bool,
    /// The annotations an upgrade edit reads: hashes, update state, the twins' versions and the
    /// keys patchPodMetadata may keep or merge.
    pub upgrade_reads: Vec<String>,
    pub pointers: PatchPointers,
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
                    version_keys: twins.each_ref().map(|twin| version_key(twin)),
                    version_alt_keys: twins.each_ref().map(|twin| version_alt_key(twin)),
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
        let patched = sidecarset
            .spec
            .patch_pod_metadata
            .iter()
            .flat_map(|patch| patch.annotations.keys().cloned());
        let upgrade_reads: Vec<String> = [
            SIDECARSET_HASH,
            SIDECARSET_HASH_WITHOUT_IMAGE,
            INPLACE_UPDATE_STATE,
        ]
        .into_iter()
        .map(str::to_string)
        .chain(hot.iter().flat_map(|hot| hot.version_keys.iter().cloned()))
        .chain(patched)
        .collect();
        // Every key an edit may write: what an upgrade reads, the working map and the alt keys.
        let pointers = PatchPointers::new(
            upgrade_reads
                .iter()
                .chain(hot.iter().flat_map(|hot| &hot.version_alt_keys))
                .map(String::as_str)
                .chain([WORKING_HOT_UPGRADE_CONTAINER]),
        );
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
            rolling: {
                let strategy = &sidecarset.spec.update_strategy;
                strategy.type_ != values::NOT_UPDATE && !strategy.paused
            },
            upgrade_reads,
            pointers,
        }
    }

    /// §5.3: the view of `pod` when it is active, injected by this SidecarSet and consistent
    /// with it; `None` otherwise.
    pub fn matched_view<'p>(&'p self, pod: &'p CachedPod) -> Option<PodView<'p>> {
        if !pod::is_active(pod) || !self.is_injected(pod) {
            return None;
        }
        self.is_consistent_with_sidecarset(pod)
            .then(|| PodView::new(self, pod))
    }

    /// The injected-list names this SidecarSet (a membership test; the format is policy's).
    fn is_injected(&self, pod: &CachedPod) -> bool {
        // The list's empty names never match: `self.name` is not empty.
        !self.name.is_empty() && pod::is_injected_by(pod, self.name)
    }

    /// Every container present; hot ones with a working-map entry and both twins.
    fn is_consistent_with_sidecarset(&self, pod: &CachedPod) -> bool {
        let mut hot = self.hot.iter();
        self.sidecarset.spec.containers.iter().all(|c| {
            if c.is_hot_upgrade() {
                // `hot` holds the hot containers in spec order, their twin names precomputed.
                hot.next().is_some_and(|hot| {
                    pod::working_container(pod, &c.name).is_some()
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

/// The working-container map of a pod (decoded when the pod was cached).
pub(crate) type WorkingMap = BTreeMap<String, String>;

/// `HotUpgradeState` of one hot sidecar in one pod, borrowing the SidecarSet's twin names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TwinState<'a> {
    pub working: &'a str,
    pub idle: &'a str,
    /// The idle twin's spec image (`""` without one), `None` without the container: looked up
    /// once per pod for the readiness and hot-upgrading checks.
    pub idle_image: Option<&'a str>,
}

impl TwinState<'_> {
    /// Filler of unused inline slots, never read.
    pub const NONE: TwinState<'static> = TwinState {
        working: "",
        idle: "",
        idle_image: None,
    };
}

/// `HotUpgradeState::of`, from the twin names computed once per SidecarSet.
fn hot_state<'a>(hot: &'a HotSidecar, pod: &'a CachedPod) -> TwinState<'a> {
    let [first, second] = &hot.twins;
    let (working, idle) = if pod::working_container(pod, hot.name) == Some(first.as_str()) {
        (first, second)
    } else {
        (second, first)
    };
    let idle_image =
        pod::container_position(pod, idle).map(|position| pod::image_at(pod, position));
    TwinState {
        working,
        idle,
        idle_image,
    }
}

/// This SidecarSet's `lastContainerStatuses` as recorded before its last in-place update.
pub(crate) enum RecordedStatuses<'p> {
    /// No inplace-update-state annotation: the pod was only ever injected.
    NoAnnotation,
    Unparsable,
    Recorded(&'p BTreeMap<String, InPlaceUpdateContainerStatus>),
}

/// What a state without an entry for the SidecarSet records.
static NO_STATUSES: BTreeMap<String, InPlaceUpdateContainerStatus> = BTreeMap::new();

/// A matched pod with its annotations parsed once and every fact the later phases read computed
/// in the first pass, while the pod is in cache: the phases after it read only these records
/// (and the pods they write).
pub(crate) struct PodView<'p> {
    pub pod: &'p CachedPod,
    pub working: &'p WorkingMap,
    pub recorded: RecordedStatuses<'p>,
    /// Working/idle twin of each hot sidecar, in `SidecarSetContext::hot` order.
    pub hot_states: TwinStates<'p>,
    pub updated: bool,
    /// State-consistent on all sidecar container names.
    pub consistent: bool,
    pub sidecar_ready: bool,
    /// §5.10 "in hot upgrading": some hot sidecar's idle twin is off the empty image.
    pub in_hot_upgrading: bool,
    /// The §5.8.1 filter's inputs, for a not-updated pod of a rolling SidecarSet.
    pub waiting: Option<Waiting<'p>>,
}

/// What §5.8.1–§5.8.2 read of a not-updated pod.
pub(crate) struct Waiting<'p> {
    /// Selected by `updateStrategy.selector` (true without one; an invalid one selects nothing).
    pub canary_selected: bool,
    pub upgradability: Upgradability,
    pub active_key: ActiveKey<'p>,
}

impl<'p> PodView<'p> {
    /// The view of `pod`, without the matching checks (tests build views of arbitrary pods).
    pub fn new(context: &'p SidecarSetContext, pod: &'p CachedPod) -> Self {
        let working = &pod.facts.working;
        let recorded = match &pod.facts.update_states {
            UpdateStates::Absent => RecordedStatuses::NoAnnotation,
            UpdateStates::Unparsable => RecordedStatuses::Unparsable,
            UpdateStates::Parsed(states) => RecordedStatuses::Recorded(
                states
                    .get(context.name)
                    .map_or(&NO_STATUSES, |state| &state.last_container_statuses),
            ),
        };
        let hot_states = context.hot.iter().map(|hot| hot_state(hot, pod)).collect();
        let mut view = PodView {
            pod,
            working,
            recorded,
            hot_states,
            updated: false,
            consistent: false,
            sidecar_ready: false,
            in_hot_upgrading: false,
            waiting: None,
        };
        view.updated = pod.facts.hash_of(context.name) == context.hashes.hash;
        view.consistent = predicates::is_state_consistent(&view, &context.sidecar_names);
        view.sidecar_ready = predicates::is_sidecar_ready(context, &view);
        view.in_hot_upgrading = context
            .hot
            .iter()
            .zip(&view.hot_states)
            .any(|(hot, state)| state.idle_image.unwrap_or("") != hot.empty_image);
        if context.rolling && !view.updated {
            let canary = context.sidecarset.spec.update_strategy.selector.as_ref();
            view.waiting = Some(Waiting {
                canary_selected: canary.is_none_or(|canary| {
                    selector::matches(canary, pod::labels(pod)).unwrap_or(false)
                }),
                upgradability: predicates::upgradability(context, &view),
                active_key: ActiveKey::of(pod),
            });
        }
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
