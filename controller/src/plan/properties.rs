//! Property tests: for random pod sets and rollout strategies, the plan respects maxUnavailable
//! and partition, picks only waiting pods, and writes each pod at most once.

use super::budget;
use super::context::{PodView, SidecarSetContext};
use super::fixtures::*;
use super::select;
use proptest::prelude::*;
use serde_json::{Value, json};
use sidecarset_policy::annotations::{
    INPLACE_UPDATE_STATE, SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE,
};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy)]
enum PodState {
    Waiting,
    WaitingNotReady,
    WaitingPending,
    /// Updated and restarted on the new image.
    Updated,
    /// Updated, the kubelet has not restarted the sidecar yet.
    UpdatedInFlight,
    UpdatedNotReady,
    /// An earlier upgrade still in flight, towards an older hash.
    OlderInFlight,
    NotUpgradable,
}

fn pod_state() -> impl Strategy<Value = PodState> {
    prop_oneof![
        4 => Just(PodState::Waiting),
        1 => Just(PodState::WaitingNotReady),
        1 => Just(PodState::WaitingPending),
        2 => Just(PodState::Updated),
        1 => Just(PodState::UpdatedInFlight),
        1 => Just(PodState::UpdatedNotReady),
        1 => Just(PodState::OlderInFlight),
        1 => Just(PodState::NotUpgradable),
    ]
}

