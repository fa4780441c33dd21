//! Harness of the end-to-end tests: the API-server stand-in with its kubelet simulator, the
//! real controller binary, injected-looking pods and waits on store events (no fixed sleeps).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use apiserver_standin::selectors::Filter;
use apiserver_standin::{KubeletConfig, Options, StandIn, resources};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, PostParams};
use serde_json::{Value, json};
use sidecarset_policy::annotations;
use sidecarset_policy::api::SidecarSet;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const TIMEOUT: Duration = Duration::from_secs(40);
pub const NS: &str = "default";

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A stand-in plus a scratch directory for kubeconfig and logs.
pub struct Env {
    pub standin: StandIn,
    pub client: kube::Client,
    pub dir: PathBuf,
    pub kubeconfig: PathBuf,
}

/// One running controller process.
pub struct Controller {
    pub child: tokio::process::Child,
    pub metrics_addr: String,
    pub log: PathBuf,
    pub identity: String,
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

impl Controller {
    /// SIGKILL, as a node failure or OOM kill would.
    pub async fn kill(mut self) {
        let _ = self.child.kill().await;
    }

    /// SIGTERM, and waits for a clean exit.
    pub async fn terminate(mut self) -> std::process::ExitStatus {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
        tokio::time::timeout(TIMEOUT, self.child.wait())
            .await
            .expect("controller exits after SIGTERM")
            .expect("wait")
    }

    /// The controller's log so far.
    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// GET an HTTP path of the metrics server (status code and body); `None` while not listening.
    pub async fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut stream = tokio::net::TcpStream::connect(&self.metrics_addr)
            .await
            .ok()?;
        let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        stream.write_all(req.as_bytes()).await.ok()?;
        let mut buf = String::new();
        stream.read_to_string(&mut buf).await.ok()?;
        let code = buf.split_whitespace().nth(1)?.parse().ok()?;
        let body = buf
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        Some((code, body))
    }

