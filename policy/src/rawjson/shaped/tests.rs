use super::{RAW_MEMBERS, Rest, Shape, VERBATIM, parse, write};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A shape with every kind of member: built, kept as text, verbatim, items.
const ITEM: Shape = Shape::Object {
    keep: &[("a", &Shape::Full), ("b", &Shape::Text)],
    rest: Rest::Verbatim,
};
const INNER: Shape = Shape::Object {
    keep: &[("list", &Shape::Items(&ITEM)), ("a", &Shape::Full)],
    rest: Rest::Text,
};
const ROOT: Shape = Shape::Object {
    keep: &[("inner", &INNER), ("b", &ITEM)],
    rest: Rest::Full,
};

fn written(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    write(&mut out, value).expect("serialisable");
    out
}

/// Parsed by shape and written back, the document reads as serde_json reads the original.
fn round_trips(text: &[u8], shape: &Shape) -> bool {
    match parse(text, shape) {
        Some(value) => {
            let exact = serde_json::from_slice::<Value>(text);
            let back = serde_json::from_slice::<Value>(&written(&value));
            matches!((exact, back), (Ok(exact), Ok(back)) if same(&exact, &back))
        }
        None => true,
    }
}

/// Equal, floats within serde_json's parsing error (a float written and read again may move by
/// an ulp: its default parser is not exact), `-0.0` told from `0.0`.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, a), (kb, b))| ka == kb && same(a, b))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
        }
        (Value::Number(x), Value::Number(y)) if x.is_f64() && y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            x.is_sign_negative() == y.is_sign_negative() && (x - y).abs() <= x.abs() * 1e-15
        }
        _ => a == b,
    }
}

#[test]
fn listed_members_are_built_and_the_rest_comes_back_as_it_was() {
    let text =
        br#"{"inner": {"a": {"x": 1}, "list": [{"a": [1], "big": {"deep": [1.5, "s\n"]}}, 7],
        "other": [true, null], "more": "m"}, "b": {"a": 2, "c": -0.0}, "free": {"k": "v"}}"#;
    let value = parse(text, &ROOT).expect("plain JSON");
    assert_eq!(value["inner"]["a"], json!({"x": 1}));
    assert_eq!(value["inner"]["list"][0]["a"], json!([1]));
    assert_eq!(value["inner"]["list"][0].get("big"), None, "not built");
    assert_eq!(
        value["inner"]["list"][1],
        json!(7),
        "not an object: built in full"
    );
    assert_eq!(value["inner"].get("other"), None, "not built");
    assert_eq!(
        value["inner"][RAW_MEMBERS],
        json!(r#""other": [true, null],"more": "m""#)
    );
    assert_eq!(
        value["free"],
        json!({"k": "v"}),
        "Rest::Full builds the rest"
    );
    assert!(value["b"][VERBATIM].is_string());
    assert!(round_trips(text, &ROOT));
}

#[test]
fn edits_of_built_members_are_written_around_the_kept_text() {
    let text = br#"{"inner":{"z":1,"a":"old","list":[{"a":1,"q":2}]},"b":{"a":1}}"#;
    let mut value = parse(text, &ROOT).expect("plain JSON");
    value["inner"]["a"] = json!("new");
    value["inner"]["list"]
        .as_array_mut()
        .expect("built")
        .push(json!({"a": 2}));
    let back: Value = serde_json::from_slice(&written(&value)).expect("valid JSON");
    assert_eq!(
        back,
        json!({"inner": {"z": 1, "a": "new", "list": [{"a": 1, "q": 2}, {"a": 2}]}, "b": {"a": 1}})
    );
}

