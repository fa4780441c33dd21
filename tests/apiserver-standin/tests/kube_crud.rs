//! The stand-in against kube-rs: create/get/list/delete, selectors, paging, conflicts, validation.

mod common;

use common::*;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

#[tokio::test]
async fn create_get_list_delete_round_trip() {
    let s = start().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let pp = PostParams::default();
    let created = pods
        .create(
            &pp,
            &pod(
                "a",
                json!({"app": "web", "tier": "front"}),
                &[("main", "nginx:1")],
            ),
        )
        .await
        .expect("create");
    let meta = &created.metadata;
    assert!(meta.uid.as_deref().is_some_and(|u| u.len() == 36));
    assert!(meta.creation_timestamp.is_some());
    let rv: u64 = meta
        .resource_version
        .as_deref()
        .and_then(|r| r.parse().ok())
        .expect("rv");
    assert_eq!(
        created.status.and_then(|s| s.phase).as_deref(),
        Some("Pending")
    );
    assert_eq!(
        created
            .spec
            .as_ref()
            .and_then(|s| s.restart_policy.as_deref()),
        Some("Always"),
        "defaults applied"
    );

    pods.create(&pp, &pod("b", json!({"app": "db"}), &[("main", "pg:1")]))
        .await
        .expect("create b");
    let mut gen_pod = pod("", json!({"app": "web"}), &[("main", "nginx:1")]);
    gen_pod.metadata.name = None;
    gen_pod.metadata.generate_name = Some("gen-".into());
    let generated = pods.create(&pp, &gen_pod).await.expect("generateName");
    let gen_name = generated.metadata.name.clone().expect("name");
    assert!(
        gen_name.starts_with("gen-") && gen_name.len() == 9,
        "{gen_name}"
    );

    let got = pods.get("a").await.expect("get");
    let got_rv: u64 = got
        .metadata
        .resource_version
        .as_deref()
        .and_then(|r| r.parse().ok())
        .expect("rv");
    assert_eq!(got_rv, rv);

    let names = |l: kube::api::ObjectList<Pod>| -> Vec<String> {
        l.items
            .into_iter()
            .filter_map(|p| p.metadata.name)
            .collect()
    };
    let all = pods.list(&ListParams::default()).await.expect("list");
    let list_rv: u64 = all
        .metadata
        .resource_version
        .as_deref()
        .and_then(|r| r.parse().ok())
        .expect("rv");
    assert!(list_rv > rv);
    assert_eq!(names(all).len(), 3);
    for (sel, want) in [
        ("app=web", vec!["a", gen_name.as_str()]),
        ("app==web,tier=front", vec!["a"]),
        ("app!=web", vec!["b"]),
        ("app in (db,cache)", vec!["b"]),
        ("app notin (db)", vec!["a", gen_name.as_str()]),
        ("tier", vec!["a"]),
        ("!tier", vec!["b", gen_name.as_str()]),
    ] {
        let got = names(
            pods.list(&ListParams::default().labels(sel))
                .await
                .expect("list"),
        );
        let mut want: Vec<String> = want.into_iter().map(String::from).collect();
        want.sort();
        assert_eq!(got, want, "selector {sel}");
    }
    let by_name = names(
        pods.list(&ListParams::default().fields("metadata.name=b"))
            .await
            .expect("list"),
    );
    assert_eq!(by_name, vec!["b"]);
    let by_ns = names(
        pods.list(&ListParams::default().fields("metadata.namespace=kube-system"))
            .await
            .expect("list"),
    );
    assert!(by_ns.is_empty());
    let bad = pods
        .list(&ListParams::default().fields("spec.bogus=1"))
        .await
        .expect_err("unsupported field");
    assert_eq!(status(bad).code, 400);

    // Paging.
    let page1 = pods
        .list(&ListParams::default().limit(2))
        .await
        .expect("page 1");
    let token = page1.metadata.continue_.clone().expect("continue token");
    assert_eq!(page1.items.len(), 2);
    let page2 = pods
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .expect("page 2");
    assert_eq!(page2.items.len(), 1);
    assert!(
        page2
            .metadata
            .continue_
            .as_deref()
            .is_none_or(str::is_empty)
    );

    // Cluster-wide list.
    let everywhere: Api<Pod> = Api::all(s.client().expect("client"));
    assert_eq!(
        everywhere
            .list(&ListParams::default())
            .await
            .expect("list all")
            .items
            .len(),
        3
    );

    // Duplicates, missing names and namespaces.
    let dup = pods
        .create(&pp, &pod("a", json!({}), &[("main", "x:1")]))
        .await
        .expect_err("dup");
    let dup = status(dup);
    assert_eq!((dup.code, dup.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(dup.message, "pods \"a\" already exists");
    let missing = status(pods.get("nope").await.expect_err("missing"));
    assert_eq!((missing.code, missing.reason.as_str()), (404, "NotFound"));
    assert_eq!(missing.message, "pods \"nope\" not found");
    let elsewhere: Api<Pod> = Api::namespaced(s.client().expect("client"), "ghost");
    let no_ns = status(
        elsewhere
            .create(&pp, &pod("x", json!({}), &[("m", "i:1")]))
            .await
            .expect_err("ns"),
    );
    assert_eq!(
        (no_ns.code, no_ns.message.as_str()),
        (404, "namespaces \"ghost\" not found")
    );
    let invalid = status(
        pods.create(&pp, &pod("y", json!({}), &[]))
            .await
            .expect_err("no containers"),
    );
    assert_eq!(invalid.code, 422);
    assert_eq!(
        invalid.message,
        "Pod \"y\" is invalid: spec.containers: Required value"
    );

    // Delete.
    pods.delete("a", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(status(pods.get("a").await.expect_err("gone")).code, 404);
    assert_eq!(
        status(
            pods.delete("a", &DeleteParams::default())
                .await
                .expect_err("twice")
        )
        .code,
        404
    );
}

#[tokio::test]
async fn namespaces_get_the_metadata_name_label() {
    let s = start().await;
    let nss: Api<Namespace> = Api::all(s.client().expect("client"));
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "team-a", "labels": {"x": "y"}}}))
            .expect("ns");
    let created = nss
        .create(&PostParams::default(), &ns)
        .await
        .expect("create");
    let labels = created.metadata.labels.expect("labels");
    assert_eq!(
        labels
            .get("kubernetes.io/metadata.name")
            .map(String::as_str),
        Some("team-a")
    );
    assert_eq!(
        created.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
    let listed = nss
        .list(&ListParams::default().labels("kubernetes.io/metadata.name=team-a"))
        .await
        .expect("list");
    assert_eq!(listed.items.len(), 1);
    let bad: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "Bad_Name"}})).expect("ns");
    assert_eq!(
        status(
            nss.create(&PostParams::default(), &bad)
                .await
                .expect_err("invalid")
        )
        .code,
        422
    );
}

