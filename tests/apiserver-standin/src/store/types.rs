//! The public value types of the store: events, write targets, delete options, pages, watches.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast;

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// The object was created.
    Added,
    /// The object was changed.
    Modified,
    /// The object was deleted.
    Deleted,
}

impl EventType {
    /// The wire name (`ADDED`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change in the store, in stored form.
#[derive(Debug, Clone)]
pub struct StoredEvent {
    /// The resourceVersion of the change.
    pub rv: u64,
    /// The storage key of the object (`pods`, `events`, ...).
    pub storage: &'static str,
    /// What happened.
    pub kind: EventType,
    /// The object after the change (for deletions: the last state, with the deletion's rv).
    pub object: Value,
    /// The object before the change (modifications and deletions).
    pub old: Option<Value>,
}

/// Which part of an object a write targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subresource {
    /// The main resource: spec and metadata; status is kept.
    Main,
    /// `/status`: only status is taken.
    Status,
}

/// Options of a delete.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<i64>,
    /// `preconditions.uid`.
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub resource_version: Option<String>,
    /// `dryRun=All`.
    pub dry_run: bool,
}

/// The outcome of a delete.
#[derive(Debug, Clone)]
pub struct Deleted {
    /// The object, in the view of the request.
    pub object: Value,
    /// Removed from storage now (false: marked with a deletionTimestamp).
    pub removed: bool,
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct ListPage {
    /// Items in the view of the request, ordered by namespace and name.
    pub items: Vec<Value>,
    /// The store's resourceVersion at the time of the list.
    pub resource_version: u64,
    /// Continue token for the next page, if any.
    pub continue_token: Option<String>,
    /// Items left after this page.
    pub remaining: Option<u64>,
}

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchFrom {
    /// Send the current objects as ADDED events, then changes.
    Now,
    /// Changes strictly after this resourceVersion.
    Version(u64),
}

/// What a new watch gets.
pub struct WatchStart {
    /// Current objects (stored form) when starting `Now` or with initial events.
    pub initial: Vec<Value>,
    /// Retained events after the requested version.
    pub backlog: Vec<Arc<StoredEvent>>,
    /// Live events from here on.
    pub live: broadcast::Receiver<Arc<StoredEvent>>,
    /// The store's resourceVersion when the watch started.
    pub resource_version: u64,
}
