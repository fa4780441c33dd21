//! A kube-apiserver stand-in with a kubelet simulator, for end-to-end tests.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use apiserver_standin::{Options, StandIn, KubeletConfig};
//! let standin = StandIn::start(Options { kubelet: Some(KubeletConfig::fast()), ..Options::default() }).await?;
//! let client = standin.client()?; // a kube::Client talking to it over HTTP
//! standin.faults().fail_next(Some(apiserver_standin::Verb::Update), Some("pods"), 1, 409);
//! # Ok(()) }
//! ```

pub mod admission;
pub mod error;
pub mod fault;
pub mod http;
pub mod kubelet;
pub mod meta;
pub mod patch;
pub mod protobuf;
pub mod resources;
pub mod selectors;
pub mod store;
pub mod watch;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use admission::Admission;
pub use error::ApiError;
pub use fault::{Fault, FaultAction, Faults, RequestInfo, Verb};
pub use kubelet::{Kubelet, KubeletConfig, image_id};
pub use store::Store;

/// How to start the stand-in.
#[derive(Debug, Clone)]
pub struct Options {
    /// Address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Number of events retained for watches; a watch from an older resourceVersion gets 410 Gone.
    pub history_limit: usize,
    /// How often watches with `allowWatchBookmarks=true` get a progress BOOKMARK.
    pub bookmark_interval: Duration,
    /// Pods on a node (`spec.nodeName` set) are deleted gracefully: they get a
    /// deletionTimestamp and disappear when the kubelet confirms (as in a cluster).
    pub graceful_pod_deletion: bool,
    /// Run the kubelet simulator with these delays.
    pub kubelet: Option<KubeletConfig>,
    /// Where webhook services listen (more can be added with [`StandIn::map_service`]).
    pub services: Vec<ServiceEndpoint>,
}

/// A Service of the cluster mapped to a local address, for webhooks' `clientConfig.service`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceEndpoint {
    /// Service namespace.
    pub namespace: String,
    /// Service name.
    pub name: String,
    /// Service port.
    pub port: u16,
    /// Where it is reached.
    pub addr: SocketAddr,
}

impl std::str::FromStr for ServiceEndpoint {
    type Err = String;

    /// `NAMESPACE/NAME:PORT=HOST:PORT`, e.g. `sidecarset-system/webhook:443=127.0.0.1:9443`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{s:?}: expected NAMESPACE/NAME:PORT=ADDRESS:PORT");
        let (service, addr) = s.split_once('=').ok_or_else(bad)?;
        let (namespace, rest) = service.split_once('/').ok_or_else(bad)?;
        let (name, port) = rest.rsplit_once(':').ok_or_else(bad)?;
        Ok(ServiceEndpoint {
            namespace: namespace.to_string(),
            name: name.to_string(),
            port: port.parse().map_err(|_| bad())?,
            addr: addr.parse().map_err(|_| bad())?,
        })
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            history_limit: 10_000,
            bookmark_interval: Duration::from_secs(1),
            graceful_pod_deletion: true,
            kubelet: None,
            services: Vec::new(),
        }
    }
}

/// Errors of the library's own API (not API errors answered to clients).
#[derive(Debug, thiserror::Error)]
pub enum StandInError {
    /// The listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// A kube client could not be built.
    #[error("cannot build a kube client: {0}")]
    Client(String),
    /// A wait timed out; carries the last state seen.
    #[error("timed out after {timeout:?} waiting for {what}; last seen: {last}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// The timeout.
        timeout: Duration,
        /// The last state of the object (or `null`).
        last: Value,
    },
    /// Unknown resource name in a helper call.
    #[error("unknown resource {0}")]
    UnknownResource(String),
    /// Writing a file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// A running stand-in. Dropping it stops the server and the simulator.
