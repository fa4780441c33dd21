//! The cluster context of `serve`: a snapshot swapped atomically, filled either from a folder
//! (`--context DIR`) or from kube-rs reflectors (watch caches) of SidecarSets, Namespaces and
//! the ControllerRevisions Kruise records for SidecarSets.
//!
//! Host callbacks run on blocking evaluation threads; they only read the current snapshot
//! (an `Arc` clone under a short read lock), never wait on async code.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::Value;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::context::{ClusterContext, read_target};
use crate::engine::HostCallbacks;

/// `apps.kruise.io/v1alpha1` SidecarSets, cluster-scoped.
pub fn sidecarset_resource() -> ApiResource {
    ApiResource {
        group: "apps.kruise.io".into(),
        version: "v1alpha1".into(),
        api_version: "apps.kruise.io/v1alpha1".into(),
        kind: "SidecarSet".into(),
        plural: "sidecarsets".into(),
    }
}

/// The kinds the live caches hold.
const WATCHED: [(&str, &str); 3] = [
    ("apps.kruise.io/v1alpha1", "SidecarSet"),
    ("v1", "Namespace"),
    ("apps/v1", "ControllerRevision"),
];

/// Only SidecarSet revisions are cached: Kruise labels each with its SidecarSet's name.
const REVISION_LABEL: &str = "kruise.io/sidecarset-name";

/// Most distinct callback requests remembered per snapshot (the policy makes two kinds).
const MAX_CACHED_ANSWERS: usize = 256;

type AnswerKey = (String, String, Vec<u8>);
type Answer = Result<Vec<u8>, String>;

/// Objects at one point in time, and the answers already computed from them: a snapshot never
/// changes, so the same callback request always gets the same bytes.
#[derive(Default)]
struct Snapshot {
    context: Arc<ClusterContext>,
    answers: Mutex<HashMap<AnswerKey, Answer>>,
}

impl Snapshot {
    fn new(context: ClusterContext) -> Self {
        Self {
            context: Arc::new(context),
            answers: Mutex::default(),
        }
    }

    fn call(&self, binding: &str, namespace: &str, operation: &str, payload: &[u8]) -> Answer {
        let key = (
            namespace.to_string(),
            operation.to_string(),
            payload.to_vec(),
        );
        if let Some(answer) = self
            .answers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return answer.clone();
        }
        let answer = self.context.call(binding, namespace, operation, payload);
        let mut answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        if answers.len() >= MAX_CACHED_ANSWERS {
            answers.clear();
        }
        answers.insert(key, answer.clone());
        answer
    }
}

struct Shared {
    snapshot: RwLock<Arc<Snapshot>>,
    ready: AtomicBool,
    /// `Some` in live mode: only these (apiVersion, kind) pairs are answered.
    watched: Option<&'static [(&'static str, &'static str)]>,
}

/// Answers the Kubernetes host callbacks from the latest snapshot. Cheap to clone.
#[derive(Clone)]
pub struct SharedContext {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SharedContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedContext")
            .field("ready", &self.is_ready())
            .field("objects", &self.snapshot().len())
            .finish()
    }
}

impl SharedContext {
    /// A fixed context (from `--context DIR`), ready at once.
    pub fn fixed(context: ClusterContext) -> Self {
        Self {
            shared: Arc::new(Shared {
                snapshot: RwLock::new(Arc::new(Snapshot::new(context))),
                ready: AtomicBool::new(true),
                watched: None,
            }),
        }
    }

    fn live() -> Self {
        Self {
            shared: Arc::new(Shared {
                snapshot: RwLock::new(Arc::new(Snapshot::default())),
                ready: AtomicBool::new(false),
                watched: Some(&WATCHED),
            }),
        }
    }

    /// True once the context is loaded (live mode: both caches have synced).
    pub fn is_ready(&self) -> bool {
        self.shared.ready.load(Ordering::Acquire)
    }

    fn current(&self) -> Arc<Snapshot> {
        // A poisoned lock still holds a complete Arc: keep serving it.
        let snapshot = self
            .shared
            .snapshot
            .read()
            .unwrap_or_else(|e| e.into_inner());
        Arc::clone(&snapshot)
    }

    /// The current objects.
    pub fn snapshot(&self) -> Arc<ClusterContext> {
        Arc::clone(&self.current().context)
    }

    fn replace(&self, context: ClusterContext) {
        let mut snapshot = self
            .shared
            .snapshot
            .write()
            .unwrap_or_else(|e| e.into_inner());
        *snapshot = Arc::new(Snapshot::new(context));
    }

    fn check_watched(
        &self,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<(), String> {
        let Some(watched) = self.shared.watched else {
            return Ok(());
        };
        // Anything but a Kubernetes read is answered (and refused) by the context itself.
        let Some((api_version, kind)) = read_target(namespace, operation, payload) else {
            return Ok(());
        };
        if watched.iter().any(|(v, k)| *v == api_version && *k == kind) {
            Ok(())
        } else {
            Err(format!(
                "{api_version}/{kind} is not cached by sidecarset-host serve (it watches SidecarSets apps.kruise.io/v1alpha1, Namespaces and SidecarSet ControllerRevisions only)"
            ))
        }
    }
}

impl HostCallbacks for SharedContext {
    fn call(
        &self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String> {
        self.check_watched(namespace, operation, payload)?;
        self.current().call(binding, namespace, operation, payload)
    }
}

fn with_type(mut object: Value, api_version: &str, kind: &str) -> Value {
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".into(), Value::String(api_version.into()));
        map.insert("kind".into(), Value::String(kind.into()));
    }
    object
}

/// The three watch caches.
struct Stores {
    sidecarsets: Store<DynamicObject>,
    namespaces: Store<Namespace>,
    revisions: Store<ControllerRevision>,
}

fn typed<K>(
    store: &Store<K>,
    api_version: &'static str,
    kind: &'static str,
) -> impl Iterator<Item = Value>
where
    K: kube::Resource + Clone + serde::Serialize,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    store
        .state()
        .into_iter()
        .filter_map(|o| serde_json::to_value(&*o).ok())
        .map(move |o| with_type(o, api_version, kind))
}

