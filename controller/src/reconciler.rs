//! One reconcile of one SidecarSet: snapshot from the caches, plan (pure), apply the plan.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::Action;
use kube::runtime::events::Recorder;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};
use sidecarset_policy::annotations::rfc3339;
use sidecarset_policy::api::SidecarSet;
use sidecarset_policy::inject::pod_matches;

use crate::backoff::ErrorBackoff;
use crate::error::{Error, Result};
use crate::execute;
use crate::expectations::Expectations;
use crate::leader::Leadership;
use crate::metrics::Metrics;
use crate::plan::{self, Snapshot};

/// Requeue while the pod cache has not caught up with our own writes (§5.12).
const EXPECTATIONS_RETRY: Duration = Duration::from_millis(500);

/// What every reconcile shares.
pub struct Context {
    /// API client for writes.
    pub client: Client,
    /// Cache of SidecarSets.
    pub sidecarsets: Store<SidecarSet>,
    /// Cache of pods (all namespaces).
    pub pods: Store<Pod>,
    /// Cache of namespaces, for namespaceSelector.
    pub namespaces: Store<Namespace>,
    /// Pod writes the caches have not shown yet.
    pub expectations: Arc<Expectations>,
    /// Prometheus metrics.
    pub metrics: Arc<Metrics>,
    /// Whether this replica may write.
    pub leadership: Leadership,
    /// Event publisher.
    pub recorder: Recorder,
    /// Set once every cache has completed its initial list.
    pub ready: Arc<AtomicBool>,
    /// Retry delays after failed reconciles.
    pub backoff: ErrorBackoff,
}

/// Reconciles one SidecarSet (the object is the cached one).
pub async fn reconcile(sidecarset: Arc<SidecarSet>, ctx: Arc<Context>) -> Result<Action> {
    if !ctx.leadership.is_leader() {
        // Standby: becoming leader triggers a reconcile of every SidecarSet.
        return Ok(Action::await_change());
    }
    if !ctx.ready.load(Ordering::Relaxed) {
        // A partial pod cache would plan from a fraction of the pods.
        return Ok(Action::requeue(EXPECTATIONS_RETRY));
    }
    ctx.metrics.reconciled();
    let name = sidecarset.name_any();
    let unmet = ctx.expectations.unmet(&name, |namespace, pod| {
        ctx.pods
            .get(&ObjectRef::new(pod).within(namespace))
            .map(|p| {
                (
                    p.uid().unwrap_or_default(),
                    p.resource_version().unwrap_or_default(),
                )
            })
    });
    if unmet > 0 {
        tracing::debug!(sidecarset = %name, unmet, "pod cache behind our writes; waiting");
        return Ok(Action::requeue(EXPECTATIONS_RETRY));
    }

    let pods = selected_pods(&sidecarset, &ctx.pods, &ctx.namespaces)?;
    let now = rfc3339(Timestamp::now().as_second());
    let plan = plan::plan(&Snapshot {
        sidecarset: &sidecarset,
        pods: &pods,
        now: &now,
    });
    ctx.metrics.set_progress(&name, &plan.status);
    tracing::debug!(
        sidecarset = %name,
        matched = plan.status.matched_pods,
        updated = plan.status.updated_pods,
        ready = plan.status.ready_pods,
        updated_ready = plan.status.updated_ready_pods,
        updates = ?plan.pod_updates.iter().map(|u| u.name.as_str()).collect::<Vec<_>>(),
        "planned"
    );
    for skipped in &plan.skipped {
        tracing::warn!(sidecarset = %name, pod = %format!("{}/{}", skipped.namespace, skipped.name), error = %skipped.error, "pod left alone");
    }
    let outcome = execute::execute(&ctx, &sidecarset, &plan).await;
    // Counted once the plan's writes are done, so "a pass happened" means "and it acted".
    ctx.metrics.planned(&name);
    if outcome.is_ok() {
        ctx.backoff.succeeded(&name);
    }
    outcome
}

/// On error: count, log, retry after a per-SidecarSet exponential backoff (the next pass
/// re-plans from the caches).
pub fn error_policy(sidecarset: Arc<SidecarSet>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.failed();
    let name = sidecarset.name_any();
    let delay = ctx.backoff.failed(&name);
    tracing::warn!(sidecarset = %name, error = %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// Pods selected by `spec.selector` in namespaces allowed by `namespaceSelector`, by namespace/name:
/// the cache's own `Arc`s, and only the selected ones are taken (one pass per SidecarSet touches
/// every cached pod, so it copies none and leaves the others' reference counts alone).
pub fn selected_pods(
    sidecarset: &SidecarSet,
    pods: &Store<Pod>,
    namespaces: &Store<Namespace>,
) -> Result<Vec<Arc<Pod>>> {
    let lookup = std::cell::RefCell::new(|namespace: &str| {
        namespaces
            .get(&ObjectRef::new(namespace))
            .map(|n| n.labels().clone())
    });
    // The store's filter takes a plain predicate: keep the first error and select nothing after it.
    let failure = std::cell::RefCell::new(None);
    let mut selected = pods.state_filter(|pod| {
        if failure.borrow().is_some() {
            return false;
        }
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        match pod_matches(
            sidecarset,
            namespace,
            pod.labels(),
            &mut *lookup.borrow_mut(),
        ) {
            Ok(matches) => matches,
            Err(error) => {
                *failure.borrow_mut() = Some(error);
                false
            }
        }
    });
    if let Some(error) = failure.into_inner() {
        return Err(Box::new(error).into());
    }
    selected.sort_by(|a, b| {
        (a.metadata.namespace.as_deref(), a.metadata.name.as_deref())
            .cmp(&(b.metadata.namespace.as_deref(), b.metadata.name.as_deref()))
    });
    Ok(selected)
}
