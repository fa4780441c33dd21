//! Single reconcile passes against the stand-in: the order and outcome of every write
//! (status retries, stale and invalid pod patches, conditions, events), §5.5 and §5.9.

mod inprocess;

use std::sync::Arc;
use std::time::Duration;

use apiserver_standin::fault::Verb;
use inprocess::*;
use kube::ResourceExt;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use serde_json::json;
use sidecarset_controller::apply::{self, Written};
use sidecarset_controller::reconciler;

const SS: &str = "envoy";

async fn with_pods(h: &Harness, strategy: serde_json::Value, pods: &[(&str, &[(&str, &str)])]) {
    let ss = h
        .create_sidecarset(cold_sidecarset(SS, "envoy:v1", strategy))
        .await;
    for (name, extra) in pods {
        let mut l = labels(extra);
        l.insert("app".into(), "web".into());
        h.create_injected_pod(&ss, "default", name, l).await;
    }
    let n = pods.len();
    h.wait_pods("pods available", |p| {
        p.len() == n && p.iter().all(available)
    })
    .await;
}

fn metric(h: &Harness, series: &str) -> String {
    h.ctx
        .metrics
        .render()
        .lines()
        .find(|l| l.starts_with(series))
        .unwrap_or("")
        .to_string()
}

/// A stale write ends the round, but the pods written before it keep their conditions.
#[tokio::test]
async fn each_condition_follows_its_own_pod_write() {
    let mut h = Harness::start().await;
    let weight = |w: i32, order: &str| json!({ "weight": w, "matchSelector": { "matchLabels": { "order": order } } });
    let strategy = json!({
        "maxUnavailable": 3,
        "priorityStrategy": { "weightPriority": [weight(100, "first"), weight(50, "second")] }
    });
    let pods: [(&str, &[(&str, &str)]); 3] = [
        ("web-0", &[("order", "first")]),
        ("web-1", &[("order", "second")]),
        ("web-2", &[("order", "third")]),
    ];
    with_pods(&h, strategy, &pods).await;
    h.update_sidecarset(SS, |v| {
        v["spec"]["containers"][0]["image"] = json!("envoy:v2")
    })
    .await;
    h.refresh_caches().await;
    // web-1 changes behind the cache's back: its planned patch must fail its resourceVersion test.
    h.pod_api("default")
        .patch(
            "web-1",
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "labels": { "touched": "yes" } } })),
        )
        .await
        .expect("touch web-1");

    let action = h.reconcile(SS).await.expect("a stale write is no error");
    assert_eq!(
        action,
        Action::requeue(Duration::from_millis(300)),
        "quick re-plan"
    );
    let web0 = h.stored_pod("default", "web-0");
    assert_eq!(image(&web0, "sidecar"), "envoy:v2");
    assert_eq!(
        condition(&web0, "SidecarSetUpgradable")["status"],
        "True",
        "web-0's condition was written right after web-0"
    );
    assert_eq!(
        image(&h.stored_pod("default", "web-1"), "sidecar"),
        "envoy:v1"
    );
    assert_eq!(
        image(&h.stored_pod("default", "web-2"), "sidecar"),
        "envoy:v1"
    );
    assert_eq!(h.count(Verb::Patch, "pods/status", "web-1"), 0);
    assert_eq!(
        h.count(Verb::Patch, "pods", "web-2"),
        0,
        "the round ended at web-1"
    );
    assert_eq!(
        metric(&h, "sidecarset_controller_write_conflicts_total"),
        "sidecarset_controller_write_conflicts_total 1"
    );
}

/// The API server answers a failed `test` and a patch that does not fit with the same 422; a
/// re-read tells them apart. Validation failures and vanished pods are errors.
#[tokio::test]
async fn pod_patch_outcomes_are_classified() {
    let h = Harness::start().await;
    with_pods(&h, json!({}), &[("web-0", &[])]).await;
    let rv = h
        .pod_api("default")
        .get("web-0")
        .await
        .expect("get")
        .metadata
        .resource_version
        .unwrap_or_default();
    let patch = |tested: &str, op: serde_json::Value| -> json_patch::Patch {
        serde_json::from_value(json!([
            { "op": "test", "path": "/metadata/resourceVersion", "value": tested }, op
        ]))
        .expect("patch")
    };
    let set_image =
        json!({ "op": "replace", "path": "/spec/containers/1/image", "value": "envoy:v9" });
    let outcome = |p| {
        let client = h.client.clone();
        async move { apply::patch_pod(&client, "default", "web-0", &p).await }
    };

    let stale = outcome(patch("1", set_image.clone())).await.expect("stale");
    assert_eq!(stale, Written::Stale, "failed resourceVersion test");

    let missing_path = json!({ "op": "replace", "path": "/spec/containers/7/image", "value": "x" });
    let err = outcome(patch(&rv, missing_path))
        .await
        .expect_err("bad path");
    assert_eq!(err.status_code(), Some(422), "{err}");
    assert!(
        err.to_string().contains("the patch itself does not apply"),
        "{err}"
    );

    let rename = json!({ "op": "replace", "path": "/spec/containers/0/name", "value": "renamed" });
    let err = outcome(patch(&rv, rename)).await.expect_err("invalid pod");
    assert_eq!(err.status_code(), Some(422), "{err}");

    let gone = apply::patch_pod(&h.client, "default", "no-such-pod", &patch(&rv, set_image)).await;
    assert_eq!(gone.expect_err("gone").status_code(), Some(404));

    let applied = outcome(patch(
        &rv,
        json!({ "op": "replace", "path": "/spec/containers/1/image", "value": "envoy:v9" }),
    ))
    .await
    .expect("applies");
    assert!(matches!(applied, Written::Applied { .. }));
}

