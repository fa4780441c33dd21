//! Status subresource rules, SidecarSet generation, strategic merge on status, deletion rules,
//! the shared core/events.k8s.io event storage, and the fault switch.

mod common;

use std::time::{Duration, Instant};

use apiserver_standin::Verb;
use common::*;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event as CoreEvent, Pod};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn generation(o: &DynamicObject) -> i64 {
    o.metadata.generation.expect("generation")
}

#[tokio::test]
async fn sidecarset_status_subresource_and_generation() {
    let s = start().await;
    let api: Api<DynamicObject> =
        Api::all_with(s.client().expect("client"), &sidecarset_resource());
    let pp = PostParams::default();
    let mut with_status = sidecarset("ss", "sidecar:1");
    with_status.data["status"] = json!({"matchedPods": 5});
    let created = api.create(&pp, &with_status).await.expect("create");
    assert_eq!(generation(&created), 1);
    assert!(
        created.data.get("status").is_none(),
        "status dropped on create"
    );
    assert!(created.metadata.namespace.is_none(), "cluster-scoped");

    // A spec change bumps the generation; status sent to the main resource is ignored.
    let mut changed = created.clone();
    changed.data["spec"]["containers"][0]["image"] = json!("sidecar:2");
    changed.data["status"] = json!({"matchedPods": 7});
    let changed = api.replace("ss", &pp, &changed).await.expect("spec update");
    assert_eq!(generation(&changed), 2);
    assert!(changed.data.get("status").is_none());

    // Metadata-only changes keep the generation.
    let labels = json!({"metadata": {"labels": {"x": "y"}}});
    let labelled = api
        .patch("ss", &PatchParams::default(), &Patch::Merge(&labels))
        .await
        .expect("label");
    assert_eq!(generation(&labelled), 2);

    // Status only through /status; spec sent there is ignored; the generation stays.
    let mut st = labelled.clone();
    st.data["status"] =
        json!({"observedGeneration": 2, "matchedPods": 3, "updatedPods": 1, "readyPods": 1});
    st.data["spec"]["containers"][0]["image"] = json!("sneaky:9");
    let after = api.replace_status("ss", &pp, &st).await.expect("status");
    assert_eq!(generation(&after), 2);
    assert_eq!(after.data["status"]["matchedPods"], 3);
    assert_eq!(after.data["spec"]["containers"][0]["image"], "sidecar:2");
    let merged = json!({"status": {"readyPods": 3}});
    let after = api
        .patch_status("ss", &PatchParams::default(), &Patch::Merge(&merged))
        .await
        .expect("status patch");
    assert_eq!(after.data["status"]["readyPods"], 3);
    assert_eq!(after.data["status"]["matchedPods"], 3);
    assert_eq!(generation(&after), 2);

    // Identical writes do not bump the resourceVersion.
    let same = api
        .patch_status("ss", &PatchParams::default(), &Patch::Merge(&merged))
        .await
        .expect("no-op");
    assert_eq!(
        same.metadata.resource_version,
        after.metadata.resource_version
    );

    // Custom resources need a resourceVersion on PUT and refuse strategic merge patches.
    let mut unconditional = after.clone();
    unconditional.metadata.resource_version = None;
    let err = status(
        api.replace("ss", &pp, &unconditional)
            .await
            .expect_err("no rv"),
    );
    assert_eq!(err.code, 422);
    let smp = json!({"metadata": {"labels": {"a": "b"}}});
    let err = status(
        api.patch("ss", &PatchParams::default(), &Patch::Strategic(&smp))
            .await
            .expect_err("smp"),
    );
    assert_eq!(err.code, 415);

    let listed = api.list(&ListParams::default()).await.expect("list");
    assert_eq!(listed.items.len(), 1);
    api.delete("ss", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(status(api.get("ss").await.expect_err("gone")).code, 404);
}

#[tokio::test]
async fn pod_status_only_through_status_and_conditions_merge_by_type() {
    let s = start().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    pods.create(
        &PostParams::default(),
        &pod("p", json!({}), &[("main", "nginx:1")]),
    )
    .await
    .expect("create");

    let phase = json!({"status": {"phase": "Running"}});
    let main = pods
        .patch("p", &PatchParams::default(), &Patch::Merge(&phase))
        .await
        .expect("main patch");
    assert_eq!(
        main.status.and_then(|s| s.phase).as_deref(),
        Some("Pending"),
        "ignored on main resource"
    );

    let conds = json!({"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True"}, {"type": "SidecarSetUpgradable", "status": "True"}]}});
    pods.patch_status("p", &PatchParams::default(), &Patch::Strategic(&conds))
        .await
        .expect("status");
    let one = json!({"status": {"conditions": [{"type": "SidecarSetUpgradable", "status": "False", "message": "{}"}]}});
    let after = pods
        .patch_status("p", &PatchParams::default(), &Patch::Strategic(&one))
        .await
        .expect("smp");
    let status = after.status.expect("status");
    assert_eq!(status.phase.as_deref(), Some("Running"));
    let conditions = status.conditions.expect("conditions");
    assert_eq!(conditions.len(), 2, "merged by type");
    assert_eq!(conditions[0].type_, "Ready");
    assert_eq!(conditions[1].status, "False");

    let spec_via_status = json!({"spec": {"containers": [{"name": "main", "image": "evil:1"}]}});
    let after = pods
        .patch_status(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(&spec_via_status),
        )
        .await
        .expect("ignored spec");
    assert_eq!(
        after
            .spec
            .and_then(|s| s.containers[0].image.clone())
            .as_deref(),
        Some("nginx:1")
    );
}

