//! The kubelet simulator's container lifecycle: completion by the test-only `STANDIN_EXIT_*`
//! convention and restart policies, init containers in order, native sidecars, and
//! CreateContainerConfigError until the ConfigMap or Secret exists.

mod common;

use std::sync::Arc;
use std::time::Duration;

use apiserver_standin::kubelet::{EXIT_AFTER_MS, EXIT_CODE};
use apiserver_standin::store::StoredEvent;
use apiserver_standin::{KubeletConfig, StandIn, image_id};
use common::*;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::sync::broadcast;

async fn standin_with(cfg: KubeletConfig) -> StandIn {
    start_with_kubelet(cfg).await
}

/// A container exiting after `ms` with `code` (the stand-in's test-only convention).
fn exiting(name: &str, image: &str, ms: u64, code: i64) -> Value {
    json!({"name": name, "image": image, "env": [
        {"name": EXIT_AFTER_MS, "value": ms.to_string()},
        {"name": EXIT_CODE, "value": code.to_string()}]})
}

fn plain(name: &str, image: &str) -> Value {
    json!({"name": name, "image": image})
}

fn sidecar(name: &str, image: &str) -> Value {
    json!({"name": name, "image": image, "restartPolicy": "Always"})
}

fn pod_with(name: &str, spec: Value) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec,
    }))
    .expect("pod")
}

async fn create(s: &StandIn, name: &str, spec: Value) {
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    pods.create(&PostParams::default(), &pod_with(name, spec))
        .await
        .expect("create pod");
}

fn app<'a>(pod: &'a Value, name: &str) -> &'a Value {
    container_status(pod, "containerStatuses", name)
}

fn init<'a>(pod: &'a Value, name: &str) -> &'a Value {
    container_status(pod, "initContainerStatuses", name)
}

fn condition(pod: &Value, kind: &str) -> Value {
    pod_condition(pod, kind)
}

fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or("")
}

fn waiting_reason(c: &Value) -> &str {
    c["state"]["waiting"]["reason"].as_str().unwrap_or("")
}

fn is_running(c: &Value) -> bool {
    c["state"]["running"].is_object()
}

fn completed(c: &Value) -> bool {
    c["state"]["terminated"]["exitCode"] == 0
}

