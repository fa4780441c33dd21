//! One reconcile of one SidecarSet: snapshot from the caches, plan (pure), apply the plan.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::Action;
use kube::runtime::events::Recorder;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, Resource, ResourceExt};
use sidecarset_policy::annotations::rfc3339;
use sidecarset_policy::api::SidecarSet;
use sidecarset_policy::inject::pod_matches;

use crate::apply::{self, Written};
use crate::error::{Error, Result};
use crate::events;
use crate::expectations::Expectations;
use crate::leader::Leadership;
use crate::metrics::Metrics;
use crate::plan::{self, Snapshot, UpdateKind};

/// Requeue while the pod cache has not caught up with our own writes (§5.12).
const EXPECTATIONS_RETRY: Duration = Duration::from_millis(500);
/// Requeue after a write lost a race: re-plan from the newer cache soon.
const STALE_RETRY: Duration = Duration::from_millis(300);
/// Requeue while a rollout is in progress (pod events usually come first).
const PROGRESS_RETRY: Duration = Duration::from_secs(5);
/// Periodic resync when nothing is moving.
const RESYNC: Duration = Duration::from_secs(300);
/// Backoff after a failed reconcile.
const ERROR_RETRY: Duration = Duration::from_secs(1);

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
    if plan.status_changed {
        apply::patch_sidecarset_status(&ctx.client, &name, &plan.status).await?;
    }

    // Pod images first: a condition patch would move the resourceVersion the update tests for.
    let mut upgraded = 0usize;
    for update in &plan.pod_updates {
        if !ctx.leadership.is_leader() {
            return Ok(Action::await_change());
        }
        let outcome =
            apply::patch_pod(&ctx.client, &update.namespace, &update.name, &update.patch).await;
        let pod_ref = events::pod_ref(&update.namespace, &update.name, &update.uid);
        let reset = matches!(update.kind, UpdateKind::HotUpgradeReset);
        match outcome {
            Ok(Written::Applied {
                uid,
                resource_version,
            }) => {
                ctx.expectations.expect(
                    &name,
                    &update.namespace,
                    &update.name,
                    &uid,
                    &resource_version,
                );
                upgraded += 1;
                if reset {
                    ctx.metrics.hot_upgrade_reset();
                    let note = "reset sidecar container image empty successfully".to_string();
                    events::publish(
                        &ctx.recorder,
                        &pod_ref,
                        false,
                        events::RESET_CONTAINER_SUCCEED,
                        "ResetContainer",
                        note,
                    )
                    .await;
                } else {
                    ctx.metrics.pod_upgraded();
                }
                tracing::info!(sidecarset = %name, pod = %format!("{}/{}", update.namespace, update.name), containers = ?update.changed_containers, reset, "pod updated in place");
            }
            Ok(Written::Stale) => {
                ctx.metrics.conflict();
                tracing::info!(sidecarset = %name, pod = %format!("{}/{}", update.namespace, update.name), "pod changed since planned; re-planning");
                return Ok(Action::requeue(STALE_RETRY));
            }
            Err(e) => {
                if reset {
                    let note = format!("reset sidecar container image empty failed: {e}");
                    events::publish(
                        &ctx.recorder,
                        &pod_ref,
                        true,
                        events::RESET_CONTAINER_FAILED,
                        "ResetContainer",
                        note,
                    )
                    .await;
                }
                return Err(e);
            }
        }
    }

    for condition in &plan.conditions {
        if !ctx.leadership.is_leader() {
            return Ok(Action::await_change());
        }
        match apply::patch_condition(
            &ctx.client,
            &condition.namespace,
            &condition.name,
            &condition.condition,
        )
        .await?
        {
            Written::Applied {
                uid,
                resource_version,
            } => {
                ctx.expectations.expect(
                    &name,
                    &condition.namespace,
                    &condition.name,
                    &uid,
                    &resource_version,
                );
            }
            Written::Stale => return Ok(Action::requeue(STALE_RETRY)),
        }
    }
    // Once per change of conditions rather than every pass, so a stuck rollout does not flood events.
    if plan.not_upgradable > 0 && !plan.conditions.is_empty() {
        let note = format!(
            "SidecarSet in-place update detected {} not upgradable pod(s) in this round, will skip them.",
            plan.not_upgradable
        );
        let reference = sidecarset.object_ref(&());
        events::publish(
            &ctx.recorder,
            &reference,
            false,
            events::NOT_UPGRADABLE_PODS,
            "Upgrade",
            note,
        )
        .await;
    }

    let moving = upgraded > 0
        || plan.status.updated_pods < plan.status.matched_pods
        || plan.status.updated_ready_pods < plan.status.updated_pods;
    Ok(Action::requeue(if moving {
        PROGRESS_RETRY
    } else {
        RESYNC
    }))
}

/// On error: count, log, retry soon (the next pass re-plans from the caches).
pub fn error_policy(sidecarset: Arc<SidecarSet>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.failed();
    tracing::warn!(sidecarset = %sidecarset.name_any(), error = %error, "reconcile failed");
    Action::requeue(ERROR_RETRY)
}

/// Pods selected by `spec.selector` in namespaces allowed by `namespaceSelector`, by namespace/name:
/// the cache's own `Arc`s, so a pass over many SidecarSets copies no pod.
pub fn selected_pods(
    sidecarset: &SidecarSet,
    pods: &Store<Pod>,
    namespaces: &Store<Namespace>,
) -> Result<Vec<Arc<Pod>>> {
    let mut lookup = |namespace: &str| {
        namespaces
            .get(&ObjectRef::new(namespace))
            .map(|n| n.labels().clone())
    };
    let mut selected = Vec::new();
    for pod in pods.state() {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        if pod_matches(sidecarset, namespace, pod.labels(), &mut lookup).map_err(Box::new)? {
            selected.push(pod);
        }
    }
    selected.sort_by(|a, b| {
        (a.metadata.namespace.as_deref(), a.metadata.name.as_deref())
            .cmp(&(b.metadata.namespace.as_deref(), b.metadata.name.as_deref()))
    });
    Ok(selected)
}
