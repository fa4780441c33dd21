//! `sidecarset-host serve`: the policy as an HTTPS admission webhook.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use sidecarset_host::ClusterContext;
use sidecarset_host::engine::PolicyEngine;
use sidecarset_host::serve::{
    AppState, DEFAULT_MAX_BODY_BYTES, Endpoint, LiveCaches, Role, SharedContext, tls,
};

use super::common;

/// Arguments of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address of the HTTPS webhook listener (port 0 picks a free port).
    #[arg(long, default_value = "0.0.0.0:8443")]
    pub listen: SocketAddr,
    /// PEM certificate chain of the webhook (leaf first).
    #[arg(long, value_name = "FILE")]
    pub cert: PathBuf,
    /// PEM private key of the certificate.
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// Also serve /metrics, /healthz and /readyz over plain HTTP on this address.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    /// Maximum concurrent evaluations (default: twice the number of CPUs).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Bodies larger than this get 413.
    #[arg(long, default_value_t = DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Deadline of each evaluation phase, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub deadline_ms: u64,
    /// Guest memory cap, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub memory_limit_mib: usize,
    /// Settings file, YAML or JSON.
    #[arg(short = 's', long, conflicts_with = "settings_json")]
    pub settings_path: Option<PathBuf>,
    /// Settings as inline JSON.
    #[arg(long)]
    pub settings_json: Option<String>,
    /// Folder of Kubernetes objects answering the callbacks; without it, SidecarSets and
    /// Namespaces are watched in the cluster of the kubeconfig / in-cluster config.
    #[arg(long, value_name = "DIR", conflicts_with = "kubeconfig")]
    pub context: Option<PathBuf>,
    /// Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then the in-cluster config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Allocate every instance on demand instead of taking it from a pool of pre-reserved slots
    /// (wasmtime's pooling allocator, one slot per worker: no mmap/munmap per evaluation).
    #[arg(long)]
    pub no_pooling: bool,
    /// How long SIGTERM waits for in-flight requests, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub drain_timeout: u64,
    /// The policy module (a `file://` prefix is accepted).
    #[arg(value_name = "MODULE")]
    pub module: String,
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

async fn kube_client(kubeconfig: Option<&PathBuf>) -> anyhow::Result<kube::Client> {
    let config = match kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
                .await
                .context("invalid kubeconfig")?
        }
        None => kube::Config::infer()
            .await
            .context("no kubeconfig or in-cluster configuration found (or use --context DIR)")?,
    };
    kube::Client::try_from(config).context("cannot build the Kubernetes client")
}

async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = terminate => tracing::info!("SIGTERM received"),
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT received"),
    }
}

/// Runs the command until SIGTERM / SIGINT.
pub fn execute(args: &ServeArgs) -> anyhow::Result<()> {
    init_logging();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let settings =
        common::read_settings(args.settings_path.as_deref(), args.settings_json.as_deref())?;
    let tls = tls::server_config(&args.cert, &args.key)?;
    // Twice the CPUs: while one evaluation's thread hands its answer back to the async side,
    // another is ready to run (+15-40 % admissions/s at 8 clients on 2 cores, host/BENCHMARKS.md).
    let workers = args
        .workers
        .unwrap_or_else(|| 2 * std::thread::available_parallelism().map_or(2, usize::from))
        .max(1);
    let mut config = common::engine_config(args.deadline_ms, args.memory_limit_mib);
    if !args.no_pooling {
        // The semaphore admits `workers` evaluations at a time; one more slot for the settings check.
        config.instance_pool = Some(u32::try_from(workers).unwrap_or(u32::MAX).saturating_add(1));
    }
    let module = common::module_path(&args.module);
    let engine = PolicyEngine::from_file(&module, config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("serve")
        .max_blocking_threads(workers.max(1) + 4)
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let (context, _caches) = match &args.context {
            Some(dir) => {
                let context = ClusterContext::from_dir(dir).with_context(|| {
                    format!("cannot load the cluster context from {}", dir.display())
                })?;
                (SharedContext::fixed(context), None)
            }
            None => {
                let caches = LiveCaches::start(kube_client(args.kubeconfig.as_ref()).await?);
                (caches.context.clone(), Some(caches))
            }
        };
        let max_body_bytes = args.max_body_bytes;
        // Settings are validated by the guest, which must not run on an async worker.
        let state = tokio::task::spawn_blocking(move || {
            AppState::new(engine, settings, context, workers, max_body_bytes)
        })
        .await
        .context("settings validation failed")??;
        let granted = state.callbacks.granted();
        if granted.is_empty() {
            tracing::warn!(
                "the module declares no contextAwareResources (is it annotated?): every Kubernetes list/get callback is refused"
            );
        } else {
            tracing::info!(resources = %granted.describe(), "the policy may read these Kubernetes kinds");
        }
        let listener = TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let mut endpoints = vec![Endpoint {
            tls: Some(TlsAcceptor::from(tls)),
            role: Role::Webhook,
            listener,
        }];
        let mut stdout = std::io::stdout().lock();
        writeln!(
            stdout,
            "listening on https://{}",
            endpoints[0].listener.local_addr()?
        )?;
        if let Some(addr) = args.metrics_listen {
            let listener = TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            writeln!(stdout, "metrics on http://{}", listener.local_addr()?)?;
            endpoints.push(Endpoint {
                listener,
                tls: None,
                role: Role::Metrics,
            });
        }
        stdout.flush()?;
        drop(stdout);
        sidecarset_host::serve::run(
            Arc::new(state),
            endpoints,
            shutdown_signal(),
            Duration::from_secs(args.drain_timeout),
        )
        .await;
        tracing::info!("stopped");
        anyhow::Ok(())
    })
}
