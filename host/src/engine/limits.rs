//! Memory cap for one store; remembers a refused growth so the trap can be reported clearly.

use wasmtime::ResourceLimiter;

/// Largest table a guest may grow to (Rust guests use a handful of entries).
const TABLE_ELEMENTS_LIMIT: usize = 1 << 20;

pub(crate) struct MemoryCap {
    limit: usize,
    /// Set when a growth past `limit` was refused: the size that was requested.
    pub(crate) refused: Option<usize>,
}

impl MemoryCap {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            refused: None,
        }
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.refused = Some(desired);
            // Trapping (instead of returning -1 from memory.grow) stops the guest at the cause.
            return Err(wasmtime::Error::msg(format!(
                "guest memory limit exceeded (tried to grow to {desired} bytes, limit is {} bytes)",
                self.limit
            )));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= TABLE_ELEMENTS_LIMIT)
    }
}
