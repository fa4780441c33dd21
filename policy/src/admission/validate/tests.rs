//! Upstream's validating-webhook tests (§6.5) and the conformance expectations of
//! ../shared/conformance 026–037 (the SidecarSet admission cases).

use super::*;
use crate::api::{LabelSelector, SidecarSet};
use serde_json::{Value, json};

fn parse(v: Value) -> SidecarSet {
    serde_json::from_value(v).expect("valid SidecarSet JSON")
}

/// A defaulted sidecar container as upstream's tests write it.
fn container(name: &str) -> Value {
    json!({
        "name": name,
        "image": "test-image",
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePolicy": "File",
        "podInjectPolicy": "BeforeAppContainer",
        "shareVolumePolicy": {"type": "disabled"},
        "upgradeStrategy": {"upgradeType": "ColdUpgrade"}
    })
}

fn with(mut base: Value, patch: Value) -> Value {
    if let (Value::Object(b), Value::Object(p)) = (&mut base, patch) {
        for (k, v) in p {
            b.insert(k, v);
        }
    }
    base
}

fn spec_set(spec: Value) -> SidecarSet {
    parse(json!({"metadata": {"name": "test-sidecarset"}, "spec": spec}))
}

fn all_allowed() -> Vec<regex_lite::Regex> {
    vec![regex_lite::Regex::new(".*").expect("regex")]
}

/// Upstream runs these with the gate SidecarSetPatchPodMetadataDefaultsAllowed on: a whitelist
/// allowing every key is the equivalent here.
fn count(set: &SidecarSet) -> usize {
    let keys = all_allowed();
    let ctx = ValidationContext {
        allowed_patch_keys: Some(&keys),
        ..Default::default()
    };
    let errs = validate(set, &ctx);
    eprintln!("{}", summarize(&errs));
    errs.len()
}

const AB: &str = r#"{"matchLabels": {"a": "b"}}"#;

fn ab() -> Value {
    serde_json::from_str(AB).expect("json")
}