    /// Waits until `/readyz` answers 200.
    pub async fn wait_ready(&self) {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            if let Some((200, _)) = self.get("/readyz").await {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "controller never ready; logs:\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A metric value from `/metrics` (first line starting with `series`).
    pub async fn metric(&self, series: &str) -> Option<f64> {
        let (_, body) = self.get("/metrics").await?;
        body.lines().find_map(|l| {
            l.strip_prefix(series)
                .and_then(|rest| rest.trim().parse().ok())
        })
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

impl Env {
    pub async fn start() -> Env {
        let standin = StandIn::start(Options {
            kubelet: Some(KubeletConfig::fast()),
            ..Options::default()
        })
        .await
        .expect("start stand-in");
        let client = standin.client().expect("client");
        let dir = std::env::temp_dir().join(format!(
            "sidecarset-e2e-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let kubeconfig = dir.join("kubeconfig");
        standin.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        Env {
            standin,
            client,
            dir,
            kubeconfig,
        }
    }

    /// Starts the real binary with fast lease timing.
    pub fn controller(&self, identity: &str) -> Controller {
        let metrics_addr = format!("127.0.0.1:{}", free_port());
        let log = self.dir.join(format!("{identity}.log"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("log file");
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_sidecarset-controller"))
            .args([
                "--metrics-addr",
                &metrics_addr,
                "--lease-namespace",
                NS,
                "--identity",
                identity,
                "--lease-duration-seconds",
                "2",
                "--renew-deadline-seconds",
                "1.5",
                "--retry-period-seconds",
                "0.2",
                "--log-format",
                "text",
            ])
            .env("KUBECONFIG", &self.kubeconfig)
            .env("RUST_LOG", "info,sidecarset_controller=debug")
            .env_remove("POD_NAMESPACE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .kill_on_drop(true)
            .spawn()
            .expect("spawn controller");
        Controller {
            child,
            metrics_addr,
            log,
            identity: identity.to_string(),
        }
    }

    pub fn sidecarsets(&self) -> Api<SidecarSet> {
        Api::all(self.client.clone())
    }

    pub fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.client.clone(), NS)
    }

    /// Creates a SidecarSet after the admission defaults and hashes (as the policy would).
    pub async fn create_sidecarset(&self, mut value: Value) -> SidecarSet {
        sidecarset_policy::admission::apply_defaults(&mut value);
        let ss: SidecarSet = serde_json::from_value(value).expect("sidecarset json");
        self.sidecarsets()
            .create(&PostParams::default(), &ss)
            .await
            .expect("create sidecarset")
    }

    /// Edits a SidecarSet as a user would (read, change, defaults and hashes, PUT; retried on 409).
    pub async fn update_sidecarset(&self, name: &str, edit: impl Fn(&mut Value)) -> SidecarSet {
        loop {
            let current = self.sidecarsets().get(name).await.expect("get sidecarset");
            let mut value = serde_json::to_value(&current).expect("to json");
            edit(&mut value);
            sidecarset_policy::admission::apply_defaults(&mut value);
            let ss: SidecarSet = serde_json::from_value(value).expect("sidecarset json");
            match self
                .sidecarsets()
                .replace(name, &PostParams::default(), &ss)
                .await
            {
                Ok(ss) => return ss,
                Err(kube::Error::Api(s)) if s.code == 409 => continue,
                Err(e) => panic!("update sidecarset {name}: {e}"),
            }
        }
    }

    /// Creates `count` pods `prefix-0..` labelled `app=web` plus `extra(i)`, injected with `ss`
    /// by the policy's own inject function (so every annotation is real).
    pub async fn create_injected_pods(
        &self,
        ss: &SidecarSet,
        prefix: &str,
        count: usize,
        extra: impl Fn(usize) -> BTreeMap<String, String>,
    ) -> Vec<String> {
        let mut names = Vec::new();
        for i in 0..count {
            let name = format!("{prefix}-{i}");
            let mut labels = extra(i);
            labels.insert("app".into(), "web".into());
            let mut pod = json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": { "name": name, "namespace": NS, "labels": labels },
                "spec": { "nodeName": "node-1", "containers": [{ "name": "app", "image": "nginx:1" }] }
            });
            let changed =
                sidecarset_policy::inject::inject(&mut pod, &[ss], "2026-01-01T00:00:00Z")
                    .expect("inject");
            assert!(changed, "the SidecarSet selects the pod");
            let pod: Pod = serde_json::from_value(pod).expect("pod json");
            self.pods()
                .create(&PostParams::default(), &pod)
                .await
                .expect("create pod");
            names.push(name);
        }
        names
    }

    /// All pods of the test namespace, as stored.
    pub fn all_pods(&self) -> Vec<Value> {
        let filter = Filter {
            namespace: Some(NS.into()),
            ..Filter::default()
        };
        self.standin
            .store()
            .list(resources::pods(), &filter, None, None)
            .map(|page| page.items)
            .unwrap_or_default()
    }

    /// Waits until `pred` holds over all pods; returns them.
    pub async fn wait_pods(&self, what: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        self.wait_pods_for(what, TIMEOUT, pred).await
    }

    pub async fn wait_pods_for(
        &self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        let mut events = self.standin.store().subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let pods = self.all_pods();
            if pred(&pods) {
                return pods;
            }
            tokio::select! {
                _ = events.recv() => {}
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                _ = tokio::time::sleep_until(deadline) => {
                    panic!("timed out waiting for {what}; pods: {}", summary(&pods));
                }
            }
        }
    }

    /// Waits until the SidecarSet's stored object satisfies `pred`.
    pub async fn wait_sidecarset(
        &self,
        name: &str,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        self.standin
            .wait_for("sidecarsets", "", name, TIMEOUT, |o| o.is_some_and(&pred))
            .await
            .unwrap_or_else(|e| panic!("waiting for {what}: {e}"))
    }

    /// Events (core/v1 view) whose reason is `reason`.
    pub fn events(&self, reason: &str) -> Vec<Value> {
        let def = resources::RESOURCES
            .iter()
            .find(|r| r.plural == "events" && r.group.is_empty())
            .expect("events resource");
        self.standin
            .store()
            .list(def, &Filter::default(), None, None)
            .map(|p| p.items)
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e["reason"] == reason)
            .collect()
    }

    /// Waits until an event with `reason` exists.
    pub async fn wait_event(&self, reason: &str) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        let mut rx = self.standin.store().subscribe();
        loop {
            let found = self.events(reason);
            if !found.is_empty() {
                return found;
            }
            tokio::select! {
                _ = rx.recv() => {}
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                _ = tokio::time::sleep_until(deadline) => panic!("no {reason} event"),
            }
        }
    }
}

/// The container `name` of a pod (spec).
pub fn container<'a>(pod: &'a Value, name: &str) -> &'a Value {
    pod["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or(&Value::Null)
}

/// The status of container `name`.
pub fn container_status<'a>(pod: &'a Value, name: &str) -> &'a Value {
    pod["status"]["containerStatuses"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or(&Value::Null)
}