fn mark_updated(pod: &mut Value, hash: &str) {
    pod["spec"]["containers"][1]["image"] = json!("test-image:v2");
    let annotations = &mut pod["metadata"]["annotations"];
    annotations[SIDECARSET_HASH] = json!(format!(r#"{{"{SIDECARSET}":{{"hash":"{hash}"}}}}"#));
    annotations[INPLACE_UPDATE_STATE] = json!(format!(
        r#"{{"{SIDECARSET}":{{"revision":"{hash}","updateTimestamp":"{NOW}","lastContainerStatuses":{{"test-sidecar":{{"imageID":"{}"}}}}}}}}"#,
        image_id("test-image:v1")
    ));
}

fn build_pod(
    index: usize,
    state: PodState,
    canary: bool,
    zone: bool,
    sidecar_ready: bool,
) -> Value {
    let mut pod = pod(
        &format!("pod-{index}"),
        i64::try_from(index % 7).unwrap_or(0),
    );
    pod["metadata"]["labels"]["zone"] = json!(if zone { "a" } else { "b" });
    if canary {
        pod["metadata"]["labels"]["canary"] = json!("true");
    }
    pod["status"]["containerStatuses"][1]["ready"] = json!(sidecar_ready);
    let not_ready = |pod: &mut Value| pod["status"]["conditions"][0]["status"] = json!("False");
    match state {
        PodState::Waiting => {}
        PodState::WaitingNotReady => not_ready(&mut pod),
        PodState::WaitingPending => pod["status"]["phase"] = json!("Pending"),
        PodState::Updated => {
            mark_updated(&mut pod, "bbb");
            restart(&mut pod, "test-sidecar");
        }
        PodState::UpdatedInFlight => mark_updated(&mut pod, "bbb"),
        PodState::UpdatedNotReady => {
            mark_updated(&mut pod, "bbb");
            restart(&mut pod, "test-sidecar");
            not_ready(&mut pod);
        }
        PodState::OlderInFlight => mark_updated(&mut pod, "older"),
        PodState::NotUpgradable => {
            pod["metadata"]["annotations"][SIDECARSET_HASH_WITHOUT_IMAGE] =
                json!(format!(r#"{{"{SIDECARSET}":{{"hash":"without-zzz"}}}}"#));
        }
    }
    pod
}

fn int_or_percent(max_int: i64) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        1 => Just(None),
        2 => (0..=max_int).prop_map(|i| Some(json!(i))),
        2 => (0..=100i64).prop_map(|p| Some(json!(format!("{p}%")))),
    ]
}

#[derive(Debug, Clone)]
struct Rollout {
    partition: Option<Value>,
    max_unavailable: Option<Value>,
    canary_selector: bool,
    scatter: bool,
    weight_priority: bool,
}

fn rollout() -> impl Strategy<Value = Rollout> {
    (
        int_or_percent(45),
        int_or_percent(45),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(partition, max_unavailable, canary_selector, scatter, weight_priority)| Rollout {
                partition,
                max_unavailable,
                canary_selector,
                scatter,
                weight_priority,
            },
        )
}

fn configured(rollout: &Rollout) -> Value {
    let mut sidecarset = sidecarset();
    if let Some(partition) = &rollout.partition {
        strategy(&mut sidecarset, "partition", partition.clone());
    }
    if let Some(max_unavailable) = &rollout.max_unavailable {
        strategy(&mut sidecarset, "maxUnavailable", max_unavailable.clone());
    }
    if rollout.canary_selector {
        strategy(
            &mut sidecarset,
            "selector",
            json!({"matchLabels": {"canary": "true"}}),
        );
    }
    if rollout.scatter {
        strategy(
            &mut sidecarset,
            "scatterStrategy",
            json!([{"key": "zone", "value": "*"}]),
        );
    }
    if rollout.weight_priority {
        strategy(
            &mut sidecarset,
            "priorityStrategy",
            json!({"weightPriority": [{"weight": 10, "matchSelector": {"matchLabels": {"zone": "a"}}}]}),
        );
    }
    sidecarset
}

/// (updated, consistent-and-ready, sidecar-ready) of every pod, by name.
fn facts(context: &SidecarSetContext, pods: &[Value]) -> Vec<(String, bool, bool, bool)> {
    typed_pods(pods)
        .iter()
        .map(|pod| {
            let view = PodView::new(context, pod);
            (
                pod.name().to_string(),
                view.updated,
                view.is_ready(),
                view.sidecar_ready,
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn plans_respect_max_unavailable_and_partition(
        shape in prop::collection::vec((pod_state(), any::<bool>(), any::<bool>(), prop::bool::weighted(0.8)), 1..40),
        rollout in rollout(),
    ) {
        let pods: Vec<Value> = shape
            .iter()
            .enumerate()
            .map(|(i, &(state, canary, zone, ready))| build_pod(i, state, canary, zone, ready))
            .collect();
        let sidecarset_json = configured(&rollout);
        let sidecarset = typed(&sidecarset_json);
        let context = SidecarSetContext::new(&sidecarset);
        let plan = run(&sidecarset_json, &pods);

        // No pod twice.
        let names: BTreeSet<&str> = plan.pod_updates.iter().map(|u| u.name.as_str()).collect();
        prop_assert_eq!(names.len(), plan.pod_updates.len());

        // Only pods of the wait list (not updated, selected, upgradable, not in flight).
        let typed = typed_pods(&pods);
        let views: Vec<PodView> = typed.iter().map(|p| PodView::new(&context, p)).collect();
        let selection = select::filter(&views);
        let waiting: BTreeSet<&str> = selection
            .wait
            .iter()
            .map(|&i| typed[i].name())
            .collect();
        prop_assert!(names.is_subset(&waiting), "{names:?} not within {waiting:?}");

        // Partition: at least `partition` upgradable pods stay behind.
        let total = pods.len();
        let partition = budget::partition(sidecarset.spec.update_strategy.partition.as_ref(), total);
        prop_assert!(plan.pod_updates.len() <= waiting.len().saturating_sub(partition));

        // maxUnavailable, measured after applying the plan: updated pods that are not
        // consistent-and-ready, among pods that were sidecar-ready (others don't consume budget).
        let max_unavailable =
            budget::max_unavailable(sidecarset.spec.update_strategy.max_unavailable.as_ref(), total);
        let before = facts(&context, &pods);
        let mut after_pods = pods.clone();
        apply_all(&mut after_pods, &plan);
        let after = facts(&context, &after_pods);
        let unavailable = |state: &[(String, bool, bool, bool)]| {
            state
                .iter()
                .zip(&before)
                .filter(|((_, updated, ready, _), (_, _, _, was_sidecar_ready))| {
                    *updated && !*ready && *was_sidecar_ready
                })
                .count()
        };
        let (unavailable_before, unavailable_after) = (unavailable(&before), unavailable(&after));
        let allowed = usize::try_from(max_unavailable.max(0)).unwrap_or(0).max(unavailable_before);
        prop_assert!(
            unavailable_after <= allowed,
            "{unavailable_after} unavailable after the plan, {unavailable_before} before, maxUnavailable {max_unavailable}"
        );

        // The cache's list order does not matter.
        let mut reversed = pods.clone();
        reversed.reverse();
        let again = run(&sidecarset_json, &reversed);
        let order = |plan: &super::Plan| plan.pod_updates.iter().map(|u| u.name.clone()).collect::<Vec<_>>();
        prop_assert_eq!(order(&plan), order(&again));

        // Every write went to its pod, and the upgraded pods are updated now.
        for update in &plan.pod_updates {
            let after_state = after.iter().find(|(name, ..)| name == &update.name);
            prop_assert!(after_state.is_some_and(|(_, updated, ..)| *updated));
        }
    }
}