#[test]
fn upstream_validate_sidecarset_spec_cases() {
    let not_update = json!({"type": "NotUpdate"});
    let cases: Vec<(&str, Value, usize)> = vec![
        (
            "missing-selector",
            json!({"updateStrategy": not_update, "containers": [container("test-sidecar")]}),
            1,
        ),
        (
            "wrong-updateStrategy",
            json!({"selector": ab(), "updateStrategy": {"type": "RollingUpdate", "scatterStrategy": [
                {"key": "key-1", "value": "value-1"}, {"key": "key-1", "value": "value-1"}]},
                "containers": [container("test-sidecar")]}),
            1,
        ),
        (
            "wrong-selector",
            json!({"selector": {"matchLabels": {"a": "b"}, "matchExpressions": [
                {"key": "app-name", "operator": "NotIn", "values": ["app-group", "app-risk-"]}]},
                "containers": [with(container("test-sidecar"), json!({"shareVolumePolicy": {"type": "enabled"}}))]}),
            2,
        ),
        (
            "wrong-namespaceSelector",
            json!({"selector": {"matchLabels": {"a": "b"}, "matchExpressions": [
                {"key": "app-name", "operator": "NotIn", "values": ["app-group", "app-risk"]}]},
                "namespaceSelector": {"matchLabels": {"a": "b"}, "matchExpressions": [
                {"key": "app-name", "operator": "NotIn", "values": ["app-group", "app-risk-"]}]},
                "containers": [container("test-sidecar")]}),
            2,
        ),
        (
            "valid-namespaceSelector",
            json!({"selector": {"matchLabels": {"a": "b"}, "matchExpressions": [
                {"key": "app-name", "operator": "NotIn", "values": ["app-group", "app-risk"]}]},
                "namespaceSelector": ab(), "containers": [container("test-sidecar")]}),
            0,
        ),
        (
            "wrong-initContainer (no image)",
            json!({"selector": ab(), "updateStrategy": not_update, "initContainers": [
                {"name": "test-sidecar", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]}),
            1,
        ),
        (
            "missing-container",
            json!({"selector": ab(), "updateStrategy": not_update}),
            1,
        ),
        (
            "wrong-containers (no shareVolumePolicy)",
            json!({"selector": ab(), "updateStrategy": not_update, "containers": [{
                "name": "test-sidecar", "image": "test-image", "imagePullPolicy": "IfNotPresent",
                "terminationMessagePolicy": "File", "podInjectPolicy": "BeforeAppContainer",
                "upgradeStrategy": {"upgradeType": "ColdUpgrade"}}]}),
            1,
        ),
        (
            "wrong-volumes (no source)",
            json!({"selector": ab(), "updateStrategy": not_update, "containers": [container("test-sidecar")],
                "volumes": [{"name": "test-volume"}, {"name": "istio-token", "projected": {"defaultMode": 420,
                "sources": [{"serviceAccountToken": {"audience": "istio-ca", "expirationSeconds": 43200, "path": "istio-token"}}]}}]}),
            1,
        ),
        (
            "wrong-volumeDevice-volumes",
            json!({"selector": ab(), "updateStrategy": not_update, "containers": [with(container("test-sidecar"),
                json!({"volumeDevices": [{"name": "disk0", "devicePath": "/dev/nvme1"}]}))]}),
            1,
        ),
        (
            "right-volumeDevice-volumes",
            json!({"selector": ab(), "updateStrategy": not_update, "containers": [with(container("test-sidecar"),
                json!({"volumeDevices": [{"name": "disk0", "devicePath": "/dev/nvme1"}]}))],
                "volumes": [{"name": "disk0", "persistentVolumeClaim": {"claimName": "pvc-0"}}]}),
            0,
        ),
        (
            "volumeDevice-volumeMount-path-conflict",
            json!({"selector": ab(), "updateStrategy": not_update, "containers": [with(container("test-sidecar"),
                json!({"volumeDevices": [{"name": "disk0", "devicePath": "/home/admin/log"}],
                       "volumeMounts": [{"name": "log", "mountPath": "/home/admin/log"}]}))],
                "volumes": [{"name": "disk0", "persistentVolumeClaim": {"claimName": "pvc-0"}},
                            {"name": "log", "emptyDir": {}}]}),
            2,
        ),
        (
            "wrong-metadata (same key in two entries)",
            json!({"selector": ab(), "updateStrategy": not_update, "containers": [container("test-sidecar")],
                "patchPodMetadata": [{"annotations": {"key1": "value1"}, "patchPolicy": "MergePatchJson"},
                                     {"annotations": {"key1": "value1"}, "patchPolicy": "Overwrite"}]}),
            1,
        ),
        // Upstream: 1 error each (ControllerRevision not found). Revision lookup is not
        // available to this validation yet, so only the cluster-free checks apply: 0 here.
        (
            "wrong-name-injectionStrategy (customVersion not resolvable: not checked)",
            json!({"selector": ab(), "updateStrategy": not_update, "containers": [container("test-sidecar")],
                "injectionStrategy": {"revision": {"customVersion": "normal-sidecarset-01234"}}}),
            0,
        ),
        (
            "not-existing-injectionStrategy (revisionName not resolvable: not checked)",
            json!({"selector": ab(), "updateStrategy": not_update, "containers": [container("test-sidecar")],
                "injectionStrategy": {"revision": {"revisionName": "test-sidecarset-678235", "policy": "Always"}}}),
            0,
        ),
        (
            "native sidecar + RollingUpdate",
            json!({"selector": ab(), "updateStrategy": {"type": "RollingUpdate"}, "initContainers": [
                with(container("test-sidecar"), json!({"restartPolicy": "Always"}))]}),
            1,
        ),
        (
            "resources-policy-and-resources-conflict",
            json!({"selector": {"matchLabels": {"app": "test"}}, "containers": [with(container("test-sidecar"), json!({
                "resources": {"limits": {"cpu": "100m", "memory": "100Mi"}},
                "resourcesPolicy": {"targetContainersMode": "sum", "resourcesExpr": {"limits": {"cpu": "cpu*50%"}}}}))]}),
            1,
        ),
        (
            "invalid-target-container-mode (empty regex)",
            json!({"selector": {"matchLabels": {"app": "test"}}, "containers": [with(container("test-sidecar"), json!({
                "resourcesPolicy": {"targetContainersMode": "invalid", "resourcesExpr": {"limits": {"cpu": "cpu*50%"}}}}))]}),
            1,
        ),
        (
            "initContainer-with-resources-policy-forbidden",
            json!({"selector": {"matchLabels": {"app": "test"}}, "initContainers": [with(container("test-init"), json!({
                "resourcesPolicy": {"targetContainersMode": "sum", "targetContainersNameRegex": ".*",
                "resourcesExpr": {"limits": {"cpu": "cpu*50%"}}}}))]}),
            1,
        ),
        (
            "native-sidecar-initContainer-with-resources-policy-allowed",
            json!({"selector": {"matchLabels": {"app": "test"}}, "updateStrategy": not_update,
                "initContainers": [with(container("test-init"), json!({"restartPolicy": "Always",
                "resourcesPolicy": {"targetContainersMode": "sum", "targetContainersNameRegex": ".*",
                "resourcesExpr": {"limits": {"cpu": "cpu*50%"}}}}))]}),
            0,
        ),
    ];
    for (name, spec, expected) in cases {
        assert_eq!(count(&spec_set(spec)), expected, "case {name}");
    }
}

fn named(name: &str, spec: Value) -> SidecarSet {
    parse(json!({"metadata": {"name": name}, "spec": spec}))
}

#[test]
fn upstream_name_conflicts() {
    let mine = named(
        "sidecarset2",
        json!({"selector": ab(), "containers": [{"name": "container-name"}],
            "initContainers": [{"name": "init-name"}], "volumes": [{"name": "volume-name"}]}),
    );
    let others = [named(
        "sidecarset1",
        json!({"selector": ab(), "containers": [{"name": "container-name"}],
            "initContainers": [{"name": "init-name"}], "volumes": [{"name": "volume-name"}]}),
    )];
    assert_eq!(conflicts::validate_conflicts(&mine, &others).len(), 2);

    let ns = |app: &str| json!({"matchLabels": {"app": app}});
    let mine = named(
        "sidecarset2",
        json!({"selector": ab(), "namespaceSelector": ns("nginx"), "containers": [{"name": "container-name"}]}),
    );
    let same_ns = [named(
        "sidecarset1",
        json!({"selector": ab(), "namespaceSelector": ns("nginx"), "containers": [{"name": "container-name"}]}),
    )];
    assert_eq!(conflicts::validate_conflicts(&mine, &same_ns).len(), 1);
    let other_ns = [named(
        "sidecarset1",
        json!({"selector": ab(), "namespaceSelector": ns("redis"), "containers": [{"name": "container-name"}]}),
    )];
    assert!(conflicts::validate_conflicts(&mine, &other_ns).is_empty());
    // itself (by name) is never a conflict
    assert!(conflicts::validate_conflicts(&mine, std::slice::from_ref(&mine)).is_empty());
}

fn sel(v: Value) -> LabelSelector {
    serde_json::from_value(v).expect("selector")
}

#[test]
fn upstream_selector_overlap_table() {
    let expr = |key: &str, op: &str, values: &[&str]| json!({"matchExpressions": [{"key": key, "operator": op, "values": values}]});
    let cases = [
        (
            json!({"matchLabels": {"a": "h"}}),
            json!({"matchLabels": {"a": "h"}}),
            true,
        ),
        (
            json!({"matchLabels": {"a": "h"}}),
            json!({"matchLabels": {"a": "i"}}),
            false,
        ),
        (
            json!({"matchLabels": {"a": "h"}}),
            json!({"matchLabels": {"b": "i"}}),
            true,
        ),
        (
            json!({"matchLabels": {"a": "h", "b": "i", "c": "j"}}),
            json!({"matchLabels": {"a": "h", "b": "x", "c": "j"}}),
            false,
        ),
        (
            json!({"matchLabels": {"a": "h"}}),
            expr("a", "In", &["h", "i", "j"]),
            true,
        ),
        (
            json!({"matchLabels": {"a": "h"}}),
            expr("a", "In", &["i", "j"]),
            false,
        ),
        (
            expr("a", "NotIn", &["h", "i"]),
            json!({"matchLabels": {"a": "h"}}),
            false,
        ),
        (
            json!({"matchLabels": {"a": "h"}}),
            expr("a", "Exists", &[]),
            true,
        ),
        (
            expr("a", "DoesNotExist", &[]),
            json!({"matchLabels": {"a": "h"}}),
            false,
        ),
    ];
    for (i, (a, b, expected)) in cases.into_iter().enumerate() {
        let (a, b) = (sel(a), sel(b));
        assert_eq!(is_selector_overlapping(&a, &b), expected, "case {i}");
        assert_eq!(
            is_selector_overlapping(&b, &a),
            expected,
            "case {i} (swapped)"
        );
    }
}

fn with_patches(name: &str, patches: Value) -> SidecarSet {
    named(name, json!({"selector": ab(), "patchPodMetadata": patches}))
}

#[test]
fn upstream_pod_metadata_conflicts() {
    let p = |policy: &str, key: &str, value: &str| json!([{"patchPolicy": policy, "annotations": {key: value}}]);
    let cases = [
        (
            p("Overwrite", "key1", "value1"),
            p("MergePatchJson", "key1", "value1"),
            1,
        ),
        (
            p("Retain", "key1", "value1"),
            p("Overwrite", "key2", "value2"),
            0,
        ),
        (
            p("MergePatchJson", "oom-score", r#"{"log-agent": 1}"#),
            p("MergePatchJson", "oom-score", r#"{"envoy": 1}"#),
            0,
        ),
    ];
    for (i, (mine, theirs, expected)) in cases.into_iter().enumerate() {
        let errs = conflicts::validate_conflicts(
            &with_patches("sidecarset2", mine),
            &[with_patches("sidecarset1", theirs)],
        );
        assert_eq!(errs.len(), expected, "case {i}: {errs:?}");
    }
}

#[test]
fn an_overwrite_in_any_overlapping_sidecarset_conflicts_whatever_the_others_order() {
    let p =
        |policy: &str| json!([{"patchPolicy": policy, "annotations": {"team.io/config": "{}"}}]);
    let mine = with_patches("mine", p("MergePatchJson"));
    let (overwrite, merge) = (p("Overwrite"), p("MergePatchJson"));
    for others in [
        [
            with_patches("a", overwrite.clone()),
            with_patches("b", merge.clone()),
        ],
        [with_patches("a", merge), with_patches("b", overwrite)],
    ] {
        let errs = conflicts::validate_conflicts(&mine, &others);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].message.contains("in conflict with sidecarset"),
            "{errs:?}"
        );
    }
}

#[test]
fn upstream_volume_conflicts() {
    let v = |volumes: Value| named("x", json!({"selector": ab(), "volumes": volumes}));
    let rename = |mut s: SidecarSet, n: &str| {
        s.metadata.name = Some(n.into());
        s
    };
    let cases = [
        (
            json!([{"name": "volume-1"}, {"name": "volume-2"}]),
            json!([{"name": "volume-3"}, {"name": "volume-4"}]),
            0,
        ),
        (
            json!([{"name": "volume-1"}, {"name": "volume-2", "hostPath": {"path": "/home/work"}}]),
            json!([{"hostPath": {"path": "/home/work"}, "name": "volume-2"}, {"name": "volume-3"}]),
            0,
        ),
        (
            json!([{"name": "volume-1"}, {"name": "volume-2", "hostPath": {"path": "/home/work-1"}}]),
            json!([{"name": "volume-2", "hostPath": {"path": "/home/work-2"}}, {"name": "volume-3"}]),
            1,
        ),
    ];
    for (i, (mine, theirs, expected)) in cases.into_iter().enumerate() {
        let errs = conflicts::validate_conflicts(
            &rename(v(mine), "sidecarset2"),
            &[rename(v(theirs), "sidecarset1")],
        );
        assert_eq!(errs.len(), expected, "case {i}: {errs:?}");
    }
}

fn canary(name: &str, base: &str, update: &str) -> SidecarSet {
    parse(json!({"metadata": {"name": name, "annotations": {
        CANARY_ANNOTATION: "true", BASE_ANNOTATION: base}},
        "spec": {"updateStrategy": {"type": update}}}))
}

fn plain(name: &str) -> SidecarSet {
    parse(json!({"metadata": {"name": name}}))
}

#[test]
fn upstream_canary_annotations() {
    let run = |obj: &SidecarSet, old: Option<&SidecarSet>, others: &[SidecarSet]| {
        canary::validate_canary(obj, old, others)
            .into_iter()
            .map(|e| {
                assert_eq!(e.field, "metadata");
                e.message
            })
            .collect::<Vec<_>>()
    };
    assert!(run(&plain("test-sidecarset"), None, &[]).is_empty());
    let itself = canary("test-sidecarset", "test-sidecarset", "NotUpdate");
    let msgs = run(&itself, None, &[plain("test-sidecarset")]);
    assert_eq!(msgs.len(), 1);
    assert!(msgs[0].contains("base sidecarSet cannot be itself"));

    let ok = canary("test-sidecarset", "base-sidecarset", "NotUpdate");
    assert!(run(&ok, None, &[plain("base-sidecarset")]).is_empty());

    let on_canary = canary("test-sidecarset", "base1-sidecarset", "NotUpdate");
    let base_is_canary = canary("base1-sidecarset", "other-base-sidecarset", "NotUpdate");
    let msgs = run(&on_canary, None, &[base_is_canary]);
    assert_eq!(msgs.len(), 1);
    assert!(msgs[0].contains("base sidecarSet cannot be canary"));

    let missing = canary("test-sidecarset", "nonexistent-sidecarset", "NotUpdate");
    let msgs = run(&missing, None, &[]);
    assert_eq!(msgs.len(), 1);
    assert!(msgs[0].contains(
        "fetch base sidecarSet[nonexistent-sidecarset] failed: sidecarsets.apps.kruise.io \"nonexistent-sidecarset\" not found"
    ));

    assert!(run(&ok, Some(&ok), &[plain("base-sidecarset")]).is_empty());
    let changed = canary("test-sidecarset", "new-base-sidecarset", "NotUpdate");
    let old = canary("test-sidecarset", "old-base-sidecarset", "NotUpdate");
    let msgs = run(
        &changed,
        Some(&old),
        &[plain("new-base-sidecarset"), plain("old-base-sidecarset")],
    );
    assert_eq!(msgs.len(), 1);
    assert!(msgs[0].contains("annotations[apps.kruise.io/sidecarset-base] is immutable"));

    let rolling = canary("test-sidecarset", "base-sidecarset", "RollingUpdate");
    let msgs = run(&rolling, None, &[plain("base-sidecarset")]);
    assert_eq!(msgs.len(), 1);
    assert!(msgs[0].contains("RollingUpdate is not supported for canary sidecarSet"));
}

#[test]
fn canary_skips_its_base_in_conflicts() {
    let mut c = canary("envoy-canary", "envoy", "NotUpdate");
    c.spec = named(
        "x",
        json!({"selector": ab(), "containers": [container("envoy")]}),
    )
    .spec;
    c.spec.update_strategy.type_ = "NotUpdate".into();
    let base = named(
        "envoy",
        json!({"selector": ab(), "containers": [container("envoy")]}),
    );
    assert!(conflicts::validate_conflicts(&c, std::slice::from_ref(&base)).is_empty());
    // the other direction is not skipped (upstream: one-directional)
    assert_eq!(conflicts::validate_conflicts(&base, &[c]).len(), 1);
}

fn sidecar_with(containers: Value) -> SidecarSet {
    named(
        "upd",
        json!({"selector": ab(), "updateStrategy": {"type": "NotUpdate"}, "containers": containers}),
    )
}

#[test]
fn update_rules() {
    let old = sidecar_with(json!([container("a")]));
    // adding a container is rejected
    let added = sidecar_with(json!([container("a"), container("b")]));
    let ctx = ValidationContext {
        old: Some(&old),
        ..Default::default()
    };
    let errs = validate(&added, &ctx);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].field, "spec.containers[1].name");
    assert!(errs[0].message.contains("container b is not found"));
    // removing is allowed
    let removed = sidecar_with(json!([container("a")]));
    let old2 = sidecar_with(json!([container("a"), container("b")]));
    assert!(
        validate(
            &removed,
            &ValidationContext {
                old: Some(&old2),
                ..Default::default()
            }
        )
        .is_empty()
    );
    // upstream sidecarset_hotupgrade_test: Cold → Hot on update → 1 error
    let hot = sidecar_with(json!([with(
        container("a"),
        json!({"upgradeStrategy": {
        "upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"}})
    )]));
    let errs = validate(&hot, &ctx);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(
        errs[0].field,
        "spec.containers[0].upgradeStrategy.upgradeType"
    );
    assert!(errs[0].message.contains("upgradeType is immutable"));
    // an empty old upgradeType may change
    let mut untyped = old.clone();
    untyped.spec.containers[0]
        .upgrade_strategy
        .upgrade_type
        .clear();
    let ctx = ValidationContext {
        old: Some(&untyped),
        ..Default::default()
    };
    assert!(validate(&hot, &ctx).is_empty());
}