#[tokio::test]
async fn stale_put_and_stale_patch_conflict() {
    let s = start().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    pods.create(
        &PostParams::default(),
        &pod("p", json!({"app": "web"}), &[("main", "nginx:1")]),
    )
    .await
    .expect("create");
    let v1 = pods.get("p").await.expect("get");
    let mut first = v1.clone();
    first
        .metadata
        .labels
        .get_or_insert_default()
        .insert("step".into(), "1".into());
    let after = pods
        .replace("p", &PostParams::default(), &first)
        .await
        .expect("fresh PUT");
    assert_ne!(
        after.metadata.resource_version,
        v1.metadata.resource_version
    );

    let mut stale = v1.clone();
    stale
        .metadata
        .labels
        .get_or_insert_default()
        .insert("step".into(), "2".into());
    let err = status(
        pods.replace("p", &PostParams::default(), &stale)
            .await
            .expect_err("stale PUT"),
    );
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on pods \"p\": the object has been modified; please apply your changes to the latest version and try again"
    );

    // A merge patch carrying a stale resourceVersion is a conditional update: 409.
    let stale_rv = v1.metadata.resource_version.clone().expect("rv");
    let patch = json!({"metadata": {"resourceVersion": stale_rv, "labels": {"step": "3"}}});
    let err = status(
        pods.patch("p", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect_err("stale merge patch"),
    );
    assert_eq!(err.code, 409);

    // A JSON patch whose `test` fails: applyJSPatch answers NewGenericServerResponse(422, ...,
    // isUnexpectedResponse=false): the generic message, empty details, no causes.
    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": stale_rv},
        {"op": "replace", "path": "/metadata/labels/step", "value": "4"}
    ]))
    .expect("ops");
    let err = status(
        pods.patch("p", &PatchParams::default(), &Patch::Json::<()>(ops))
            .await
            .expect_err("failed test op"),
    );
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        err.message,
        "the server rejected our request due to an error in our request"
    );
    let details = err.details.expect("details present (empty)");
    assert!(
        details.causes.is_empty() && details.name.is_empty() && details.kind.is_empty(),
        "{details:?}"
    );

    // The same patch with the current version applies.
    let current = pods
        .get("p")
        .await
        .expect("get")
        .metadata
        .resource_version
        .expect("rv");
    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": current},
        {"op": "replace", "path": "/metadata/labels/step", "value": "4"}
    ]))
    .expect("ops");
    let patched = pods
        .patch("p", &PatchParams::default(), &Patch::Json::<()>(ops))
        .await
        .expect("patch");
    assert_eq!(
        patched
            .metadata
            .labels
            .and_then(|l| l.get("step").cloned())
            .as_deref(),
        Some("4")
    );

    // Lease PUT without resourceVersion is unconditional; leases are created by PUT.
    let leases: Api<Lease> = Api::namespaced(s.client().expect("client"), "default");
    let lease: Lease = serde_json::from_value(
        json!({"metadata": {"name": "leader"}, "spec": {"holderIdentity": "me"}}),
    )
    .expect("lease");
    leases
        .replace("leader", &PostParams::default(), &lease)
        .await
        .expect("create by PUT");
    leases
        .replace("leader", &PostParams::default(), &lease)
        .await
        .expect("unconditional PUT");
}

