//! Controller memory with 10,000 injected pods cached (target: RSS < 150 MiB): the real
//! `sidecarset-controller` binary against the API-server stand-in, sampled from /proc once the
//! SidecarSet status counts every pod. A benchmark, not a test: it only measures under
//! `cargo bench --profile dev --workspace --bench rss` (as a test target it says so
//! and exits).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use apiserver_standin::store::Subresource;
use apiserver_standin::{Options, StandIn, image_id, resources};
use serde_json::{Value, json};
use sidecarset_policy::api::SidecarSet;

const PODS: usize = 10_000;
const NAMESPACE: &str = "default";
const SIDECARSET: &str = "mesh";
const NOW: &str = "2026-01-01T00:00:00Z";
const TIMEOUT: Duration = Duration::from_secs(300);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("rss: a benchmark; run `cargo bench --profile dev --workspace --bench rss`");
        return Ok(());
    }
    let standin = StandIn::start(Options::default()).await?;
    let sidecarset = create_sidecarset(&standin)?;
    let pod_bytes = create_pods(&standin, &sidecarset)?;

    let dir = std::env::temp_dir().join(format!("sidecarset-rss-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let kubeconfig = dir.join("kubeconfig");
    standin.write_kubeconfig(&kubeconfig)?;
    let started = Instant::now();
    let mut controller = spawn_controller(&kubeconfig, &dir)?;
    let pid = controller.id().context("controller exited at once")?;
    let outcome = async {
        wait_for_status(&standin, &mut controller).await?;
        let synced = started.elapsed();
        // A few more passes over the full cache before sampling the steady state.
        let mut rss_max = 0;
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            rss_max = rss_max.max(proc_status_kib(pid, "VmRSS")?);
        }
        let hwm = proc_status_kib(pid, "VmHWM")?;
        anyhow::Ok((synced, rss_max, hwm))
    }
    .await;
    let _ = controller.start_kill();
    let _ = controller.wait().await;
    let (synced, rss, hwm) = outcome?;
    println!(
        "rss/{PODS} pods: VmRSS {:.1} MiB (max of 10 samples after sync), VmHWM {:.1} MiB, \
         status synced {:.1} s after start; pods average {} bytes of JSON",
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0,
        synced.as_secs_f64(),
        pod_bytes / PODS,
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// One SidecarSet with a cold and a hot-upgrade sidecar, defaulted and hashed as admission does.
fn create_sidecarset(standin: &StandIn) -> anyhow::Result<SidecarSet> {
    let mut value = json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": SIDECARSET},
        "spec": {
            "selector": {"matchLabels": {"mesh": "enabled"}},
            "updateStrategy": {"maxUnavailable": "10%"},
            "containers": [
                {"name": "log-agent", "image": "registry.example/log-agent:1.4.2",
                 "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}},
                 "volumeMounts": [{"name": "logs", "mountPath": "/var/log/app"}]},
                {"name": "envoy", "image": "registry.example/envoy:1.30.1",
                 "args": ["--config-path", "/etc/envoy/envoy.yaml", "--log-level", "info"],
                 "upgradeStrategy": {"upgradeType": "HotUpgrade",
                                     "hotUpgradeEmptyImage": "registry.example/empty:1"}},
            ],
            "volumes": [{"name": "logs", "emptyDir": {}}],
        },
    });
    sidecarset_policy::admission::apply_defaults(&mut value);
    let def = resources::find("apps.kruise.io", "v1alpha1", "sidecarsets")
        .context("the stand-in serves sidecarsets")?;
    let stored = standin.store().create(def, "", &value, false)?;
    Ok(serde_json::from_value(stored)?)
}