#[test]
fn conflicts_only_when_everything_else_passed() {
    let other = named(
        "other",
        json!({"selector": ab(), "containers": [container("a")]}),
    );
    let ok = named(
        "mine",
        json!({"selector": ab(), "updateStrategy": {"type": "NotUpdate"}, "containers": [container("a")]}),
    );
    let others = [other];
    let ctx = ValidationContext {
        others: &others,
        ..Default::default()
    };
    let errs = validate(&ok, &ctx);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec.containers[0].name");
    assert!(
        errs[0]
            .message
            .contains("container a already exist in other")
    );
    let mut bad = ok.clone();
    bad.metadata.name = Some("bad_name".into());
    let errs = validate(&bad, &ctx);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "metadata.name");
}

#[test]
fn patch_metadata_whitelist() {
    let set = named(
        "p",
        json!({"selector": ab(), "updateStrategy": {"type": "NotUpdate"}, "containers": [container("a")],
            "patchPodMetadata": [{"annotations": {"oom-score": "1", "other/key": "x"}, "patchPolicy": "Retain"}]}),
    );
    let errs = validate(&set, &ValidationContext::default());
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0]
            .message
            .contains("SidecarSet patch metadata whitelist not found")
    );
    let keys = [regex_lite::Regex::new("^oom").expect("regex")];
    let ctx = ValidationContext {
        allowed_patch_keys: Some(&keys),
        ..Default::default()
    };
    let errs = validate(&set, &ctx);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0]
            .message
            .contains("annotation(other/key) not in whitelist")
    );
    // unanchored match
    let keys = [
        regex_lite::Regex::new("key").expect("regex"),
        regex_lite::Regex::new("score").expect("regex"),
    ];
    let ctx = ValidationContext {
        allowed_patch_keys: Some(&keys),
        ..Default::default()
    };
    assert!(validate(&set, &ctx).is_empty());
    // policy and annotations required, annotation keys validated
    let bad = named(
        "p",
        json!({"selector": ab(), "updateStrategy": {"type": "NotUpdate"}, "containers": [container("a")],
            "patchPodMetadata": [{"annotations": {}}, {"annotations": {"bad key": "v"}, "patchPolicy": "Retain"}]}),
    );
    let all = all_allowed();
    let ctx = ValidationContext {
        allowed_patch_keys: Some(&all),
        ..Default::default()
    };
    let fields: Vec<String> = validate(&bad, &ctx).into_iter().map(|e| e.field).collect();
    assert_eq!(
        fields,
        [
            "spec.patchPodMetadata[0].annotations",
            "spec.patchPodMetadata[0].patchPolicy",
            "spec.patchPodMetadata[1].annotations",
        ]
    );
}