async fn wait(s: &StandIn, name: &str, done: impl Fn(&Value) -> bool) -> Value {
    s.wait_for("pods", "default", name, TIMEOUT, |p| p.is_some_and(&done))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Collects every stored state of one pod until `done` holds, from `rx`, a subscription
/// taken before the pod was created or changed.
async fn states_until(
    rx: broadcast::Receiver<Arc<StoredEvent>>,
    name: &str,
    done: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    pod_states_until(rx, name, Vec::new(), done).await
}

fn assert_terminated(c: &Value, code: i64, reason: &str) {
    let t = &c["state"]["terminated"];
    assert_eq!(t["exitCode"], code, "{c:#}");
    assert_eq!(t["reason"], reason, "{c:#}");
    assert!(
        t["startedAt"].is_string() && t["finishedAt"].is_string(),
        "{c:#}"
    );
    assert!(
        t["containerID"]
            .as_str()
            .is_some_and(|id| id.starts_with("containerd://")),
        "{c:#}"
    );
    assert_eq!(c["ready"], false, "{c:#}");
    assert_eq!(c["started"], false, "{c:#}");
}

#[tokio::test]
async fn containers_complete_and_restart_by_policy() {
    let s = standin_with(KubeletConfig::fast()).await;
    let never = |c: Value| json!({"restartPolicy": "Never", "containers": [c]});
    create(&s, "ok", never(exiting("job", "busybox:1", 20, 0))).await;
    create(&s, "bad", never(exiting("job", "busybox:1", 20, 3))).await;
    create(
        &s,
        "onfailure-ok",
        json!({"restartPolicy": "OnFailure", "containers": [exiting("job", "busybox:1", 20, 0)]}),
    )
    .await;
    create(
        &s,
        "onfailure-bad",
        json!({"restartPolicy": "OnFailure", "containers": [exiting("job", "busybox:1", 20, 1)]}),
    )
    .await;
    create(
        &s,
        "always",
        json!({"containers": [exiting("job", "busybox:1", 20, 0)]}),
    )
    .await;
    create(
        &s,
        "partly",
        json!({"restartPolicy": "Never",
               "containers": [exiting("job", "busybox:1", 20, 0), plain("server", "nginx:1")]}),
    )
    .await;

    // Never, exit 0: Succeeded, the container terminated Completed, Ready false PodCompleted.
    let ok = wait(&s, "ok", |p| phase(p) == "Succeeded").await;
    assert_terminated(app(&ok, "job"), 0, "Completed");
    assert_eq!(app(&ok, "job")["restartCount"], 0);
    assert_eq!(app(&ok, "job")["lastState"], json!({}));
    for kind in ["Ready", "ContainersReady"] {
        let c = condition(&ok, kind);
        assert_eq!(
            (c["status"].as_str(), c["reason"].as_str()),
            (Some("False"), Some("PodCompleted"))
        );
    }
    assert_eq!(condition(&ok, "Initialized")["reason"], "PodCompleted");
    assert_eq!(
        condition(&ok, "PodReadyToStartContainers")["status"],
        "False"
    );

    // Never, exit 3: Failed, reason Error; upstream's terminal Ready reason is PodFailed.
    let bad = wait(&s, "bad", |p| phase(p) == "Failed").await;
    assert_terminated(app(&bad, "job"), 3, "Error");
    assert_eq!(condition(&bad, "Ready")["reason"], "PodFailed");
    assert_eq!(condition(&bad, "ContainersReady")["reason"], "PodFailed");

    // OnFailure: a clean exit is not restarted.
    let of = wait(&s, "onfailure-ok", |p| phase(p) == "Succeeded").await;
    assert_terminated(app(&of, "job"), 0, "Completed");

    // OnFailure, exit 1: restarted (restartCount, lastState.terminated), the pod stays Running.
    let rx = s.store().subscribe();
    let restarted = wait(&s, "onfailure-bad", |p| {
        app(p, "job")["restartCount"].as_i64() >= Some(2)
    })
    .await;
    let job = app(&restarted, "job");
    assert_eq!(job["lastState"]["terminated"]["exitCode"], 1, "{job:#}");
    assert_eq!(job["lastState"]["terminated"]["reason"], "Error");
    assert_eq!(phase(&restarted), "Running");
    let later = states_until(rx, "onfailure-bad", |p| {
        waiting_reason(app(p, "job")) == "CrashLoopBackOff"
    })
    .await;
    let backoff = app(later.last().expect("a state"), "job");
    let message = backoff["state"]["waiting"]["message"]
        .as_str()
        .unwrap_or("");
    assert!(
        message.starts_with(
            "back-off 20ms restarting failed container=job pod=onfailure-bad_default("
        ),
        "{message}"
    );
    assert_eq!(phase(later.last().expect("a state")), "Running");

    // Always: a completed container is restarted too.
    let always = wait(&s, "always", |p| {
        app(p, "job")["restartCount"].as_i64() >= Some(1)
    })
    .await;
    let job = app(&always, "job");
    assert_eq!(job["lastState"]["terminated"]["exitCode"], 0);
    assert_eq!(job["lastState"]["terminated"]["reason"], "Completed");
    assert!(job["lastState"]["terminated"]["finishedAt"].is_string());
    assert_eq!(phase(&always), "Running");

    // Never, one container done and one running: Running, not ready.
    let partly = wait(&s, "partly", |p| completed(app(p, "job"))).await;
    assert_eq!(phase(&partly), "Running");
    assert!(is_running(app(&partly, "server")));
    let ready = condition(&partly, "Ready");
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "ContainersNotReady");
    assert_eq!(ready["message"], "containers with unready status: [job]");
}

#[tokio::test]
async fn a_running_native_sidecar_does_not_keep_a_completed_pod_from_succeeding() {
    let s = standin_with(KubeletConfig::fast()).await;
    let rx = s.store().subscribe();
    create(
        &s,
        "job",
        json!({"restartPolicy": "Never",
               "initContainers": [sidecar("proxy", "envoy:1")],
               "containers": [exiting("main", "busybox:1", 60, 0)]}),
    )
    .await;
    let states = states_until(rx, "job", |p| phase(p) == "Succeeded").await;
    assert!(
        states
            .iter()
            .any(|p| is_running(app(p, "main")) && init(p, "proxy")["started"] == true),
        "{states:#?}"
    );
    for p in &states {
        // The sidecar runs as long as the main container does.
        if is_running(app(p, "main")) {
            assert!(is_running(init(p, "proxy")), "{p:#}");
        }
    }
    let done = states.last().expect("a state");
    assert_terminated(app(done, "main"), 0, "Completed");
    // Stopped by the kubelet once the pod's work is done.
    assert_terminated(init(done, "proxy"), 0, "Completed");
    assert_eq!(init(done, "proxy")["restartCount"], 0);
    assert_eq!(condition(done, "Ready")["reason"], "PodCompleted");
}