pub struct StandIn {
    addr: SocketAddr,
    store: Arc<Store>,
    faults: Faults,
    admission: Admission,
    kubelet: Option<Kubelet>,
    shutdown: Option<oneshot::Sender<()>>,
    server: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for StandIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StandIn")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl StandIn {
    /// Binds, starts serving in the background and returns at once.
    pub async fn start(opts: Options) -> Result<StandIn, StandInError> {
        let listener = tokio::net::TcpListener::bind(opts.listen)
            .await
            .map_err(|source| StandInError::Bind {
                addr: opts.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| StandInError::Bind {
            addr: opts.listen,
            source,
        })?;
        let store = Arc::new(Store::new(opts.history_limit, opts.graceful_pod_deletion));
        let faults = Faults::default();
        let admission = Admission::default();
        for s in &opts.services {
            admission
                .services
                .insert(&s.namespace, &s.name, s.port, s.addr);
        }
        let app = http::router(http::AppState {
            store: store.clone(),
            faults: faults.clone(),
            admission: admission.clone(),
            bookmark_interval: opts.bookmark_interval,
            addr,
        });
        let (tx, rx) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = rx.await;
            });
            if let Err(e) = serve.await {
                tracing::error!("stand-in server stopped: {e}");
            }
        });
        let kubelet = opts.kubelet.map(|cfg| Kubelet::start(store.clone(), cfg));
        tracing::info!("apiserver stand-in listening on http://{addr}");
        Ok(StandIn {
            addr,
            store,
            faults,
            admission,
            kubelet,
            shutdown: Some(tx),
            server: Some(server),
        })
    }

    /// Says where a Service's pods listen, for webhooks that name it in `clientConfig.service`.
    pub fn map_service(&self, namespace: &str, name: &str, port: u16, addr: SocketAddr) {
        self.admission.services.insert(namespace, name, port, addr);
    }

    /// Removes a Service's mapping: calls to it then find no endpoints.
    pub fn unmap_service(&self, namespace: &str, name: &str, port: u16) {
        self.admission.services.remove(namespace, name, port);
    }

    /// The audit annotations admission recorded, one entry per request that had any.
    pub fn audit(&self) -> Vec<admission::AuditEntry> {
        self.admission.audit()
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A `kube::Client` for this server (default namespace `default`).
    pub fn client(&self) -> Result<kube::Client, StandInError> {
        let uri = self
            .url()
            .parse()
            .map_err(|e: http_uri::InvalidUri| StandInError::Client(e.to_string()))?;
        // kube's rustls needs a process-wide crypto provider; install ring unless one is set.
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let config = kube::Config::new(uri);
        kube::Client::try_from(config).map_err(|e| StandInError::Client(e.to_string()))
    }

    /// A kubeconfig (YAML) pointing at this server, for kubectl.
    pub fn kubeconfig(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: standin\n  cluster:\n    server: {}\ncontexts:\n- name: standin\n  context:\n    cluster: standin\n    user: standin\n    namespace: default\ncurrent-context: standin\nusers:\n- name: standin\n  user: {{}}\n",
            self.url()
        )
    }

    /// Writes [`StandIn::kubeconfig`] to `path`.
    pub fn write_kubeconfig(&self, path: &Path) -> Result<(), StandInError> {
        std::fs::write(path, self.kubeconfig()).map_err(|source| StandInError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// The object store (in-process access, no HTTP).
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The fault switch.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The kubelet simulator, if started.
    pub fn kubelet(&self) -> Option<&Kubelet> {
        self.kubelet.as_ref()
    }

    /// Starts the kubelet simulator now (if not running) and returns it.
    pub fn start_kubelet(&mut self, config: KubeletConfig) -> &Kubelet {
        let store = self.store.clone();
        self.kubelet
            .get_or_insert_with(|| Kubelet::start(store, config))
    }

    /// Waits until the object `resource` (plural, e.g. `pods`, `sidecarsets`) `namespace/name`
    /// satisfies `pred` (`None` when it does not exist), and returns it (`Value::Null` if absent).
    pub async fn wait_for(
        &self,
        resource: &str,
        namespace: &str,
        name: &str,
        timeout: Duration,
        pred: impl Fn(Option<&Value>) -> bool,
    ) -> Result<Value, StandInError> {
        let def = resources::RESOURCES
            .iter()
            .find(|r| r.plural == resource)
            .ok_or_else(|| StandInError::UnknownResource(resource.to_string()))?;
        let mut events = self.store.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let current = self.store.get(def, namespace, name).ok();
            if pred(current.as_ref()) {
                return Ok(current.unwrap_or(Value::Null));
            }
            tokio::select! {
                _ = events.recv() => {}
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(StandInError::Timeout {
                        what: format!("{resource} {namespace}/{name}"),
                        timeout,
                        last: current.unwrap_or(Value::Null),
                    });
                }
            }
        }
    }

    /// Stops the server and waits for it to finish.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.kubelet = None;
        if let Some(server) = self.server.take() {
            server.abort();
            let _ = server.await;
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(server) = self.server.take() {
            server.abort();
        }
    }
}

mod http_uri {
    pub use axum::http::uri::InvalidUri;
}
