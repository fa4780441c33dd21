//! Checking a skipped object or array 64 bytes at a time, where the target has 128-bit SIMD:
//! simdjson's first stage, with the grammar checked on bitmasks too. Every byte class becomes a
//! bitmask and strings are masked with a prefix XOR of the quotes. Only the brackets are walked
//! one by one (nesting, and which container each byte is in); every other rule of JSON's grammar
//! holds for a whole block at once as "the byte after an X is a Y". Only what hosts send is
//! decided: compact JSON (no whitespace between tokens) with printable ASCII strings without
//! escapes, integers and literals. Anything else is `None`, and the caller reads token by token
//! as before. A pod's skipped members are nearly all decided here (BENCHMARKS.md).

use super::escapes::SIMD;
use super::nested::{FOLD, prefix_xor};
use super::value::{MAX_DEPTH, plain_integer};

/// Bytes per block: four 16-byte vectors, one bit each in a `u64` mask.
const BLOCK: usize = 64;

#[cfg(test)]
mod tests;

/// The bytes of one block in each class, one bit per byte.
#[derive(Default)]
struct Classes {
    quotes: u64,
    /// Backslashes, and bytes below 0x20 or above 0x7f.
    escapes_or_controls: u64,
    /// `{` and `[`.
    opens: u64,
    /// `}` and `]`.
    closes: u64,
    commas: u64,
    colons: u64,
}

