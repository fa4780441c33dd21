//! Validation the stand-in shares with kube-apiserver: ObjectMeta (labels, annotations,
//! immutable system fields), the pod update rule (tolerations, terminationGracePeriodSeconds,
//! init containers) and ControllerRevision data.

mod common;

use common::*;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::json;

const LABEL_NAME_RULE: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_RULE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

async fn create_err(pods: &Api<Pod>, p: &Pod) -> kube::core::Status {
    status(
        pods.create(&PostParams::default(), p)
            .await
            .expect_err("invalid create accepted"),
    )
}

async fn patch_err(pods: &Api<Pod>, name: &str, patch: serde_json::Value) -> kube::core::Status {
    status(
        pods.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect_err("invalid patch accepted"),
    )
}

#[tokio::test]
async fn labels_and_annotations_are_validated_on_create_and_update() {
    let s = start().await;
    let client = s.client().expect("client");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");

    let err = create_err(&pods, &pod("a", json!({"bad key": "v"}), &[("c", "i:1")])).await;
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        err.message,
        format!(
            "Pod \"a\" is invalid: metadata.labels: Invalid value: \"bad key\": {LABEL_NAME_RULE}"
        )
    );
    let causes = err.details.expect("details").causes;
    let cause = &causes[0];
    assert_eq!(
        (cause.reason.as_str(), cause.field.as_str()),
        ("FieldValueInvalid", "metadata.labels")
    );

    let err = create_err(&pods, &pod("a", json!({"app": "-web"}), &[("c", "i:1")])).await;
    assert_eq!(
        err.message,
        format!(
            "Pod \"a\" is invalid: metadata.labels: Invalid value: \"-web\": {LABEL_VALUE_RULE}"
        )
    );
    let long = "v".repeat(64);
    let err = create_err(&pods, &pod("a", json!({ "app": long }), &[("c", "i:1")])).await;
    assert_eq!(
        err.message,
        format!(
            "Pod \"a\" is invalid: metadata.labels: Invalid value: \"{long}\": must be no more than 63 bytes"
        )
    );

    // Annotation keys follow the label-key rule (case-insensitively); values are free.
    let mut annotated = pod(
        "a",
        json!({"example.com/App_1": "ok.value"}),
        &[("c", "i:1")],
    );
    annotated.metadata.annotations = Some(
        [
            (
                "Example.COM/Any".to_string(),
                "any value at all".to_string(),
            ),
            ("x".to_string(), String::new()),
        ]
        .into(),
    );
    pods.create(&PostParams::default(), &annotated)
        .await
        .expect("valid labels and annotations");
    let mut bad = pod("b", json!({}), &[("c", "i:1")]);
    bad.metadata.annotations = Some([("a/b/c".to_string(), "v".to_string())].into());
    let err = create_err(&pods, &bad).await;
    assert_eq!(
        err.message,
        "Pod \"b\" is invalid: metadata.annotations: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    );

    // Updates are checked too; the total annotation size is limited to 256 KiB.
    let err = patch_err(&pods, "a", json!({"metadata": {"labels": {"/x": "v"}}})).await;
    assert_eq!(
        err.message,
        "Pod \"a\" is invalid: metadata.labels: Invalid value: \"/x\": prefix part must be non-empty"
    );
    let big = "x".repeat(256 * 1024);
    let err = patch_err(
        &pods,
        "a",
        json!({"metadata": {"annotations": {"big": big}}}),
    )
    .await;
    assert_eq!(
        err.message,
        "Pod \"a\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes"
    );
    let causes = err.details.expect("details").causes;
    assert!(
        !causes.is_empty()
            && causes
                .iter()
                .all(|c| c.reason == "FieldValueTooLong" && c.field == "metadata.annotations"),
        "{causes:?}"
    );
    let fits = "x".repeat(256 * 1024 - "big".len() - 200);
    pods.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(&json!({"metadata": {"annotations": {"big": fits}}})),
    )
    .await
    .expect("annotations within the limit");

    // Custom resources get the same ObjectMeta validation.
    let ss: Api<DynamicObject> = Api::all_with(client, &sidecarset_resource());
    let mut bad_ss = sidecarset("bad", "sidecar:1");
    bad_ss.metadata.labels = Some([("a".to_string(), "b c".to_string())].into());
    let err = status(
        ss.create(&PostParams::default(), &bad_ss)
            .await
            .expect_err("bad label on a SidecarSet"),
    );
    assert_eq!(
        err.message,
        format!(
            "SidecarSet.apps.kruise.io \"bad\" is invalid: metadata.labels: Invalid value: \"b c\": {LABEL_VALUE_RULE}"
        )
    );
}

