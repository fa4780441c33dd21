//! Ports of the upstream controller tests (§6.3 cases 20–22, §6.4 cases 31–36, 39, 43–45, 48).

use super::context::{PodView, SidecarSetContext};
use super::fixtures::*;
use super::predicates::is_update_completed;
use super::upgrade::{refresh_hash_entry, refresh_hash_entry_of};
use super::{UpdateKind, select};
use json_patch::PatchOperation;
use serde_json::{Value, json};
use sidecarset_policy::annotations::{
    self, INPLACE_UPDATE_STATE, InPlaceUpdateStates, SIDECARSET_HASH,
    SIDECARSET_HASH_WITHOUT_IMAGE, WORKING_HOT_UPGRADE_CONTAINER,
};
use sidecarset_policy::api::ScatterTerm;
use sidecarset_policy::selector::Labels;

fn sidecar_image(pod: &Value) -> String {
    spec_image(pod, "test-sidecar")
}

// ---- §6.4 cases 31–35 -------------------------------------------------------------------

#[test]
fn case31_not_update_strategy_leaves_pods_alone() {
    let mut sidecarset = sidecarset();
    strategy(&mut sidecarset, "type", json!("NotUpdate"));
    let plan = run(&sidecarset, &[pod("test-pod-1", 0)]);
    assert!(plan.pod_updates.is_empty());
    assert_eq!(counts(&plan), [1, 0, 1, 0], "status is still computed");
}

#[test]
fn case32_paused_leaves_pods_alone() {
    let mut sidecarset = sidecarset();
    strategy(&mut sidecarset, "paused", json!(true));
    assert!(
        run(&sidecarset, &[pod("test-pod-1", 0)])
            .pod_updates
            .is_empty()
    );
}

#[test]
fn case33_not_ready_pods_do_not_consume_max_unavailable() {
    let mut sidecarset = sidecarset();
    strategy(&mut sidecarset, "maxUnavailable", json!(0));
    let mut pending = pod("test-pod-1", 0);
    pending["status"]["phase"] = json!("Pending");
    let mut pods = vec![pending];
    let plan = run(&sidecarset, &pods);
    assert_eq!(updated_names(&plan), ["test-pod-1"]);
    apply_all(&mut pods, &plan);
    assert_eq!(sidecar_image(&pods[0]), "test-image:v2");
}

#[test]
fn case34_partition_keeps_the_only_pod() {
    let mut sidecarset = sidecarset();
    strategy(&mut sidecarset, "partition", json!(1));
    assert!(
        run(&sidecarset, &[pod("test-pod-1", 0)])
            .pod_updates
            .is_empty()
    );
}

#[test]
fn case35_updated_pod_is_left_alone() {
    let mut pods = factory_pods(1, 1, 1);
    let plan = run(&sidecarset(), &pods);
    assert!(plan.pod_updates.is_empty());
    assert_eq!(counts(&plan), [1, 1, 1, 1]);
    apply_all(&mut pods, &plan);
    let hash = annotation(&pods[0], SIDECARSET_HASH);
    assert_eq!(
        annotations::pod_hash_of(SIDECARSET_HASH, Some(&hash), SIDECARSET),
        "bbb"
    );
}

// ---- §6.4 case 36: cold upgrade, step by step -------------------------------------------

#[test]
fn case36_cold_upgrade_two_pods() {
    let mut demo = pod("test-pod-1", 0);
    demo["spec"]["containers"][1]["env"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "nginx-env", "value": "nginx-value"}));
    demo["spec"]["containers"][1]["volumeMounts"] =
        json!([{"name": "nginx-volume", "mountPath": "/data/nginx"}]);
    let mut second = demo.clone();
    second["metadata"]["name"] = json!("test-pod-2");
    second["metadata"]["uid"] = json!("uid-test-pod-2");
    // Listed second first: the namespace/name tie-break, not list order, picks test-pod-1.
    let mut pods = vec![second, demo];
    let sidecarset = sidecarset();

    // 1. First round: status from before the write; test-pod-1 upgraded alone.
    let plan = run(&sidecarset, &pods);
    assert_eq!(counts(&plan), [2, 0, 2, 0]);
    assert_eq!(updated_names(&plan), ["test-pod-1"]);
    assert_eq!(plan.pod_updates[0].changed_containers, ["test-sidecar"]);
    assert_eq!(plan.pod_updates[0].kind, UpdateKind::Upgrade);
    apply_all(&mut pods, &plan);
    let pod1 = &pods[1];
    assert_eq!(sidecar_image(pod1), "test-image:v2");
    assert_eq!(sidecar_image(&pods[0]), "test-image:v1");
    assert_eq!(pod1["spec"]["containers"][1]["env"][1]["name"], "nginx-env");
    assert_eq!(
        pod1["spec"]["containers"][1]["volumeMounts"][0]["mountPath"],
        "/data/nginx"
    );
    assert_eq!(
        annotation(pod1, annotations::INJECTED_LIST),
        "test-sidecarset"
    );

    // 2. test-pod-1 not restarted yet: it uses the whole budget.
    let plan = run(&sidecarset, &pods);
    assert_eq!(counts(&plan), [2, 1, 1, 0]);
    assert!(plan.pod_updates.is_empty());
    restart(&mut pods[1], "test-sidecar");

    // 3. test-pod-1 runs v2: test-pod-2 goes.
    let plan = run(&sidecarset, &pods);
    assert_eq!(counts(&plan), [2, 1, 2, 1]);
    assert_eq!(updated_names(&plan), ["test-pod-2"]);
    apply_all(&mut pods, &plan);
    assert_eq!(sidecar_image(&pods[0]), "test-image:v2");

    // 4. and 5.
    let plan = run(&sidecarset, &pods);
    assert_eq!(counts(&plan), [2, 2, 1, 1]);
    assert!(plan.pod_updates.is_empty());
    restart(&mut pods[0], "test-sidecar");
    let plan = run(&sidecarset, &pods);
    assert_eq!(counts(&plan), [2, 2, 2, 2]);
    assert!(plan.pod_updates.is_empty());
}

