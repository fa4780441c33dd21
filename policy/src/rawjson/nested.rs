//! The end of a nested object or array, 64 bytes at a time where the target has 128-bit SIMD
//! (x86_64's SSE2, wasm32 with `simd128`): quotes and brackets become bitmasks, strings are masked
//! with a prefix XOR of the quotes (simdjson's first stage), and only brackets outside strings
//! count. A block holding a backslash, and the last bytes of the text, are read byte by byte, so
//! the result is exactly the byte-by-byte scan's on any text, JSON or not.

use super::escapes::SIMD;
use super::{STRUCTURAL, Scan, ScanError, skip_string, skip_string_escaped};

/// Bytes per block: four 16-byte vectors, one bit each in a `u64` mask.
const BLOCK: usize = 64;

/// The bytes of one block that are quotes, backslashes, `{`/`[` and `}`/`]`, one bit per byte.
struct Masks {
    quotes: u64,
    backslashes: u64,
    opens: u64,
    closes: u64,
}

impl Masks {
    const NONE: Masks = Masks {
        quotes: 0,
        backslashes: 0,
        opens: 0,
        closes: 0,
    };
}

/// The end (exclusive) of the balanced object or array opening at `at`.
pub(super) fn skip_nested(text: &[u8], at: usize) -> Scan<usize> {
    let mut scan = Nested { depth: 0, i: at };
    if SIMD {
        // Inside a string at `scan.i` (opened at the second field), carried from block to block.
        let mut open_string: Option<usize> = None;
        while let Some(block) = text.get(scan.i..scan.i + BLOCK) {
            let masks = classify(block);
            if masks.backslashes != 0 {
                if let Some(start) = open_string.take() {
                    scan.i = string_end(text, scan.i, start)?;
                }
                // Byte by byte to the end of this block (or of the string that crosses it).
                let end = (scan.i + BLOCK).min(text.len());
                while scan.i < end {
                    if let Some(done) = scan.step(text)? {
                        return Ok(done);
                    }
                }
                continue;
            }
            let carried = if open_string.is_some() { !0 } else { 0 };
            let inside = prefix_xor(masks.quotes) ^ carried;
            let (opens, closes) = (masks.opens & !inside, masks.closes & !inside);
            // The brackets in order (counting them costs more without a POPCNT instruction).
            let mut brackets = opens | closes;
            while brackets != 0 {
                let bit = brackets.trailing_zeros() as usize;
                if opens >> bit & 1 == 1 {
                    scan.depth += 1;
                } else {
                    scan.depth = scan.depth.saturating_sub(1);
                    if scan.depth == 0 {
                        return Ok(scan.i + bit + 1);
                    }
                }
                brackets &= brackets - 1;
            }
            if inside >> (BLOCK - 1) == 1 {
                // The last quote of the block opened the string that is still open.
                if masks.quotes != 0 {
                    let last = BLOCK - 1 - masks.quotes.leading_zeros() as usize;
                    open_string = Some(scan.i + last);
                }
            } else {
                open_string = None;
            }
            scan.i += BLOCK;
        }
        if let Some(start) = open_string {
            scan.i = string_end(text, scan.i, start)?;
        }
    }
    while scan.i < text.len() {
        if let Some(done) = scan.step(text)? {
            return Ok(done);
        }
    }
    Err(ScanError(at))
}

/// The byte-by-byte scan's state: the depth and the next byte to read (outside any string).
struct Nested {
    depth: usize,
    i: usize,
}

impl Nested {
    /// Reads one byte, or one whole string; `Some(end)` when the value ended.
    #[inline(always)]
    fn step(&mut self, text: &[u8]) -> Scan<Option<usize>> {
        let Some(&byte) = text.get(self.i) else {
            return Ok(None);
        };
        if !STRUCTURAL[byte as usize] {
            self.i += 1;
            return Ok(None);
        }
        match byte {
            b'"' => self.i = skip_string(text, self.i)?,
            b'{' | b'[' => {
                self.depth += 1;
                self.i += 1;
            }
            _ => {
                self.depth = self.depth.saturating_sub(1);
                self.i += 1;
                if self.depth == 0 {
                    return Ok(Some(self.i));
                }
            }
        }
        Ok(None)
    }
}

/// The end of the string opened at `start`, read on from `from` (inside it, no escape pending).
fn string_end(text: &[u8], from: usize, start: usize) -> Scan<usize> {
    skip_string_escaped(text, from - 1)
        .map(|(end, _)| end)
        .map_err(|_| ScanError(start))
}

/// Bit `i` set when bits `0..=i` of `quotes` hold an odd number of ones: inside a string.
#[inline(always)]
pub(super) fn prefix_xor(mut quotes: u64) -> u64 {
    quotes ^= quotes << 1;
    quotes ^= quotes << 2;
    quotes ^= quotes << 4;
    quotes ^= quotes << 8;
    quotes ^= quotes << 16;
    quotes ^= quotes << 32;
    quotes
}

// `x | 0x20` is `{` only for `{` and `[`, and `}` only for `}` and `]`.
pub(super) const FOLD: u8 = 0x20;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify(block: &[u8]) -> Masks {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let mut masks = Masks::NONE;
    for (lane, chunk) in block.chunks_exact(16).take(BLOCK / 16).enumerate() {
        let shift = 16 * lane;
        // SAFETY: SSE2 is part of x86_64, and the unaligned load reads the chunk's 16 bytes.
        unsafe {
            let bytes = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            let folded = _mm_or_si128(bytes, _mm_set1_epi8(FOLD as i8));
            let bits = |v: __m128i, b: u8| {
                u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8))) as u16)
                    << shift
            };
            masks.quotes |= bits(bytes, b'"');
            masks.backslashes |= bits(bytes, b'\\');
            masks.opens |= bits(folded, b'{');
            masks.closes |= bits(folded, b'}');
        }
    }
    masks
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn classify(block: &[u8]) -> Masks {
    use std::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_load, v128_or};
    let mut masks = Masks::NONE;
    for (lane, chunk) in block.chunks_exact(16).take(BLOCK / 16).enumerate() {
        let shift = 16 * lane;
        // SAFETY: `v128_load` has no alignment requirement and reads the chunk's 16 bytes.
        let bytes = unsafe { v128_load(chunk.as_ptr().cast::<v128>()) };
        let folded = v128_or(bytes, u8x16_splat(FOLD));
        let bits = |v: v128, b: u8| u64::from(u8x16_bitmask(u8x16_eq(v, u8x16_splat(b)))) << shift;
        masks.quotes |= bits(bytes, b'"');
        masks.backslashes |= bits(bytes, b'\\');
        masks.opens |= bits(folded, b'{');
        masks.closes |= bits(folded, b'}');
    }
    masks
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
#[inline(always)]
fn classify(_: &[u8]) -> Masks {
    // Never called (`SIMD` is false); a backslash everywhere would mean "byte by byte".
    Masks {
        backslashes: u64::MAX,
        ..Masks::NONE
    }
}
