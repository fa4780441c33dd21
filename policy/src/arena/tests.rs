use super::*;

fn layout(size: usize, align: usize) -> Layout {
    Layout::from_size_align(size, align).unwrap()
}

#[test]
fn allocations_are_aligned_and_disjoint() {
    let arena = BumpArena::<4096>::new();
    let a = unsafe { arena.alloc(layout(3, 1)) };
    let b = unsafe { arena.alloc(layout(8, 8)) };
    let c = unsafe { arena.alloc(layout(16, 16)) };
    assert_eq!(b as usize % 8, 0);
    assert_eq!(c as usize % 16, 0);
    assert!(a as usize + 3 <= b as usize && b as usize + 8 <= c as usize);
    unsafe {
        a.write_bytes(1, 3);
        b.write_bytes(2, 8);
        c.write_bytes(3, 16);
        assert_eq!((*a, *b, *c), (1, 2, 3));
    }
}

#[test]
fn only_the_top_allocation_is_given_back() {
    let arena = BumpArena::<4096>::new();
    let a = unsafe { arena.alloc(layout(100, 1)) };
    let b = unsafe { arena.alloc(layout(100, 1)) };
    assert_eq!(arena.used(), 200);
    unsafe { arena.dealloc(a, layout(100, 1)) };
    assert_eq!(
        arena.used(),
        200,
        "not the top: kept until the instance goes"
    );
    unsafe { arena.dealloc(b, layout(100, 1)) };
    assert_eq!(arena.used(), 100);
}

#[test]
fn the_top_allocation_grows_and_shrinks_in_place() {
    let arena = BumpArena::<4096>::new();
    let a = unsafe { arena.alloc(layout(10, 1)) };
    unsafe { a.write_bytes(7, 10) };
    let grown = unsafe { arena.realloc(a, layout(10, 1), 1000) };
    assert_eq!(grown, a);
    assert_eq!(arena.used(), 1000);
    let shrunk = unsafe { arena.realloc(grown, layout(1000, 1), 20) };
    assert_eq!(shrunk, a);
    assert_eq!(arena.used(), 20);
    assert_eq!(unsafe { *a.add(9) }, 7);
}

#[test]
fn a_buried_allocation_moves_when_it_grows() {
    let arena = BumpArena::<4096>::new();
    let a = unsafe { arena.alloc(layout(4, 4)) };
    unsafe { a.cast::<u32>().write(0xdead_beef) };
    let _b = unsafe { arena.alloc(layout(4, 4)) };
    let moved = unsafe { arena.realloc(a, layout(4, 4), 64) };
    assert_ne!(moved, a);
    assert_eq!(unsafe { moved.cast::<u32>().read() }, 0xdead_beef);
    assert_eq!(
        unsafe { arena.realloc(moved, layout(64, 4), 8) },
        moved,
        "shrinking the top never moves"
    );
}

#[test]
fn past_the_arena_the_system_allocator_serves() {
    let arena = BumpArena::<256>::new();
    let inside = unsafe { arena.alloc(layout(200, 8)) };
    assert!(arena.offset_of(inside).is_some());
    assert!(!arena.spilled());
    let outside = unsafe { arena.alloc(layout(200, 8)) };
    assert!(
        arena.spilled(),
        "release must free: not everything is in the arena"
    );
    assert!(!outside.is_null());
    assert!(arena.offset_of(outside).is_none());
    unsafe { outside.write_bytes(5, 200) };
    // A buried arena allocation that outgrows the arena moves to the system allocator.
    let _top = unsafe { arena.alloc(layout(40, 8)) };
    let moved = unsafe { arena.realloc(inside, layout(200, 8), 4096) };
    assert!(arena.offset_of(moved).is_none());
    unsafe {
        let grown = arena.realloc(outside, layout(200, 8), 8192);
        assert_eq!(*grown.add(199), 5);
        arena.dealloc(grown, layout(8192, 8));
        arena.dealloc(moved, layout(4096, 8));
    }
}

#[test]
fn a_vec_and_a_string_live_in_the_arena() {
    // The same paths a collection takes: growth by realloc, then drop.
    let arena = BumpArena::<65536>::new();
    let item = layout(8, 8);
    let mut ptr = unsafe { arena.alloc(item) };
    // The arena's bytes are only byte-aligned: the first item may sit past some padding.
    let padding = arena.used() - 8;
    for n in 2..=64 {
        ptr = unsafe { arena.realloc(ptr, layout(8 * (n - 1), 8), 8 * n) };
        unsafe { ptr.cast::<u64>().add(n - 1).write(n as u64) };
    }
    assert_eq!(arena.used(), padding + 512, "every growth was in place");
    assert_eq!(unsafe { ptr.cast::<u64>().add(63).read() }, 64);
    unsafe { arena.dealloc(ptr, layout(512, 8)) };
    assert_eq!(arena.used(), padding);
}
