use super::*;
use proptest::prelude::*;
use serde_json::{Value, json};

/// The members of the object `text` as (raw key, value text); a whole-document helper.
fn fields(text: &[u8]) -> super::Scan<Vec<(&[u8], &[u8])>> {
    let mut cursor = Cursor::new(text);
    let mut out = Vec::new();
    let Some(mut members) = cursor.object()? else {
        return Err(ScanError(0));
    };
    while let Some(key) = cursor.next_key(&mut members)? {
        out.push((key, cursor.skip()?));
    }
    cursor.end()?;
    Ok(out)
}

/// The items of the array `text`, each as its value's text; a whole-document helper.
fn items(text: &[u8]) -> super::Scan<Vec<&[u8]>> {
    let mut cursor = Cursor::new(text);
    let mut out = Vec::new();
    let Some(mut members) = cursor.array()? else {
        return Err(ScanError(0));
    };
    while cursor.next_item(&mut members)? {
        out.push(cursor.skip()?);
    }
    cursor.end()?;
    Ok(out)
}

fn decode(slice: &[u8]) -> Value {
    serde_json::from_slice(slice).expect("a member's text is one JSON value")
}

#[test]
fn fields_and_items_of_nested_documents() {
    let text = br#" { "a" : [1, {"b": "x\"}]"}, "c"] , "k\u0065y": null, "n": -1.5e3 } "#;
    let members = fields(text).expect("object");
    assert_eq!(members.len(), 3);
    assert_eq!(members[0].0, b"a");
    assert_eq!(decode(members[0].1), json!([1, {"b": "x\"}]"}, "c"]));
    assert!(key_is(members[1].0, "key"));
    assert_eq!(members[1].1, b"null");
    assert_eq!(members[2].1, b"-1.5e3");
    assert_eq!(items(members[0].1).expect("array").len(), 3);
    assert_eq!(fields(b"{}").expect("empty"), Vec::new());
    assert_eq!(items(b" [ ] ").expect("empty"), Vec::<&[u8]>::new());
}