#[tokio::test]
async fn graceful_pod_deletion_and_finalizers() {
    let s = start().await;
    let client = s.client().expect("client");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let mut p = pod("p", json!({}), &[("main", "nginx:1")]);
    if let Some(spec) = p.spec.as_mut() {
        spec.node_name = Some("node-a".into());
    }
    pods.create(&PostParams::default(), &p)
        .await
        .expect("create");
    pods.delete("p", &DeleteParams::default())
        .await
        .expect("delete");
    let terminating = pods.get("p").await.expect("still there");
    assert!(terminating.metadata.deletion_timestamp.is_some());
    assert_eq!(terminating.metadata.deletion_grace_period_seconds, Some(30));
    pods.delete(
        "p",
        &DeleteParams {
            grace_period_seconds: Some(0),
            ..DeleteParams::default()
        },
    )
    .await
    .expect("force");
    assert_eq!(status(pods.get("p").await.expect_err("gone")).code, 404);

    let leases: Api<Lease> = Api::namespaced(client, "default");
    let lease: Lease =
        serde_json::from_value(json!({"metadata": {"name": "l", "finalizers": ["x/y"]}}))
            .expect("l");
    leases
        .create(&PostParams::default(), &lease)
        .await
        .expect("create");
    leases
        .delete("l", &DeleteParams::default())
        .await
        .expect("delete");
    let held = leases.get("l").await.expect("held by finalizer");
    assert!(held.metadata.deletion_timestamp.is_some());
    let add = json!({"metadata": {"finalizers": ["x/y", "new/one"]}});
    assert_eq!(
        status(
            leases
                .patch("l", &PatchParams::default(), &Patch::Merge(&add))
                .await
                .expect_err("new finalizer")
        )
        .code,
        422
    );
    let clear = json!({"metadata": {"finalizers": null}});
    leases
        .patch("l", &PatchParams::default(), &Patch::Merge(&clear))
        .await
        .expect("clear");
    assert_eq!(status(leases.get("l").await.expect_err("gone")).code, 404);
}

#[tokio::test]
async fn events_v1_and_core_events_share_storage() {
    let s = start().await;
    let client = s.client().expect("client");
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    let ev: Event = serde_json::from_value(json!({
        "metadata": {"name": "ss.1"},
        "eventTime": "2025-01-01T00:00:00.000000Z",
        "reportingController": "sidecarset-controller",
        "reportingInstance": "c-1",
        "action": "Upgrade",
        "reason": "NotUpgradablePods",
        "type": "Normal",
        "note": "hello",
        "regarding": {"kind": "SidecarSet", "name": "ss", "apiVersion": "apps.kruise.io/v1alpha1"}
    }))
    .expect("event");
    events
        .create(&PostParams::default(), &ev)
        .await
        .expect("create");
    let core: Api<CoreEvent> = Api::namespaced(client, "default");
    let listed = core
        .list(&ListParams::default().fields("involvedObject.name=ss,reason=NotUpgradablePods"))
        .await
        .expect("list");
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].message.as_deref(), Some("hello"));
    assert_eq!(
        listed.items[0].involved_object.kind.as_deref(),
        Some("SidecarSet")
    );
    let back = events.get("ss.1").await.expect("get");
    assert_eq!(back.note.as_deref(), Some("hello"));
}

#[tokio::test]
async fn fault_switch_fails_and_delays_matching_requests() {
    let s = start().await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let pp = PostParams::default();
    s.faults()
        .fail_next(Some(Verb::Create), Some("pods"), 2, 500);
    for _ in 0..2 {
        let err = status(
            pods.create(&pp, &pod("f", json!({}), &[("m", "i:1")]))
                .await
                .expect_err("fault"),
        );
        assert_eq!((err.code, err.reason.as_str()), (500, "InternalError"));
    }
    pods.create(&pp, &pod("f", json!({}), &[("m", "i:1")]))
        .await
        .expect("third create passes");

    // kube-rs retries a 429 (Retry-After) by itself: the second attempt passes.
    let gets = s.faults().count(Verb::Get, "pods");
    s.faults().fail_next(Some(Verb::Get), Some("pods"), 1, 429);
    pods.get("f").await.expect("retried get passes");
    assert_eq!(s.faults().count(Verb::Get, "pods"), gets + 2);

    // A fault on pods/status leaves the main resource alone.
    s.faults()
        .fail_next(Some(Verb::Patch), Some("pods/status"), 1, 409);
    let labels = json!({"metadata": {"labels": {"a": "b"}}});
    pods.patch("f", &PatchParams::default(), &Patch::Merge(&labels))
        .await
        .expect("main patch unaffected");
    let st = json!({"status": {"phase": "Running"}});
    let err = status(
        pods.patch_status("f", &PatchParams::default(), &Patch::Merge(&st))
            .await
            .expect_err("conflict"),
    );
    assert_eq!(err.code, 409);
    assert_eq!(s.faults().pending(), 0);

    s.faults()
        .delay_next(Some(Verb::List), None, 1, Duration::from_millis(150));
    let t = Instant::now();
    pods.list(&ListParams::default()).await.expect("slow list");
    assert!(t.elapsed() >= Duration::from_millis(150));
    assert!(s.faults().count(Verb::Create, "pods") >= 3);
}