#[test]
fn strategy_rules() {
    let base = |strategy: Value| {
        named(
            "s",
            json!({"selector": ab(), "updateStrategy": strategy, "containers": [container("a")]}),
        )
    };
    let n = |strategy: Value| validate(&base(strategy), &ValidationContext::default());
    assert!(n(json!({"type": "RollingUpdate", "partition": 0, "maxUnavailable": 0})).is_empty());
    assert!(
        n(json!({"type": "RollingUpdate", "partition": "150%", "maxUnavailable": "10%"}))
            .is_empty()
    );
    assert_eq!(
        n(json!({"type": "RollingUpdate", "partition": -1})).len(),
        1
    );
    assert_eq!(
        n(json!({"type": "RollingUpdate", "maxUnavailable": "ten"})).len(),
        1
    );
    let errs = n(
        json!({"type": "RollingUpdate", "partition": 3, "selector": {"matchLabels": {"canary": "true"}}}),
    );
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0]
            .message
            .contains("Partition and Selector cannot be used together")
    );
    assert!(n(json!({"type": "RollingUpdate", "partition": 0, "selector": {"matchLabels": {"c": "t"}}})).is_empty());
    assert_eq!(n(json!({"type": "RollingUpdate", "selector": {}})).len(), 1);
    assert_eq!(n(json!({"type": "RollingUpdate", "priorityStrategy": {
        "weightPriority": [{"weight": 50, "matchSelector": ab()}], "orderPriority": [{"orderedKey": "k"}]}})).len(), 1);
    assert!(
        n(json!({"type": "RollingUpdate", "priorityStrategy": {
        "weightPriority": [{"weight": 0, "matchSelector": ab()}]}}))
        .is_empty()
    );
    assert_eq!(
        n(json!({"type": "RollingUpdate", "priorityStrategy": {
        "weightPriority": [{"weight": 101, "matchSelector": ab()}]}}))
        .len(),
        1
    );
    assert_eq!(
        n(json!({"type": "RollingUpdate", "priorityStrategy": {
        "weightPriority": [{"weight": 1, "matchSelector": {}}]}}))
        .len(),
        1
    );
    assert_eq!(n(json!({"type": "RollingUpdate", "priorityStrategy": {"orderPriority": [{"orderedKey": ""}]}})).len(), 1);
    assert_eq!(
        n(json!({"type": "RollingUpdate", "scatterStrategy": [{"key": "", "value": "x"}]})).len(),
        1
    );
    // Terms are told apart by their joined `key:value` text, as upstream does.
    let joined_twice = json!({"type": "RollingUpdate", "scatterStrategy": [
        {"key": "zone:a", "value": "b"}, {"key": "zone", "value": "a:b"}]});
    assert_eq!(n(joined_twice).len(), 1);
    let distinct = json!({"type": "RollingUpdate", "scatterStrategy": [
        {"key": "zone", "value": "a"}, {"key": "zone", "value": "b"}]});
    assert!(n(distinct).is_empty());
    // NotUpdate: nothing of the strategy is validated
    assert!(n(json!({"type": "NotUpdate", "partition": -1, "selector": {}})).is_empty());
    // injection revision
    let rev = |revision: Value| {
        let set = named(
            "r",
            json!({"selector": ab(), "updateStrategy": {"type": "NotUpdate"},
            "containers": [container("a")], "injectionStrategy": {"revision": revision}}),
        );
        validate(&set, &ValidationContext::default()).len()
    };
    assert_eq!(rev(json!({"policy": "Always"})), 1);
    assert_eq!(
        rev(json!({"revisionName": "r-1", "policy": "Sometimes"})),
        1
    );
    assert_eq!(rev(json!({"customVersion": "v1", "policy": "Partial"})), 0);
}

