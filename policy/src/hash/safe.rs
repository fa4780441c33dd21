//! apimachinery's `rand.SafeEncodeString`.

const ALPHANUMS: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

/// Maps every character to `ALPHANUMS[code point % 27]`.
///
/// Byte-compatible with Go, including its quirk for non-ASCII input: Go sizes the output by the
/// input's byte length but writes one byte per character, so each extra UTF-8 byte leaves a
/// trailing NUL. (Hex digests and decimal numbers, the only inputs used here, are ASCII.)
pub fn safe_encode(s: &str) -> String {
    let mut out = vec![0u8; s.len()];
    for (slot, c) in out.iter_mut().zip(s.chars()) {
        *slot = ALPHANUMS[(c as usize) % ALPHANUMS.len()];
    }
    // Every byte is ASCII (an alphanumeric or NUL), hence valid UTF-8.
    out.into_iter().map(char::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_digit_mapping_of_section_4() {
        assert_eq!(safe_encode("0123456789abcdef"), "456789bcdfvwxz24");
    }

    #[test]
    fn decimal_and_non_ascii() {
        assert_eq!(safe_encode(""), "");
        assert_eq!(safe_encode("1234567890"), "56789bcdf4");
        // 'é' is U+00E9 = 233, 233 % 27 = 17 -> 'w'; one trailing NUL for its second byte.
        assert_eq!(safe_encode("é"), "w\u{0}");
    }
}