/// The end (exclusive) of the object or array at `at` when it is valid JSON that `value` reads
/// at `depth` in full, and (with `objects_only`) every item of that array is an object. `None`:
/// not decided here (malformed, whitespace, escapes, non-ASCII, floats, too deep, no SIMD).
// All state is in locals, no arrays or structs behind references: in the module those would live
// in linear memory, and every access would be a load or a store.
pub(super) fn plain_end(text: &[u8], at: usize, depth: usize, objects_only: bool) -> Option<usize> {
    match text.get(at) {
        Some(b'[') => {}
        Some(b'{') if !objects_only => {}
        _ => return None,
    }
    // With `objects_only`, the first item is an object, and so is each one after an object
    // (`,{` after each item's `}`, checked below): every item is.
    if !SIMD || objects_only && !matches!(text.get(at + 1), Some(b'{' | b']')) {
        return None;
    }
    // Nesting deeper than one word's bits is left to the caller: no pod nests that deep.
    let limit = MAX_DEPTH.checked_sub(depth)?.min(u64::BITS as usize);
    // Containers open, which of them are objects (bit `level`), and whether the innermost one is.
    let (mut open, mut objects, mut in_object) = (0usize, 0u64, false);
    // From the previous block: whether it ended in a string, in a key (the addition's carry), in an
    // object; and the top bit of each lead of the grammar's rules.
    let (mut in_string, mut in_key, mut was_in_object) = (0u64, 0u64, 0u64);
    let (mut object_opens, mut object_commas, mut value_leads, mut list_opens) = (0, 0, 0, 0);
    let (mut value_ends, mut scalar_bytes, mut key_ends) = (0, 0, 0);
    let follow = |lead: u64, previous: u64| lead << 1 | previous >> (BLOCK - 1);
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
        let inside = prefix_xor(classes.quotes) ^ in_string;
        let (opening, closing) = (classes.quotes & inside, classes.quotes & !inside);
        let opens = classes.opens & !inside;
        let closes = classes.closes & !inside;
        let commas = classes.commas & !inside;
        let colons = classes.colons & !inside;
        let scalars = !(inside | classes.quotes | classes.opens | classes.closes)
            & !(classes.commas | classes.colons);
        // The brackets in order: nesting, and where the innermost container changes between an
        // object and a list (an opening bracket is in the container it opens; which container a
        // closing bracket is in matters to no rule below).
        let (mut object_flips, mut end) = (0u64, None);
        let mut brackets = opens | closes;
        while brackets != 0 {
            let bit = brackets.trailing_zeros() as usize;
            brackets &= brackets - 1;
            let byte = block[bit % BLOCK];
            if byte | FOLD == b'{' {
                if open == limit {
                    return None;
                }
                let object = byte == b'{';
                object_flips ^= u64::from(object != in_object) << bit;
                objects = objects & !(1 << open) | u64::from(object) << open;
                in_object = object;
                open += 1;
            } else {
                if in_object != (byte == b'}') {
                    return None;
                }
                open = open.checked_sub(1)?;
                if open == 0 {
                    end = Some(bit);
                    break;
                }
                let next = start + bit + 1;
                if objects_only && open == 1 && text.get(next) == Some(&b',') {
                    text.get(next + 1).filter(|&&byte| byte == b'{')?;
                }
                let outer = objects >> (open - 1) & 1 == 1;
                object_flips ^= u64::from(outer != in_object) << bit;
                in_object = outer;
            }
        }
        let in_objects = prefix_xor(object_flips) ^ was_in_object;
        let through = end.map_or(u64::MAX, |bit| u64::MAX >> (BLOCK - 1 - bit));
        // Escapes, non-ASCII text and control characters are left to the caller. So are spaces
        // between tokens: they count as bytes of a number or literal, and no valid one has any.
        let undecided = classes.escapes_or_controls;
        // The grammar's rules: what may follow each lead. A string after `{` or after a comma of
        // an object is a key: its closing quote, found by carrying an addition through the
        // string's bits, is followed by the colon (and no other lead is).
        let block_object_opens = opens & in_objects;
        let block_object_commas = commas & in_objects;
        let keys = opening
            & (follow(block_object_opens, object_opens)
                | follow(block_object_commas, object_commas));
        let (sum, carried) = inside.overflowing_add(keys);
        let (sum, carried_in) = sum.overflowing_add(in_key);
        let block_key_ends = sum & !inside;
        let block_value_leads = colons | commas & !in_objects;
        let block_list_opens = opens & !in_objects;
        let block_value_ends = closing & !block_key_ends | closes;
        let values = opening | opens | scalars;
        let after_scalars = follow(scalars, scalar_bytes);
        let after_key_ends = follow(block_key_ends, key_ends);
        let wrong = follow(block_object_opens, object_opens) & !(opening | closes)
            | follow(block_object_commas, object_commas) & !opening
            | follow(block_value_leads, value_leads) & !values
            | follow(block_list_opens, list_opens) & !(values | closes)
            | follow(block_value_ends, value_ends) & !(commas | closes)
            | after_scalars & !(scalars | commas | closes)
            | after_key_ends & !colons;
        if (wrong | undecided) & through != 0 {
            return None;
        }
        let mut numbers_or_literals = scalars & !after_scalars & through;
        while numbers_or_literals != 0 {
            let bit = numbers_or_literals.trailing_zeros() as usize;
            numbers_or_literals &= numbers_or_literals - 1;
            // Its length from the mask, unless it reaches the next block.
            let len = (!(scalars >> bit)).trailing_zeros() as usize;
            plain_scalar(text, start + bit, (len < BLOCK - bit).then_some(len))?;
        }
        if let Some(bit) = end {
            return Some(start + bit + 1);
        }
        in_string = mask(inside >> (BLOCK - 1) == 1);
        in_key = u64::from(carried || carried_in);
        was_in_object = mask(in_object);
        (object_opens, object_commas) = (block_object_opens, block_object_commas);
        (value_leads, list_opens) = (block_value_leads, block_list_opens);
        (value_ends, scalar_bytes) = (block_value_ends, scalars);
        key_ends = block_key_ends;
        start += BLOCK;
    }
}

fn mask(set: bool) -> u64 {
    if set { u64::MAX } else { 0 }
}

