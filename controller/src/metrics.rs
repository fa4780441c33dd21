//! Prometheus metrics, rendered by hand in the text exposition format (a handful of series
//! does not justify a metrics framework).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use sidecarset_policy::api::SidecarSetStatus;

/// Rollout progress of one SidecarSet, as last computed, and how many passes planned it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Progress {
    matched: i32,
    updated: i32,
    ready: i32,
    updated_ready: i32,
    planning_passes: u64,
}

/// (name, help, value of a Progress) of one per-SidecarSet gauge.
type Gauge = (&'static str, &'static str, fn(&Progress) -> i32);

/// The controller's metrics.
#[derive(Debug, Default)]
pub struct Metrics {
    reconciles: AtomicU64,
    errors: AtomicU64,
    pods_upgraded: AtomicU64,
    hot_upgrade_resets: AtomicU64,
    conflicts: AtomicU64,
    leader: AtomicU64,
    progress: Mutex<BTreeMap<String, Progress>>,
}

impl Metrics {
    /// One reconcile started.
    pub fn reconciled(&self) {
        self.reconciles.fetch_add(1, Ordering::Relaxed);
    }

    /// One reconcile failed.
    pub fn failed(&self) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    /// One pod got new sidecar images.
    pub fn pod_upgraded(&self) {
        self.pods_upgraded.fetch_add(1, Ordering::Relaxed);
    }

    /// One hot-upgrade twin was reset to the empty image.
    pub fn hot_upgrade_reset(&self) {
        self.hot_upgrade_resets.fetch_add(1, Ordering::Relaxed);
    }

    /// A write lost an optimistic-concurrency race.
    pub fn conflict(&self) {
        self.conflicts.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether this replica holds the lease.
    pub fn set_leader(&self, leader: bool) {
        self.leader.store(u64::from(leader), Ordering::Relaxed);
    }

    fn progress(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Progress>> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the status just computed for a SidecarSet.
    pub fn set_progress(&self, sidecarset: &str, status: &SidecarSetStatus) {
        let mut all = self.progress();
        let p = all.entry(sidecarset.to_string()).or_default();
        p.matched = status.matched_pods;
        p.updated = status.updated_pods;
        p.ready = status.ready_pods;
        p.updated_ready = status.updated_ready_pods;
    }

    /// One reconcile planned a SidecarSet and applied (or failed to apply) the plan; reconciles
    /// that stopped earlier, e.g. waiting for the cache to show our writes, do not count.
    pub fn planned(&self, sidecarset: &str) {
        self.progress()
            .entry(sidecarset.to_string())
            .or_default()
            .planning_passes += 1;
    }

    /// Drops the gauges of a deleted SidecarSet.
    pub fn forget(&self, sidecarset: &str) {
        self.progress().remove(sidecarset);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let counters = [
            (
                "sidecarset_controller_reconciles_total",
                "Reconciles started (including those that stopped before planning).",
                &self.reconciles,
            ),
            (
                "sidecarset_controller_reconcile_errors_total",
                "Reconciles that failed.",
                &self.errors,
            ),
            (
                "sidecarset_controller_pods_upgraded_total",
                "Pods whose sidecar images were updated in place.",
                &self.pods_upgraded,
            ),
            (
                "sidecarset_controller_hot_upgrade_resets_total",
                "Hot-upgrade twins reset to the empty image.",
                &self.hot_upgrade_resets,
            ),
            (
                "sidecarset_controller_write_conflicts_total",
                "Pod writes rejected by a resourceVersion precondition.",
                &self.conflicts,
            ),
        ];
        for (name, help, value) in counters {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}",
                value.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            out,
            "# HELP sidecarset_controller_leader Whether this replica holds the leader lease.\n# TYPE sidecarset_controller_leader gauge\nsidecarset_controller_leader {}",
            self.leader.load(Ordering::Relaxed)
        );
        let progress = self.progress().clone();
        let gauges: [Gauge; 4] = [
            (
                "sidecarset_matched_pods",
                "Pods matched by the SidecarSet.",
                |p| p.matched,
            ),
            (
                "sidecarset_updated_pods",
                "Matched pods on the current sidecar revision.",
                |p| p.updated,
            ),
            (
                "sidecarset_ready_pods",
                "Matched pods whose sidecars are ready.",
                |p| p.ready,
            ),
            (
                "sidecarset_updated_ready_pods",
                "Matched pods updated and ready.",
                |p| p.updated_ready,
            ),
        ];
        for (name, help, get) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
            for (sidecarset, p) in &progress {
                let _ = writeln!(
                    out,
                    "{name}{{sidecarset=\"{}\"}} {}",
                    escape_label(sidecarset),
                    get(p)
                );
            }
        }
        let passes = "sidecarset_planning_passes_total";
        let _ = writeln!(
            out,
            "# HELP {passes} Reconciles that planned the SidecarSet and applied the plan.\n# TYPE {passes} counter"
        );
        for (sidecarset, p) in &progress {
            let _ = writeln!(
                out,
                "{passes}{{sidecarset=\"{}\"}} {}",
                escape_label(sidecarset),
                p.planning_passes
            );
        }
        out
    }
}

/// Label values escape backslash, quote and newline.
fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_per_sidecarset_gauges() {
        let m = Metrics::default();
        m.reconciled();
        m.pod_upgraded();
        m.pod_upgraded();
        m.set_progress(
            "envoy",
            &SidecarSetStatus {
                matched_pods: 20,
                updated_pods: 5,
                ready_pods: 18,
                updated_ready_pods: 3,
                ..SidecarSetStatus::default()
            },
        );
        m.planned("envoy");
        m.planned("envoy");
        let text = m.render();
        assert!(text.contains("sidecarset_controller_reconciles_total 1\n"));
        assert!(text.contains("sidecarset_planning_passes_total{sidecarset=\"envoy\"} 2\n"));
        assert!(text.contains("sidecarset_controller_pods_upgraded_total 2\n"));
        assert!(text.contains("sidecarset_updated_pods{sidecarset=\"envoy\"} 5\n"));
        assert!(text.contains("sidecarset_ready_pods{sidecarset=\"envoy\"} 18\n"));
        m.forget("envoy");
        assert!(!m.render().contains("envoy"));
    }
}
