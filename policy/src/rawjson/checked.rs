//! Checking a skipped object or array 64 bytes at a time, where the target has 128-bit SIMD:
//! simdjson's two stages in small. Every byte class becomes a bitmask, strings are masked with a
//! prefix XOR of the quotes, and only the tokens (brackets, commas, colons, opening quotes, the
//! first byte of a number or literal) go through the grammar. Only the common case is decided:
//! printable ASCII without escapes, integers and literals. Anything else is `None`, and the
//! caller reads token by token as before. A pod's skipped members are nearly all decided here,
//! which cut the module's call by about 4 % of its instructions (BENCHMARKS.md).

use super::escapes::SIMD;
use super::nested::prefix_xor;
use super::value::{MAX_DEPTH, plain_integer};

/// Bytes per block: four 16-byte vectors, one bit each in a `u64` mask.
const BLOCK: usize = 64;

#[cfg(test)]
mod tests;

/// The bytes of one block in each class, one bit per byte.
#[derive(Default)]
struct Classes {
    quotes: u64,
    backslashes: u64,
    /// Below 0x20 or above 0x7f.
    controls_or_high: u64,
    /// JSON's whitespace: space, tab, line feed, carriage return.
    spaces: u64,
    /// `{`, `}`, `[`, `]`, `,` and `:`.
    structural: u64,
}

/// What the grammar expects at the next token: a value, or (right after `[`) also the closing
/// bracket; a key, or (right after `{`) also the closing brace; a colon; a comma or the closing
/// bracket of the innermost container.
const VALUE: u8 = 0;
const FIRST_VALUE: u8 = 1;
const KEY: u8 = 2;
const FIRST_KEY: u8 = 3;
const COLON: u8 = 4;
const NEXT: u8 = 5;

/// The end (exclusive) of the object or array at `at` when it is valid JSON that `value` reads
/// at `depth` in full, and (with `objects_only`) every item of that array is an object. `None`:
/// not decided here (malformed, escapes, non-ASCII, floats, too deep, no SIMD).
pub(super) fn plain_end(text: &[u8], at: usize, depth: usize, objects_only: bool) -> Option<usize> {
    match text.get(at) {
        Some(b'[') => {}
        Some(b'{') if !objects_only => {}
        _ => return None,
    }
    if !SIMD {
        return None;
    }
    // Containers that may open, as `value` reads them from `depth`.
    let limit = MAX_DEPTH.checked_sub(depth)?;
    let mut expect = VALUE;
    // Containers open; bit `level` of `objects` set when the one at that level is an object.
    let mut open = 0usize;
    let mut objects = [0u64; 2];
    let mut in_object = false;
    let (mut in_string, mut in_scalar) = (false, false);
    let mut start = at;
    let mut padded: [u8; BLOCK];
    loop {
        let block: &[u8; BLOCK] = match text.get(start..start + BLOCK) {
            Some(block) => block.try_into().ok()?,
            None => {
                let rest = text.get(start..).filter(|rest| !rest.is_empty())?;
                padded = [b' '; BLOCK];
                padded.get_mut(..rest.len())?.copy_from_slice(rest);
                &padded
            }
        };
        let classes = classify(block);
        let inside = prefix_xor(classes.quotes) ^ if in_string { !0 } else { 0 };
        let spaces = classes.spaces & !inside;
        let scalars =
            !(inside | classes.quotes | spaces | classes.structural | classes.controls_or_high);
        // Escapes, non-ASCII text and control characters are left to the caller.
        let undecided =
            classes.backslashes | (classes.controls_or_high & (inside | !classes.spaces));
        let tokens = (classes.structural & !inside)
            | (classes.quotes & inside)
            | (scalars & !(scalars << 1 | u64::from(in_scalar)));
        let mut pending = tokens;
        while pending != 0 {
            let bit = pending.trailing_zeros() as usize;
            pending &= pending - 1;
            let byte = block[bit % BLOCK];
            // An item of the outermost list that must be an object.
            let object_item = objects_only && open == 1;
            expect = match byte {
                b'{' | b'[' => {
                    if expect > FIRST_VALUE || (object_item && byte == b'[') || open == limit {
                        return None;
                    }
                    in_object = byte == b'{';
                    let word = objects.get_mut(open / 64)?;
                    *word = *word & !(1 << (open % 64)) | u64::from(in_object) << (open % 64);
                    open += 1;
                    if in_object { FIRST_KEY } else { FIRST_VALUE }
                }
                b'}' | b']' => {
                    let allowed = if byte == b'}' { FIRST_KEY } else { FIRST_VALUE };
                    if in_object != (byte == b'}') || (expect != NEXT && expect != allowed) {
                        return None;
                    }
                    open = open.checked_sub(1)?;
                    if open == 0 {
                        // Done: nothing undecided up to the closing bracket.
                        let through = u64::MAX >> (BLOCK - 1 - bit);
                        return (undecided & through == 0).then_some(start + bit + 1);
                    }
                    let level = open - 1;
                    in_object = objects.get(level / 64)? >> (level % 64) & 1 == 1;
                    NEXT
                }
                b',' if expect == NEXT => {
                    if in_object {
                        KEY
                    } else {
                        VALUE
                    }
                }
                b':' if expect == COLON => VALUE,
                b'"' if expect == KEY || expect == FIRST_KEY => COLON,
                b'"' if expect <= FIRST_VALUE && !object_item => NEXT,
                b',' | b':' | b'"' => return None,
                _ => {
                    if expect > FIRST_VALUE || object_item {
                        return None;
                    }
                    plain_scalar(text, start + bit)?;
                    NEXT
                }
            };
        }
        if undecided != 0 {
            return None;
        }
        in_string = inside >> (BLOCK - 1) == 1;
        in_scalar = scalars >> (BLOCK - 1) == 1;
        start += BLOCK;
    }
}

