//! What every plan reads of a pod that no SidecarSet changes: decoded annotations and condition
//! and status summaries, computed once per pod version.

use super::names::{
    CONTAINER_READY, DIGEST_IMAGE, NameTable, NameTableBuilder, RUNS_SPEC_IMAGE, Section,
};
use super::{CachedPod, READY};
use k8s_openapi::jiff::Timestamp;
use sidecarset_policy::annotations::{
    self, HashAnnotation, INJECTED_LIST, INPLACE_UPDATE_STATE, InPlaceUpdateStates,
    SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE, WORKING_HOT_UPGRADE_CONTAINER,
};
use sidecarset_policy::api::values;
use std::collections::{BTreeMap, BTreeSet};

const CONDITION_TRUE: &str = "True";
const PHASE_RUNNING: &str = "Running";

/// Derived from a [`CachedPod`]'s own fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PodFacts {
    /// podutil.IsPodReady: the first `Ready` condition is `True`.
    pub ready: bool,
    /// Its lastTransitionTime when ready; `None` is Go's zero time.
    pub ready_since: Option<Timestamp>,
    /// §5.3 "active": not Succeeded/Failed and not being deleted.
    pub active: bool,
    /// util.IsRunningAndReady: Running, Ready and not being deleted.
    pub running_and_ready: bool,
    /// ActivePods: no node yet.
    pub unassigned: bool,
    /// ActivePods: Pending/other 0, Unknown 1, Running 2.
    pub phase_rank: u8,
    /// (max regular container restarts, max native-sidecar init container restarts).
    pub restarts: (i32, i32),
    /// `annotations::parse_injected_list` of the injected-list annotation.
    pub injected: BTreeSet<String>,
    /// `annotations::parse_working_map` of the working-container annotation.
    pub working: BTreeMap<String, String>,
    pub update_states: UpdateStates,
    /// The hash annotation decodes in the struct form (not legacy, garbage or absent).
    pub hash_struct_form: bool,
    /// Container and status names, the injected names, both hash annotations as SidecarSet
    /// name → hash (`pod_hash_of` of every name; absent = ""), the working map, the labels, the
    /// container images, namespace and name, packed.
    pub names: NameTable,
}

/// The inplace-update-state annotation, decoded.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum UpdateStates {
    /// The pod was only ever injected.
    #[default]
    Absent,
    Unparsable,
    Parsed(InPlaceUpdateStates),
}

impl PodFacts {
    pub fn of(pod: &CachedPod) -> Self {
        let ready_condition = pod.conditions.iter().find(|c| c.type_ == READY);
        let ready = ready_condition.is_some_and(|c| c.status == CONDITION_TRUE);
        let phase = pod.phase.as_deref().unwrap_or("");
        let injected = annotations::parse_injected_list(pod.annotation(INJECTED_LIST));
        let working = annotations::parse_working_map(pod.annotation(WORKING_HOT_UPGRADE_CONTAINER));
        let (names, hash_struct_form) = name_table(pod, &injected, &working);
        PodFacts {
            ready,
            ready_since: ready_condition
                .filter(|_| ready)
                .and_then(|c| c.last_transition_time.as_ref())
                .map(|time| time.0),
            active: !matches!(phase, "Succeeded" | "Failed") && !pod.terminating,
            running_and_ready: phase == PHASE_RUNNING && ready && !pod.terminating,
            unassigned: pod.node_name.as_deref().is_none_or(str::is_empty),
            phase_rank: match phase {
                "Unknown" => 1,
                "Running" => 2,
                _ => 0,
            },
            restarts: max_restarts(pod),
            injected,
            working,
            update_states: match pod.annotation(INPLACE_UPDATE_STATE) {
                None => UpdateStates::Absent,
                Some(value) => annotations::parse_update_states(value)
                    .map_or(UpdateStates::Unparsable, UpdateStates::Parsed),
            },
            hash_struct_form,
            names,
        }
    }

