//! The module's allocator. Every evaluation runs in a fresh instance that is thrown away after
//! one call, so memory never needs to be reused: allocations bump through a fixed arena (no free
//! lists, no coalescing) and only fall back to the system allocator once the arena is full, so a
//! huge request still gets all the memory the host allows. A host that reuses instances uses up
//! the arena once and then runs on the system allocator: nothing leaks past `ARENA_BYTES`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;

/// Bytes served by bumping. A typical pod CREATE allocates well under 1 MiB in all.
pub const ARENA_BYTES: usize = 2 * 1024 * 1024;

/// A bump arena of `N` bytes in front of [`System`].
///
/// Only the topmost allocation can shrink, grow in place or be given back; everything else is
/// released when the instance is dropped.
pub struct BumpArena<const N: usize> {
    bytes: UnsafeCell<[u8; N]>,
    /// Offset of the first free byte.
    next: UnsafeCell<usize>,
    /// Whether any allocation ever went to [`System`] (the arena was too full for it).
    spilled: UnsafeCell<bool>,
}

// SAFETY: wasm32-wasip1 modules are single-threaded; natively the arena is only used by the
// single-threaded tests below, never installed as the global allocator.
unsafe impl<const N: usize> Sync for BumpArena<N> {}

impl<const N: usize> BumpArena<N> {
    pub const fn new() -> Self {
        Self {
            bytes: UnsafeCell::new([0; N]),
            next: UnsafeCell::new(0),
            spilled: UnsafeCell::new(false),
        }
    }

    fn base(&self) -> usize {
        self.bytes.get() as usize
    }

    /// The offset of `ptr` in the arena, when it points into it.
    fn offset_of(&self, ptr: *mut u8) -> Option<usize> {
        (ptr as usize)
            .checked_sub(self.base())
            .filter(|offset| *offset < N)
    }

    /// Bytes handed out so far (the high-water mark, minus what the top gave back).
    pub fn used(&self) -> usize {
        // SAFETY: single-threaded (see the `Sync` impl); a plain read of the counter.
        unsafe { *self.next.get() }
    }

    /// Whether [`System`] has served an allocation: then not everything lives in the arena.
    pub fn spilled(&self) -> bool {
        // SAFETY: single-threaded (see the `Sync` impl); a plain read of the flag.
        unsafe { *self.spilled.get() }
    }

    fn set_used(&self, next: usize) {
        // SAFETY: single-threaded (see the `Sync` impl); no reference to the counter is held.
        unsafe { *self.next.get() = next }
    }

    /// Whether the allocation at `offset` of `size` bytes is the topmost one.
    fn is_top(&self, offset: usize, size: usize) -> bool {
        offset + size == self.used()
    }

    fn bump(&self, layout: Layout) -> Option<*mut u8> {
        let base = self.base();
        // Alignments are powers of two: a mask, not the division `next_multiple_of` costs.
        let mask = layout.align() - 1;
        let start = (base + self.used()).checked_add(mask)? & !mask;
        let end = start.checked_add(layout.size())?;
        if end - base > N {
            return None;
        }
        self.set_used(end - base);
        Some(start as *mut u8)
    }
}

impl<const N: usize> Default for BumpArena<N> {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every pointer handed out is either a fresh, aligned, in-bounds range of the arena that
// no other live allocation overlaps (the bump only moves back over the topmost allocation when
// it is freed or resized), or comes from `System`, which then also frees and resizes it.
// Not inlined: with LTO every allocation site would get its own copy (+90 KB of module).
unsafe impl<const N: usize> GlobalAlloc for BumpArena<N> {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.bump(layout) {
            Some(ptr) => ptr,
            None => {
                // SAFETY: single-threaded (see the `Sync` impl); no reference to the flag is held.
                unsafe { *self.spilled.get() = true };
                // SAFETY: the caller's layout contract is passed on unchanged.
                unsafe { System.alloc(layout) }
            }
        }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match self.offset_of(ptr) {
            Some(offset) if self.is_top(offset, layout.size()) => self.set_used(offset),
            Some(_) => {}
            // SAFETY: not from the arena, so `System` allocated it with this layout.
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Some(offset) = self.offset_of(ptr) else {
            // SAFETY: not from the arena, so `System` allocated it with this layout.
            return unsafe { System.realloc(ptr, layout, new_size) };
        };
        if self.is_top(offset, layout.size())
            && offset.checked_add(new_size).is_some_and(|e| e <= N)
        {
            self.set_used(offset + new_size);
            return ptr;
        }
        if new_size <= layout.size() {
            return ptr;
        }
        // SAFETY: `new_size` is non-zero and, with the old alignment, a valid layout (the
        // caller's contract for `realloc`).
        let grown = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a valid, non-zero layout.
        let new = unsafe { self.alloc(grown) };
        if !new.is_null() {
            // SAFETY: both ranges are live and distinct allocations of at least `layout.size()`.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size());
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: BumpArena<ARENA_BYTES> = BumpArena::new();

/// Drops `value`, except in a module whose arena is still half empty and has never spilled to the
/// system allocator: its instance is fresh and thrown away after this call, so walking a large
/// value only to give its memory back is wasted, and whatever is forgotten lies in the arena, so
/// an instance a host reuses (`kwctl bench`) loses at most the arena once, never memory per call.
pub fn release<T>(value: T) {
    #[cfg(target_arch = "wasm32")]
    if ALLOCATOR.used() < ARENA_BYTES / 2 && !ALLOCATOR.spilled() {
        std::mem::forget(value);
        return;
    }
    drop(value);
}

#[cfg(test)]
mod tests;