#[tokio::test]
async fn pod_updates_follow_the_immutability_rule() {
    let s = start().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let mut p = pod(
        "p",
        json!({"app": "web"}),
        &[("main", "nginx:1"), ("side", "envoy:1")],
    );
    if let Some(spec) = p.spec.as_mut() {
        spec.tolerations = Some(vec![
            serde_json::from_value(json!({"key": "k", "operator": "Exists"})).expect("t"),
        ]);
    }
    pods.create(&PostParams::default(), &p)
        .await
        .expect("create");

    // Allowed: image, labels, annotations, added tolerations, activeDeadlineSeconds.
    let mut ok = pods.get("p").await.expect("get");
    if let Some(spec) = ok.spec.as_mut() {
        spec.containers[1].image = Some("envoy:2".into());
        spec.active_deadline_seconds = Some(600);
        spec.tolerations
            .get_or_insert_default()
            .push(serde_json::from_value(json!({"key": "new", "operator": "Exists"})).expect("t"));
    }
    ok.metadata
        .annotations
        .get_or_insert_default()
        .insert("a".into(), "b".into());
    ok.metadata
        .labels
        .get_or_insert_default()
        .insert("l".into(), "m".into());
    let ok = pods
        .replace("p", &PostParams::default(), &ok)
        .await
        .expect("allowed update");
    assert_eq!(
        ok.spec
            .as_ref()
            .and_then(|s| s.containers[1].image.as_deref()),
        Some("envoy:2")
    );

    // Forbidden: anything else in spec.
    let mut bad = ok.clone();
    if let Some(spec) = bad.spec.as_mut() {
        spec.containers[0].env = Some(vec![
            serde_json::from_value(json!({"name": "X", "value": "1"})).expect("env"),
        ]);
    }
    let err = status(
        pods.replace("p", &PostParams::default(), &bad)
            .await
            .expect_err("env change"),
    );
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert!(
        err.message.starts_with(
            "Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
        ),
        "{}",
        err.message
    );

    // Adding a container, removing a toleration, raising the deadline: all rejected.
    let add = json!({"spec": {"containers": [{"name": "extra", "image": "x:1"}]}});
    let err = status(
        pods.patch("p", &PatchParams::default(), &Patch::Strategic(&add))
            .await
            .expect_err("added container"),
    );
    assert_eq!(err.code, 422);
    // ValidateContainerUpdates stops at the count, before the generic spec comparison.
    assert_eq!(
        err.message,
        "Pod \"p\" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers"
    );
    let causes = err.details.expect("details").causes;
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert_eq!(
        (causes[0].field.as_str(), causes[0].reason.as_str()),
        ("spec.containers", "FieldValueForbidden")
    );
    let drop_tol = json!({"spec": {"tolerations": []}});
    assert_eq!(
        status(
            pods.patch("p", &PatchParams::default(), &Patch::Merge(&drop_tol))
                .await
                .expect_err("tol")
        )
        .code,
        422
    );
    let raise = json!({"spec": {"activeDeadlineSeconds": 6000}});
    assert_eq!(
        status(
            pods.patch("p", &PatchParams::default(), &Patch::Merge(&raise))
                .await
                .expect_err("deadline")
        )
        .code,
        422
    );
    let empty_image = json!({"spec": {"containers": [{"name": "main", "image": ""}]}});
    assert_eq!(
        status(
            pods.patch(
                "p",
                &PatchParams::default(),
                &Patch::Strategic(&empty_image)
            )
            .await
            .expect_err("img")
        )
        .code,
        422
    );

    // A strategic merge patch changes one container's image by name.
    let smp = json!({"spec": {"containers": [{"name": "main", "image": "nginx:2"}]}});
    let patched = pods
        .patch("p", &PatchParams::default(), &Patch::Strategic(&smp))
        .await
        .expect("smp");
    let spec = patched.spec.expect("spec");
    assert_eq!(spec.containers.len(), 2);
    assert_eq!(spec.containers[0].image.as_deref(), Some("nginx:2"));
    assert_eq!(spec.containers[1].image.as_deref(), Some("envoy:2"));
}
