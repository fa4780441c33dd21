//! Sixteen bytes at a time, where the target has 128-bit SIMD (x86_64's SSE2, wasm32 with
//! `simd128`): the bytes of a block that serde_json escapes in a string (a quote, a backslash,
//! a control character), and with `not_ascii` also those above 0x7f, one bit per byte; and the
//! bytes that end a string's scan (a quote or a backslash).

/// Whether the target has the 128-bit vectors that [`flags`] and `nested`'s classifier use
/// (elsewhere both scans read words or bytes throughout).
pub(super) const SIMD: bool = cfg!(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
));

/// Bytes per block.
pub(super) const BLOCK: usize = 16;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn flags(block: &[u8; BLOCK], not_ascii: bool) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86_64, and the unaligned load reads the block's 16 bytes.
    unsafe {
        let bytes = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
        let controls = if not_ascii {
            // Signed, bytes above 0x7f are negative: below 0x20 either way.
            _mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20))
        } else {
            // Unsigned `byte <= 0x1f`: the larger of the two is 0x1f.
            let limit = _mm_set1_epi8(0x1f);
            _mm_cmpeq_epi8(_mm_max_epu8(bytes, limit), limit)
        };
        let quotes = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
        let backslashes = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(controls, _mm_or_si128(quotes, backslashes))) as u32
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub(super) fn flags(block: &[u8; BLOCK], not_ascii: bool) -> u32 {
    use std::arch::wasm32::{
        i8x16_lt, i8x16_splat, u8x16_bitmask, u8x16_eq, u8x16_lt, u8x16_splat, v128, v128_load,
        v128_or,
    };
    // SAFETY: `v128_load` has no alignment requirement and reads the block's 16 bytes.
    let bytes = unsafe { v128_load(block.as_ptr().cast::<v128>()) };
    let controls = if not_ascii {
        // Signed, bytes above 0x7f are negative: below 0x20 either way.
        i8x16_lt(bytes, i8x16_splat(0x20))
    } else {
        u8x16_lt(bytes, u8x16_splat(0x20))
    };
    let quotes = u8x16_eq(bytes, u8x16_splat(b'"'));
    let backslashes = u8x16_eq(bytes, u8x16_splat(b'\\'));
    u32::from(u8x16_bitmask(v128_or(
        controls,
        v128_or(quotes, backslashes),
    )))
}

/// The bytes of a block that are a quote or a backslash, one bit per byte: where a string's scan
/// stops.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn quotes_or_backslashes(block: &[u8; BLOCK]) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86_64, and the unaligned load reads the block's 16 bytes.
    unsafe {
        let bytes = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
        let quotes = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
        let backslashes = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(quotes, backslashes)) as u32
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub(super) fn quotes_or_backslashes(block: &[u8; BLOCK]) -> u32 {
    use std::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_load, v128_or};
    // SAFETY: `v128_load` has no alignment requirement and reads the block's 16 bytes.
    let bytes = unsafe { v128_load(block.as_ptr().cast::<v128>()) };
    let quotes = u8x16_eq(bytes, u8x16_splat(b'"'));
    let backslashes = u8x16_eq(bytes, u8x16_splat(b'\\'));
    u32::from(u8x16_bitmask(v128_or(quotes, backslashes)))
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
#[inline(always)]
pub(super) fn quotes_or_backslashes(_: &[u8; BLOCK]) -> u32 {
    // Never called (`SIMD` is false).
    0
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
#[inline(always)]
pub(super) fn flags(_: &[u8; BLOCK], _: bool) -> u32 {
    // Never called (`SIMD` is false).
    0
}