/// §6.4 case 37 (TestUpdatePodSidecarAndHashPodNotFound): the pod the plan chose is gone from
/// the API → the reconcile fails, is counted, and backs off exponentially.
#[tokio::test]
async fn a_chosen_pod_missing_from_the_api_fails_the_reconcile() {
    let mut h = Harness::start().await;
    with_pods(&h, json!({}), &[("web-0", &[])]).await;
    h.update_sidecarset(SS, |v| {
        v["spec"]["containers"][0]["image"] = json!("envoy:v2")
    })
    .await;
    h.refresh_caches().await;
    h.standin
        .kubelet()
        .expect("kubelet")
        .delete_pod("default", "web-0")
        .expect("delete");
    let err = h.reconcile(SS).await.expect_err("pod not found");
    assert_eq!(err.status_code(), Some(404), "{err}");

    let ss = Arc::new(h.sidecarset_api().get(SS).await.expect("get"));
    let first = reconciler::error_policy(ss.clone(), &err, h.ctx.clone());
    let second = reconciler::error_policy(ss, &err, h.ctx.clone());
    assert_eq!(first, Action::requeue(Duration::from_millis(5)));
    assert_eq!(
        second,
        Action::requeue(Duration::from_millis(10)),
        "backs off"
    );
    assert_eq!(
        metric(&h, "sidecarset_controller_reconcile_errors_total"),
        "sidecarset_controller_reconcile_errors_total 2"
    );
}

/// §5.5: injected conflicts on the status subresource are retried, each after a fresh read.
#[tokio::test]
async fn the_status_write_retries_conflicts_with_fresh_reads() {
    let mut h = Harness::start().await;
    with_pods(&h, json!({}), &[("web-0", &[]), ("web-1", &[])]).await;
    h.refresh_caches().await;
    let faults = h.standin.faults().clone();
    faults.fail_next(Some(Verb::Patch), Some("sidecarsets/status"), 2, 409);
    h.reconcile(SS).await.expect("retried past two conflicts");
    assert_eq!(faults.pending(), 0, "both conflicts were hit");
    assert_eq!(h.count(Verb::Patch, "sidecarsets/status", SS), 3);
    assert_eq!(
        h.count(Verb::Get, "sidecarsets", SS),
        2,
        "one fresh read per conflict"
    );
    let stored = h.sidecarset_api().get(SS).await.expect("get");
    assert_eq!(stored.status.as_ref().map(|s| s.matched_pods), Some(2));
}

/// §5.5: the write is guarded by the cached resourceVersion, so a SidecarSet changed since
/// the cache saw it conflicts for real and is re-read.
#[tokio::test]
async fn a_stale_cached_sidecarset_is_reread_before_its_status_is_written() {
    let mut h = Harness::start().await;
    with_pods(&h, json!({}), &[("web-0", &[])]).await;
    h.refresh_caches().await;
    h.sidecarset_api()
        .patch(
            SS,
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "annotations": { "note": "edited" } } })),
        )
        .await
        .expect("edit metadata");
    h.reconcile(SS).await.expect("reconcile");
    assert_eq!(
        h.count(Verb::Patch, "sidecarsets/status", SS),
        2,
        "one conflict"
    );
    assert_eq!(h.count(Verb::Get, "sidecarsets", SS), 1);
    let stored = h.sidecarset_api().get(SS).await.expect("get");
    assert_eq!(stored.status.as_ref().map(|s| s.matched_pods), Some(1));
    assert_eq!(
        stored.annotations().get("note").map(String::as_str),
        Some("edited")
    );
}

/// Conflicts beyond upstream's four attempts fail the reconcile.
#[tokio::test]
async fn endless_status_conflicts_are_an_error() {
    let mut h = Harness::start().await;
    with_pods(&h, json!({}), &[("web-0", &[])]).await;
    h.refresh_caches().await;
    h.standin
        .faults()
        .fail_next(Some(Verb::Patch), Some("sidecarsets/status"), 4, 409);
    let err = h.reconcile(SS).await.expect_err("gives up");
    assert_eq!(err.status_code(), Some(409), "{err}");
}

