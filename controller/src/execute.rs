//! Carries out one plan in upstream's order (§5.9): the status, the conditions of pods left
//! alone, the NotUpgradablePods event, then each pod write followed by that pod's condition.

use std::collections::BTreeSet;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Resource, ResourceExt};
use sidecarset_policy::api::{SidecarSet, values};

use crate::apply::{self, Written};
use crate::error::Result;
use crate::events;
use crate::plan::{ConditionUpdate, Plan, PodUpdate, UpdateKind};
use crate::reconciler::Context;

/// Requeue after a write lost a race: re-plan from the newer cache soon.
const STALE_RETRY: Duration = Duration::from_millis(300);
/// Requeue while a rollout is in progress (pod events usually come first).
const PROGRESS_RETRY: Duration = Duration::from_secs(5);
/// Periodic resync when nothing is moving.
const RESYNC: Duration = Duration::from_secs(300);

/// Applies `plan` for `sidecarset`; the first failed write ends the round (as upstream), a stale
/// one ends it with a quick re-plan.
pub async fn execute(ctx: &Context, sidecarset: &SidecarSet, plan: &Plan) -> Result<Action> {
    let name = sidecarset.name_any();
    if plan.status_changed {
        apply::write_sidecarset_status(&ctx.client, sidecarset, &plan.status).await?;
    }

    let written: BTreeSet<(&str, &str)> = plan
        .pod_updates
        .iter()
        .map(|u| (u.namespace.as_str(), u.name.as_str()))
        .collect();
    // Pods not written this round first: a condition patch on a pod about to be written would
    // move the resourceVersion its update tests for.
    for condition in plan
        .conditions
        .iter()
        .filter(|c| !written.contains(&(c.namespace.as_str(), c.name.as_str())))
    {
        if !ctx.leadership.is_leader() {
            return Ok(Action::await_change());
        }
        set_condition(ctx, &name, condition).await?;
    }
    if plan.not_upgradable > 0 {
        // Every round, as upstream; the Recorder folds repeats into one Event series.
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

    let mut upgraded = 0usize;
    for update in &plan.pod_updates {
        if !ctx.leadership.is_leader() {
            return Ok(Action::await_change());
        }
        if write_pod(ctx, &name, update).await? == Written::Stale {
            ctx.metrics.conflict();
            tracing::info!(sidecarset = %name, pod = %format!("{}/{}", update.namespace, update.name), "pod changed since planned; re-planning");
            return Ok(Action::requeue(STALE_RETRY));
        }
        upgraded += 1;
        for condition in plan
            .conditions
            .iter()
            .filter(|c| c.namespace == update.namespace && c.name == update.name)
        {
            set_condition(ctx, &name, condition).await?;
        }
    }

    Ok(Action::requeue(if moving(sidecarset, plan, upgraded) {
        PROGRESS_RETRY
    } else {
        RESYNC
    }))
}

/// Whether the rollout can progress without a spec change: pods were written, updated pods are
/// still restarting, or pods besides the not-upgradable ones wait for their upgrade.
fn moving(sidecarset: &SidecarSet, plan: &Plan, upgraded: usize) -> bool {
    let strategy = &sidecarset.spec.update_strategy;
    let status = &plan.status;
    let rolling = strategy.type_ != values::NOT_UPDATE && !strategy.paused;
    let waiting = i64::from(status.matched_pods) - i64::from(status.updated_pods);
    let not_upgradable = i64::try_from(plan.not_upgradable).unwrap_or(i64::MAX);
    upgraded > 0
        || status.updated_ready_pods < status.updated_pods
        || (rolling && waiting > not_upgradable)
}

/// One planned pod write; records the expectation and the metrics and events of its outcome.
async fn write_pod(ctx: &Context, sidecarset: &str, update: &PodUpdate) -> Result<Written> {
    let reset = matches!(update.kind, UpdateKind::HotUpgradeReset);
    let pod_ref = events::pod_ref(&update.namespace, &update.name, &update.uid);
    let outcome =
        apply::patch_pod(&ctx.client, &update.namespace, &update.name, &update.patch).await;
    match &outcome {
        Ok(Written::Applied {
            uid,
            resource_version,
        }) => {
            ctx.expectations.expect(
                sidecarset,
                &update.namespace,
                &update.name,
                uid,
                resource_version,
            );
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
            tracing::info!(sidecarset, pod = %format!("{}/{}", update.namespace, update.name), containers = ?update.changed_containers, reset, "pod updated in place");
        }
        Ok(Written::Stale) => {}
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
        }
    }
    outcome
}

/// One `SidecarSetUpgradable` condition patch, recorded as an expectation.
async fn set_condition(ctx: &Context, sidecarset: &str, condition: &ConditionUpdate) -> Result<()> {
    let written = apply::patch_condition(
        &ctx.client,
        &condition.namespace,
        &condition.name,
        &condition.condition,
    )
    .await?;
    if let Written::Applied {
        uid,
        resource_version,
    } = written
    {
        ctx.expectations.expect(
            sidecarset,
            &condition.namespace,
            &condition.name,
            &uid,
            &resource_version,
        );
    }
    Ok(())
}
