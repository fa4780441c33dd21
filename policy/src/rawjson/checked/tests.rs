use super::plain_end;
use crate::rawjson::Cursor;
use crate::rawjson::value::Parser;
use proptest::prelude::*;
use serde_json::{Value, json};

/// Where `value` ends reading `text` at `depth`, and what it read.
fn read(text: &[u8], depth: usize) -> Option<(usize, Value)> {
    let mut parser = Parser(Cursor::new(text));
    let value = parser.value(depth)?;
    Some((parser.0.at, value))
}

/// A decided end is `value`'s end, and with `objects_only` the value is a list of objects.
fn agrees(text: &[u8], depth: usize) -> Result<(), TestCaseError> {
    for objects_only in [false, true] {
        if let Some(end) = plain_end(text, 0, depth, objects_only) {
            let read = read(text, depth);
            prop_assert_eq!(read.as_ref().map(|(end, _)| *end), Some(end));
            if objects_only {
                let items = read.as_ref().and_then(|(_, value)| value.as_array());
                prop_assert!(items.is_some_and(|items| items.iter().all(Value::is_object)));
            }
        }
    }
    Ok(())
}

fn decided(value: &Value) -> Option<usize> {
    plain_end(value.to_string().as_bytes(), 0, 0, false)
}

#[test]
fn plain_documents_are_decided_at_their_end() {
    for value in [
        json!({}),
        json!([]),
        json!([[], {}, [[]], {"a": []}]),
        json!({"name": "SETTING_1", "value": "value-1", "n": -12, "z": 0, "t": true, "f": false, "x": null}),
        json!([{"a": "x".repeat(200)}, 123_456_789_012_345_678_i64, {"b": {"c": [1, 2, 3]}}]),
        json!({"k".repeat(150): {"l".repeat(70): ["v".repeat(130)]}, "": ""}),
    ] {
        let text = value.to_string();
        assert_eq!(decided(&value), Some(text.len()), "{text}");
    }
    // Only the value at the cursor is read, whatever follows it.
    assert_eq!(plain_end(br#"{"a":[1]},"b":2}"#, 5, 0, false), Some(8));
}

#[test]
fn what_serde_json_must_judge_is_not_decided() {
    for text in [
        &br#"{"a":1.5}"#[..],
        br#"[-0]"#,
        br#"[01]"#,
        br#"[1234567890123456789]"#,
        br#"["\n"]"#,
        "[\"é\"]".as_bytes(),
        b"[\"\t\"]",
        br#"{"a":1,}"#,
        br#"[1,]"#,
        br#"{"a" 1}"#,
        br#"{"a":1]"#,
        br#"[1}"#,
        br#"{1:2}"#,
        br#"[nul]"#,
        br#"[truex]"#,
        br#"[1 2]"#,
        br#"["a" "b"]"#,
        br#"["a"1]"#,
        br#"{"a","b"}"#,
        br#"{"a"}"#,
        br#"{"a":"b":"c"}"#,
        br#"{"a"::1}"#,
        br#"{"a":}"#,
        br#"{"a":1,"b"}"#,
        br#"{"a":1"b":2}"#,
        br#"{"a":{}"b":1}"#,
        br#"{,}"#,
        br#"{:1}"#,
        br#"["a":1]"#,
        br#"[1:2]"#,
        br#"[:]"#,
        br#"[,1]"#,
        br#"[{}{}]"#,
        br#"[[]1]"#,
        br#"["a"[]]"#,
        br#"[1"a"]"#,
        br#"[-]"#,
        br#"[1"#,
        br#"["abc"#,
        b"[1,\x01]",
        b"\"a\"",
        b"",
    ] {
        for objects_only in [false, true] {
            assert_eq!(
                plain_end(text, 0, 0, objects_only),
                None,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }
}

#[test]
fn whitespace_between_tokens_is_left_to_the_caller() {
    // Hosts send compact JSON; spaces inside strings are text.
    assert_eq!(plain_end(br#"{"a b":" c "}"#, 0, 0, false), Some(13));
    for text in [
        &br#"{ "a":1}"#[..],
        br#"{"a" :1}"#,
        br#"{"a": 1}"#,
        br#"{"a":1 }"#,
        br#"[1,2 ]"#,
        b"[1,\n2]",
        b"[\t1]",
        b"[1\r]",
    ] {
        assert_eq!(plain_end(text, 0, 0, false), None, "{text:?}");
    }
    let pretty = serde_json::to_vec_pretty(&json!({"a": [1, {"b": "c"}]})).expect("serialisable");
    assert_eq!(plain_end(&pretty, 0, 0, false), None);
}

#[test]
fn only_lists_of_objects_are_decided_when_they_must_be() {
    assert_eq!(plain_end(br#"[{"a":[1]},{}]"#, 0, 0, true), Some(14));
    assert_eq!(plain_end(br#"[]"#, 0, 0, true), Some(2));
    for text in [&br#"[{},1]"#[..], br#"[[]]"#, br#"["a"]"#, br#"{"a":1}"#] {
        assert_eq!(plain_end(text, 0, 0, true), None);
    }
}

#[test]
fn nesting_is_decided_up_to_the_reading_limit_or_a_words_bits() {
    let nested = |pairs: usize| format!("{}1{}", "[{\"a\":".repeat(pairs), "}]".repeat(pairs));
    let deep = nested(32);
    assert_eq!(plain_end(deep.as_bytes(), 0, 0, false), Some(deep.len()));
    assert_eq!(plain_end(deep.as_bytes(), 0, 36, false), Some(deep.len()));
    assert_eq!(plain_end(deep.as_bytes(), 0, 37, false), None);
    // Deeper than 64 is read token by token.
    let deeper = format!("[{}]", nested(32));
    assert_eq!(plain_end(deeper.as_bytes(), 0, 0, false), None);
}

#[test]
fn tokens_and_strings_across_blocks_are_read_whole() {
    // Every split of a string, a number and a literal by the 64-byte block boundary.
    for pad in 0..70 {
        for tail in [
            "\"abcdefgh\"",
            "123456789",
            "true",
            "null",
            "{}",
            r#"{"k":"v"}"#,
        ] {
            let text = format!("[\"{}\",{tail},{tail}]", "p".repeat(pad));
            assert_eq!(
                plain_end(text.as_bytes(), 0, 0, false),
                Some(text.len()),
                "{text}"
            );
            for damage in ["x", " "] {
                let broken = format!("[\"{}\",{tail}{damage}]", "p".repeat(pad));
                assert_eq!(plain_end(broken.as_bytes(), 0, 0, false), None, "{broken}");
            }
        }
    }
}

/// JSON values with these strings, and with floats and integers of any size or only with what
/// `plain_end` decides (integers of at most 18 digits).
fn json_value(strings: &'static str, plain: bool) -> impl Strategy<Value = Value> {
    const PLAIN: i64 = 999_999_999_999_999_999;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-PLAIN..=PLAIN).prop_map(Value::from),
        (-1000i64..1000).prop_map(Value::from),
        if plain {
            (-PLAIN..=PLAIN).prop_map(Value::from).boxed()
        } else {
            prop_oneof![
                any::<i64>().prop_map(Value::from),
                any::<i32>().prop_map(|n| Value::from(f64::from(n) / 8.0)),
            ]
            .boxed()
        },
        strings.prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((strings, inner), 0..5)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn decided_ends_are_where_reading_ends(
        value in prop_oneof![
            json_value("[a-z0-9 ./_-]{0,40}", false),
            json_value("[a-z\"\\\\\u{0}-\u{1f}é{}:,\\[\\] ]{0,8}", false),
        ],
        pretty in any::<bool>(),
        cut in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        depth in prop_oneof![Just(0usize), 90usize..102],
    ) {
        let mut text = crate::rawjson::serialised(&value, pretty);
        agrees(&text, depth)?;
        let at = cut.index(text.len() + 1);
        agrees(&text[..at], depth)?;
        text.insert(at, byte);
        agrees(&text, depth)?;
    }

    #[test]
    fn plain_containers_are_decided(value in json_value("[a-z0-9 ./_-]{0,70}", true)) {
        let value = json!([value]);
        let text = crate::rawjson::serialised(&value, false);
        prop_assert_eq!(plain_end(&text, 0, 0, false), Some(text.len()));
    }
}
