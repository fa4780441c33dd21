//! Whether a JSON text is exactly what serde_json writes for the value it parses to. The values a
//! patch adds mostly come from the policy's own serde_json output: those are copied as they are
//! instead of being parsed and written again.

/// Nesting checked here; deeper text takes the parse, and its limit, as before.
const MAX_DEPTH: usize = 64;

/// `text` is compact, its object keys strictly ascend (as a sorted map writes them, no
/// duplicates), its strings are escaped as serde_json escapes and its numbers are integers
/// serde_json keeps as integers. `false` only means "parse and write it": some other texts
/// also come out unchanged.
pub(super) fn written_by_serde_json(text: &str) -> bool {
    let bytes = text.as_bytes();
    // The open containers: whether each is an object, and the last key read in it.
    let mut open: Vec<(bool, &[u8])> = Vec::new();
    let mut at = 0;
    loop {
        // A value starts at `at`.
        let end = match bytes.get(at) {
            Some(&open_byte @ (b'{' | b'[')) => {
                let object = open_byte == b'{';
                let close = if object { b'}' } else { b']' };
                if bytes.get(at + 1) == Some(&close) {
                    Some(at + 2)
                } else if open.len() >= MAX_DEPTH {
                    None
                } else if object {
                    let Some((key, next)) = key(bytes, at + 1) else {
                        return false;
                    };
                    open.push((true, key));
                    at = next;
                    continue;
                } else {
                    open.push((false, &[]));
                    at += 1;
                    continue;
                }
            }
            Some(b'"') => string_end(bytes, at, true),
            Some(b'-' | b'0'..=b'9') => integer_end(bytes, at),
            Some(b't') => literal_end(bytes, at, b"true"),
            Some(b'f') => literal_end(bytes, at, b"false"),
            Some(b'n') => literal_end(bytes, at, b"null"),
            _ => None,
        };
        let Some(end) = end else {
            return false;
        };
        at = end;
        // After a value: close what ends here, then find the next member or item.
        loop {
            let Some((object, last_key)) = open.last_mut() else {
                return at == bytes.len();
            };
            match (bytes.get(at), *object) {
                (Some(b','), false) => {
                    at += 1;
                    break;
                }
                (Some(b','), true) => {
                    let Some((key, next)) = key(bytes, at + 1) else {
                        return false;
                    };
                    if key <= *last_key {
                        return false;
                    }
                    *last_key = key;
                    at = next;
                    break;
                }
                (Some(b'}'), true) | (Some(b']'), false) => {
                    open.pop();
                    at += 1;
                }
                _ => return false,
            }
        }
    }
}

/// The key at `at` (between its quotes) and where its value starts, after the colon. Keys
/// with escapes are refused: their raw bytes do not sort as the decoded keys do.
fn key(bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let end = string_end(bytes, at, false)?;
    (bytes.get(end) == Some(&b':')).then_some((bytes.get(at + 1..end - 1)?, end + 1))
}

/// The end of the string at `at` when it is escaped exactly as serde_json escapes (with
/// `escapes` false, when it needs no escape).
fn string_end(bytes: &[u8], at: usize, escapes: bool) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut from = at + 1;
    loop {
        let rest = bytes.get(from..)?;
        let stop = from
            + rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        match bytes.get(stop) {
            Some(b'"') => return Some(stop + 1),
            Some(b'\\') if escapes => from = stop + 1 + escape_len(bytes.get(stop + 1..)?)?,
            _ => return None,
        }
    }
}

/// The length after the backslash of an escape as serde_json writes it: the short forms, and
/// `\u00xx` (lowercase) for the other control characters only.
fn escape_len(escape: &[u8]) -> Option<usize> {
    match escape {
        [b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't', ..] => Some(1),
        [b'u', b'0', b'0', high @ (b'0' | b'1'), low, ..] => {
            let low = match low {
                b'0'..=b'9' => low - b'0',
                b'a'..=b'f' => low - b'a' + 10,
                _ => return None,
            };
            let code = (high - b'0') * 16 + low;
            (!matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d)).then_some(5)
        }
        _ => None,
    }
}

/// The end of the integer at `at` when serde_json parses it as one (`u64`, or `i64` below zero)
/// and writes it back the same: no leading zero or `-0` (a fraction or exponent that follows is
/// refused by the caller, as no value is followed by `.` or `e`).
fn integer_end(bytes: &[u8], at: usize) -> Option<usize> {
    let negative = bytes.get(at) == Some(&b'-');
    let digits_start = at + usize::from(negative);
    let digits = bytes.get(digits_start..)?;
    let count = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    let text = std::str::from_utf8(digits.get(..count)?).ok()?;
    if count == 0 || (count > 1 && text.starts_with('0')) {
        return None;
    }
    let magnitude: u64 = text.parse().ok()?;
    let fits = !negative || (1..=1u64 << 63).contains(&magnitude);
    fits.then_some(digits_start + count)
}

fn literal_end(bytes: &[u8], at: usize, literal: &[u8]) -> Option<usize> {
    bytes
        .get(at..)?
        .starts_with(literal)
        .then_some(at + literal.len())
}

#[cfg(test)]
mod tests {
    use super::written_by_serde_json;

    #[test]
    fn only_serde_json_own_text_is_taken_as_is() {
        for text in [
            "0",
            "-1",
            "18446744073709551615",
            "-9223372036854775808",
            "true",
            "null",
            "\"\"",
            "\"é/ü\"",
            r#""\"\\\b\f\n\r\t\u0000\u001f""#,
            "[]",
            "{}",
            "[1,[2,{}],\"x\"]",
            r#"{"":1,"a":{"b":[],"c":null},"b":"x"}"#,
        ] {
            assert!(written_by_serde_json(text), "{text}");
        }
        for text in [
            "-0",
            "1.0",
            "1e3",
            "01",
            "18446744073709551616",
            "-9223372036854775809",
            " 1",
            "1 ",
            "[1,]",
            "[1 ]",
            "{\"b\":1,\"a\":2}",
            "{\"a\":1,\"a\":2}",
            r#""a\/b""#,
            r#""\u0008""#,
            r#""\u001F""#,
            r#""\u0020""#,
            r#""\x""#,
            r#"{"\n":1}"#,
            "\"\t\"",
            "{\"a\" :1}",
            "tru",
            "[",
            "{\"a\":1",
            "",
            "1]",
            "[1]]",
            "{\"a\"}",
        ] {
            assert!(!written_by_serde_json(text), "{text}");
        }
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        assert!(written_by_serde_json(&deep(64)));
        assert!(!written_by_serde_json(&deep(65)));
    }
}