#[test]
fn v1alpha1_namespace_is_a_selector() {
    let set = named(
        "n",
        json!({"selector": ab(), "namespace": "Bad_Namespace-", "updateStrategy": {"type": "NotUpdate"},
        "containers": [container("a")]}),
    );
    let errs = validate(&set, &ValidationContext::default());
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0].field.starts_with("spec.namespace"));
    // spec.namespace wins over a namespaceSelector (which is dropped by conversion)
    let set = named(
        "n",
        json!({"selector": ab(), "namespace": "prod", "namespaceSelector": {},
        "updateStrategy": {"type": "NotUpdate"}, "containers": [container("a")]}),
    );
    assert!(validate(&set, &ValidationContext::default()).is_empty());
    // namespaces scope rule 15
    let a = named(
        "a",
        json!({"selector": ab(), "namespace": "prod", "updateStrategy": {"type": "NotUpdate"}, "containers": [container("c")]}),
    );
    let b = named(
        "b",
        json!({"selector": ab(), "namespace": "dev", "containers": [container("c")]}),
    );
    let others = [b];
    let ctx = ValidationContext {
        others: &others,
        ..Default::default()
    };
    assert!(validate(&a, &ctx).is_empty());
}

#[test]
fn pod_validation_subset() {
    let n = |containers: Value, init: Value, volumes: Value| {
        let set = named(
            "p",
            json!({"selector": ab(), "updateStrategy": {"type": "NotUpdate"},
            "containers": containers, "initContainers": init, "volumes": volumes}),
        );
        validate(&set, &ValidationContext::default())
            .into_iter()
            .map(|e| e.field)
            .collect::<Vec<_>>()
    };
    let c = |extra: Value| with(container("a"), extra);
    // duplicate names across init and regular containers
    assert_eq!(
        n(json!([container("a")]), json!([container("a")]), json!([])),
        ["spec.initContainers[0].name"]
    );
    assert_eq!(
        n(
            json!([container("a"), container("a")]),
            json!([]),
            json!([])
        ),
        ["spec.containers[1].name"]
    );
    // names must be DNS-1123 labels
    assert_eq!(
        n(json!([container("A_b")]), json!([]), json!([])),
        ["spec.containers[0].name"]
    );
    // mounts: undeclared volume, empty/duplicate mountPath
    assert_eq!(
        n(
            json!([c(
                json!({"volumeMounts": [{"name": "v", "mountPath": "/x"}, {"name": "v", "mountPath": "/x"}, {"name": "w"}]})
            )]),
            json!([]),
            json!([{"name": "v", "emptyDir": {}}])
        ),
        [
            "spec.containers[0].volumeMounts[1].mountPath",
            "spec.containers[0].volumeMounts[2].name",
            "spec.containers[0].volumeMounts[2].mountPath"
        ]
    );
    // volumes: bad name, duplicate, two sources, hostPath without path
    assert_eq!(
        n(
            json!([container("a")]),
            json!([]),
            json!([{"name": "V", "emptyDir": {}}, {"name": "x", "emptyDir": {}},
            {"name": "x", "emptyDir": {}}, {"name": "y", "emptyDir": {}, "hostPath": {"path": "/"}}, {"name": "z", "hostPath": {}}])
        ),
        [
            "spec.volumes[0].name",
            "spec.volumes[2].name",
            "spec.volumes[3].hostPath",
            "spec.volumes[4].hostPath.path"
        ]
    );
    // a device on a non-PVC volume
    assert_eq!(
        n(
            json!([c(
                json!({"volumeDevices": [{"name": "v", "devicePath": "/dev/x"}]})
            )]),
            json!([]),
            json!([{"name": "v", "emptyDir": {}}])
        ),
        ["spec.containers[0].volumeDevices[0].name"]
    );
    // ports
    assert_eq!(
        n(
            json!([c(
                json!({"ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"},
            {"name": "http", "containerPort": 70000, "protocol": "TCP"}, {"containerPort": 81, "protocol": "ICMP"}, {"protocol": "TCP"}]})
            )]),
            json!([]),
            json!([])
        ),
        [
            "spec.containers[0].ports[1].name",
            "spec.containers[0].ports[1].containerPort",
            "spec.containers[0].ports[2].protocol",
            "spec.containers[0].ports[3].containerPort"
        ]
    );
    // env names and valueFrom
    assert_eq!(
        n(
            json!([c(
                json!({"env": [{"name": "OK", "value": "1"}, {"name": ""}, {"name": "A=B"},
            {"name": "X", "valueFrom": {}}, {"name": "Y", "value": "v", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}]})
            )]),
            json!([]),
            json!([])
        ),
        [
            "spec.containers[0].env[1].name",
            "spec.containers[0].env[2].name",
            "spec.containers[0].env[3].valueFrom",
            "spec.containers[0].env[4].valueFrom"
        ]
    );
    // restartPolicy: forbidden on containers; only Always on init containers
    assert_eq!(
        n(
            json!([c(json!({"restartPolicy": "Always"}))]),
            json!([]),
            json!([])
        ),
        ["spec.containers[0].restartPolicy"]
    );
    assert_eq!(
        n(
            json!([container("a")]),
            json!([with(container("i"), json!({"restartPolicy": "OnFailure"}))]),
            json!([])
        ),
        ["spec.initContainers[0].restartPolicy"]
    );
    // probes: only on native sidecar init containers; liveness needs successThreshold 1
    let probe = json!({"exec": {"command": ["true"]}, "successThreshold": 1});
    assert_eq!(
        n(
            json!([container("a")]),
            json!([with(container("i"), json!({"livenessProbe": probe}))]),
            json!([])
        ),
        ["spec.initContainers[0].livenessProbe"]
    );
    assert!(
        n(
            json!([container("a")]),
            json!([with(
                container("i"),
                json!({"restartPolicy": "Always", "livenessProbe": probe})
            )]),
            json!([])
        )
        .is_empty()
    );
    assert_eq!(
        n(
            json!([c(
                json!({"livenessProbe": {"exec": {"command": ["x"]}, "successThreshold": 2}, "readinessProbe": {}})
            )]),
            json!([]),
            json!([])
        ),
        [
            "spec.containers[0].livenessProbe.successThreshold",
            "spec.containers[0].readinessProbe"
        ]
    );
    // resources: requests ≤ limits
    assert_eq!(
        n(
            json!([c(
                json!({"resources": {"limits": {"cpu": "100m"}, "requests": {"cpu": "200m", "memory": "1Gi"}}})
            )]),
            json!([]),
            json!([])
        ),
        ["spec.containers[0].resources.requests"]
    );
    assert!(
        n(
            json!([c(
                json!({"resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1000m"}}})
            )]),
            json!([]),
            json!([])
        )
        .is_empty()
    );
    assert_eq!(
        n(
            json!([c(json!({"resources": {"limits": {"cpu": "lots"}}}))]),
            json!([]),
            json!([])
        ),
        ["spec.containers[0].resources.limits[cpu]"]
    );
    // wrong JSON types are reported, never a panic
    assert_eq!(
        n(json!([c(json!({"image": 5}))]), json!([]), json!([])),
        ["spec.containers[0].image", "spec.containers[0].image"]
    );
    assert_eq!(
        n(json!([container("a")]), json!([]), json!(["not-an-object"])),
        ["spec.volumes[0]"]
    );
    // pull and termination-message policies are required (the defaults set them)
    let mut raw = container("a");
    if let Value::Object(m) = &mut raw {
        m.remove("imagePullPolicy");
        m.remove("terminationMessagePolicy");
    }
    assert_eq!(
        n(json!([raw]), json!([]), json!([])),
        [
            "spec.containers[0].terminationMessagePolicy",
            "spec.containers[0].imagePullPolicy"
        ]
    );
}