#[test]
fn upgrade_patch_is_one_guarded_write() {
    let pods = vec![pod("test-pod-1", 0)];
    let plan = run(&sidecarset(), &pods);
    let update = &plan.pod_updates[0];
    assert_eq!(
        (update.namespace.as_str(), update.uid.as_str()),
        ("default", "uid-test-pod-1")
    );
    let operations = &update.patch.0;
    let PatchOperation::Test(test) = &operations[0] else {
        panic!("the patch starts with a test, got {operations:?}");
    };
    assert_eq!(test.path.as_str(), "/metadata/resourceVersion");
    assert_eq!(test.value, json!("100"));
    let PatchOperation::Replace(image) = &operations[1] else {
        panic!("then the image");
    };
    assert_eq!(image.path.as_str(), "/spec/containers/1/image");
    assert_eq!(image.value, json!("test-image:v2"));
    let paths: Vec<&str> = operations[2..]
        .iter()
        .map(|op| op.path().as_str())
        .collect();
    assert_eq!(
        paths,
        [
            "/metadata/annotations/kruise.io~1sidecarset-hash",
            "/metadata/annotations/kruise.io~1sidecarset-inplace-update-state",
        ]
    );

    // A stale pod fails the precondition instead of overwriting someone else's write.
    let mut stale = pods[0].clone();
    stale["metadata"]["resourceVersion"] = json!("101");
    assert!(json_patch::patch(&mut stale, &update.patch).is_err());
}

