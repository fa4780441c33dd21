//! One reconcile of one SidecarSet: snapshot from the caches, plan (pure), apply the plan.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::Action;
use kube::runtime::events::Recorder;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};
use sidecarset_policy::annotations::rfc3339;
use sidecarset_policy::api::SidecarSet;

use crate::backoff::ErrorBackoff;
use crate::cached_pod::CachedPod;
use crate::error::{Error, Result};
use crate::execute;
use crate::expectations::Expectations;
use crate::leader::Leadership;
use crate::metrics::Metrics;
use crate::plan::{self, Snapshot};
use crate::selection::{self, PodIndex};

/// Requeue while the pod cache has not caught up with our own writes (§5.12).
const EXPECTATIONS_RETRY: Duration = Duration::from_millis(500);

/// What every reconcile shares.
pub struct Context {
    /// API client for writes.
    pub client: Client,
    /// Cache of SidecarSets.
    pub sidecarsets: Store<SidecarSet>,
    /// Cache of pods (all namespaces), as [`CachedPod`]s.
    pub pods: Store<CachedPod>,
    /// `pods` by injected SidecarSet; told of every change applied to `pods`.
    pub pod_index: Arc<PodIndex>,
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
            .map(|p| (p.uid().to_string(), p.resource_version().to_string()))
    });
    if unmet > 0 {
        tracing::debug!(sidecarset = %name, unmet, "pod cache behind our writes; waiting");
        return Ok(Action::requeue(EXPECTATIONS_RETRY));
    }

    let index = ctx.pod_index.current(&ctx.pods);
    let pods = selection::selected_pods(&sidecarset, &ctx.pods, &index, &ctx.namespaces)?;
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