/// §2.1 defaults, as the mutating webhook applies them before validation.
fn defaulted(mut v: Value) -> Value {
    crate::admission::apply_defaults(&mut v);
    v
}

#[test]
fn conformance_sidecarset_cases() {
    // The project's vendored copy of ../shared/conformance (present in every clone).
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/conformance");
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("the conformance cases must be at {dir}: {e}"))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    entries.sort();
    let mut seen = 0;
    for path in entries {
        let case: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        let request = &case["request"];
        if request["kind"]["kind"] != "SidecarSet" || request["operation"] == "DELETE" {
            continue;
        }
        seen += 1;
        let object = parse(defaulted(request["object"].clone()));
        let old = (!request["oldObject"].is_null())
            .then(|| parse(defaulted(request["oldObject"].clone())));
        let others: Vec<SidecarSet> = case["sidecarSets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| parse(s.clone()))
            .collect();
        // A conformance case's cluster holds no ControllerRevisions.
        let unresolved = crate::revision::RevisionQuery::of(&object).map(|_| "not found");
        // The case's settings, compiled as the policy compiles them (§2.3 whitelist).
        let settings: crate::settings::Settings =
            serde_json::from_value(case.get("settings").cloned().unwrap_or(json!({})))
                .expect("the case's settings");
        let whitelist = settings.patch_key_patterns().expect("the case's whitelist");
        let ctx = ValidationContext {
            old: old.as_ref(),
            others: &others,
            allowed_patch_keys: whitelist.as_deref(),
            unresolved_revision: unresolved,
        };
        let errs = validate(&object, &ctx);
        let message = summarize(&errs);
        let allowed = case["expect"]["allowed"].as_bool().expect("allowed");
        assert_eq!(errs.is_empty(), allowed, "{}: {message}", path.display());
        if let Some(needle) = case["expect"]["messageContains"].as_str() {
            assert!(
                message.to_lowercase().contains(&needle.to_lowercase()),
                "{}: {message:?} lacks {needle:?}",
                path.display()
            );
        }
    }
    assert!(
        seen >= 9,
        "expected the SidecarSet cases 028-036, saw {seen}"
    );
}
