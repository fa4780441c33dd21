//! The pure planning core of the controller (§5.2–§5.11): from one SidecarSet and a snapshot
//! of its pods, compute the status and every pod write of this round. No I/O, no clock, no
//! randomness: the async shell lists, applies and records; `now` is an input.

mod budget;
mod condition;
mod context;
mod edit;
mod hotupgrade;
mod json;
mod pod;
mod predicates;
mod select;
mod status;
mod twin_states;
mod upgrade;

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;

use crate::cached_pod::CachedPod;
use sidecarset_policy::api::{SidecarSet, SidecarSetStatus, values};
use sidecarset_policy::inject::PatchMetadataError;
use std::borrow::Borrow;

pub use budget::{max_unavailable, partition};
pub use condition::{CONDITION_REASON_ALL_UPGRADABLE, CONDITION_REASON_NOT_UPGRADABLE};

use context::{PodView, SidecarSetContext};

/// Everything one planning round reads.
pub struct Snapshot<'a, P = CachedPod> {
    pub sidecarset: &'a SidecarSet,
    /// Pods selected by spec.selector in the namespaces the namespaceSelector allows (from caches;
    /// `CachedPod`s or the cache's `Arc<CachedPod>`s, so the shell need not copy them).
    pub pods: &'a [P],
    /// RFC 3339 UTC seconds, written into annotations and conditions.
    pub now: &'a str,
}

/// What the shell does this round for one SidecarSet.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// §5.5 (observedGeneration = metadata.generation; latestRevision/collisionCount left None).
    pub status: SidecarSetStatus,
    /// Whether it differs from sidecarset.status per §5.5's rule (generation increased or a count
    /// differs; latestRevision and collisionCount belong to the shell and are not compared).
    pub status_changed: bool,
    /// At most one per pod, in the order to apply.
    pub pod_updates: Vec<PodUpdate>,
    /// §5.11 pod status patches (only when something changes): first the not-upgradable pods,
    /// then the pods of `pod_updates` (apply each of those only after its pod update succeeded).
    pub conditions: Vec<ConditionUpdate>,
    /// Count for the NotUpgradablePods event (0 = no event).
    pub not_upgradable: usize,
    /// Pods the plan had to leave alone because their data is unusable (report as warnings).
    pub skipped: Vec<SkippedPod>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateKind {
    /// §5.9: new sidecar images plus hash, inplace-update-state and patchPodMetadata annotations.
    Upgrade,
    /// §5.10: the idle hot-upgrade twin goes back to the empty image.
    HotUpgradeReset,
}

/// One write to one pod.
#[derive(Debug, Clone, PartialEq)]
pub struct PodUpdate {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub kind: UpdateKind,
    /// RFC 6902 patch starting with `test /metadata/resourceVersion` (the optimistic-concurrency
    /// precondition), then the image replaces and annotation adds/replaces: ONE write per pod.
    pub patch: json_patch::Patch,
    pub changed_containers: Vec<String>,
}

/// A `SidecarSetUpgradable` condition to strategic-merge into the pod's status subresource.
#[derive(Debug, Clone, PartialEq)]
pub struct ConditionUpdate {
    pub namespace: String,
    pub name: String,
    /// A full PodCondition.
    pub condition: serde_json::Value,
}

/// A pod the plan did not touch, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct SkippedPod {
    pub namespace: String,
    pub name: String,
    pub error: PlanError,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("pod has no metadata.resourceVersion to guard the update with")]
    MissingResourceVersion,
    #[error("pod has no container {0}")]
    MissingContainer(String),
    #[error(transparent)]
    PatchMetadata(#[from] PatchMetadataError),
    #[error("condition SidecarSetUpgradable has a message that is not a JSON map of booleans: {0}")]
    ConditionMessage(String),
}

/// §5.2 steps 3, 5 and 7–11 for one SidecarSet.
pub fn plan<P: Borrow<CachedPod>>(snapshot: &Snapshot<'_, P>) -> Plan {
    let context = SidecarSetContext::new(snapshot.sidecarset);
    let mut sort_inputs = select::SortInputs::new(&snapshot.sidecarset.spec.update_strategy);
    let matched: Vec<PodView> = snapshot
        .pods
        .iter()
        .filter_map(|pod| context.matched_view(pod.borrow()))
        .inspect(|view| sort_inputs.push(view))
        .collect();
    let status = status::compute(snapshot.sidecarset, &matched);
    let status_changed = status::changed(snapshot.sidecarset.status.as_ref(), &status);
    let mut plan = Plan {
        status,
        status_changed,
        pod_updates: Vec::new(),
        conditions: Vec::new(),
        not_upgradable: 0,
        skipped: Vec::new(),
    };
    let strategy = &snapshot.sidecarset.spec.update_strategy;
    if strategy.type_ == values::NOT_UPDATE || strategy.paused {
        return plan;
    }
    if !context.hot.is_empty() {
        hotupgrade::plan_resets(&context, &matched, snapshot.now, &mut plan);
        if !plan.pod_updates.is_empty() {
            return plan;
        }
    }
    if plan.status.updated_pods >= plan.status.matched_pods {
        return plan;
    }
    upgrade::plan_rollout(&context, &matched, &sort_inputs, snapshot.now, &mut plan);
    plan
}

impl Plan {
    fn skip(&mut self, pod: &CachedPod, error: PlanError) {
        self.skipped.push(SkippedPod {
            namespace: pod::namespace(pod).to_string(),
            name: pod::name(pod).to_string(),
            error,
        });
    }
}
