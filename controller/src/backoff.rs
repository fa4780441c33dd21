//! Per-SidecarSet exponential backoff after failed reconciles, like controller-runtime's default
//! per-item rate limiter (5 ms doubling per consecutive failure, at most 1000 s).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

const BASE: Duration = Duration::from_millis(5);
const MAX: Duration = Duration::from_secs(1000);

/// Consecutive failures per SidecarSet name.
#[derive(Debug, Default)]
pub struct ErrorBackoff {
    failures: Mutex<HashMap<String, u32>>,
}

impl ErrorBackoff {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        // A poisoned map only holds counters; keep using it.
        self.failures.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records one more failure of `sidecarset` and returns how long to wait before retrying.
    pub fn failed(&self, sidecarset: &str) -> Duration {
        let mut failures = self.lock();
        let n = failures.entry(sidecarset.to_string()).or_default();
        let delay = BASE.saturating_mul(2u32.saturating_pow(*n)).min(MAX);
        *n = n.saturating_add(1);
        delay
    }

    /// A reconcile of `sidecarset` succeeded: the next failure starts from the base delay again.
    pub fn succeeded(&self, sidecarset: &str) {
        self.lock().remove(sidecarset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_per_consecutive_failure_caps_and_resets() {
        let b = ErrorBackoff::default();
        assert_eq!(b.failed("a"), Duration::from_millis(5));
        assert_eq!(b.failed("a"), Duration::from_millis(10));
        assert_eq!(b.failed("a"), Duration::from_millis(20));
        assert_eq!(b.failed("b"), Duration::from_millis(5), "per SidecarSet");
        b.succeeded("a");
        assert_eq!(b.failed("a"), Duration::from_millis(5));
        for _ in 0..100 {
            b.failed("c");
        }
        assert_eq!(b.failed("c"), MAX);
    }
}
