//! The kubelet simulator: makes pods look alive. It runs in-process against the store and
//! reports phase, conditions and container statuses after configurable delays: init
//! containers in order, native sidecars, exits by the test-only `STANDIN_EXIT_*` env
//! convention and restarts by policy, CreateContainerConfigError while a ConfigMap or
//! Secret is missing; an image change restarts just that container.

mod conditions;
mod config;
mod lifecycle;
mod phase;
mod render;
mod sources;
mod spec;
mod status;
mod track;

pub use config::KubeletConfig;
pub use render::image_id;
pub use spec::{EXIT_AFTER_MS, EXIT_CODE};

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{Notify, broadcast};
use tokio::task::JoinHandle;

use crate::error::ApiError;
use crate::resources;
use crate::selectors::Filter;
use crate::store::{DeleteOptions, Store, Subresource};
use sources::{Sources, data_keys, references};
use status::{Inputs, evaluate};
use track::PodTrack;

#[derive(Debug, Default)]
struct Switches {
    never_ready: HashSet<String>,
    stopped_nodes: HashSet<String>,
}

struct Shared {
    store: Arc<Store>,
    config: Mutex<KubeletConfig>,
    switches: Mutex<Switches>,
    wake: Notify,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The running simulator; dropping it stops it.
pub struct Kubelet {
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Kubelet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kubelet").finish_non_exhaustive()
    }
}

impl Drop for Kubelet {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Kubelet {
    /// Starts the simulator on `store` (needs a Tokio runtime).
    pub fn start(store: Arc<Store>, config: KubeletConfig) -> Kubelet {
        let shared = Arc::new(Shared {
            store,
            config: Mutex::new(config),
            switches: Mutex::new(Switches::default()),
            wake: Notify::new(),
        });
        let task = tokio::spawn(run(shared.clone()));
        Kubelet { shared, task }
    }

    /// Changes the delays (applies to transitions not yet reached).
    pub fn set_config(&self, config: KubeletConfig) {
        *lock(&self.shared.config) = config;
        self.shared.wake.notify_one();
    }

    /// The current delays.
    pub fn config(&self) -> KubeletConfig {
        lock(&self.shared.config).clone()
    }

    /// Containers running `image` never become ready (`false` undoes it).
    pub fn set_never_ready(&self, image: &str, never: bool) {
        let mut s = lock(&self.shared.switches);
        if never {
            s.never_ready.insert(image.to_string());
        } else {
            s.never_ready.remove(image);
        }
        drop(s);
        self.shared.wake.notify_one();
    }

    /// The node stops reporting: pods with this `spec.nodeName` keep their last status
    /// (no restarts, no readiness changes, deletions not confirmed).
    pub fn stop_node(&self, node: &str) {
        lock(&self.shared.switches)
            .stopped_nodes
            .insert(node.to_string());
        self.shared.wake.notify_one();
    }

    /// The node reports again and catches up.
    pub fn resume_node(&self, node: &str) {
        lock(&self.shared.switches).stopped_nodes.remove(node);
        self.shared.wake.notify_one();
    }