/// `PODS` pods shaped like a Deployment's, injected by the policy's own inject function, then
/// given the status a kubelet reports for them running and ready. Returns their total JSON size.
fn create_pods(standin: &StandIn, sidecarset: &SidecarSet) -> anyhow::Result<usize> {
    let mut bytes = 0;
    for index in 0..PODS {
        let mut pod = app_pod(index);
        if !sidecarset_policy::inject::inject(&mut pod, &[sidecarset], NOW)? {
            bail!("the SidecarSet does not select pod {index}");
        }
        let mut stored = standin
            .store()
            .create(resources::pods(), NAMESPACE, &pod, false)?;
        stored["status"] = running_status(&stored, index);
        let (stored, _) = standin.store().update(
            resources::pods(),
            NAMESPACE,
            &format!("web-{index}"),
            &stored,
            Subresource::Status,
            false,
        )?;
        bytes += serde_json::to_vec(&stored)?.len();
    }
    Ok(bytes)
}

fn app_pod(index: usize) -> Value {
    let replica_set = format!("web-{}-7d9f8c6b5", index / 100);
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": format!("web-{index}"),
            "namespace": NAMESPACE,
            "generateName": format!("{replica_set}-"),
            "labels": {"app": format!("web-{}", index / 100), "mesh": "enabled",
                       "pod-template-hash": "7d9f8c6b5", "zone": format!("zone-{}", index % 3)},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": replica_set,
                                 "uid": format!("00000000-0000-0000-0000-{:012}", index / 100),
                                 "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": {
            "nodeName": format!("node-{}", index % 50),
            "serviceAccountName": "web",
            "containers": [{
                "name": "app", "image": "registry.example/web:2.3.1",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "PORT", "value": "8080"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                              "limits": {"memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5},
                "volumeMounts": [{"name": "kube-api-access", "readOnly": true,
                                  "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
            }],
            "volumes": [{"name": "kube-api-access", "projected": {"sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            ]}}],
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ],
        },
    })
}

/// Running and ready, every container running its spec image.
fn running_status(pod: &Value, index: usize) -> Value {
    let statuses: Vec<Value> = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|container| {
            let image = container["image"].as_str().unwrap_or_default();
            json!({
                "name": container["name"], "image": image, "imageID": image_id(image),
                "containerID": format!("containerd://{:064x}", index),
                "ready": true, "started": true, "restartCount": 0,
                "state": {"running": {"startedAt": NOW}},
            })
        })
        .collect();
    let condition = |type_: &str| json!({"type": type_, "status": "True", "lastProbeTime": null, "lastTransitionTime": NOW});
    let conditions = ["Initialized", "Ready", "ContainersReady", "PodScheduled"].map(condition);
    json!({
        "phase": "Running",
        "conditions": conditions,
        "hostIP": format!("10.0.0.{}", index % 50),
        "podIP": format!("10.1.{}.{}", index / 250, index % 250),
        "podIPs": [{"ip": format!("10.1.{}.{}", index / 250, index % 250)}],
        "startTime": NOW,
        "qosClass": "Burstable",
        "containerStatuses": statuses,
    })
}

fn spawn_controller(kubeconfig: &Path, dir: &Path) -> anyhow::Result<tokio::process::Child> {
    let metrics = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let log = std::fs::File::create(dir.join("controller.log"))?;
    Ok(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_sidecarset-controller"))
            .args(["--metrics-addr", &metrics.to_string()])
            .args(["--lease-namespace", NAMESPACE, "--identity", "rss"])
            .args(["--log-format", "text"])
            .env("KUBECONFIG", kubeconfig)
            .env("RUST_LOG", "warn")
            .env_remove("POD_NAMESPACE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()?,
    )
}

/// Until the stored SidecarSet status counts every pod as matched, updated and ready.
async fn wait_for_status(
    standin: &StandIn,
    controller: &mut tokio::process::Child,
) -> anyhow::Result<()> {
    let all = json!(PODS);
    let done = |o: Option<&Value>| {
        o.is_some_and(|o| {
            let s = &o["status"];
            s["matchedPods"] == all && s["updatedPods"] == all && s["readyPods"] == all
        })
    };
    let found = standin.wait_for("sidecarsets", "", SIDECARSET, TIMEOUT, done);
    tokio::select! {
        found = found => { found?; }
        exit = controller.wait() => bail!("controller exited before syncing: {exit:?}"),
    }
    Ok(())
}

/// A `kB` line of /proc/<pid>/status.
fn proc_status_kib(pid: u32, field: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in /proc/{pid}/status"))
}
