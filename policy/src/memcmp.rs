//! `memcmp` for the module, eight bytes at a time. wasi-libc's compares byte by byte, and every
//! `String` key ordered in a JSON map (the pod's and the SidecarSets') goes through it: at about
//! 110 instructions a call it was the guest's largest single cost. Not inlined anywhere (LTO would
//! otherwise copy it into every caller and the module would outgrow 1 MB).

/// The sign of the first differing byte of `left` and `right`, as C's `memcmp`.
pub fn compare(left: &[u8], right: &[u8]) -> i32 {
    let len = left.len().min(right.len());
    let (left, right) = (&left[..len], &right[..len]);
    for (a, b) in left.chunks_exact(8).zip(right.chunks_exact(8)) {
        let (a, b) = (word(a), word(b));
        if a != b {
            // Big-endian order makes the first differing byte the most significant one.
            return if a.swap_bytes() < b.swap_bytes() {
                -1
            } else {
                1
            };
        }
    }
    let tail = len - len % 8;
    for (a, b) in left[tail..].iter().zip(&right[tail..]) {
        if a != b {
            return i32::from(*a) - i32::from(*b);
        }
    }
    0
}

fn word(bytes: &[u8]) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

/// The symbol the compiler calls for slice and string comparisons.
///
/// # Safety
/// `left` and `right` are valid for reads of `len` bytes, as C's `memcmp` requires.
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
#[inline(never)]
pub unsafe extern "C" fn memcmp(left: *const u8, right: *const u8, len: usize) -> i32 {
    // SAFETY: the caller's contract, as for C's memcmp.
    let (left, right) = unsafe {
        (
            std::slice::from_raw_parts(left, len),
            std::slice::from_raw_parts(right, len),
        )
    };
    compare(left, right)
}

#[cfg(test)]
mod tests {
    use super::compare;
    use proptest::prelude::*;

    fn sign(order: std::cmp::Ordering) -> i32 {
        order as i32
    }

    #[test]
    fn every_difference_at_every_offset_orders_as_slices_do() {
        for len in 0..=24 {
            for at in 0..len {
                for (x, y) in [
                    (0u8, 1u8),
                    (1, 0),
                    (0x7f, 0x80),
                    (0x80, 0x7f),
                    (0, 255),
                    (255, 0),
                ] {
                    let mut a = vec![b'k'; len];
                    let mut b = a.clone();
                    a[at] = x;
                    b[at] = y;
                    assert_eq!(compare(&a, &b).signum(), sign(a.cmp(&b)), "{len} {at}");
                }
            }
            let same = vec![b'k'; len];
            assert_eq!(compare(&same, &same), 0);
        }
    }

    proptest! {
        #[test]
        fn orders_as_slices_do(a in proptest::collection::vec(0u8..4, 0..40),
                               b in proptest::collection::vec(0u8..4, 0..40)) {
            let len = a.len().min(b.len());
            let expected = sign(a[..len].cmp(&b[..len]));
            prop_assert_eq!(compare(&a[..len], &b[..len]).signum(), expected);
        }
    }
}
