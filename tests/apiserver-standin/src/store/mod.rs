//! The object store: JSON objects keyed by storage/namespace/name, one global increasing
//! resourceVersion, a bounded event history for watches, and the per-type write rules.

pub mod convert;
mod kinds;
pub mod objectmeta;
pub mod pod;
mod rules;
mod staged;
mod tolerations;
mod types;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::error::ApiError;
use crate::meta;
use crate::resources::{self, ResourceDef};
use crate::selectors::Filter;

pub use convert::{from_view, to_view};
pub use staged::UpdateBase;
pub use types::{
    DeleteOptions, Deleted, EventType, ListPage, StoredEvent, Subresource, WatchFrom, WatchStart,
};

type Key = (&'static str, String, String);

struct Inner {
    rv: u64,
    objects: BTreeMap<Key, Value>,
    history: VecDeque<Arc<StoredEvent>>,
    history_limit: usize,
    compacted: u64,
    graceful_pod_deletion: bool,
}

/// The object store. Cheap to share behind an `Arc`.
pub struct Store {
    inner: Mutex<Inner>,
    events: broadcast::Sender<Arc<StoredEvent>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

fn key(def: &ResourceDef, ns: &str, name: &str) -> Key {
    let ns = if def.namespaced {
        ns.to_string()
    } else {
        String::new()
    };
    (def.storage, ns, name.to_string())
}

/// The etcd key kube-apiserver would use (it appears in storage error messages).
fn storage_key(def: &ResourceDef, ns: &str, name: &str) -> String {
    let prefix = if def.custom {
        format!("/registry/{}/{}", def.group, def.plural)
    } else {
        format!("/registry/{}", def.storage)
    };
    if def.namespaced {
        format!("{prefix}/{ns}/{name}")
    } else {
        format!("{prefix}/{name}")
    }
}

fn encode_continue(ns: &str, name: &str) -> String {
    let raw = format!("{ns}/{name}");
    raw.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_continue(token: &str) -> Result<(String, String), ApiError> {
    let bad = || ApiError::bad_request("continue key is not valid: malformed token");
    if !token.len().is_multiple_of(2) {
        return Err(bad());
    }
    let bytes = (0..token.len())
        .step_by(2)
        .map(|i| {
            token
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(bad)?;
    let raw = String::from_utf8(bytes).map_err(|_| bad())?;
    let (ns, name) = raw.split_once('/').ok_or_else(bad)?;
    Ok((ns.to_string(), name.to_string()))
}

impl Store {
    /// A store keeping at most `history_limit` events for watches, with the default namespaces.
    pub fn new(history_limit: usize, graceful_pod_deletion: bool) -> Store {
        let (events, _) = broadcast::channel(16_384);
        let store = Store {
            inner: Mutex::new(Inner {
                rv: 0,
                objects: BTreeMap::new(),
                history: VecDeque::new(),
                history_limit: history_limit.max(1),
                compacted: 0,
                graceful_pod_deletion,
            }),
            events,
        };
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            if let Err(e) = store.create(resources::namespaces(), "", &obj, false) {
                tracing::error!("cannot create namespace {ns}: {e}");
            }
        }
        store
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        match self.inner.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The current (latest) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.lock().rv
    }

    /// Changes how many events are retained for watches (older watches get 410 Gone).
    pub fn set_history_limit(&self, limit: usize) {
        let mut inner = self.lock();
        inner.history_limit = limit.max(1);
        inner.trim();
    }

    /// Drops the whole event history: any watch from a version before now gets 410 Gone.
    pub fn compact(&self) {
        let mut inner = self.lock();
        inner.history.clear();
        inner.compacted = inner.rv;
    }

    /// Subscribes to all changes (stored form), for in-process observers like the kubelet.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<StoredEvent>> {
        self.events.subscribe()
    }

    /// GET one object.
    pub fn get(&self, def: &ResourceDef, ns: &str, name: &str) -> Result<Value, ApiError> {
        let inner = self.lock();
        inner
            .objects
            .get(&key(def, ns, name))
            .map(|o| to_view(def, o))
            .ok_or_else(|| ApiError::not_found(def, name))
    }

    /// LIST with selectors and paging.
    pub fn list(
        &self,
        def: &ResourceDef,
        filter: &Filter,
        limit: Option<usize>,
        continue_token: Option<&str>,
    ) -> Result<ListPage, ApiError> {
        let inner = self.lock();
        let after = continue_token
            .filter(|t| !t.is_empty())
            .map(decode_continue)
            .transpose()?;
        let matching = inner
            .objects
            .iter()
            .filter(|((s, ns, name), _)| {
                *s == def.storage
                    && after
                        .as_ref()
                        .is_none_or(|(ans, aname)| (ns, name) > (ans, aname))
            })
            .filter(|(_, o)| filter.matches(o));
        let mut items = Vec::new();
        let mut last: Option<&Key> = None;
        let mut remaining = 0u64;
        for (k, o) in matching {
            if limit.is_some_and(|l| l > 0 && items.len() >= l) {
                remaining += 1;
                continue;
            }
            items.push(to_view(def, o));
            last = Some(k);
        }
        let continue_token = match (remaining, last) {
            (n, Some((_, ns, name))) if n > 0 => Some(encode_continue(ns, name)),
            _ => None,
        };
        Ok(ListPage {
            items,
            resource_version: inner.rv,
            continue_token,
            remaining: (remaining > 0).then_some(remaining),
        })
    }

    /// CREATE. `ns` is the namespace of the request (ignored for cluster-scoped resources).
    pub fn create(
        &self,
        def: &ResourceDef,
        ns: &str,
        obj: &Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let mut inner = self.lock();
        let stored = inner.prepare_create(def, ns, obj)?;
        if dry_run {
            return Ok(to_view(def, &stored));
        }
        let stored = inner.commit(&self.events, def, stored, None);
        Ok(to_view(def, &stored))
    }

    /// UPDATE (PUT) of the main resource or of `/status`. Returns the object and whether it was created.
    pub fn update(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        obj: &Value,
        sub: Subresource,
        dry_run: bool,
    ) -> Result<(Value, bool), ApiError> {
        match self.update_base(def, ns, name, obj, sub)? {
            UpdateBase::Create => {
                let prepared = self.stage_create(def, ns, &fresh_for_create(obj))?;
                Ok((self.commit_create(def, prepared, dry_run)?, true))
            }
            UpdateBase::Existing(old) => {
                let new = self.stage_update(def, ns, name, &old, obj, sub)?;
                Ok((self.commit_update(def, &old, new, dry_run)?, false))
            }
        }
    }

    /// PATCH of the main resource or of `/status`.
    #[allow(clippy::too_many_arguments)]
    pub fn patch(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        ty: crate::patch::PatchType,
        patch: &[u8],
        sub: Subresource,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let old = self.stored(def, ns, name)?;
        let patched = self.patched(def, name, &old, ty, patch)?;
        let new = self.stage_update(def, ns, name, &old, &patched, sub)?;
        self.commit_update(def, &old, new, dry_run)
    }

    /// DELETE.
    pub fn delete(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Deleted, ApiError> {
        let mut inner = self.lock();
        let k = key(def, ns, name);
        let old = inner
            .objects
            .get(&k)
            .cloned()
            .ok_or_else(|| ApiError::not_found(def, name))?;
        if let Some(uid) = &opts.uid
            && uid != meta::meta_str(&old, "uid")
        {
            return Err(ApiError::conflict_because(
                def,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    meta::meta_str(&old, "uid")
                ),
            ));
        }
        if let Some(rv) = &opts.resource_version
            && rv != meta::resource_version(&old)
        {
            return Err(ApiError::conflict_because(
                def,
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                    meta::resource_version(&old)
                ),
            ));
        }
        if let Some(marked) = inner.graceful_mark(def, &old, opts) {
            if marked == old || opts.dry_run {
                return Ok(Deleted {
                    object: to_view(def, &marked),
                    removed: false,
                });
            }
            let stored = inner.commit(&self.events, def, marked, Some(old));
            return Ok(Deleted {
                object: to_view(def, &stored),
                removed: false,
            });
        }
        if opts.dry_run {
            return Ok(Deleted {
                object: to_view(def, &old),
                removed: true,
            });
        }
        let gone = inner.remove(&self.events, k, old);
        Ok(Deleted {
            object: to_view(def, &gone),
            removed: true,
        })
    }

    /// Starts a watch: checks the version against the retained history (410 Gone when too old).
    pub fn watch(
        &self,
        def: &ResourceDef,
        from: WatchFrom,
        initial_events: bool,
    ) -> Result<WatchStart, ApiError> {
        let inner = self.lock();
        let live = self.events.subscribe();
        let initial = if from == WatchFrom::Now || initial_events {
            inner
                .objects
                .iter()
                .filter(|((s, _, _), _)| *s == def.storage)
                .map(|(_, o)| o.clone())
                .collect()
        } else {
            Vec::new()
        };
        let backlog = match from {
            WatchFrom::Now => Vec::new(),
            WatchFrom::Version(_) if initial_events => Vec::new(),
            WatchFrom::Version(v) => {
                if v < inner.compacted {
                    return Err(ApiError::gone(v, inner.compacted + 1));
                }
                inner
                    .history
                    .iter()
                    .filter(|e| e.rv > v && e.storage == def.storage)
                    .cloned()
                    .collect()
            }
        };
        Ok(WatchStart {
            initial,
            backlog,
            live,
            resource_version: inner.rv,
        })
    }
}

impl Inner {
    fn trim(&mut self) {
        while self.history.len() > self.history_limit {
            if let Some(e) = self.history.pop_front() {
                self.compacted = e.rv;
            }
        }
    }

    fn emit(&mut self, tx: &broadcast::Sender<Arc<StoredEvent>>, ev: StoredEvent) {
        let ev = Arc::new(ev);
        self.history.push_back(ev.clone());
        self.trim();
        // No receivers is fine.
        let _ = tx.send(ev);
    }

    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// Stores `obj` (new or replacing `old`) with a new resourceVersion and emits the event.
    fn commit(
        &mut self,
        tx: &broadcast::Sender<Arc<StoredEvent>>,
        def: &ResourceDef,
        mut obj: Value,
        old: Option<Value>,
    ) -> Value {
        let rv = self.next_rv();
        meta::metadata_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
        let k = key(def, meta::namespace(&obj), meta::name(&obj));
        self.objects.insert(k, obj.clone());
        let kind = if old.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.emit(
            tx,
            StoredEvent {
                rv,
                storage: def.storage,
                kind,
                object: obj.clone(),
                old,
            },
        );
        obj
    }

    fn remove(&mut self, tx: &broadcast::Sender<Arc<StoredEvent>>, k: Key, old: Value) -> Value {
        self.objects.remove(&k);
        let rv = self.next_rv();
        let mut gone = old.clone();
        meta::metadata_mut(&mut gone).insert("resourceVersion".into(), json!(rv.to_string()));
        self.emit(
            tx,
            StoredEvent {
                rv,
                storage: k.0,
                kind: EventType::Deleted,
                object: gone.clone(),
                old: Some(old),
            },
        );
        gone
    }

    /// Stores a prepared update of `old` (already past every precondition); returns what is stored now.
    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        tx: &broadcast::Sender<Arc<StoredEvent>>,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        old: &Value,
        new: Value,
        dry_run: bool,
    ) -> Value {
        if &new == old || dry_run {
            return new;
        }
        let finalized = new
            .get("metadata")
            .and_then(|m| m.get("deletionTimestamp"))
            .is_some()
            && new
                .get("metadata")
                .and_then(|m| m.get("finalizers"))
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
            && new
                .get("metadata")
                .and_then(|m| m.get("deletionGracePeriodSeconds"))
                .and_then(Value::as_i64)
                .is_none_or(|g| g == 0);
        if finalized {
            let k = key(def, ns, name);
            return self.remove(tx, k, new);
        }
        self.commit(tx, def, new, Some(old.clone()))
    }
}

/// A PUT body that creates its object: a resourceVersion would be refused on create.
fn fresh_for_create(obj: &Value) -> Value {
    let mut fresh = obj.clone();
    meta::metadata_mut(&mut fresh).remove("resourceVersion");
    fresh
}