#[tokio::test]
async fn uid_deletion_timestamp_and_grace_period_are_immutable() {
    let s = start().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let created = pods
        .create(
            &PostParams::default(),
            &pod("p", json!({}), &[("c", "i:1")]),
        )
        .await
        .expect("create");
    let uid = created.metadata.uid.clone().expect("uid");

    let err = patch_err(&pods, "p", json!({"metadata": {"uid": "other"}})).await;
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        err.message,
        "Pod \"p\" is invalid: metadata.uid: Invalid value: \"other\": field is immutable"
    );
    let err = patch_err(
        &pods,
        "p",
        json!({"metadata": {"deletionTimestamp": "2030-01-01T00:00:00Z"}}),
    )
    .await;
    assert_eq!(
        err.message,
        "Pod \"p\" is invalid: metadata.deletionTimestamp: Invalid value: \"2030-01-01T00:00:00Z\": field is immutable"
    );
    let err = patch_err(
        &pods,
        "p",
        json!({"metadata": {"deletionGracePeriodSeconds": 5}}),
    )
    .await;
    assert_eq!(
        err.message,
        "Pod \"p\" is invalid: metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable"
    );

    // A PUT carries its uid as a storage precondition: a different one is a 409.
    let mut other = pods.get("p").await.expect("get");
    other.metadata.uid = Some("other".into());
    let err = status(
        pods.replace("p", &PostParams::default(), &other)
            .await
            .expect_err("PUT with another uid"),
    );
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        err.message,
        format!(
            "Operation cannot be fulfilled on pods \"p\": StorageError: invalid object, Code: 4, Key: /registry/pods/default/p, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: {uid}"
        )
    );

    // Without a uid the stored one is kept; creationTimestamp changes are ignored.
    let mut plain = pods.get("p").await.expect("get");
    plain.metadata.uid = None;
    plain.metadata.creation_timestamp = None;
    let kept = pods
        .replace("p", &PostParams::default(), &plain)
        .await
        .expect("PUT without uid");
    assert_eq!(kept.metadata.uid.as_deref(), Some(uid.as_str()));
    assert_eq!(
        kept.metadata.creation_timestamp,
        created.metadata.creation_timestamp
    );
}