pub fn image<'a>(pod: &'a Value, name: &str) -> &'a str {
    container(pod, name)["image"].as_str().unwrap_or("")
}

pub fn name(pod: &Value) -> &str {
    pod["metadata"]["name"].as_str().unwrap_or("")
}

pub fn annotation<'a>(pod: &'a Value, key: &str) -> Option<&'a str> {
    pod["metadata"]["annotations"][key].as_str()
}

pub fn condition<'a>(pod: &'a Value, kind: &str) -> &'a Value {
    pod["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind))
        .unwrap_or(&Value::Null)
}

/// Running, Ready and every container running its spec image.
pub fn available(pod: &Value) -> bool {
    let ready = pod["status"]["phase"] == "Running" && condition(pod, "Ready")["status"] == "True";
    let settled = pod["spec"]["containers"].as_array().is_some_and(|cs| {
        cs.iter()
            .all(|c| container_status(pod, c["name"].as_str().unwrap_or(""))["image"] == c["image"])
    });
    ready && settled
}

/// The hash recorded for SidecarSet `ss` in the pod's `kruise.io/sidecarset-hash`.
pub fn pod_hash(pod: &Value, ss: &str) -> String {
    annotations::pod_hash_of(
        annotations::SIDECARSET_HASH,
        annotation(pod, annotations::SIDECARSET_HASH),
        ss,
    )
}