#[tokio::test]
async fn init_containers_run_in_order_before_the_app_containers() {
    // Start delays long enough that every step is seen.
    let cfg = KubeletConfig {
        start_delay: Duration::from_millis(30),
        ..KubeletConfig::fast()
    };
    let s = standin_with(cfg).await;
    let rx = s.store().subscribe();
    create(
        &s,
        "ordered",
        json!({"initContainers": [exiting("first", "busybox:1", 100, 0), plain("second", "busybox:1")],
               "containers": [plain("app", "nginx:1")]}),
    )
    .await;
    let states = states_until(rx, "ordered", |p| condition(p, "Ready")["status"] == "True").await;
    let reported: Vec<&Value> = states
        .iter()
        .filter(|p| p["status"]["conditions"].is_array())
        .collect();
    for p in &reported {
        let (first, second, a) = (init(p, "first"), init(p, "second"), app(p, "app"));
        if !waiting_reason(second).is_empty() {
            assert_eq!(waiting_reason(second), "PodInitializing", "{p:#}");
        } else {
            assert!(completed(first), "second ran before first completed: {p:#}");
        }
        if waiting_reason(a).is_empty() {
            assert!(
                completed(first) && completed(second),
                "app before init: {p:#}"
            );
        } else {
            assert_eq!(waiting_reason(a), "PodInitializing", "{p:#}");
            assert_eq!(a["imageID"], "", "{p:#}");
        }
        if !(completed(first) && completed(second)) {
            assert_eq!(phase(p), "Pending", "{p:#}");
            let c = condition(p, "Initialized");
            assert_eq!(c["status"], "False", "{p:#}");
            assert_eq!(c["reason"], "ContainersNotInitialized", "{p:#}");
        }
    }
    let first_running = reported
        .iter()
        .find(|p| is_running(init(p, "first")))
        .expect("first seen running");
    assert_eq!(
        condition(first_running, "Initialized")["message"],
        "containers with incomplete status: [first second]"
    );
    assert_eq!(init(first_running, "first")["ready"], false);
    let last = states.last().expect("a state");
    assert_eq!(phase(last), "Running");
    assert_eq!(condition(last, "Initialized")["status"], "True");
    for name in ["first", "second"] {
        let c = init(last, name);
        assert_eq!(c["state"]["terminated"]["reason"], "Completed", "{c:#}");
        assert_eq!(
            (c["ready"].clone(), c["restartCount"].clone()),
            (json!(true), json!(0))
        );
    }
    assert!(
        init(last, "first")["state"]["terminated"]["finishedAt"].as_str()
            <= init(last, "second")["state"]["terminated"]["startedAt"].as_str()
    );
}

#[tokio::test]
async fn a_failing_init_container_is_retried_or_fails_the_pod() {
    let s = standin_with(KubeletConfig::fast()).await;
    let spec = |policy: &str| {
        json!({"restartPolicy": policy,
               "initContainers": [exiting("migrate", "busybox:1", 10, 2)],
               "containers": [plain("app", "nginx:1")]})
    };
    create(&s, "retried", spec("OnFailure")).await;
    create(&s, "failed", spec("Never")).await;

    let retried = wait(&s, "retried", |p| {
        init(p, "migrate")["restartCount"].as_i64() >= Some(2)
    })
    .await;
    let m = init(&retried, "migrate");
    assert_eq!(m["lastState"]["terminated"]["exitCode"], 2, "{m:#}");
    assert_eq!(m["lastState"]["terminated"]["reason"], "Error");
    assert_eq!(phase(&retried), "Pending");
    assert_eq!(waiting_reason(app(&retried, "app")), "PodInitializing");
    assert_eq!(condition(&retried, "Initialized")["status"], "False");

    let failed = wait(&s, "failed", |p| phase(p) == "Failed").await;
    assert_terminated(init(&failed, "migrate"), 2, "Error");
    assert_eq!(init(&failed, "migrate")["restartCount"], 0);
    assert_eq!(waiting_reason(app(&failed, "app")), "PodInitializing");
    assert_eq!(
        condition(&failed, "Initialized")["reason"],
        "ContainersNotInitialized"
    );
    assert_eq!(condition(&failed, "Ready")["reason"], "PodFailed");
}

