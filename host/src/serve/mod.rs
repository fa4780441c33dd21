//! `serve`: the policy as an HTTPS admission webhook (AdmissionReview v1 in and out).
//!
//! Routes (on the webhook listener): `POST /`, `/validate`, `/mutate`, `/validate/{policy_id}`
//! (Kubewarden's shape) and `/mutate/{id}` take an AdmissionReview; `GET /healthz`, `/readyz` and
//! `/metrics` are served there too, and on the optional plain-HTTP metrics listener.
//!
//! Webhook connections are served by connection threads, one per CPU (`threads`), where the
//! guest runs inline when its imports cannot block on a runtime, and on a blocking thread
//! otherwise; at most `workers` evaluations at a time, each in a fresh instance.

pub mod cache;
pub mod handler;
pub mod metrics;
mod threads;
pub mod tls;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use serde_json::Value;
use thiserror::Error;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

use crate::context::{AllowList, ContextAwareResources};
use crate::engine::PolicyEngine;

pub use cache::{LiveCaches, SharedContext};
pub use handler::Role;
pub use metrics::{Metrics, Verdict};

/// Default limit of an AdmissionReview body (the API server's own limit is 3 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Errors while setting up or running the server.
#[derive(Debug, Error)]
pub enum ServeError {
    /// The certificate or key cannot be used.
    #[error("TLS: {0}")]
    Tls(String),
    /// A socket operation failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The settings were refused by the policy.
    #[error("Provided settings are not valid: {0}")]
    Settings(String),
    /// The policy could not validate the settings at all.
    #[error("cannot validate the settings: {0}")]
    Engine(#[from] crate::engine::EngineError),
}

/// What every request handler shares.
pub struct AppState {
    /// The compiled policy.
    pub engine: PolicyEngine,
    /// The validated settings, as a JSON object.
    pub settings: Value,
    /// `settings` serialized once, for every evaluation's payload.
    pub settings_json: Vec<u8>,
    /// Answers the Kubernetes host callbacks (readiness is read from it).
    pub context: SharedContext,
    /// `context` behind the policy's allow-list: what every evaluation talks to.
    pub callbacks: AllowList<SharedContext>,
    /// Bounds concurrent evaluations.
    pub workers: Arc<Semaphore>,
    /// Prometheus metrics.
    pub metrics: Metrics,
    /// Bodies over this size get a 413.
    pub max_body_bytes: usize,
}

impl AppState {
    /// Validates the settings with the policy and builds the shared state. The policy may read
    /// only the kinds its metadata declares in `contextAwareResources` (policy-server's
    /// allow-list, as `kwctl scaffold manifest --allow-context-aware` fills it).
    pub fn new(
        engine: PolicyEngine,
        settings: Value,
        context: SharedContext,
        workers: usize,
        max_body_bytes: usize,
    ) -> Result<Self, ServeError> {
        let granted = ContextAwareResources::declared_by(engine.metadata());
        let callbacks = AllowList::new(context.clone(), granted);
        let validation = engine.validate_settings(&settings, &callbacks)?;
        if !validation.valid {
            return Err(ServeError::Settings(validation.message.unwrap_or_default()));
        }
        let settings_json = crate::engine::settings_json(&settings)?;
        Ok(Self {
            engine,
            settings,
            settings_json,
            context,
            callbacks,
            workers: Arc::new(Semaphore::new(workers.max(1))),
            metrics: Metrics::default(),
            max_body_bytes,
        })
    }
}

/// A listener and how it is served.
pub struct Endpoint {
    /// The bound socket.
    pub listener: TcpListener,
    /// `Some` for HTTPS.
    pub tls: Option<TlsAcceptor>,
    /// Which routes it serves.
    pub role: Role,
}

/// Serves `endpoints` until `shutdown` resolves, then stops accepting, lets in-flight requests
/// finish (at most `drain_timeout`) and returns.
pub async fn run(
    state: Arc<AppState>,
    endpoints: Vec<Endpoint>,
    shutdown: impl Future<Output = ()>,
    drain_timeout: Duration,
) {
    let graceful = Arc::new(GracefulShutdown::new());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    // One per CPU, and at least two: a slow guest on one leaves the other serving.
    let cpus = std::thread::available_parallelism().map_or(2, usize::from);
    let threads = match threads::ConnectionThreads::start(cpus.max(2)) {
        Ok(threads) => Some(Arc::new(threads)),
        Err(e) => {
            tracing::warn!(error = %e, "no connection threads: serving on the main runtime");
            None
        }
    };
    let mut acceptors = Vec::new();
    for endpoint in endpoints {
        acceptors.push(tokio::spawn(accept_loop(
            Arc::clone(&state),
            endpoint,
            Arc::clone(&graceful),
            stop_rx.clone(),
            threads.clone(),
        )));
    }
    shutdown.await;
    tracing::info!("shutting down: draining in-flight requests");
    let _ = stop_tx.send(true);
    for acceptor in acceptors {
        let _ = acceptor.await;
    }
    // Every accept loop has returned and dropped its handle.
    let Ok(graceful) = Arc::try_unwrap(graceful) else {
        return;
    };
    if tokio::time::timeout(drain_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("drain timeout reached; closing the remaining connections");
    }
    // Dropped after the drain: the connection threads stop once their queues close.
    drop(threads);
}

async fn accept_loop(
    state: Arc<AppState>,
    endpoint: Endpoint,
    graceful: Arc<GracefulShutdown>,
    mut stop: tokio::sync::watch::Receiver<bool>,
    threads: Option<Arc<threads::ConnectionThreads>>,
) {
    let Endpoint {
        listener,
        tls,
        role,
    } = endpoint;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|stopped| *stopped) => return,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                // Out of file descriptors and the like: back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let state = Arc::clone(&state);
        let tls = tls.clone();
        // Subscribed before the handshake, so a shutdown signalled meanwhile is still seen.
        let watcher = graceful.watcher();
        match (&threads, role) {
            (Some(threads), Role::Webhook) => {
                // Re-registered on the connection thread, so its own driver polls the socket.
                let Ok(stream) = stream.into_std() else {
                    continue;
                };
                threads.spawn(Box::new(move || {
                    Box::pin(async move {
                        if let Ok(stream) = TcpStream::from_std(stream) {
                            serve_connection(state, role, tls, watcher, stream).await;
                        }
                    })
                }));
            }
            _ => {
                tokio::spawn(serve_connection(state, role, tls, watcher, stream));
            }
        }
    }
}

/// One connection: the TLS handshake, then HTTP/1.1 until the client or a shutdown closes it.
async fn serve_connection(
    state: Arc<AppState>,
    role: Role,
    tls: Option<TlsAcceptor>,
    watcher: Watcher,
    stream: TcpStream,
) {
    let service = service_fn(move |request| {
        let state = Arc::clone(&state);
        async move { Ok::<_, std::convert::Infallible>(handler::handle(state, role, request).await) }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(30));
    match tls {
        Some(acceptor) => {
            let stream = match tokio::time::timeout(
                Duration::from_secs(10),
                acceptor.accept(stream),
            )
            .await
            {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "TLS handshake failed");
                    return;
                }
                Err(_) => return,
            };
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let _ = watcher.watch(connection).await;
        }
        None => {
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let _ = watcher.watch(connection).await;
        }
    }
}