#[test]
fn members_kept_as_text_are_checked_and_kept_under_their_prefixed_name() {
    let text = br#"{"b":{"a":1, "b" : [{"y":1}, {"x":"\u00e9"}] ,"c":2,"b":null}}"#;
    let value = parse(text, &ROOT).expect("read");
    assert_eq!(
        value["b"]["\u{2}b"],
        json!("null"),
        "the last of duplicated members"
    );
    let text = br#"{"b":{"b" : [{}, {"x":"\u00e9"}] }}"#;
    let value = parse(text, &ROOT).expect("read");
    assert_eq!(value["b"]["\u{2}b"], json!(r#"[{}, {"x":"\u00e9"}]"#));
    assert!(round_trips(text, &ROOT));
    assert_eq!(
        parse(br#"{"b":{"b":[{},]}}"#, &ROOT),
        None,
        "checked as it is skipped"
    );
}

#[test]
fn a_text_member_that_is_not_a_list_of_objects_is_built() {
    for (text, built) in [
        (&br#"{"b":{"b":[{"x":1},2]}}"#[..], json!([{"x": 1}, 2])),
        (br#"{"b":{"b":{"x":1}}}"#, json!({"x": 1})),
        (br#"{"b":{"b":"s"}}"#, json!("s")),
        (br#"{"b":{"b":[[]]}}"#, json!([[]])),
        (br#"{"b":{"b":[{}],"b":7}}"#, json!(7)),
    ] {
        let value = parse(text, &ROOT).expect("read");
        assert_eq!(value["b"]["b"], built, "{}", String::from_utf8_lossy(text));
        assert_eq!(value["b"].get("\u{2}b"), None, "only the last counts");
        assert!(round_trips(text, &ROOT));
    }
    let value = parse(br#"{"b":{"b":7,"b":[]}}"#, &ROOT).expect("read");
    assert_eq!(
        (value["b"].get("b"), &value["b"]["\u{2}b"]),
        (None, &json!("[]")),
        "only the last counts"
    );
    assert_eq!(
        parse(br#"{"b":{"b":[{},1,]}}"#, &ROOT),
        None,
        "still checked"
    );
}

#[test]
fn marker_keys_and_malformed_text_are_serde_json_s_to_judge() {
    for text in [
        &br#"{"\u0000":"\"x\":1"}"#[..],
        br#"{"inner":{"\u0001":"{}"}}"#,
        br#"{"inner":{"q":[1,]}}"#,
        br#"{"inner":{"q":"\ud800"}}"#,
        br#"{"inner":{"q":01}}"#,
        br#"{"b":{"q":nul}}"#,
        b"{\"b\":{\"q\":\"\xff\"}}",
        br#"{"inner":{"list":[{"a":1},]}}"#,
        br#"{"inner":{"q":1,}}"#,
    ] {
        assert_eq!(
            parse(text, &ROOT),
            None,
            "{}",
            String::from_utf8_lossy(text)
        );
    }
    // Even inside a member kept as text: a reader may build part of that text later.
    let text = br#"{"inner":{"q":{"\u0000":1}}}"#;
    assert_eq!(parse(text, &ROOT), None);
    let text = br#"{"inner":{"q":{"\u0002x":1}}}"#;
    assert_eq!(parse(text, &ROOT), None);
    let text = br#"{"inner":{"q":{"\u0003":1}}}"#;
    assert!(parse(text, &ROOT).is_some() && round_trips(text, &ROOT));
    let deep = format!(
        r#"{{"inner":{{"q":{}{}}}}}"#,
        "[".repeat(120),
        "]".repeat(120)
    );
    assert_eq!(parse(deep.as_bytes(), &ROOT), None);
}

#[test]
fn values_without_markers_are_written_as_serde_json_writes_them() {
    let value = json!({"a": [1, -2, 1.5, "é\"\n", null, true, {"b": {}}], "": []});
    assert_eq!(
        written(&value),
        serde_json::to_vec(&value).expect("serialisable")
    );
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        // Exact in binary: serde_json's float parsing does not round-trip every f64.
        any::<i32>().prop_map(|n| Value::from(f64::from(n) / 8.0)),
        "[a-z\"\\\\\u{0}-\u{1f}é😀]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("inner".to_string()),
                        Just("list".to_string()),
                        Just("a".to_string()),
                        Just("b".to_string()),
                        "[a-c\"\\\\\u{3}]{0,3}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_document_round_trips(value in json_value(), pretty in any::<bool>()) {
        let text = crate::rawjson::serialised(&value, pretty);
        prop_assert!(parse(&text, &ROOT).is_some(), "valid JSON without markers is read");
        prop_assert!(round_trips(&text, &ROOT));
        prop_assert_eq!(written(&value), serde_json::to_vec(&value).expect("serialisable"));
    }

    #[test]
    fn damaged_documents_are_never_read_differently(
        value in json_value(),
        cut in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut text = serde_json::to_vec(&value).expect("serialisable");
        let at = cut.index(text.len() + 1);
        prop_assert!(round_trips(&text[..at], &ROOT));
        text.insert(at, byte);
        prop_assert!(round_trips(&text, &ROOT));
    }
}

proptest! {
    #[test]
    fn strings_are_written_as_serde_json_writes_them(
        text in "[a-z\"\\\\\u{0}-\u{1f}\u{7f}-\u{a0}é😀 ]{0,40}",
    ) {
        let mut out = Vec::new();
        super::write_str(&mut out, &text);
        prop_assert_eq!(out, serde_json::to_vec(&text).expect("serialisable"));
    }
}

/// Where `skip_value` and `value` end at `depth` (`None` where they refuse), from the start.
fn skip_and_value_ends(text: &[u8], depth: usize) -> (Option<usize>, Option<usize>) {
    use super::super::{Cursor, value::Parser};
    let mut skipping = Parser(Cursor::new(text));
    let skipped = skipping.skip_value(depth).map(|()| skipping.0.at);
    let mut building = Parser(Cursor::new(text));
    let built = building.value(depth).map(|_| building.0.at);
    (skipped, built)
}

#[test]
fn skipping_refuses_exactly_what_reading_refuses() {
    for text in [
        &br#"{"a":[1,{"b":null},"c"],"d":{}}"#[..],
        br#"[[],{},[[]],{"a":[]}]"#,
        br#"{"a":1,}"#,
        br#"[1,]"#,
        br#"{"a" 1}"#,
        br#"{"a":1]"#,
        br#"[1}"#,
        br#"{1:2}"#,
        br#"{"\u0000":1}"#,
        br#"{"\u0002x":1}"#,
        br#"{"\u0003":1}"#,
        br#"["\ud800"]"#,
        br#"[01]"#,
        br#"[-0, 1e400, 1.5e3, 18446744073709551616]"#,
        br#"[nul]"#,
        b"[\"\xff\"]",
        b"[\"\x01\"]",
        b" { \"a\" : [ true , false ] } ",
        br#"{"a":1}}"#,
        b"",
    ] {
        for depth in [0, 1, 97, 98, 99, 100, 101] {
            let (skipped, built) = skip_and_value_ends(text, depth);
            assert_eq!(
                skipped,
                built,
                "{} at {depth}",
                String::from_utf8_lossy(text)
            );
        }
    }
    let deep = format!("{}1{}", "[{\"a\":".repeat(50), "}]".repeat(50));
    for depth in 0..3 {
        let (skipped, built) = skip_and_value_ends(deep.as_bytes(), depth);
        assert_eq!(skipped, built, "100 levels at {depth}");
        assert_eq!(skipped.is_some(), depth == 0, "100 levels at {depth}");
    }
}

proptest! {
    #[test]
    fn skipping_ends_where_reading_ends(
        value in json_value(),
        pretty in any::<bool>(),
        cut in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        depth in prop_oneof![Just(0usize), 90usize..102],
    ) {
        let mut text = crate::rawjson::serialised(&value, pretty);
        let (skipped, built) = skip_and_value_ends(&text, depth);
        prop_assert_eq!(skipped, built);
        let at = cut.index(text.len() + 1);
        let (skipped, built) = skip_and_value_ends(&text[..at], depth);
        prop_assert_eq!(skipped, built);
        text.insert(at, byte);
        let (skipped, built) = skip_and_value_ends(&text, depth);
        prop_assert_eq!(skipped, built);
    }
}
