//! The simulator's timing.

use std::time::Duration;

/// Timing of the simulated kubelet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeletConfig {
    /// From a container being allowed to start (first sight of the pod, or the previous init
    /// container done) to it running.
    pub start_delay: Duration,
    /// From a container running to it being ready (and, with a `startupProbe`, started).
    pub ready_delay: Duration,
    /// From an image change, or an exit that is to be restarted, to the container running again.
    pub restart_delay: Duration,
    /// From a deletionTimestamp to the kubelet confirming the deletion (grace period 0).
    pub delete_delay: Duration,
}

impl Default for KubeletConfig {
    /// Human-scale delays for a person running the binary by hand.
    fn default() -> Self {
        KubeletConfig {
            start_delay: Duration::from_millis(1000),
            ready_delay: Duration::from_millis(1000),
            restart_delay: Duration::from_millis(2000),
            delete_delay: Duration::from_millis(1000),
        }
    }
}

impl KubeletConfig {
    /// A few milliseconds everywhere, for tests.
    pub fn fast() -> Self {
        KubeletConfig {
            start_delay: Duration::from_millis(5),
            ready_delay: Duration::from_millis(5),
            restart_delay: Duration::from_millis(20),
            delete_delay: Duration::from_millis(5),
        }
    }
}