#[test]
fn upgrade_annotations_follow_section_5_9() {
    let mut sidecarset = sidecarset();
    sidecarset["status"] = json!({"matchedPods": 1, "updatedPods": 0, "readyPods": 1,
                                  "latestRevision": "test-sidecarset-rev1"});
    sidecarset["spec"]["initContainers"] = json!([
        {"name": "native", "image": "n:1", "restartPolicy": "Always"},
        {"name": "plain", "image": "p:1"},
    ]);
    sidecarset["spec"]["patchPodMetadata"] = json!([
        {"annotations": {"retained": "new", "added": "yes"}, "patchPolicy": "Retain"},
        {"annotations": {"over": "written"}, "patchPolicy": "Overwrite"},
    ]);
    let mut pod = pod("test-pod-1", 0);
    pod["metadata"]["annotations"]["retained"] = json!("old");
    pod["metadata"]["annotations"]["over"] = json!("old");
    pod["metadata"]["annotations"][INPLACE_UPDATE_STATE] = json!(
        r#"{"test-sidecarset":{"revision":"first","updateTimestamp":"2020-01-01T00:00:00Z","lastContainerStatuses":{}}}"#
    );
    let mut pods = vec![pod];
    let plan = run(&sidecarset, &pods);
    apply_all(&mut pods, &plan);
    let pod = &pods[0];
    assert_eq!(
        annotation(pod, SIDECARSET_HASH),
        r#"{"test-sidecarset":{"updateTimestamp":"2025-01-02T03:04:05Z","hash":"bbb","sidecarSetName":"test-sidecarset","sidecarList":["native","test-sidecar"],"controllerRevision":"test-sidecarset-rev1"}}"#
    );
    // The existing entry keeps its revision and timestamp; the old imageID is recorded.
    let expected_state = format!(
        r#"{{"test-sidecarset":{{"revision":"first","updateTimestamp":"2020-01-01T00:00:00Z","lastContainerStatuses":{{"test-sidecar":{{"imageID":"{}"}}}}}}}}"#,
        image_id("test-image:v1")
    );
    assert_eq!(annotation(pod, INPLACE_UPDATE_STATE), expected_state);
    assert_eq!(annotation(pod, "retained"), "old");
    assert_eq!(annotation(pod, "added"), "yes");
    assert_eq!(annotation(pod, "over"), "written");
    // The without-image annotation is not touched by an upgrade.
    assert_eq!(
        annotation(pod, SIDECARSET_HASH_WITHOUT_IMAGE),
        r#"{"test-sidecarset":{"hash":"without-aaa"}}"#
    );
    // The upgraded pod is marked upgradable.
    assert_eq!(plan.conditions.len(), 1);
    let condition = &plan.conditions[0].condition;
    assert_eq!(condition["type"], "SidecarSetUpgradable");
    assert_eq!(condition["status"], "True");
    assert_eq!(condition["reason"], "AllSidecarsetUpgradable");
    assert_eq!(condition["message"], r#"{"test-sidecarset":true}"#);
    assert_eq!(condition["lastTransitionTime"], NOW);
    // A second round changes nothing for the condition.
    let plan = run(&sidecarset, &pods);
    assert!(plan.conditions.is_empty());
}

#[test]
fn bad_merge_patch_json_skips_the_pod() {
    let mut sidecarset = sidecarset();
    sidecarset["spec"]["patchPodMetadata"] =
        json!([{"annotations": {"key": "{}"}, "patchPolicy": "MergePatchJson"}]);
    let mut pod = pod("test-pod-1", 0);
    pod["metadata"]["annotations"]["key"] = json!("not json");
    let plan = run(&sidecarset, &[pod]);
    assert!(plan.pod_updates.is_empty());
    assert_eq!(plan.skipped.len(), 1);
    assert!(matches!(
        plan.skipped[0].error,
        super::PlanError::PatchMetadata(_)
    ));
}

#[test]
fn a_pod_without_resource_version_is_skipped() {
    let mut pod = pod("test-pod-1", 0);
    pod["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let plan = run(&sidecarset(), &[pod]);
    assert!(plan.pod_updates.is_empty());
    assert_eq!(
        plan.skipped[0].error,
        super::PlanError::MissingResourceVersion
    );
}

// ---- §5.3 matching and §5.5 status -----------------------------------------------------

#[test]
fn matched_pods_are_active_injected_and_consistent() {
    let mut not_injected = pod("other", 0);
    not_injected["metadata"]["annotations"][annotations::INJECTED_LIST] = json!("another");
    let mut finished = pod("finished", 0);
    finished["status"]["phase"] = json!("Succeeded");
    let mut deleting = pod("deleting", 0);
    deleting["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
    let mut missing_sidecar = pod("missing", 0);
    missing_sidecar["spec"]["containers"] = json!([{"name": "nginx", "image": "nginx"}]);
    let mut several = pod("several", 0);
    several["metadata"]["annotations"][annotations::INJECTED_LIST] = json!("a,test-sidecarset,z");
    let pods = [
        not_injected,
        finished,
        deleting,
        missing_sidecar,
        several,
        pod("plain", 0),
    ];
    let plan = run(&sidecarset(), &pods);
    assert_eq!(plan.status.matched_pods, 2);
    assert_eq!(plan.status.observed_generation, Some(1));
    assert!(plan.status_changed, "no status yet");
}

#[test]
fn status_is_written_only_when_it_changes() {
    let mut sidecarset = sidecarset();
    sidecarset["status"] = json!({"observedGeneration": 1, "matchedPods": 1, "updatedPods": 0,
                                  "readyPods": 1, "updatedReadyPods": 0,
                                  "latestRevision": "rev"});
    strategy(&mut sidecarset, "paused", json!(true));
    let pods = [pod("test-pod-1", 0)];
    assert!(!run(&sidecarset, &pods).status_changed);
    sidecarset["metadata"]["generation"] = json!(2);
    assert!(run(&sidecarset, &pods).status_changed);
    sidecarset["metadata"]["generation"] = json!(1);
    sidecarset["status"]["readyPods"] = json!(0);
    assert!(run(&sidecarset, &pods).status_changed);
}

#[test]
fn missing_hash_annotations_are_computed_as_the_policy_does() {
    let mut sidecarset = sidecarset();
    sidecarset["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("annotations");
    let computed = sidecarset_policy::revision::current_hashes(&typed(&sidecarset));
    let mut pod = pod("test-pod-1", 0);
    pod["metadata"]["annotations"][SIDECARSET_HASH_WITHOUT_IMAGE] = json!(format!(
        r#"{{"{SIDECARSET}":{{"hash":"{}"}}}}"#,
        computed.without_image
    ));
    let mut pods = vec![pod];
    let plan = run(&sidecarset, &pods);
    assert_eq!(updated_names(&plan), ["test-pod-1"]);
    apply_all(&mut pods, &plan);
    let hash = annotation(&pods[0], SIDECARSET_HASH);
    assert_eq!(
        annotations::pod_hash_of(SIDECARSET_HASH, Some(&hash), SIDECARSET),
        computed.hash
    );
}

// ---- §6.4 case 39: not upgradable pods -------------------------------------------------

#[test]
fn case39_only_image_changes_are_upgradable() {
    let mut sidecarset = sidecarset();
    sidecarset["metadata"]["annotations"][SIDECARSET_HASH_WITHOUT_IMAGE] = json!("without-bbb");
    strategy(&mut sidecarset, "maxUnavailable", json!("50%"));
    let mut pods: Vec<Value> = (0..100).map(|i| pod(&format!("pod-{i}"), i)).collect();
    for pod in &mut pods[50..] {
        pod["metadata"]["annotations"][SIDECARSET_HASH_WITHOUT_IMAGE] =
            json!(r#"{"test-sidecarset":{"hash":"without-bbb"}}"#);
    }
    let plan = run(&sidecarset, &pods);
    assert_eq!(plan.pod_updates.len(), 50);
    assert_eq!(plan.not_upgradable, 50);
    apply_all(&mut pods, &plan);
    for (i, pod) in pods.iter().enumerate() {
        let want = if i < 50 {
            "test-image:v1"
        } else {
            "test-image:v2"
        };
        assert_eq!(sidecar_image(pod), want, "pod-{i}");
    }
    let not_upgradable = plan
        .conditions
        .iter()
        .filter(|c| c.condition["status"] == "False")
        .count();
    assert_eq!(not_upgradable, 50);
    let condition = &plan.conditions[0].condition;
    assert_eq!(condition["reason"], "UpdateImmutableField");
    assert_eq!(condition["message"], r#"{"test-sidecarset":false}"#);
}

#[test]
fn condition_message_keeps_other_sidecarsets() {
    let mut sidecarset = sidecarset();
    sidecarset["metadata"]["annotations"][SIDECARSET_HASH_WITHOUT_IMAGE] = json!("without-bbb");
    let mut pod = pod("test-pod-1", 0);
    pod["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(json!({
        "type": "SidecarSetUpgradable", "status": "True", "reason": "AllSidecarsetUpgradable",
        "message": r#"{"other":true}"#, "lastTransitionTime": "2024-05-05T00:00:00Z"}));
    let plan = run(&sidecarset, std::slice::from_ref(&pod));
    let condition = &plan.conditions[0].condition;
    assert_eq!(
        condition["message"],
        r#"{"other":true,"test-sidecarset":false}"#
    );
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["lastTransitionTime"], NOW);

    // Unparsable messages are reported, not overwritten.
    pod["status"]["conditions"][1]["message"] = json!("garbage");
    let plan = run(&sidecarset, &[pod]);
    assert!(plan.conditions.is_empty());
    assert!(matches!(
        plan.skipped[0].error,
        super::PlanError::ConditionMessage(_)
    ));
}

// ---- §6.4 case 43: worked numbers -------------------------------------------------------

/// A fixed shuffle (the planner must not depend on list order).
fn shuffled(mut pods: Vec<Value>) -> Vec<Value> {
    let len = pods.len();
    if len > 1 {
        for i in 0..len {
            pods.swap(i, (i * 7919 + 13) % len);
        }
    }
    pods
}

fn next_upgrade(
    configure: impl Fn(&mut Value),
    count: usize,
    upgraded: usize,
    ready: usize,
) -> (usize, usize) {
    let mut sidecarset = sidecarset();
    configure(&mut sidecarset);
    let plan = run(&sidecarset, &shuffled(factory_pods(count, upgraded, ready)));
    (plan.pod_updates.len(), plan.not_upgradable)
}

#[test]
fn case43_get_next_upgrade_pods() {
    let max = |v: Value| move |s: &mut Value| strategy(s, "maxUnavailable", v.clone());
    let both = |p: Value, m: Value| {
        move |s: &mut Value| {
            strategy(s, "partition", p.clone());
            strategy(s, "maxUnavailable", m.clone());
        }
    };
    assert_eq!(next_upgrade(max(json!(10)), 100, 30, 26), (6, 0), "a");
    assert_eq!(
        next_upgrade(max(json!("10%")), 1000, 300, 260),
        (60, 0),
        "b"
    );
    assert_eq!(next_upgrade(max(json!("5%")), 1000, 300, 250), (0, 0), "c");
    assert_eq!(next_upgrade(max(json!(100)), 100, 30, 27), (70, 0), "d");
    assert_eq!(
        next_upgrade(both(json!(180), json!(100)), 1000, 800, 760),
        (20, 0),
        "e"
    );
    assert_eq!(
        next_upgrade(both(json!(100), json!(100)), 1000, 800, 760),
        (60, 0),
        "f"
    );
    assert_eq!(
        next_upgrade(both(json!("18%"), json!(100)), 1000, 800, 760),
        (20, 0),
        "g"
    );
    assert_eq!(
        next_upgrade(both(json!("10%"), json!(100)), 1000, 800, 760),
        (60, 0),
        "h"
    );
    assert_eq!(next_upgrade(max(json!("5%")), 5, 0, 0), (1, 0), "k");
    assert_eq!(
        next_upgrade(both(json!("99%"), json!(5)), 5, 0, 0),
        (1, 0),
        "l"
    );
    assert_eq!(
        next_upgrade(both(json!("1%"), json!(5)), 5, 0, 0),
        (4, 0),
        "m"
    );
}

#[test]
fn case43i_canary_selector() {
    let mut sidecarset = sidecarset();
    strategy(&mut sidecarset, "maxUnavailable", json!(100));
    strategy(
        &mut sidecarset,
        "selector",
        json!({"matchLabels": {"app": "test"}}),
    );
    let mut pods = factory_pods(1000, 0, 0);
    for pod in pods.iter_mut().step_by(33).take(30) {
        pod["metadata"]["labels"]["app"] = json!("test");
    }
    let plan = run(&sidecarset, &shuffled(pods));
    assert_eq!((plan.pod_updates.len(), plan.not_upgradable), (30, 0));

    // An invalid selector selects nothing.
    strategy(
        &mut sidecarset,
        "selector",
        json!({"matchExpressions": [{"key": "app", "operator": "badOp", "values": ["x"]}]}),
    );
    assert!(
        run(&sidecarset, &factory_pods(10, 0, 0))
            .pod_updates
            .is_empty()
    );
}

#[test]
fn case43j_not_upgradable_sidecarset() {
    let mut sidecarset = sidecarset();
    sidecarset["metadata"]["annotations"][SIDECARSET_HASH_WITHOUT_IMAGE] = json!("without-bbb");
    let plan = run(&sidecarset, &shuffled(factory_pods(100, 0, 0)));
    assert_eq!((plan.pod_updates.len(), plan.not_upgradable), (0, 100));
}

#[test]
fn in_flight_pods_are_neither_chosen_nor_counted_twice() {
    // pod-0 was upgraded to an older image, its container is ready but still runs the old one:
    // (true, false) — it waits, and it is not updated so it does not consume the budget either.
    let mut pods = factory_pods(3, 1, 0);
    pods[0]["metadata"]["annotations"][SIDECARSET_HASH] =
        json!(r#"{"test-sidecarset":{"hash":"older"}}"#);
    let mut sidecarset = sidecarset();
    strategy(&mut sidecarset, "maxUnavailable", json!(1));
    let plan = run(&sidecarset, &pods);
    assert_eq!(updated_names(&plan), ["pod-2"]);
}

// ---- §6.4 case 44: scatter terms ------------------------------------------------------------

#[test]
fn case44_parse_update_scatter_terms() {
    let term = |k: &str, v: &str| ScatterTerm {
        key: k.into(),
        value: v.into(),
    };
    let concrete = vec![
        term("key-1", "value-1"),
        term("key-2", "value-2"),
        term("key-3", "value-3"),
    ];
    let mut pods = factory_pods(6, 0, 0);
    for (pod, value) in pods.iter_mut().zip([
        "value-4-0",
        "value-4-1",
        "value-4-2",
        "value-4",
        "value-4",
        "value-4",
    ]) {
        pod["metadata"]["labels"]["key-4"] = json!(value);
    }
    let sidecarset = typed(&sidecarset());
    let context = SidecarSetContext::new(&sidecarset);
    let typed = typed_pods(&pods);
    let views: Vec<PodView> = typed.iter().map(|p| PodView::new(&context, p)).collect();
    assert_eq!(select::expand_scatter_terms(&concrete, &views), concrete);
    let mut with_star = concrete.clone();
    with_star.push(term("key-4", "*"));
    let mut expected = concrete.clone();
    expected.extend([
        term("key-4", "value-4-0"),
        term("key-4", "value-4-1"),
        term("key-4", "value-4-2"),
        term("key-4", "value-4"),
    ]);
    assert_eq!(select::expand_scatter_terms(&with_star, &views), expected);
}

#[test]
fn scatter_spreads_matching_pods_through_the_wait_list() {
    // 8 waiting pods, the 4 newest labelled zone=a: default order is 7..0, the scatter sorter
    // interleaves a/b and keeps the last zone=a pod for the very end.
    let mut pods = factory_pods(8, 0, 0);
    for pod in &mut pods[4..] {
        pod["metadata"]["labels"]["zone"] = json!("a");
    }
    let mut sidecarset = sidecarset();
    strategy(&mut sidecarset, "maxUnavailable", json!(8));
    strategy(
        &mut sidecarset,
        "scatterStrategy",
        json!([{"key": "zone", "value": "a"}]),
    );
    let plan = run(&sidecarset, &pods);
    assert_eq!(
        updated_names(&plan),
        [
            "pod-7", "pod-3", "pod-6", "pod-2", "pod-5", "pod-1", "pod-0", "pod-4"
        ]
    );
}

// ---- §6.4 case 45: sort orders ---------------------------------------------------------------

fn sorted_upgrades(pods: Vec<Value>, configure: impl Fn(&mut Value)) -> Vec<String> {
    let mut sidecarset = sidecarset();
    strategy(&mut sidecarset, "maxUnavailable", json!(10));
    configure(&mut sidecarset);
    let plan = run(&sidecarset, &shuffled(pods));
    plan.pod_updates.iter().map(|u| u.name.clone()).collect()
}

#[test]
fn case45a_newest_first() {
    assert_eq!(
        sorted_upgrades(factory_pods(20, 10, 5), |_| {}),
        ["pod-19", "pod-18", "pod-17", "pod-16", "pod-15"]
    );
}

#[test]
fn case45b_not_ready_first_and_free() {
    let mut pods = factory_pods(20, 10, 5);
    for i in [10, 13] {
        pods[i]["status"]["conditions"][0]["status"] = json!("False");
    }
    assert_eq!(
        sorted_upgrades(pods, |_| {}),
        [
            "pod-13", "pod-10", "pod-19", "pod-18", "pod-17", "pod-16", "pod-15"
        ]
    );
}

#[test]
fn case45c_weight_priority() {
    let mut pods = factory_pods(20, 10, 2);
    pods[16]["metadata"]["labels"]["key"] = json!("foo");
    pods[15]["metadata"]["labels"]["key"] = json!("bar");
    let order = sorted_upgrades(pods, |s| {
        strategy(
            s,
            "priorityStrategy",
            json!({"weightPriority": [
                {"weight": 50, "matchSelector": {"matchLabels": {"key": "foo"}}},
                {"weight": 30, "matchSelector": {"matchLabels": {"key": "bar"}}},
            ]}),
        );
    });
    assert_eq!(order, ["pod-16", "pod-15"]);
}

#[test]
fn case45d_order_priority() {
    let mut pods = factory_pods(20, 10, 2);
    for pod in &mut pods {
        pod["metadata"]["labels"]["key1"] = json!("5");
    }
    pods[17]["metadata"]["labels"]["key1"] = json!("10");
    pods[18]["metadata"]["labels"]["key1"] = json!("sts-20");
    let order = sorted_upgrades(pods, |s| {
        strategy(
            s,
            "priorityStrategy",
            json!({"orderPriority": [{"orderedKey": "key1"}]}),
        );
    });
    assert_eq!(order, ["pod-18", "pod-17"]);
}

#[test]
fn order_priority_puts_pods_without_keys_first() {
    let mut pods = factory_pods(4, 0, 0);
    pods[0]["metadata"]["labels"]["rank"] = json!("9");
    pods[1]["metadata"]["labels"]["rank"] = json!("1");
    let order = sorted_upgrades(pods, |s| {
        strategy(s, "maxUnavailable", json!(4));
        strategy(
            s,
            "priorityStrategy",
            json!({"orderPriority": [{"orderedKey": "rank"}]}),
        );
    });
    assert_eq!(order, ["pod-3", "pod-2", "pod-0", "pod-1"]);
}

#[test]
fn default_order_follows_active_pods() {
    let mut pods = factory_pods(6, 0, 0);
    pods[0]["spec"].as_object_mut().unwrap().remove("nodeName");
    pods[1]["status"]["phase"] = json!("Unknown");
    pods[2]["status"]["containerStatuses"][0]["restartCount"] = json!(3);
    pods[3]["status"]["conditions"][0]["lastTransitionTime"] = json!("2024-06-01T00:00:00Z");
    // pod-4 and pod-5 tie on everything but creation: newer first.
    let order = sorted_upgrades(pods, |s| strategy(s, "maxUnavailable", json!(6)));
    assert_eq!(
        order,
        ["pod-0", "pod-1", "pod-3", "pod-2", "pod-5", "pod-4"]
    );
}

// ---- §6.4 case 48: hot upgrade, step by step ------------------------------------------------

#[test]
fn case48_hot_upgrade_cycle() {
    let sidecarset = hot_sidecarset();
    let mut pods = vec![hot_pod("test-pod-1")];

    // 1. The idle twin -2 takes v2 and becomes the working one.
    let plan = run(&sidecarset, &pods);
    assert_eq!(counts(&plan), [1, 0, 1, 0]);
    assert_eq!(plan.pod_updates[0].kind, UpdateKind::Upgrade);
    assert_eq!(plan.pod_updates[0].changed_containers, ["test-sidecar-2"]);
    apply_all(&mut pods, &plan);
    let pod = &pods[0];
    assert_eq!(spec_image(pod, "test-sidecar-1"), "test-image:v1");
    assert_eq!(spec_image(pod, "test-sidecar-2"), "test-image:v2");
    assert_eq!(
        annotation(pod, WORKING_HOT_UPGRADE_CONTAINER),
        r#"{"test-sidecar":"test-sidecar-2"}"#
    );
    let version = |pod: &Value, key: &str| annotation(pod, key);
    assert_eq!(
        version(pod, "version.sidecarset.kruise.io/test-sidecar-2"),
        "22"
    );
    assert_eq!(
        version(pod, "versionalt.sidecarset.kruise.io/test-sidecar-2"),
        "1"
    );
    assert_eq!(
        version(pod, "versionalt.sidecarset.kruise.io/test-sidecar-1"),
        "22"
    );
    assert_eq!(
        version(pod, "version.sidecarset.kruise.io/test-sidecar-1"),
        "1"
    );

    // 2. -2 not restarted yet: updated, not ready, nothing to do.
    let plan = run(&sidecarset, &pods);
    assert_eq!(counts(&plan), [1, 1, 0, 0]);
    assert!(plan.pod_updates.is_empty());
    restart(&mut pods[0], "test-sidecar-2");

    // 3. -2 runs v2, -1 (now idle) still v1: reset -1 to the empty image.
    let plan = run(&sidecarset, &pods);
    assert_eq!(counts(&plan), [1, 1, 0, 0]);
    assert_eq!(plan.pod_updates.len(), 1);
    assert_eq!(plan.pod_updates[0].kind, UpdateKind::HotUpgradeReset);
    assert_eq!(plan.pod_updates[0].changed_containers, ["test-sidecar-1"]);
    assert!(plan.conditions.is_empty(), "a reset touches no condition");
    let hash_before = annotation(&pods[0], SIDECARSET_HASH);
    apply_all(&mut pods, &plan);
    let pod = &pods[0];
    assert_eq!(spec_image(pod, "test-sidecar-1"), "hotupgrade:empty");
    assert_eq!(spec_image(pod, "test-sidecar-2"), "test-image:v2");
    assert_eq!(
        version(pod, "version.sidecarset.kruise.io/test-sidecar-1"),
        "0"
    );
    assert_eq!(
        version(pod, "versionalt.sidecarset.kruise.io/test-sidecar-2"),
        "0"
    );
    assert_eq!(annotation(pod, SIDECARSET_HASH), hash_before);
    let states: InPlaceUpdateStates =
        serde_json::from_str(&annotation(pod, INPLACE_UPDATE_STATE)).unwrap();
    assert_eq!(
        states[SIDECARSET].last_container_statuses["test-sidecar-1"].image_id,
        image_id("test-image:v1")
    );
    restart(&mut pods[0], "test-sidecar-1");

    // 4. Done.
    let plan = run(&sidecarset, &pods);
    assert_eq!(counts(&plan), [1, 1, 1, 1]);
    assert!(plan.pod_updates.is_empty());
}

#[test]
fn hot_upgrade_v2_to_v3_upgrades_the_empty_twin_again() {
    let mut sidecarset = hot_sidecarset();
    let mut pods = vec![hot_pod("test-pod-1")];
    for step in 0..3 {
        let plan = run(&sidecarset, &pods);
        apply_all(&mut pods, &plan);
        for twin in ["test-sidecar-1", "test-sidecar-2"] {
            restart(&mut pods[0], twin);
        }
        assert!(step < 2 || plan.pod_updates.is_empty());
    }
    sidecarset["metadata"]["annotations"][SIDECARSET_HASH] = json!("ccc");
    sidecarset["metadata"]["resourceVersion"] = json!("23");
    sidecarset["spec"]["containers"][0]["image"] = json!("test-image:v3");
    let plan = run(&sidecarset, &pods);
    assert_eq!(plan.pod_updates[0].changed_containers, ["test-sidecar-1"]);
    apply_all(&mut pods, &plan);
    let pod = &pods[0];
    assert_eq!(
        annotation(pod, WORKING_HOT_UPGRADE_CONTAINER),
        r#"{"test-sidecar":"test-sidecar-1"}"#
    );
    assert_eq!(
        annotation(pod, "version.sidecarset.kruise.io/test-sidecar-1"),
        "23"
    );
    assert_eq!(
        annotation(pod, "versionalt.sidecarset.kruise.io/test-sidecar-1"),
        "22"
    );
    assert_eq!(
        annotation(pod, "versionalt.sidecarset.kruise.io/test-sidecar-2"),
        "23"
    );
}

#[test]
fn resets_preempt_upgrades_in_the_same_round() {
    let sidecarset = hot_sidecarset();
    let mut pods = vec![hot_pod("test-pod-1"), hot_pod("test-pod-2")];
    let mut one = sidecarset.clone();
    strategy(&mut one, "maxUnavailable", json!(1));
    let plan = run(&one, &pods);
    assert_eq!(updated_names(&plan), ["test-pod-1"]);
    apply_all(&mut pods, &plan);
    restart(&mut pods[0], "test-sidecar-2");
    let plan = run(&sidecarset, &pods);
    assert_eq!(updated_names(&plan), ["test-pod-1"]);
    assert_eq!(plan.pod_updates[0].kind, UpdateKind::HotUpgradeReset);
}

// ---- §6.3 case 20: IsSidecarContainerUpdateCompleted -------------------------------------------

#[test]
fn case20_is_sidecar_container_update_completed() {
    let mut sidecarset = sidecarset();
    sidecarset["spec"]["containers"] = json!([
        {"name": "cold-sidecar", "image": "cold-image:v1"},
        {"name": "hot-sidecar", "image": "hot-image:v1",
         "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "hotupgrade:empty"}},
    ]);
    let sidecarset = typed(&sidecarset);
    let context = SidecarSetContext::new(&sidecarset);
    let mut pod = pod("test-pod-1", 0);
    pod["spec"]["containers"] = json!([
        {"name": "main", "image": "main:v1"},
        {"name": "cold-sidecar", "image": "cold-image:v1"},
        {"name": "hot-sidecar-1", "image": "hot-sidecar:v1"},
        {"name": "hot-sidecar-2", "image": "hotupgrade:empty"},
    ]);
    pod["status"]["containerStatuses"] = json!([
        status("main", "main:v1", true),
        status("cold-sidecar", "cold-image:v1", true),
        status("hot-sidecar-1", "hot-sidecar:v1", true),
        status("hot-sidecar-2", "hotupgrade:empty", true),
    ]);
    let names = ["cold-sidecar", "hot-sidecar-1", "hot-sidecar-2"];
    let completed = |pod: &Value| {
        let typed = typed_pod(pod);
        is_update_completed(&PodView::new(&context, &typed), &names)
    };
    // Record the current imageIDs of `changed` after setting their spec images.
    let upgrade = |pod: &mut Value, container: &str, image: &str| {
        for c in pod["spec"]["containers"].as_array_mut().unwrap() {
            if c["name"] == container {
                c["image"] = json!(image);
            }
        }
        let mut annotations: Labels =
            serde_json::from_value(pod["metadata"]["annotations"].clone()).unwrap();
        super::edit::record_update_state(
            &mut annotations,
            &typed_pod(pod),
            SIDECARSET,
            "bbb",
            &[container.to_string()],
            NOW,
        );
        pod["metadata"]["annotations"] = serde_json::to_value(annotations).unwrap();
    };

    assert!(completed(&pod), "a: only injected");
    upgrade(&mut pod, "cold-sidecar", "cold-image:v2");
    assert!(!completed(&pod), "b: cold recorded, not restarted");
    restart(&mut pod, "cold-sidecar");
    assert!(completed(&pod), "c: cold restarted");
    upgrade(&mut pod, "hot-sidecar-2", "hot-image:v2");
    assert!(!completed(&pod), "d: hot-2 recorded, not restarted");
    restart(&mut pod, "hot-sidecar-2");
    upgrade(&mut pod, "hot-sidecar-1", "hotupgrade:empty");
    assert!(!completed(&pod), "e: hot-1 reset recorded, not restarted");
    restart(&mut pod, "hot-sidecar-1");
    assert!(completed(&pod), "f: all restarted");

    pod["metadata"]["annotations"][INPLACE_UPDATE_STATE] = json!("not json");
    assert!(!completed(&pod), "unparsable state is not completed");
}

// ---- §6.3 cases 21 and 22: pod hash annotations ---------------------------------------------

#[test]
fn case21_get_pod_sidecarset_revision() {
    let cases = [
        (
            r#"{"test-sidecarset":{"hash":"aaa"}}"#,
            r#"{"test-sidecarset":{"hash":"without-image-aaa"}}"#,
            "aaa",
            "without-image-aaa",
        ),
        (
            r#"{"test-sidecarset":"aaa"}"#,
            r#"{"test-sidecarset":"without-image-aaa"}"#,
            "aaa",
            "without-image-aaa",
        ),
        ("failed", "failed", "", ""),
    ];
    for (hash, without_image, want, want_without_image) in cases {
        assert_eq!(
            annotations::pod_hash_of(SIDECARSET_HASH, Some(hash), SIDECARSET),
            want
        );
        assert_eq!(
            annotations::pod_hash_of(
                SIDECARSET_HASH_WITHOUT_IMAGE,
                Some(without_image),
                SIDECARSET
            ),
            want_without_image
        );
    }
}

#[test]
fn case22_update_pod_sidecarset_hash() {
    let mut sidecarset = sidecarset();
    sidecarset["metadata"]["annotations"][SIDECARSET_HASH_WITHOUT_IMAGE] =
        json!("without-image-aaa");
    let sidecarset = typed(&sidecarset);
    let context = SidecarSetContext::new(&sidecarset);
    let refresh = |hash: &str, without_image: &str| {
        let mut annotations = Labels::from([
            (SIDECARSET_HASH.to_string(), hash.to_string()),
            (
                SIDECARSET_HASH_WITHOUT_IMAGE.to_string(),
                without_image.to_string(),
            ),
        ]);
        refresh_hash_entry(&context, &mut annotations, NOW);
        annotations
    };
    let hash_of = |annotations: &Labels, key: &'static str| {
        annotations::pod_hash_of(key, annotations.get(key).map(String::as_str), SIDECARSET)
    };

    // Struct form: hash refreshed, without-image untouched.
    let struct_without = r#"{"test-sidecarset":{"hash":"without-image-aaa"}}"#;
    let refreshed = refresh(r#"{"test-sidecarset":{"hash":"aaa"}}"#, struct_without);
    assert_eq!(hash_of(&refreshed, SIDECARSET_HASH), "bbb");
    assert_eq!(refreshed[SIDECARSET_HASH_WITHOUT_IMAGE], struct_without);

    // Legacy form: both converted to the struct form.
    let refreshed = refresh(
        r#"{"test-sidecarset":"aaa","other":"ooo"}"#,
        r#"{"test-sidecarset":"without-image-aaa"}"#,
    );
    assert_eq!(hash_of(&refreshed, SIDECARSET_HASH), "bbb");
    assert_eq!(
        refreshed[SIDECARSET_HASH_WITHOUT_IMAGE],
        r#"{"test-sidecarset":{"updateTimestamp":"2025-01-02T03:04:05Z","hash":"without-image-aaa","sidecarSetName":"test-sidecarset","sidecarList":null}}"#
    );
    let parsed = annotations::parse_hash_annotation(
        SIDECARSET_HASH,
        refreshed.get(SIDECARSET_HASH).map(String::as_str),
    )
    .unwrap();
    assert_eq!(parsed["other"].hash, "ooo");
    assert_eq!(parsed["other"].update_timestamp.as_deref(), Some(NOW));

    // Garbage: rewritten with this entry only; without-image untouched.
    let refreshed = refresh("failed", struct_without);
    assert_eq!(hash_of(&refreshed, SIDECARSET_HASH), "bbb");
    assert_eq!(refreshed[SIDECARSET_HASH_WITHOUT_IMAGE], struct_without);
}

#[test]
fn refreshing_a_cached_pods_hash_entry_matches_the_full_refresh() {
    let mut sidecarset = sidecarset();
    sidecarset["status"] = json!({"latestRevision": "test-sidecarset-rev1"});
    let sidecarset = typed(&sidecarset);
    let context = SidecarSetContext::new(&sidecarset);
    let struct_without = r#"{"test-sidecarset":{"hash":"without-image-aaa"}}"#;
    let legacy_without = r#"{"test-sidecarset":"without-image-aaa"}"#;
    let hashes = [
        // Only this SidecarSet's entry (the shortcut), also with odd but valid contents.
        Some(r#"{"test-sidecarset":{"hash":"aaa"}}"#),
        Some(r#"{"test-sidecarset":{"hash":"aaa","sidecarList":["x"],"extra":1}}"#),
        Some(r#"{"test-sidecarset":{"hash":"a"},"test-sidecarset":{"hash":"b"}}"#),
        Some("{}"),
        // Anything else takes the full refresh.
        Some(r#"{"test-sidecarset":{"hash":"aaa"},"other":{"hash":"ooo"}}"#),
        Some(r#"{"other":{"hash":"ooo"}}"#),
        Some(r#"{"test-sidecarset":"aaa"}"#),
        Some(r#"{"test-sidecarset":{"hash":1}}"#),
        Some("failed"),
        Some(""),
        None,
    ];
    for (case, hash) in hashes.into_iter().enumerate() {
        for without_image in [struct_without, legacy_without] {
            let mut pod = pod("test-pod-1", 0);
            let pod_annotations = &mut pod["metadata"]["annotations"];
            match hash {
                Some(hash) => pod_annotations[SIDECARSET_HASH] = json!(hash),
                None => {
                    _ = pod_annotations
                        .as_object_mut()
                        .map(|a| a.remove(SIDECARSET_HASH))
                }
            }
            pod_annotations[SIDECARSET_HASH_WITHOUT_IMAGE] = json!(without_image);
            let cached = typed_pod(&pod);
            let read = || {
                let mut annotations = Labels::new();
                for key in [SIDECARSET_HASH, SIDECARSET_HASH_WITHOUT_IMAGE] {
                    if let Some(value) = cached.annotation(key) {
                        annotations.insert(key.to_string(), value.to_string());
                    }
                }
                annotations
            };
            let (mut full, mut cached_refresh) = (read(), read());
            refresh_hash_entry(&context, &mut full, NOW);
            refresh_hash_entry_of(&context, &cached, &mut cached_refresh, NOW);
            assert_eq!(
                cached_refresh, full,
                "hash {hash:?}, without-image {without_image}"
            );
            let shortcut = cached.facts.hash_annotation_holds_only(SIDECARSET);
            // The first four cases hold only this SidecarSet's struct-form entry.
            assert_eq!(shortcut, case < 4, "hash {hash:?}");
        }
    }
}

/// Upstream reads the in-place update state with `json.Unmarshal` into a map: `null` there, or
/// as an entry's member, is the zero value, so the update counts as completed.
#[test]
fn null_update_state_counts_as_completed() {
    for raw in [
        "null",
        r#"{"test-sidecarset":{"revision":"aaa","lastContainerStatuses":null}}"#,
        r#"{"test-sidecarset":{"revision":null,"lastContainerStatuses":{"test-sidecar":{"imageID":null}}}}"#,
    ] {
        let mut p = pod("test-pod-1", 0);
        p["metadata"]["annotations"][INPLACE_UPDATE_STATE] = json!(raw);
        let plan = run(&sidecarset(), &[p]);
        assert_eq!(counts(&plan), [1, 0, 1, 0], "{raw}");
        assert_eq!(updated_names(&plan), ["test-pod-1"], "{raw}");
    }
}