/// §6.4 case 38 (TestScopeNamespacePods): namespaceSelector `test=true` with 50 pods in the
/// unlabelled `default` and 50 in `test-ns` → 50 matched.
#[tokio::test]
async fn namespace_selector_scopes_the_matched_pods() {
    let mut h = Harness::start().await;
    h.create_namespace("test-ns", labels(&[("test", "true")]))
        .await;
    let ss = h
        .create_sidecarset(cold_sidecarset(SS, "envoy:v1", json!({})))
        .await;
    for i in 0..50 {
        for ns in ["default", "test-ns"] {
            h.create_injected_pod(&ss, ns, &format!("pod-{i}"), labels(&[("app", "web")]))
                .await;
        }
    }
    h.update_sidecarset(SS, |v| {
        v["spec"]["namespaceSelector"] = json!({ "matchLabels": { "test": "true" } })
    })
    .await;
    h.refresh_caches().await;
    h.reconcile(SS).await.expect("reconcile");
    let stored = h.sidecarset_api().get(SS).await.expect("get");
    assert_eq!(stored.status.as_ref().map(|s| s.matched_pods), Some(50));
}

/// Upstream emits NotUpgradablePods in every round that meets such pods; the Recorder turns
/// the repeats into one Event series, and the condition is written once.
#[tokio::test]
async fn not_upgradable_pods_get_an_event_every_round_and_their_condition_once() {
    let mut h = Harness::start().await;
    with_pods(
        &h,
        json!({ "maxUnavailable": 2 }),
        &[("web-0", &[]), ("web-1", &[])],
    )
    .await;
    h.update_sidecarset(SS, |v| {
        v["spec"]["containers"][0]["image"] = json!("envoy:v2");
        v["spec"]["containers"][0]["env"] = json!([{ "name": "MODE", "value": "strict" }]);
    })
    .await;
    for round in 1..=2 {
        h.refresh_caches().await;
        let action = h.reconcile(SS).await.expect("reconcile");
        assert_eq!(
            action,
            Action::requeue(Duration::from_secs(300)),
            "round {round}: only not-upgradable pods are left, so no quick requeue"
        );
    }
    for pod in ["web-0", "web-1"] {
        let stored = h.stored_pod("default", pod);
        assert_eq!(
            condition(&stored, "SidecarSetUpgradable")["status"],
            "False"
        );
        assert_eq!(image(&stored, "sidecar"), "envoy:v1");
        assert_eq!(
            h.count(Verb::Patch, "pods/status", pod),
            1,
            "{pod}: condition written once"
        );
    }
    let event_writes = |verb| {
        h.requests()
            .iter()
            .filter(|r| r.verb == verb && r.resource == "events")
            .count()
    };
    assert_eq!(event_writes(Verb::Create), 1, "first round");
    assert_eq!(
        event_writes(Verb::Patch),
        1,
        "second round: the series grows"
    );
    let events = h.events("NotUpgradablePods");
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(
        events[0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("detected 2 not upgradable pod(s)"),
        "{events:?}"
    );
}

/// A hot-upgrade reset that fails leaves a ResetContainerFailed event on the pod; the next
/// pass resets it and says so.
#[tokio::test]
async fn a_failed_hot_upgrade_reset_emits_reset_container_failed() {
    let mut h = Harness::start().await;
    let mut hot = cold_sidecarset(SS, "envoy:v1", json!({}));
    hot["spec"]["containers"][0]["upgradeStrategy"] =
        json!({ "upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1" });
    let ss = h.create_sidecarset(hot).await;
    h.create_injected_pod(&ss, "default", "web-0", labels(&[("app", "web")]))
        .await;
    h.wait_pods("pod available", |p| p.len() == 1 && p.iter().all(available))
        .await;
    h.update_sidecarset(SS, |v| {
        v["spec"]["containers"][0]["image"] = json!("envoy:v2")
    })
    .await;
    h.refresh_caches().await;
    h.reconcile(SS).await.expect("upgrade");
    h.wait_pods("idle twin restarted on v2", |p| {
        image(&p[0], "sidecar-2") == "envoy:v2" && available(&p[0])
    })
    .await;

    h.refresh_caches().await;
    h.standin
        .faults()
        .fail_next(Some(Verb::Patch), Some("pods"), 1, 500);
    let err = h.reconcile(SS).await.expect_err("reset write fails");
    assert_eq!(err.status_code(), Some(500), "{err}");
    let failed = h.events("ResetContainerFailed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["type"], "Warning");
    assert_eq!(failed[0]["involvedObject"]["name"], "web-0");
    assert!(h.events("ResetContainerSucceed").is_empty());
    assert_eq!(
        image(&h.stored_pod("default", "web-0"), "sidecar-1"),
        "envoy:v1"
    );

    h.refresh_caches().await;
    h.reconcile(SS).await.expect("reset");
    assert_eq!(
        image(&h.stored_pod("default", "web-0"), "sidecar-1"),
        "empty:1"
    );
    assert_eq!(h.events("ResetContainerSucceed").len(), 1);
}
