//! Watch streams: newline-delimited JSON events `{type, object}` from a store subscription.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::error::ApiError;
use crate::resources::ResourceDef;
use crate::selectors::Filter;
use crate::store::{EventType, StoredEvent, WatchStart, to_view};

/// Everything a watch stream needs.
pub struct WatchRequest {
    /// The resource watched (its view is used for objects).
    pub def: &'static ResourceDef,
    /// Namespace and selectors.
    pub filter: Filter,
    /// What the store handed out when the watch started.
    pub start: WatchStart,
    /// `allowWatchBookmarks=true`.
    pub bookmarks: bool,
    /// `sendInitialEvents=true`: end the initial ADDED events with an initial-events-end bookmark.
    pub initial_events_end: bool,
    /// When the stream ends (`timeoutSeconds`).
    pub timeout: Duration,
    /// How often a progress bookmark is sent.
    pub bookmark_interval: Duration,
    /// Renders objects as `meta.k8s.io/v1` Tables (for `kubectl get -w`): `(object, first)`.
    pub render: Option<Renderer>,
}

/// Turns an object (in the view of the watch) into what is sent, e.g. a one-row Table.
pub type Renderer = Box<dyn Fn(&Value, bool) -> Value + Send + Sync>;

/// One event line.
pub fn line(kind: &str, object: &Value) -> Bytes {
    let mut v = serde_json::to_vec(&json!({ "type": kind, "object": object })).unwrap_or_default();
    v.push(b'\n');
    Bytes::from(v)
}

/// A stream with a single ERROR event (what a too-old resourceVersion gets).
pub fn error_stream(err: &ApiError) -> impl Stream<Item = Result<Bytes, Infallible>> + use<> {
    futures::stream::iter([Ok(line("ERROR", &err.to_status()))])
}

fn bookmark(def: &ResourceDef, rv: u64, initial_end: bool) -> Value {
    let mut metadata = json!({ "resourceVersion": rv.to_string() });
    if initial_end {
        metadata["annotations"] = json!({ "k8s.io/initial-events-end": "true" });
    }
    json!({ "kind": def.kind, "apiVersion": def.api_version(), "metadata": metadata })
}

/// The event type (after selectors) a stored change produces for this watch, if any.
fn translate(filter: &Filter, ev: &StoredEvent) -> Option<&'static str> {
    match ev.kind {
        EventType::Added => filter.matches(&ev.object).then_some("ADDED"),
        EventType::Deleted => filter.matches(&ev.object).then_some("DELETED"),
        EventType::Modified => {
            let was = ev.old.as_ref().is_some_and(|o| filter.matches(o));
            let is = filter.matches(&ev.object);
            match (was, is) {
                (true, true) => Some("MODIFIED"),
                (false, true) => Some("ADDED"),
                (true, false) => Some("DELETED"),
                (false, false) => None,
            }
        }
    }
}

/// Starts the stream; it ends on timeout, when the client goes away, or when it falls too far behind.
pub fn stream(req: WatchRequest) -> impl Stream<Item = Result<Bytes, Infallible>> {
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    tokio::spawn(run(req, tx));
    futures::stream::unfold(
        rx,
        |mut rx| async move { rx.recv().await.map(|b| (Ok(b), rx)) },
    )
}

async fn run(req: WatchRequest, tx: mpsc::Sender<Bytes>) {
    let WatchRequest {
        def,
        filter,
        start,
        bookmarks,
        initial_events_end,
        timeout,
        bookmark_interval,
        render,
    } = req;
    let WatchStart {
        initial,
        backlog,
        mut live,
        resource_version,
    } = start;
    let mut first = true;
    let mut show = move |obj: &Value| -> Value {
        let viewed = to_view(def, obj);
        let out = match &render {
            Some(r) => r(&viewed, first),
            None => viewed,
        };
        first = false;
        out
    };
    let mut progress = resource_version;
    for obj in initial.iter().filter(|o| filter.matches(o)) {
        if tx.send(line("ADDED", &show(obj))).await.is_err() {
            return;
        }
    }
    if initial_events_end
        && bookmarks
        && tx
            .send(line("BOOKMARK", &bookmark(def, resource_version, true)))
            .await
            .is_err()
    {
        return;
    }
    for ev in &backlog {
        if let Some(kind) = translate(&filter, ev)
            && tx.send(line(kind, &show(&ev.object))).await.is_err()
        {
            return;
        }
    }
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut ticker = tokio::time::interval(bookmark_interval.max(Duration::from_millis(10)));
    ticker.tick().await;
    loop {
        tokio::select! {
            _ = &mut deadline => return,
            _ = tx.closed() => return,
            _ = ticker.tick() => {
                if bookmarks && tx.send(line("BOOKMARK", &bookmark(def, progress, false))).await.is_err() {
                    return;
                }
            }
            got = live.recv() => match got {
                Ok(ev) => {
                    if ev.rv <= progress { continue; }
                    progress = ev.rv;
                    if ev.storage != def.storage { continue; }
                    if let Some(kind) = translate(&filter, &ev)
                        && tx.send(line(kind, &show(&ev.object))).await.is_err()
                    {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) | Err(broadcast::error::RecvError::Closed) => return,
            },
        }
    }
}