    /// Whether the hash annotation is in the struct form and has no entry but `sidecarset`'s:
    /// refreshing that entry then replaces the whole annotation, with nothing to decode.
    pub fn hash_annotation_holds_only(&self, sidecarset: &str) -> bool {
        self.hash_struct_form
            && self
                .names
                .entries(Section::Hashes)
                .step_by(2)
                .all(|(name, _)| name == sidecarset)
    }

    /// `annotations::pod_hash_of` of the hash annotation for `sidecarset`.
    pub fn hash_of(&self, sidecarset: &str) -> &str {
        self.names.value(Section::Hashes, sidecarset).unwrap_or("")
    }

    /// `annotations::pod_hash_of` of the without-image hash annotation for `sidecarset`.
    pub fn hash_without_image_of(&self, sidecarset: &str) -> &str {
        self.names
            .value(Section::HashesWithoutImage, sidecarset)
            .unwrap_or("")
    }
}

/// The packed names, and whether the hash annotation decodes in the struct form.
fn name_table(
    pod: &CachedPod,
    injected: &BTreeSet<String>,
    working: &BTreeMap<String, String>,
) -> (NameTable, bool) {
    let mut hash_struct_form = false;
    let mut table = NameTableBuilder::default();
    for container in &pod.containers {
        let flags = (if container.digest_image {
            DIGEST_IMAGE
        } else {
            0
        }) | (if container.runs_spec_image {
            RUNS_SPEC_IMAGE
        } else {
            0
        });
        table.push_flagged(&container.name, flags);
    }
    table.end(Section::Containers);
    for status in &pod.container_statuses {
        table.push_flagged(&status.name, if status.ready { CONTAINER_READY } else { 0 });
    }
    table.end(Section::Statuses);
    injected.iter().for_each(|name| table.push(name));
    table.end(Section::Injected);
    for (key, section) in [
        (SIDECARSET_HASH, Section::Hashes),
        (SIDECARSET_HASH_WITHOUT_IMAGE, Section::HashesWithoutImage),
    ] {
        // Every entry's hash: the struct form, else the legacy form, else none (as `pod_hash_of`).
        let raw = pod.annotation(key);
        let entries = match raw.and_then(|v| serde_json::from_str::<HashAnnotation>(v).ok()) {
            Some(entries) => {
                hash_struct_form |= key == SIDECARSET_HASH;
                entries
            }
            None => annotations::parse_hash_annotation(key, raw).unwrap_or_default(),
        };
        for (name, spec) in entries {
            table.push(&name);
            table.push(&spec.hash);
        }
        table.end(section);
    }
    for (sidecar, container) in working {
        table.push(sidecar);
        table.push(container);
    }
    table.end(Section::Working);
    for (key, value) in &pod.labels {
        table.push(key);
        table.push(value);
    }
    table.end(Section::Labels);
    for container in &pod.containers {
        table.push(container.image.as_deref().unwrap_or(""));
    }
    table.end(Section::Images);
    table.push(pod.namespace());
    table.push(pod.name());
    table.end(Section::Identity);
    (table.build(), hash_struct_form)
}

fn max_restarts(pod: &CachedPod) -> (i32, i32) {
    let regular = pod
        .container_statuses
        .iter()
        .map(|s| s.restart_count)
        .max()
        .unwrap_or(0)
        .max(0);
    let native: Vec<&str> = pod
        .init_containers
        .iter()
        .filter(|c| c.restart_policy.as_deref() == Some(values::RESTART_POLICY_ALWAYS))
        .map(|c| c.name.as_str())
        .collect();
    let sidecar = pod
        .init_container_statuses
        .iter()
        .filter(|s| native.contains(&s.name.as_str()))
        .map(|s| s.restart_count)
        .max()
        .unwrap_or(0)
        .max(0);
    (regular, sidecar)
}
