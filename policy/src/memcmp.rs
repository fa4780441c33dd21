//! `memcmp` for the module, eight bytes at a time. wasi-libc's compares byte by byte, and every
//! `String` key ordered in a JSON map (the pod's and the SidecarSets') goes through it: at about
//! 110 instructions a call it was the guest's largest single cost. Not inlined anywhere (LTO would
//! otherwise copy it into every caller and the module would outgrow 1 MB).

/// The sign of the first differing byte of `left` and `right`, as C's `memcmp`.
// Words compared whole, the first differing byte found in them only then. The last word
// overlaps the ones before it (their bytes are equal): no byte loop but for under 4 bytes. Most
// calls compare short map keys, where a call's own cost dominates (a byte loop doubled it).
pub fn compare(left: &[u8], right: &[u8]) -> i32 {
    let len = left.len().min(right.len());
    if len >= 8 {
        let mut at = 0;
        while at + 8 < len {
            let (a, b) = (word8(left, at), word8(right, at));
            if a != b {
                return order(a, b);
            }
            at += 8;
        }
        let (a, b) = (word8(left, len - 8), word8(right, len - 8));
        return if a == b { 0 } else { order(a, b) };
    }
    if len >= 4 {
        for at in [0, len - 4] {
            let (a, b) = (word4(left, at), word4(right, at));
            if a != b {
                return order(a, b);
            }
        }
        return 0;
    }
    for at in 0..len {
        let (a, b) = (byte(left, at), byte(right, at));
        if a != b {
            return order(a, b);
        }
    }
    0
}

/// The 8 bytes at `at`, little-endian (wasm has no byte swap); 0 past the end (never read).
fn word8(bytes: &[u8], at: usize) -> u64 {
    let chunk = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>);
    chunk.map_or(0, |chunk| u64::from_le_bytes(*chunk))
}

fn word4(bytes: &[u8], at: usize) -> u64 {
    let chunk = bytes.get(at..).and_then(<[u8]>::first_chunk::<4>);
    chunk.map_or(0, |chunk| u64::from(u32::from_le_bytes(*chunk)))
}

fn byte(bytes: &[u8], at: usize) -> u64 {
    bytes.get(at).map_or(0, |&byte| u64::from(byte))
}

/// The order of two different little-endian words: that of their first differing byte.
fn order(a: u64, b: u64) -> i32 {
    let shift = (a ^ b).trailing_zeros() & !7;
    if (a >> shift) & 0xff < (b >> shift) & 0xff {
        -1
    } else {
        1
    }
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