#[tokio::test]
async fn tolerations_may_only_be_added_or_change_their_seconds() {
    let s = start().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let mut p = pod("p", json!({}), &[("c", "i:1")]);
    if let Some(spec) = p.spec.as_mut() {
        spec.tolerations = Some(
            serde_json::from_value(json!([
                {"key": "gone", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
                {"key": "k", "operator": "Equal", "value": "v"}
            ]))
            .expect("tolerations"),
        );
    }
    pods.create(&PostParams::default(), &p)
        .await
        .expect("create");
    let set = |t: serde_json::Value| json!({"spec": {"tolerations": t}});

    // tolerationSeconds may change either way, or be dropped, and additions are fine.
    for t in [
        json!([{"key": "gone", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 3000},
               {"key": "k", "operator": "Equal", "value": "v"}]),
        json!([{"key": "new", "operator": "Exists"},
               {"key": "gone", "operator": "Exists", "effect": "NoExecute"},
               {"key": "k", "operator": "Equal", "value": "v"}]),
    ] {
        pods.patch("p", &PatchParams::default(), &Patch::Merge(&set(t)))
            .await
            .expect("allowed toleration change");
    }

    // Anything else about an existing toleration, or dropping one, is forbidden.
    let forbidden = "Pod \"p\" is invalid: spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds";
    for t in [
        json!([{"key": "new", "operator": "Exists"}, {"key": "gone", "operator": "Exists", "effect": "NoExecute"}]),
        json!([{"key": "new", "operator": "Exists"}, {"key": "gone", "operator": "Exists", "effect": "NoExecute"},
               {"key": "k", "operator": "Equal", "value": "w"}]),
    ] {
        let err = patch_err(&pods, "p", set(t)).await;
        assert_eq!(err.message, forbidden);
    }

    // New tolerations are validated: seconds need the NoExecute effect.
    let err = patch_err(
        &pods,
        "p",
        set(json!([{"key": "new", "operator": "Exists"}, {"key": "gone", "operator": "Exists", "effect": "NoExecute"},
                   {"key": "k", "operator": "Equal", "value": "v"},
                   {"key": "x", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 1}])),
    )
    .await;
    assert_eq!(
        err.message,
        "Pod \"p\" is invalid: spec.tolerations[3].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"
    );
}

#[tokio::test]
async fn termination_grace_period_may_only_go_from_negative_to_one() {
    let s = start().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let mut negative = pod("neg", json!({}), &[("c", "i:1")]);
    if let Some(spec) = negative.spec.as_mut() {
        spec.termination_grace_period_seconds = Some(-1);
    }
    pods.create(&PostParams::default(), &negative)
        .await
        .expect("create neg");
    pods.create(
        &PostParams::default(),
        &pod("pos", json!({}), &[("c", "i:1")]),
    )
    .await
    .expect("create pos");
    let grace = |n: i64| json!({"spec": {"terminationGracePeriodSeconds": n}});

    let err = patch_err(&pods, "neg", grace(5)).await;
    assert!(
        err.message.starts_with(
            "Pod \"neg\" is invalid: spec: Forbidden: pod updates may not change fields other than"
        ),
        "{}",
        err.message
    );
    let err = patch_err(&pods, "pos", grace(1)).await;
    assert!(
        err.message.starts_with(
            "Pod \"pos\" is invalid: spec: Forbidden: pod updates may not change fields other than"
        ),
        "{}",
        err.message
    );
    let fixed = pods
        .patch("neg", &PatchParams::default(), &Patch::Merge(&grace(1)))
        .await
        .expect("negative to 1 is allowed");
    assert_eq!(
        fixed.spec.and_then(|s| s.termination_grace_period_seconds),
        Some(1)
    );
}

#[tokio::test]
async fn init_container_images_may_change_but_nothing_else() {
    let s = start().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let mut p = pod("p", json!({}), &[("c", "i:1")]);
    if let Some(spec) = p.spec.as_mut() {
        spec.init_containers = Some(
            serde_json::from_value(json!([{"name": "init", "image": "init:1"}])).expect("init"),
        );
    }
    pods.create(&PostParams::default(), &p)
        .await
        .expect("create");
    let smp = json!({"spec": {"initContainers": [{"name": "init", "image": "init:2"}]}});
    let patched = pods
        .patch("p", &PatchParams::default(), &Patch::Strategic(&smp))
        .await
        .expect("init image change");
    let init = patched
        .spec
        .and_then(|s| s.init_containers)
        .expect("init containers");
    assert_eq!(init[0].image.as_deref(), Some("init:2"));

    let env = json!({"spec": {"initContainers": [{"name": "init", "env": [{"name": "A", "value": "1"}]}]}});
    let err = status(
        pods.patch("p", &PatchParams::default(), &Patch::Strategic(&env))
            .await
            .expect_err("init env change"),
    );
    assert!(
        err.message.starts_with(
            "Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than"
        ),
        "{}",
        err.message
    );
    let add = json!({"spec": {"initContainers": [{"name": "init2", "image": "x:1"}]}});
    let err = status(
        pods.patch("p", &PatchParams::default(), &Patch::Strategic(&add))
            .await
            .expect_err("added init container"),
    );
    assert_eq!(
        err.message,
        "Pod \"p\" is invalid: spec.initContainers: Forbidden: pod updates may not add or remove containers"
    );
}

#[tokio::test]
async fn controller_revision_data_is_immutable() {
    let s = start().await;
    let revisions: Api<ControllerRevision> =
        Api::namespaced(s.client().expect("client"), "default");
    let cr: ControllerRevision = serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": { "name": "r1", "labels": {"app": "x"} },
        "data": { "spec": { "image": "a:1" } },
        "revision": 1
    }))
    .expect("revision");
    revisions
        .create(&PostParams::default(), &cr)
        .await
        .expect("create");

    let mut relabeled = revisions.get("r1").await.expect("get");
    relabeled
        .metadata
        .labels
        .get_or_insert_default()
        .insert("app".into(), "y".into());
    let relabeled = revisions
        .replace("r1", &PostParams::default(), &relabeled)
        .await
        .expect("metadata may change");

    let mut changed = relabeled.clone();
    changed.data = Some(k8s_openapi::apimachinery::pkg::runtime::RawExtension(
        json!({"spec": {"image": "a:2"}}),
    ));
    let err = status(
        revisions
            .replace("r1", &PostParams::default(), &changed)
            .await
            .expect_err("data change"),
    );
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        err.message,
        "ControllerRevision.apps \"r1\" is invalid: data: Invalid value: {\"spec\":{\"image\":\"a:2\"}}: field is immutable"
    );
    let patch = json!({"data": {"spec": {"image": "a:3"}}});
    let err = status(
        revisions
            .patch("r1", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect_err("data patch"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        revisions.get("r1").await.expect("get").data,
        relabeled.data,
        "data unchanged"
    );
}