#[test]
fn a_cursor_descends_into_the_values_it_wants_and_skips_the_rest() {
    let text = br#"{"skip": {"x": [1, "]"]}, "list": [{"n": 1}, null, {"n": 2}], "null": null}"#;
    let mut cursor = Cursor::new(text);
    let mut top = cursor.object().expect("object").expect("not null");
    let mut seen = Vec::new();
    while let Some(key) = cursor.next_key(&mut top).expect("key") {
        if key != b"list" {
            cursor.skip().expect("value");
            continue;
        }
        let mut list = cursor.array().expect("array").expect("not null");
        while cursor.next_item(&mut list).expect("item") {
            let start = cursor.position();
            match cursor.object().expect("object or null") {
                Some(mut item) => {
                    while let Some(key) = cursor.next_key(&mut item).expect("key") {
                        assert_eq!(key, b"n");
                        cursor.skip().expect("value");
                    }
                    seen.push(String::from_utf8_lossy(cursor.since(start)).into_owned());
                }
                None => seen.push("null".into()),
            }
        }
    }
    cursor.end().expect("the document ends");
    assert_eq!(seen, [r#"{"n": 1}"#, "null", r#"{"n": 2}"#]);
}

#[test]
fn malformed_text_is_an_error_never_a_panic() {
    for text in [
        &b""[..],
        b"{",
        b"[",
        b"{\"a\"",
        b"{\"a\":",
        b"{\"a\":1",
        b"{\"a\":1,}",
        b"{\"a\" 1}",
        b"{a:1}",
        b"[1 2]",
        b"[\"\\",
        b"{\"a\":{\"b\":[}",
        b"{} x",
        b"[1,]",
        b"\"",
    ] {
        assert!(
            fields(text).is_err() && items(text).is_err(),
            "{:?}",
            String::from_utf8_lossy(text)
        );
    }
    assert!(items(b"{}").is_err());
    assert!(fields(b"[]").is_err());
}

#[test]
fn any_depth_is_scanned_without_recursion() {
    let deep = format!("[{}{}]", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(items(deep.as_bytes()).expect("array").len(), 1);
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[ -~\\PC\"\\\\\\n\\t\\u{1}]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map("[a-z\"\\\\{}\\[\\] ,:]{0,6}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn members_are_what_serde_json_reads(v in value(), pretty in any::<bool>()) {
        let text = super::serialised(&v, pretty);
        // What serde_json reads back (its float parsing may round the last digit).
        let v = decode(&text);
        match &v {
            Value::Object(map) => {
                let members = fields(&text).expect("an object scans");
                prop_assert_eq!(members.len(), map.len());
                for ((raw, slice), (key, expected)) in members.iter().zip(map) {
                    prop_assert!(key_is(raw, key));
                    prop_assert_eq!(&decode(slice), expected);
                }
                prop_assert!(items(&text).is_err());
            }
            Value::Array(list) => {
                let members = items(&text).expect("an array scans");
                prop_assert_eq!(members.len(), list.len());
                for (slice, expected) in members.iter().zip(list) {
                    prop_assert_eq!(&decode(slice), expected);
                }
            }
            _ => prop_assert!(fields(&text).is_err() && items(&text).is_err()),
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = fields(&bytes);
        let _ = items(&bytes);
    }
}

/// The string scan byte by byte, as first written: the word-at-a-time one must agree with it.
fn skip_string_bytewise(text: &[u8], at: usize) -> super::Scan<usize> {
    let mut i = at + 1;
    while let Some(&byte) = text.get(i) {
        match byte {
            b'"' => return Ok(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    Err(ScanError(at))
}

proptest! {
    #[test]
    fn strings_end_where_a_bytewise_scan_says(
        bytes in prop::collection::vec(
            prop_oneof![1 => Just(b'"'), 2 => Just(b'\\'), 30 => any::<u8>()], 0..120),
        start in 0usize..4,
    ) {
        let mut text = vec![b' '; start];
        text.push(b'"');
        text.extend(bytes);
        prop_assert_eq!(skip_string(&text, start), skip_string_bytewise(&text, start));
    }
}

/// Every string length across the first block, the later blocks, the text's last bytes and
/// `memchr`, at every offset, with a quote or an escape at every position: the scan stops exactly
/// where the byte-by-byte one does.
#[test]
fn strings_end_exactly_at_every_length_and_offset() {
    for offset in 0..17 {
        for len in 0..150 {
            for stop in 0..len {
                for special in [b'"', b'\\'] {
                    let mut text = vec![b' '; offset];
                    text.push(b'"');
                    text.extend((0..len).map(|i| {
                        if i == stop {
                            special
                        } else {
                            b'a' + (i % 26) as u8
                        }
                    }));
                    text.push(b'"');
                    assert_eq!(
                        skip_string(&text, offset),
                        skip_string_bytewise(&text, offset),
                        "offset {offset}, length {len}, {special} at {stop}"
                    );
                }
            }
        }
    }
}

/// The nested-value scan byte by byte, as first written: the faster one must agree with it.
fn skip_nested_bytewise(text: &[u8], at: usize) -> super::Scan<usize> {
    let mut depth = 0usize;
    let mut i = at;
    while let Some(&byte) = text.get(i) {
        match byte {
            b'"' => i = skip_string_bytewise(text, i)?,
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
                if depth == 0 {
                    return Ok(i);
                }
            }
            _ => i += 1,
        }
    }
    Err(ScanError(at))
}

proptest! {
    #[test]
    fn nested_values_end_where_a_bytewise_scan_says(
        bytes in prop::collection::vec(
            prop_oneof![3 => prop::sample::select(&b"\"\\{}[]x"[..]), 10 => any::<u8>()], 0..80),
        start in 0usize..4,
        open in prop::sample::select(&b"{["[..]),
    ) {
        let mut text = vec![b' '; start];
        text.push(open);
        text.extend(bytes);
        prop_assert_eq!(skip_nested(&text, start), skip_nested_bytewise(&text, start));
    }

    /// Texts of several 64-byte blocks: strings crossing block edges, blocks with and without a
    /// backslash, brackets inside strings, an unterminated string or value at the end.
    #[test]
    fn long_nested_values_end_where_a_bytewise_scan_says(
        bytes in prop::collection::vec(
            prop_oneof![
                4 => prop::sample::select(&b"\"{}[]"[..]),
                1 => Just(b'\\'),
                30 => prop::sample::select(&b"ab:,0 "[..]),
                1 => any::<u8>(),
            ],
            0..400),
        start in 0usize..70,
        open in prop::sample::select(&b"{["[..]),
    ) {
        let mut text = vec![b' '; start];
        text.push(open);
        text.extend(bytes);
        prop_assert_eq!(skip_nested(&text, start), skip_nested_bytewise(&text, start));
    }

    #[test]
    fn json_values_end_where_a_bytewise_scan_says(v in value(), tail in "[ ,}\\]]{0,3}") {
        let mut text = serde_json::to_vec(&json!([v])).expect("json");
        text.extend(tail.as_bytes());
        prop_assert_eq!(skip_nested(&text, 0), skip_nested_bytewise(&text, 0));
        prop_assert_eq!(skip_nested(&text, 0), Ok(text.len() - tail.len()));
    }
}

proptest! {
    /// A string's contents read as themselves exactly when serde_json decodes them to themselves.
    #[test]
    fn plain_contents_are_what_serde_json_decodes(inner in prop::collection::vec(
        prop_oneof![0x20u8..0x80, any::<u8>(), Just(b'"'), Just(b'\\')], 0..40)) {
        let mut quoted = vec![b'"'];
        quoted.extend_from_slice(&inner);
        quoted.push(b'"');
        let decoded = serde_json::from_slice::<String>(&quoted).ok();
        match plain_contents(&inner) {
            Some(text) => prop_assert_eq!(Some(text.to_string()), decoded),
            None => prop_assert!(decoded.as_deref().is_none_or(|d| d.as_bytes() != inner.as_slice())),
        }
        // The one-pass read agrees with the two passes it stands for, text after it included.
        quoted.extend_from_slice(b",\"x\"");
        if let Some((text, end)) = plain_ascii_string(&quoted, 0) {
            prop_assert_eq!(Some(end), skip_string(&quoted, 0).ok());
            let quoted_alone = quoted.get(..end).unwrap_or_default();
            prop_assert_eq!(Some(text), plain_str(quoted_alone));
            prop_assert!(text.is_ascii());
        } else if let Ok(end) = skip_string(&quoted, 0) {
            prop_assert!(plain_str(&quoted[..end]).is_none_or(|t| !t.is_ascii()));
        }
    }
}

#[test]
fn every_byte_to_escape_or_not_ascii_is_found_at_every_offset() {
    for byte in 0..=u8::MAX {
        let escaped = byte < 0x20 || byte == b'"' || byte == b'\\';
        // Every length up to two blocks and a word, so every branch: bytes, halves, words, blocks.
        for len in 1..=40 {
            assert_eq!(first_to_escape(&vec![b'a'; len], 0), None);
            for at in 0..len {
                let mut text = vec![b'a'; len];
                text[at] = byte;
                // Found from any offset at or before it, and exactly there, even with a second one
                // after it.
                for from in 0..=at {
                    let found = first_to_escape(&text, from);
                    assert_eq!(
                        found,
                        escaped.then_some(at),
                        "byte {byte:#x} at {at} from {from}"
                    );
                }
                text.push(b'"');
                assert_eq!(
                    first_to_escape(&text, 0),
                    Some(if escaped { at } else { len })
                );
                text.pop();
                let mut quoted = [b"\"".as_slice(), &text, b"\""].concat();
                let one_pass = plain_ascii_string(&quoted, 0).map(|(_, end)| end);
                // A quote ends the string early, at its own place.
                let expected = match byte {
                    b'"' => Some(at + 2),
                    _ if escaped || byte >= 0x80 => None,
                    _ => Some(len + 2),
                };
                assert_eq!(one_pass, expected, "byte {byte:#x} at {at} of {len}");
                quoted.pop();
                assert!(byte == b'"' || plain_ascii_string(&quoted, 0).is_none());
                let at = (len, at);
                let plain = plain_contents(&text).is_some();
                assert_eq!(plain, !escaped && byte < 0x80, "byte {byte:#x} at {at:?}");
            }
        }
    }
    assert_eq!(
        first_to_escape("é😀\u{7f}\u{80}".repeat(5).as_bytes(), 0),
        None
    );
    assert_eq!(
        plain_contents("é😀\u{7f}".repeat(5).as_bytes()),
        Some("é😀\u{7f}".repeat(5).as_str())
    );
}
