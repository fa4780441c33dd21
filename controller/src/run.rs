//! Wiring: caches, leader election, HTTP endpoints, the controller loop, shutdown.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::runtime::Controller;
use kube::runtime::controller::Config;
use kube::runtime::events::{Recorder, Reporter};
use kube::{Api, Client};
use tokio_util::sync::CancellationToken;

use crate::backoff::ErrorBackoff;
use crate::cli::Args;
use crate::error::{Error, Result};
use crate::expectations::Expectations;
use crate::http::{self, Health};
use crate::leader::{LeaderElector, Leadership};
use crate::metrics::Metrics;
use crate::reconciler::{self, Context};
use crate::watches;

/// The reporting controller name on Events.
pub const CONTROLLER_NAME: &str = "sidecarset-controller";
/// A stuck expectation is dropped after this long (a lost watch event must not wedge a rollout).
const EXPECTATIONS_TTL: Duration = Duration::from_secs(30);

/// Cancels `token` on SIGTERM or SIGINT.
pub fn cancel_on_signals(token: CancellationToken) {
    tokio::spawn(async move {
        let term = async {
            #[cfg(unix)]
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
            #[cfg(not(unix))]
            std::future::pending::<()>().await
        };
        tokio::select! {
            _ = term => tracing::info!("SIGTERM: shutting down"),
            _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT: shutting down"),
        }
        token.cancel();
    });
}

/// A stream that yields once each time leadership is acquired.
fn on_acquired(leadership: &Leadership) -> impl futures::Stream<Item = ()> + Send + 'static {
    futures::stream::unfold(leadership.subscribe(), |mut rx| async move {
        loop {
            rx.changed().await.ok()?;
            if *rx.borrow_and_update() {
                return Some(((), rx));
            }
        }
    })
}

/// Runs the controller until `shutdown` is cancelled.
pub async fn run(args: Args, shutdown: CancellationToken) -> Result<()> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // kube's rustls needs a process-wide provider; another may already be installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let client = Client::try_default().await.map_err(|e| {
        Error::kube(
            "load kubeconfig (KUBECONFIG, ~/.kube/config or in-cluster)",
            e,
        )
    })?;
    let identity = args.identity();
    let metrics = Arc::new(Metrics::default());
    let expectations = Arc::new(Expectations::new(EXPECTATIONS_TTL));
    let ready = Arc::new(AtomicBool::new(false));

    let (caches, streams) = watches::start(&client, expectations.clone(), metrics.clone());
    let server = http::serve(
        args.metrics_addr,
        Health {
            ready: ready.clone(),
            metrics: metrics.clone(),
        },
        shutdown.clone(),
    )
    .await?;
    {
        let caches = caches.clone();
        let ready = ready.clone();
        tokio::spawn(async move {
            if caches.synced().await {
                tracing::info!("watch caches synced");
                ready.store(true, Ordering::Relaxed);
            }
        });
    }

    let (elector, leadership) = LeaderElector::new(
        Api::<Lease>::namespaced(client.clone(), &args.lease_namespace),
        args.lease_name.clone(),
        identity.clone(),
        args.timing(),
        metrics.clone(),
    );
    // Its own token: the lease is released only after in-flight reconciles have drained.
    let election_stop = CancellationToken::new();
    let election = tokio::spawn(elector.run(election_stop.clone()));

    let reporter = Reporter {
        controller: CONTROLLER_NAME.into(),
        instance: Some(identity.clone()),
    };
    let ctx = Arc::new(Context {
        client: client.clone(),
        sidecarsets: caches.sidecarsets.clone(),
        pods: caches.pods.clone(),
        pod_index: caches.pod_index.clone(),
        namespaces: caches.namespaces.clone(),
        expectations,
        metrics,
        leadership: leadership.clone(),
        recorder: Recorder::new(client, reporter),
        ready,
        backoff: ErrorBackoff::default(),
    });
    tracing::info!(identity, lease = %format!("{}/{}", args.lease_namespace, args.lease_name), workers = args.workers, "starting");
    let stop = shutdown.clone();
    Controller::for_stream(streams.sidecarsets, caches.sidecarsets)
        .reconcile_on(streams.pod_triggers)
        .reconcile_all_on(on_acquired(&leadership))
        .with_config(Config::default().concurrency(args.workers.max(1)))
        .graceful_shutdown_on(async move { stop.cancelled().await })
        .run(reconciler::reconcile, reconciler::error_policy, ctx)
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "controller event");
            }
        })
        .await;
    // The controller has drained in-flight reconciles: now hand the lease over.
    shutdown.cancel();
    election_stop.cancel();
    let _ = election.await;
    let _ = server.await;
    tracing::info!("stopped");
    Ok(())
}