pub fn summary(pods: &[Value]) -> String {
    pods.iter()
        .map(|p| {
            let images: Vec<String> = p["spec"]["containers"]
                .as_array()
                .map(|cs| {
                    cs.iter()
                        .map(|c| {
                            format!(
                                "{}={}",
                                c["name"].as_str().unwrap_or(""),
                                c["image"].as_str().unwrap_or("")
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let upgradable = condition(p, "SidecarSetUpgradable")["status"]
                .as_str()
                .unwrap_or("-");
            format!(
                "{}[{} avail={} upgradable={upgradable}]",
                name(p),
                images.join(","),
                available(p)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Watches every stored pod state and records the largest number of pods (among `names`)
/// that were unavailable at once; sees every intermediate state, not just polls.
pub struct BudgetWatcher {
    max: Arc<Mutex<(usize, String)>>,
    task: tokio::task::JoinHandle<()>,
}

impl BudgetWatcher {
    pub fn start(env: &Env) -> BudgetWatcher {
        let mut rx = env.standin.store().subscribe();
        let mut state: BTreeMap<String, Value> = env
            .all_pods()
            .into_iter()
            .map(|p| (name(&p).to_string(), p))
            .collect();
        let max = Arc::new(Mutex::new((0usize, String::new())));
        let shared = max.clone();
        let task = tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(ev) => {
                        if ev.storage != "pods" || ev.object["metadata"]["namespace"] != NS {
                            continue;
                        }
                        let n = name(&ev.object).to_string();
                        state.insert(n, ev.object.clone());
                        let down: Vec<String> = state
                            .values()
                            .filter(|p| !available(p))
                            .map(|p| {
                                format!(
                                    "{}(rv={} ready={} sidecar={}/{})",
                                    name(p),
                                    p["metadata"]["resourceVersion"],
                                    condition(p, "Ready")["status"],
                                    image(p, "sidecar"),
                                    container_status(p, "sidecar")["image"],
                                )
                            })
                            .collect();
                        let mut m = shared.lock().unwrap_or_else(|p| p.into_inner());
                        if down.len() > m.0 {
                            *m = (down.len(), down.join(","));
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        panic!("budget watcher lagged by {n} events");
                    }
                    Err(_) => return,
                }
            }
        });
        BudgetWatcher { max, task }
    }

    /// (largest number unavailable at once, which pods).
    pub fn max(&self) -> (usize, String) {
        assert!(!self.task.is_finished(), "budget watcher stopped (lagged?)");
        self.max.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for BudgetWatcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A cold-upgrade SidecarSet selecting `app=web` with one sidecar `sidecar` on `image`.
pub fn cold_sidecarset(name: &str, image: &str, strategy: Value) -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": { "name": name },
        "spec": {
            "selector": { "matchLabels": { "app": "web" } },
            "updateStrategy": strategy,
            "containers": [{ "name": "sidecar", "image": image }]
        }
    })
}

/// Sets the image of sidecar container 0.
pub fn set_image(image: &'static str) -> impl Fn(&mut Value) {
    move |v: &mut Value| v["spec"]["containers"][0]["image"] = json!(image)
}

/// Number of pods whose `container` runs (spec) `image`.
pub fn count_image(pods: &[Value], container_name: &str, img: &str) -> usize {
    pods.iter()
        .filter(|p| image(p, container_name) == img)
        .count()
}

/// Namespace of the pods `poke` creates: out of every test's pod listings.
pub const POKE_NS: &str = "sidecarset-e2e-poke";

/// Completed planning passes of SidecarSet `ss` (0 before the first).
pub async fn planning_passes(controller: &Controller, ss: &str) -> f64 {
    controller
        .metric(&format!(
            "sidecarset_planning_passes_total{{sidecarset=\"{ss}\"}}"
        ))
        .await
        .unwrap_or(0.0)
}

impl Env {
    /// Makes the controller plan every SidecarSet of `pod_name` from caches that include this
    /// call, and waits until it has; lets a test assert that "nothing more happens" without
    /// sleeping. A pod created elsewhere naming the SidecarSets in its injected-list enqueues
    /// them (§5.1) without being selected; two rounds, because the pass that completes first
    /// may have started before the first such pod reached the controller's cache.
    pub async fn poke(&self, controller: &Controller, pod_name: &str) {
        let template = self.pods().get(pod_name).await.expect("pod to poke with");
        let sidecarsets = annotations::parse_injected_list(
            template
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(annotations::INJECTED_LIST))
                .map(String::as_str),
        );
        assert!(!sidecarsets.is_empty(), "{pod_name} names no SidecarSet");
        let mut before = Vec::new();
        for ss in &sidecarsets {
            before.push(planning_passes(controller, ss).await);
        }
        for round in 1..=2 {
            self.create_poke_pod(&template).await;
            let deadline = tokio::time::Instant::now() + TIMEOUT;
            for (ss, start) in sidecarsets.iter().zip(&before) {
                while planning_passes(controller, ss).await < start + f64::from(round) {
                    assert!(
                        tokio::time::Instant::now() < deadline,
                        "no planning pass of {ss} after poke; logs:\n{}",
                        controller.logs()
                    );
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }

    /// An unscheduled, unlabelled copy of `template`'s containers and annotations in [`POKE_NS`].
    async fn create_poke_pod(&self, template: &Pod) {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let ns: Namespace =
            serde_json::from_value(json!({ "metadata": { "name": POKE_NS } })).expect("namespace");
        match namespaces.create(&PostParams::default(), &ns).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => panic!("create namespace {POKE_NS}: {e}"),
        }
        let containers = template
            .spec
            .as_ref()
            .map(|s| s.containers.clone())
            .unwrap_or_default();
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {
                "name": format!("poke-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
                "annotations": template.metadata.annotations.clone().unwrap_or_default()
            },
            "spec": { "containers": containers }
        }))
        .expect("poke pod");
        Api::<Pod>::namespaced(self.client.clone(), POKE_NS)
            .create(&PostParams::default(), &pod)
            .await
            .expect("create poke pod");
    }

    /// Waits until the SidecarSet's status reflects its current generation and `pred`.
    pub async fn wait_status(
        &self,
        name: &str,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        self.wait_sidecarset(name, what, |o| {
            o["status"]["observedGeneration"] == o["metadata"]["generation"] && pred(&o["status"])
        })
        .await
    }

    /// Slows container restarts so a rollout takes long enough to interrupt.
    pub fn slow_restarts(&self, millis: u64) {
        let kubelet = self.standin.kubelet().expect("kubelet");
        let mut cfg = kubelet.config();
        cfg.restart_delay = Duration::from_millis(millis);
        kubelet.set_config(cfg);
    }
}