    /// Deletes a pod at once (grace period 0), e.g. in the middle of a rollout.
    pub fn delete_pod(&self, namespace: &str, name: &str) -> Result<(), ApiError> {
        let opts = DeleteOptions {
            grace_period_seconds: Some(0),
            ..DeleteOptions::default()
        };
        self.shared
            .store
            .delete(resources::pods(), namespace, name, &opts)
            .map(|_| ())
    }
}

async fn run(shared: Arc<Shared>) {
    let mut events = shared.store.subscribe();
    let mut tracks: HashMap<String, PodTrack> = HashMap::new();
    loop {
        let next = sync(&shared, &mut tracks);
        let sleep_for = next
            .map(|n| n.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_secs(3600));
        tokio::select! {
            got = events.recv() => match got {
                // Pods, and the sources a container waiting in CreateContainerConfigError reads.
                Ok(ev) if !matches!(ev.storage, "pods" | "configmaps" | "secrets") => continue,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = shared.wake.notified() => {}
            _ = tokio::time::sleep(sleep_for) => {}
        }
    }
}

/// One pass over all pods; returns the next instant worth a look.
fn sync(shared: &Shared, tracks: &mut HashMap<String, PodTrack>) -> Option<Instant> {
    let store = &shared.store;
    let cfg = lock(&shared.config).clone();
    let (never_ready, stopped) = {
        let s = lock(&shared.switches);
        (s.never_ready.clone(), s.stopped_nodes.clone())
    };
    let pods = match store.list(resources::pods(), &Filter::default(), None, None) {
        Ok(page) => page.items,
        Err(e) => {
            tracing::warn!("kubelet: cannot list pods: {e}");
            return Some(Instant::now() + Duration::from_millis(100));
        }
    };
    let live: HashSet<String> = pods
        .iter()
        .map(|p| crate::meta::meta_str(p, "uid").to_string())
        .collect();
    tracks.retain(|uid, _| live.contains(uid));
    let now = Instant::now();
    let mut next: Option<Instant> = None;
    for pod in &pods {
        let node = crate::meta::path_string(pod, "spec.nodeName");
        if stopped.contains(&node) {
            continue;
        }
        let phase = crate::meta::path_string(pod, "status.phase");
        if phase == "Succeeded" || phase == "Failed" {
            continue;
        }
        let uid = crate::meta::meta_str(pod, "uid").to_string();
        let track = tracks
            .entry(uid)
            .or_insert_with(|| PodTrack::new(now, jiff::Timestamp::now()));
        let ns = crate::meta::namespace(pod).to_string();
        let name = crate::meta::name(pod).to_string();
        if pod
            .get("metadata")
            .and_then(|m| m.get("deletionTimestamp"))
            .is_some()
        {
            let since = *track.deleting_since.get_or_insert(now);
            let due = since + cfg.delete_delay;
            if now >= due {
                let opts = DeleteOptions {
                    grace_period_seconds: Some(0),
                    ..DeleteOptions::default()
                };
                if let Err(e) = store.delete(resources::pods(), &ns, &name, &opts)
                    && e.code != 404
                {
                    tracing::warn!("kubelet: cannot delete pod {ns}/{name}: {e}");
                }
            } else {
                next = Some(next.map_or(due, |n: Instant| n.min(due)));
            }
            continue;
        }
        let sources = sources_of(store, pod);
        let inputs = Inputs {
            cfg: &cfg,
            never_ready: &never_ready,
            sources: &sources,
        };
        let eval = evaluate(pod, track, now, &inputs);
        if let Some(n) = eval.next {
            next = Some(next.map_or(n, |m: Instant| m.min(n)));
        }
        let Some(status) = eval.status else { continue };
        if pod.get("status") == Some(&status) {
            continue;
        }
        let mut updated: Value = pod.clone();
        if let Some(m) = updated.as_object_mut() {
            m.insert("status".into(), status);
        }
        match store.update(
            resources::pods(),
            &ns,
            &name,
            &updated,
            Subresource::Status,
            false,
        ) {
            Ok(_) => {}
            Err(e) if e.code == 409 || e.code == 404 => {
                // Changed or gone meanwhile: the next event brings us back.
            }
            Err(e) => tracing::warn!("kubelet: cannot update status of {ns}/{name}: {e}"),
        }
    }
    next
}

/// The ConfigMaps and Secrets the pod's containers read env from, as the store has them.
fn sources_of(store: &Store, pod: &Value) -> Sources {
    let ns = crate::meta::namespace(pod);
    let mut sources = Sources::default();
    for (kind, name) in references(pod) {
        let keys = resources::find("", "v1", kind.plural())
            .and_then(|def| store.get(def, ns, &name).ok())
            .map(|obj| data_keys(&obj));
        sources.found.insert((kind, name), keys);
    }
    sources
}
