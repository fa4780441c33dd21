//! Engine configuration: per-evaluation deadline, memory cap and guest stdio.

use std::time::Duration;

/// Default deadline of one evaluation phase (instantiation + init, then the call), as policy-server's default.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(2);

/// Default cap of a guest's linear memory.
pub const DEFAULT_MEMORY_LIMIT: usize = 64 * 1024 * 1024;

/// Where the guest's WASI stdout/stderr go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GuestStdio {
    /// Inherit the host's stdout and stderr (what policy-server and kwctl do).
    #[default]
    Inherit,
    /// Send both guest streams to the host's stderr, so the host's stdout stays machine readable.
    Stderr,
    /// Drop everything the guest writes.
    Discard,
}

/// How every evaluation of a [`crate::PolicyEngine`] is sandboxed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineConfig {
    /// Wall-clock budget of each phase (init, then the waPC call), enforced with epoch interruption.
    pub deadline: Duration,
    /// Maximum size in bytes of the guest's linear memory.
    pub memory_limit: usize,
    /// Destination of the guest's WASI stdout/stderr.
    pub guest_stdio: GuestStdio,
    /// With `Some(n)`, instances come from a pool of `n` pre-reserved slots (wasmtime's pooling
    /// allocator: no mmap/munmap per evaluation); more than `n` concurrent evaluations fail.
    /// `None` allocates every instance on demand.
    pub instance_pool: Option<u32>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            deadline: DEFAULT_DEADLINE,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            guest_stdio: GuestStdio::default(),
            instance_pool: None,
        }
    }
}

impl EngineConfig {
    /// Epoch tick period: fine enough that a deadline fires within ~10% of its value.
    pub(crate) fn tick(&self) -> Duration {
        (self.deadline / 10).clamp(Duration::from_millis(1), Duration::from_millis(100))
    }
}