/// Checks the number or literal of `len` bytes (when known) at `at` as `value` reads it without
/// serde_json: `true`, `false`, `null`, or an integer of at most 18 digits without a leading zero
/// (not `-0`).
fn plain_scalar(text: &[u8], at: usize, len: Option<usize>) -> Option<()> {
    let rest = text.get(at..)?;
    let len = len.unwrap_or_else(|| {
        rest.iter()
            .position(|&b| !is_scalar_byte(b))
            .unwrap_or(rest.len())
    });
    let token = rest.get(..len)?;
    if matches!(token, b"true" | b"false" | b"null") {
        return Some(());
    }
    plain_integer(token).map(drop)
}

/// A byte that the classes above count as part of a number or literal (a space too).
fn is_scalar_byte(byte: u8) -> bool {
    (0x20..0x80).contains(&byte) && !matches!(byte, b'"' | b'{' | b'}' | b'[' | b']' | b',' | b':')
}

/// The classes of one 16-byte lane, one bit per byte.
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
struct Lane {
    quotes: u16,
    escapes_or_controls: u16,
    opens: u16,
    closes: u16,
    commas: u16,
    colons: u16,
}

#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
#[inline(always)]
fn classify(block: &[u8; BLOCK]) -> Classes {
    // The four lanes written out: as a loop, the module keeps every mask and constant in memory.
    let lane = |at: usize| {
        block
            .get(at..at + 16)
            .and_then(|b| b.try_into().ok())
            .map(classify_lane)
    };
    let (Some(a), Some(b), Some(c), Some(d)) = (lane(0), lane(16), lane(32), lane(48)) else {
        return Classes::default();
    };
    let join = |class: fn(&Lane) -> u16| {
        u64::from(class(&a))
            | u64::from(class(&b)) << 16
            | u64::from(class(&c)) << 32
            | u64::from(class(&d)) << 48
    };
    Classes {
        quotes: join(|l| l.quotes),
        escapes_or_controls: join(|l| l.escapes_or_controls),
        opens: join(|l| l.opens),
        closes: join(|l| l.closes),
        commas: join(|l| l.commas),
        colons: join(|l| l.colons),
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify_lane(bytes: &[u8; 16]) -> Lane {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86_64, and the unaligned load reads the lane's 16 bytes.
    unsafe {
        let bytes = _mm_loadu_si128(bytes.as_ptr().cast::<__m128i>());
        let folded = _mm_or_si128(bytes, _mm_set1_epi8(FOLD as i8));
        let is = |v: __m128i, b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
        let bits = |v: __m128i| _mm_movemask_epi8(v) as u16;
        Lane {
            quotes: bits(is(bytes, b'"')),
            // Signed: bytes above 0x7f are negative, below 0x20 either way.
            escapes_or_controls: bits(_mm_or_si128(
                is(bytes, b'\\'),
                _mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20)),
            )),
            opens: bits(is(folded, b'{')),
            closes: bits(is(folded, b'}')),
            commas: bits(is(bytes, b',')),
            colons: bits(is(bytes, b':')),
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn classify_lane(bytes: &[u8; 16]) -> Lane {
    use std::arch::wasm32::{
        i8x16_lt, i8x16_splat, u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_load, v128_or,
    };
    // SAFETY: `v128_load` has no alignment requirement and reads the lane's 16 bytes.
    let bytes = unsafe { v128_load(bytes.as_ptr().cast::<v128>()) };
    let folded = v128_or(bytes, u8x16_splat(FOLD));
    let is = |v: v128, b: u8| u8x16_eq(v, u8x16_splat(b));
    Lane {
        quotes: u8x16_bitmask(is(bytes, b'"')),
        // Signed: bytes above 0x7f are negative, below 0x20 either way.
        escapes_or_controls: u8x16_bitmask(v128_or(
            is(bytes, b'\\'),
            i8x16_lt(bytes, i8x16_splat(0x20)),
        )),
        opens: u8x16_bitmask(is(folded, b'{')),
        closes: u8x16_bitmask(is(folded, b'}')),
        commas: u8x16_bitmask(is(bytes, b',')),
        colons: u8x16_bitmask(is(bytes, b':')),
    }
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
