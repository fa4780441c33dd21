//! Load generator for `sidecarset-host serve` on loopback (see host/BENCHMARKS.md).
//!
//! ```text
//! make loadgen    # or, after `make annotated-policy.wasm`:
//! cargo run -p sidecarset-host --example loadgen -- [--module annotated-policy.wasm] [--seconds 5] [--clients 1,8,64] [--workers N] [--no-pooling]
//! ```
//!
//! The module must be annotated: serve lets the policy read only the kinds its metadata declares.
//!
//! It writes a self-signed certificate, a context folder with 10 SidecarSets (3 from
//! examples/cluster plus 7 generated, two of which select the pod) and the namespaces, starts
//! `sidecarset-host serve` (the binary next to this example), then for each client count runs
//! that many keep-alive HTTPS clients in a closed loop for the given time, and prints throughput,
//! p50/p99 latency and the server's RSS at rest and under load (VmRSS / VmHWM of /proc/PID/status).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

struct Args {
    module: PathBuf,
    server: PathBuf,
    seconds: u64,
    clients: Vec<usize>,
    workers: Option<usize>,
    no_pooling: bool,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = std::env::args().skip(1);
    let exe = std::env::current_exe()?;
    let default_server = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("sidecarset-host"))
        .context("cannot locate the sidecarset-host binary")?;
    let mut parsed = Args {
        module: PathBuf::from("annotated-policy.wasm"),
        server: default_server,
        seconds: 5,
        clients: vec![1, 8, 64],
        workers: None,
        no_pooling: false,
    };
    while let Some(flag) = args.next() {
        if flag == "--no-pooling" {
            parsed.no_pooling = true;
            continue;
        }
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--module" => parsed.module = value.into(),
            "--server" => parsed.server = value.into(),
            "--seconds" => parsed.seconds = value.parse()?,
            "--workers" => parsed.workers = Some(value.parse()?),
            "--clients" => {
                parsed.clients = value.split(',').map(str::parse).collect::<Result<_, _>>()?
            }
            other => bail!("unknown flag {other}"),
        }
    }
    Ok(parsed)
}

fn generated_sidecarset(i: usize, selects_pod: bool) -> Value {
    let selector = if selects_pod {
        json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]})
    } else {
        json!({"matchLabels": {"app": format!("service-{i}")}})
    };
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": format!("generated-{i}"), "labels": {"team": format!("team-{i}")}},
        "spec": {
            "selector": selector,
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": 1},
            "containers": [{
                "name": format!("agent-{i}"), "image": format!("example.com/agent-{i}:1.{i}"),
                "podInjectPolicy": "AfterAppContainer",
                "shareVolumePolicy": {"type": "disabled"},
                "upgradeStrategy": {"upgradeType": "ColdUpgrade"},
                "env": [{"name": "AGENT_ID", "value": format!("{i}")}],
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}}
            }]
        }
    })
}

fn request(root: &Path) -> anyhow::Result<Value> {
    let path = root.join("examples/requests/log-sidecar.json");
    let mut request: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)
        .with_context(|| format!("cannot parse {}", path.display()))?;
    // A more realistic pod: two containers with resources, env, probes and owner labels.
    request["object"]["metadata"]["labels"] =
        json!({"app": "web", "pod-template-hash": "7d4f9", "version": "v3"});
    request["object"]["spec"]["containers"] = json!([
        {"name": "app", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
         "env": [{"name": "MODE", "value": "production"}, {"name": "LOG_LEVEL", "value": "info"}],
         "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
         "readinessProbe": {"httpGet": {"path": "/healthz", "port": 80}, "periodSeconds": 5},
         "volumeMounts": [{"name": "logs", "mountPath": "/var/log/nginx"}]},
        {"name": "metrics", "image": "nginx/nginx-prometheus-exporter:1.3",
         "args": ["--nginx.scrape-uri=http://localhost/stub_status"],
         "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}
    ]);
    Ok(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}))
}

fn prepare(root: &Path, dir: &Path) -> anyhow::Result<(PathBuf, PathBuf, PathBuf, String)> {
    let context = dir.join("context");
    std::fs::create_dir_all(&context)?;
    for file in ["sidecarsets.yaml", "namespaces.yaml"] {
        std::fs::copy(root.join("examples/cluster").join(file), context.join(file))?;
    }
    let generated: Vec<Value> = (0..7).map(|i| generated_sidecarset(i, i == 3)).collect();
    std::fs::write(
        context.join("generated.json"),
        serde_json::to_string(&generated)?,
    )?;
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])?;
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    std::fs::write(&cert, certified.cert.pem())?;
    std::fs::write(&key, certified.signing_key.serialize_pem())?;
    Ok((context, cert, key, certified.cert.pem()))
}