/// Checks the number or literal starting at `at` as `value` reads it without serde_json: `true`,
/// `false`, `null`, or an integer of at most 18 digits without a leading zero (not `-0`).
fn plain_scalar(text: &[u8], at: usize) -> Option<()> {
    let rest = text.get(at..)?;
    let len = rest
        .iter()
        .position(|&b| !is_scalar_byte(b))
        .unwrap_or(rest.len());
    let token = rest.get(..len)?;
    if matches!(token, b"true" | b"false" | b"null") {
        return Some(());
    }
    plain_integer(token).map(drop)
}

/// A byte that the classes above count as part of a number or literal.
fn is_scalar_byte(byte: u8) -> bool {
    (0x20..0x80).contains(&byte)
        && !matches!(byte, b' ' | b'"' | b'{' | b'}' | b'[' | b']' | b',' | b':')
}

// `x | 0x20` is `{` only for `{` and `[`, and `}` only for `}` and `]`.
const FOLD: u8 = 0x20;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify(block: &[u8; BLOCK]) -> Classes {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let mut classes = Classes::default();
    for (lane, chunk) in block.chunks_exact(16).enumerate() {
        let shift = 16 * lane;
        // SAFETY: SSE2 is part of x86_64, and the unaligned load reads the chunk's 16 bytes.
        unsafe {
            let bytes = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            let folded = _mm_or_si128(bytes, _mm_set1_epi8(FOLD as i8));
            let is = |v: __m128i, b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
            let bits = |v: __m128i| u64::from(_mm_movemask_epi8(v) as u16) << shift;
            classes.quotes |= bits(is(bytes, b'"'));
            classes.backslashes |= bits(is(bytes, b'\\'));
            // Signed: bytes above 0x7f are negative, below 0x20 either way.
            classes.controls_or_high |= bits(_mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20)));
            classes.spaces |= bits(_mm_or_si128(
                _mm_or_si128(is(bytes, b' '), is(bytes, b'\t')),
                _mm_or_si128(is(bytes, b'\n'), is(bytes, b'\r')),
            ));
            classes.structural |= bits(_mm_or_si128(
                _mm_or_si128(is(folded, b'{'), is(folded, b'}')),
                _mm_or_si128(is(bytes, b','), is(bytes, b':')),
            ));
        }
    }
    classes
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn classify(block: &[u8; BLOCK]) -> Classes {
    use std::arch::wasm32::{
        i8x16_lt, i8x16_splat, u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_load, v128_or,
    };
    let mut classes = Classes::default();
    for (lane, chunk) in block.chunks_exact(16).enumerate() {
        let shift = 16 * lane;
        // SAFETY: `v128_load` has no alignment requirement and reads the chunk's 16 bytes.
        let bytes = unsafe { v128_load(chunk.as_ptr().cast::<v128>()) };
        let folded = v128_or(bytes, u8x16_splat(FOLD));
        let is = |v: v128, b: u8| u8x16_eq(v, u8x16_splat(b));
        let bits = |v: v128| u64::from(u8x16_bitmask(v)) << shift;
        classes.quotes |= bits(is(bytes, b'"'));
        classes.backslashes |= bits(is(bytes, b'\\'));
        // Signed: bytes above 0x7f are negative, below 0x20 either way.
        classes.controls_or_high |= bits(i8x16_lt(bytes, i8x16_splat(0x20)));
        classes.spaces |= bits(v128_or(
            v128_or(is(bytes, b' '), is(bytes, b'\t')),
            v128_or(is(bytes, b'\n'), is(bytes, b'\r')),
        ));
        classes.structural |= bits(v128_or(
            v128_or(is(folded, b'{'), is(folded, b'}')),
            v128_or(is(bytes, b','), is(bytes, b':')),
        ));
    }
    classes
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
#[inline(always)]
fn classify(_: &[u8; BLOCK]) -> Classes {
    // Never called (`SIMD` is false).
    Classes::default()
}