#[tokio::test]
async fn native_sidecars_start_first_and_restart_alone_on_an_image_change() {
    let cfg = KubeletConfig {
        start_delay: Duration::from_millis(20),
        // Long enough for the sidecar to be seen running but not yet started.
        ready_delay: Duration::from_millis(100),
        ..KubeletConfig::fast()
    };
    let s = standin_with(cfg).await;
    let pods: Api<Pod> = Api::namespaced(s.client().expect("client"), "default");
    let rx = s.store().subscribe();
    let mut proxy = sidecar("proxy", "envoy:1");
    proxy["startupProbe"] = json!({"exec": {"command": ["true"]}});
    create(
        &s,
        "meshed",
        json!({"initContainers": [proxy, plain("setup", "busybox:1")],
               "containers": [plain("app", "nginx:1")]}),
    )
    .await;
    let states = states_until(rx, "meshed", |p| condition(p, "Ready")["status"] == "True").await;
    let reported: Vec<&Value> = states
        .iter()
        .filter(|p| p["status"]["conditions"].is_array())
        .collect();
    for p in &reported {
        let (proxy, setup, a) = (init(p, "proxy"), init(p, "setup"), app(p, "app"));
        if waiting_reason(setup).is_empty() {
            assert_eq!(
                proxy["started"], true,
                "setup before the sidecar started: {p:#}"
            );
        }
        if waiting_reason(a).is_empty() {
            assert!(completed(setup), "{p:#}");
        }
        if !completed(setup) {
            assert_eq!(phase(p), "Pending", "{p:#}");
        }
    }
    // With a startupProbe the sidecar is running but not started for the ready delay.
    assert!(
        reported
            .iter()
            .any(|p| is_running(init(p, "proxy")) && init(p, "proxy")["started"] == false),
        "{reported:#?}"
    );
    let running = states.last().expect("a state");
    let proxy = init(running, "proxy");
    assert!(is_running(proxy));
    assert_eq!(
        (proxy["started"].clone(), proxy["ready"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(proxy["imageID"], image_id("envoy:1"));
    let app_before = app(running, "app").clone();

    let rx = s.store().subscribe();
    pods.patch(
        "meshed",
        &PatchParams::default(),
        &Patch::Strategic(
            json!({"spec": {"initContainers": [{"name": "proxy", "image": "envoy:2"}]}}),
        ),
    )
    .await
    .expect("sidecar image change");
    let states = states_until(rx, "meshed", |p| {
        init(p, "proxy")["image"] == "envoy:2"
            && init(p, "proxy")["ready"] == true
            && condition(p, "Ready")["status"] == "True"
    })
    .await;
    assert!(
        states.iter().any(|p| init(p, "proxy")["ready"] == false),
        "the sidecar was never seen restarting: {states:#?}"
    );
    for p in &states {
        assert_eq!(
            app(p, "app"),
            &app_before,
            "the app container was touched: {p:#}"
        );
        assert_eq!(phase(p), "Running", "{p:#}");
        assert_eq!(condition(p, "Initialized")["status"], "True", "{p:#}");
    }
    let proxy = init(states.last().expect("a state"), "proxy");
    assert_eq!(proxy["restartCount"], 1);
    assert_eq!(proxy["imageID"], image_id("envoy:2"));
    assert_eq!(proxy["lastState"]["terminated"]["reason"], "Completed");
    // The completed init container is not run again.
    assert_eq!(
        init(states.last().expect("a state"), "setup")["restartCount"],
        0
    );
}

#[tokio::test]
async fn a_missing_configmap_or_secret_holds_the_container_in_create_container_config_error() {
    let s = standin_with(KubeletConfig::fast()).await;
    let client = s.client().expect("client");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(client, "default");
    let env = json!([
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
        {"name": "EXTRA", "valueFrom": {"configMapKeyRef": {"name": "absent", "key": "x", "optional": true}}},
    ]);
    create(
        &s,
        "configured",
        json!({"containers": [{"name": "app", "image": "nginx:1", "env": env},
                              plain("other", "envoy:1")]}),
    )
    .await;
    let blocked = |message: &'static str| {
        move |p: &Value| {
            waiting_reason(app(p, "app")) == "CreateContainerConfigError"
                && app(p, "app")["state"]["waiting"]["message"] == message
        }
    };
    let p = wait(
        &s,
        "configured",
        blocked("configmap \"settings\" not found"),
    )
    .await;
    assert_eq!(phase(&p), "Pending");
    // The other container starts meanwhile, as the kubelet does.
    let p = wait(&s, "configured", |p| app(p, "other")["ready"] == true).await;
    assert_eq!(phase(&p), "Pending");
    assert_eq!(app(&p, "app")["restartCount"], 0);

    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "settings"}, "data": {"other": "1"}}))
            .expect("configmap");
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("configmap");
    wait(
        &s,
        "configured",
        blocked("couldn't find key mode in ConfigMap default/settings"),
    )
    .await;
    cms.patch(
        "settings",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"mode": "fast"}})),
    )
    .await
    .expect("add the key");
    wait(&s, "configured", blocked("secret \"creds\" not found")).await;
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": "creds"}, "stringData": {"user": "u"}}))
            .expect("secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("secret");
    wait(
        &s,
        "configured",
        blocked("couldn't find key token in Secret default/creds"),
    )
    .await;
    secrets
        .patch(
            "creds",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"token": "t"}})),
        )
        .await
        .expect("add the key");
    let p = wait(&s, "configured", |p| {
        condition(p, "Ready")["status"] == "True"
    })
    .await;
    assert_eq!(phase(&p), "Running");
    let a = app(&p, "app");
    assert!(is_running(a), "{a:#}");
    assert_eq!(a["restartCount"], 0);
}