fn rss_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// User plus system CPU time of a process so far (`/proc/PID/stat`, in clock ticks of 10 ms).
fn cpu_time(pid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name may hold spaces: the fields counted here start after its `)`.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

struct Run {
    clients: usize,
    requests: usize,
    errors: u64,
    elapsed: Duration,
    p50: Duration,
    p99: Duration,
    max: Duration,
    rss_peak_kib: u64,
    /// CPU time the server and this load generator used during the run.
    server_cpu: Duration,
    client_cpu: Duration,
}

async fn run(
    url: &str,
    ca: &str,
    body: &str,
    clients: usize,
    seconds: u64,
    pid: u32,
) -> anyhow::Result<Run> {
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(AtomicU64::new(0));
    let peak = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes())?)
            .pool_max_idle_per_host(1)
            .build()?;
        let (url, body, stop, errors) = (
            url.to_string(),
            body.to_string(),
            stop.clone(),
            errors.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(16 * 1024);
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                let ok = match client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await
                {
                    Ok(response) => {
                        response.status().is_success() && response.bytes().await.is_ok()
                    }
                    Err(_) => false,
                };
                if ok {
                    latencies.push(started.elapsed());
                } else {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            latencies
        }));
    }
    let sampler = {
        let (stop, peak) = (stop.clone(), peak.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(rss_kib(pid, "VmRSS:"), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let (server_cpu, client_cpu) = (cpu_time(&pid.to_string()), cpu_time("self"));
    let started = Instant::now();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await?);
    }
    let elapsed = started.elapsed();
    let server_cpu = cpu_time(&pid.to_string()).saturating_sub(server_cpu);
    let client_cpu = cpu_time("self").saturating_sub(client_cpu);
    sampler.await?;
    all.sort();
    let at = |p: f64| {
        all.get(((all.len() as f64 * p).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or_default()
    };
    Ok(Run {
        clients,
        requests: all.len(),
        errors: errors.load(Ordering::Relaxed),
        elapsed,
        p50: at(0.50),
        p99: at(0.99),
        max: all.last().copied().unwrap_or_default(),
        rss_peak_kib: peak.load(Ordering::Relaxed),
        server_cpu,
        client_cpu,
    })
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::temp_dir().join(format!("sidecarset-loadgen-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (context, cert, key, ca) = prepare(&root, &dir)?;
    let body = request(&root)?.to_string();

    let mut command = Command::new(&args.server);
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--context"])
        .arg(&context)
        .arg("--cert")
        .arg(&cert)
        .arg("--key")
        .arg(&key)
        .arg(&args.module)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped());
    if args.no_pooling {
        command.arg("--no-pooling");
    }
    if let Some(workers) = args.workers {
        command.args(["--workers", &workers.to_string()]);
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot start {}", args.server.display()))?;
    let stdout = child.stdout.take().context("no stdout")?;
    let pid = child.id();
    let server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let addr = line
        .trim()
        .strip_prefix("listening on https://")
        .with_context(|| format!("unexpected: {line}"))?;
    let port = addr.rsplit(':').next().unwrap_or_default();
    let url = format!("https://localhost:{port}/validate");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        // One request to check the answer and warm the server up.
        let check = run(&url, &ca, &body, 1, 1, pid).await?;
        let rest = rss_kib(pid, "VmRSS:");
        println!("server pid {pid}; warm-up: {} requests, {} errors", check.requests, check.errors);
        let client = reqwest::Client::builder().use_rustls_tls().add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes())?).build()?;
        let answer: Value = serde_json::from_slice(&client.post(&url).body(body.clone()).send().await?.bytes().await?)?;
        let response = &answer["response"];
        println!("answer: allowed={} patch={} bytes", response["allowed"], response["patch"].as_str().map_or(0, str::len));
        // Measuring refused callbacks instead of injections would be meaningless.
        if response["allowed"] != true || !response["patch"].is_string() {
            bail!("the policy did not inject (is the module annotated? `make annotated-policy.wasm`): {response}");
        }
        println!("RSS at rest (after warm-up): {:.1} MiB\n", rest as f64 / 1024.0);
        println!("| clients | requests | errors | admissions/s | p50 ms | p99 ms | max ms | peak RSS MiB | server CPU µs/adm | loadgen CPU µs/adm |");
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for &clients in &args.clients {
            let r = run(&url, &ca, &body, clients, args.seconds, pid).await?;
            let per = |cpu: Duration| cpu.as_secs_f64() * 1e6 / r.requests.max(1) as f64;
            println!(
                "| {} | {} | {} | {:.0} | {} | {} | {} | {:.1} | {:.0} | {:.0} |",
                r.clients, r.requests, r.errors,
                r.requests as f64 / r.elapsed.as_secs_f64(),
                ms(r.p50), ms(r.p99), ms(r.max),
                r.rss_peak_kib as f64 / 1024.0,
                per(r.server_cpu), per(r.client_cpu)
            );
        }
        println!("\nVmHWM (peak RSS over the whole run): {:.1} MiB", rss_kib(pid, "VmHWM:") as f64 / 1024.0);
        anyhow::Ok(())
    })?;
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