fn rebuild(stores: &Stores) -> ClusterContext {
    let mut context = ClusterContext::default();
    let objects = typed(&stores.sidecarsets, "apps.kruise.io/v1alpha1", "SidecarSet")
        .chain(typed(&stores.namespaces, "v1", "Namespace"))
        .chain(typed(&stores.revisions, "apps/v1", "ControllerRevision"));
    for object in objects {
        if let Err(e) = context.insert(object, "watch cache") {
            tracing::warn!(error = %e, "skipping an object of the watch cache");
        }
    }
    context
}

/// Watches SidecarSets, Namespaces and SidecarSet ControllerRevisions and keeps
/// `SharedContext` up to date.
pub struct LiveCaches {
    /// The context to hand to the engine; ready once both caches have synced.
    pub context: SharedContext,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for LiveCaches {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

async fn drive<K, S>(stream: S, kind: &'static str, changed: Arc<Notify>)
where
    S: futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>>,
{
    let mut stream = std::pin::pin!(stream);
    while let Some(event) = stream.next().await {
        match event {
            Ok(_) => changed.notify_one(),
            Err(e) => tracing::warn!(kind, error = %e, "watch error (retrying with backoff)"),
        }
    }
}

impl LiveCaches {
    /// Starts the reflectors on the current tokio runtime.
    pub fn start(client: kube::Client) -> Self {
        let context = SharedContext::live();
        let changed = Arc::new(Notify::new());

        let resource = sidecarset_resource();
        let sidecarsets: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let writer = reflector::store::Writer::new(resource);
        let sidecarset_store = writer.as_reader();
        let sidecarset_stream =
            reflector::reflector(writer, watcher(sidecarsets, watcher::Config::default()))
                .default_backoff();

        let namespaces: Api<Namespace> = Api::all(client.clone());
        let (namespace_store, writer) = reflector::store();
        let namespace_stream =
            reflector::reflector(writer, watcher(namespaces, watcher::Config::default()))
                .default_backoff();

        let revisions: Api<ControllerRevision> = Api::all(client);
        let (revision_store, writer) = reflector::store();
        let labelled = watcher::Config::default().labels(REVISION_LABEL);
        let revision_stream =
            reflector::reflector(writer, watcher(revisions, labelled)).default_backoff();

        let stores = Stores {
            sidecarsets: sidecarset_store,
            namespaces: namespace_store,
            revisions: revision_store,
        };
        let tasks = vec![
            tokio::spawn(drive(sidecarset_stream, "SidecarSet", Arc::clone(&changed))),
            tokio::spawn(drive(namespace_stream, "Namespace", Arc::clone(&changed))),
            tokio::spawn(drive(
                revision_stream,
                "ControllerRevision",
                Arc::clone(&changed),
            )),
            tokio::spawn(Self::refresh(context.clone(), stores, changed)),
        ];
        Self { context, tasks }
    }

    async fn refresh(context: SharedContext, stores: Stores, changed: Arc<Notify>) {
        let (a, b, c) = tokio::join!(
            stores.sidecarsets.wait_until_ready(),
            stores.namespaces.wait_until_ready(),
            stores.revisions.wait_until_ready()
        );
        if a.is_err() || b.is_err() || c.is_err() {
            tracing::error!("a watch cache was dropped before it synced");
            return;
        }
        loop {
            context.replace(rebuild(&stores));
            if !context.is_ready() {
                context.shared.ready.store(true, Ordering::Release);
                tracing::info!(objects = context.snapshot().len(), "watch caches synced");
            }
            changed.notified().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_cached_per_snapshot_and_follow_replacements() {
        let namespace = |name: &str| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        let context = SharedContext::live();
        context.replace(ClusterContext::from_objects(vec![namespace("a")]).unwrap());
        let list = br#"{"api_version":"v1","kind":"Namespace","label_selector":null,"field_selector":null}"#;
        let call = || {
            context
                .call("kubewarden", "kubernetes", "list_resources_all", list)
                .unwrap()
        };
        let first = call();
        assert_eq!(call(), first);
        assert_eq!(context.current().answers.lock().unwrap().len(), 1);
        context
            .replace(ClusterContext::from_objects(vec![namespace("a"), namespace("b")]).unwrap());
        let second: Value = serde_json::from_slice(&call()).unwrap();
        assert_eq!(second["items"].as_array().unwrap().len(), 2);
        let denied =
            br#"{"api_version":"v1","kind":"Secret","label_selector":null,"field_selector":null}"#;
        let error = context
            .call("kubewarden", "kubernetes", "list_resources_all", denied)
            .unwrap_err();
        assert!(error.contains("not cached"), "{error}");
    }
}
