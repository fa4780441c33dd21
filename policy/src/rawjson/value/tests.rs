use super::parse;
use proptest::prelude::*;
use serde_json::{Value, json};

/// The fast parse, where it answers, is serde_json's answer, kind of number included.
fn agrees(text: &[u8]) -> bool {
    match parse(text) {
        Some(fast) => serde_json::from_slice::<Value>(text)
            .is_ok_and(|exact| exact == fast && same_text(&exact, &fast)),
        None => true,
    }
}

/// Equal serialisations: `Value`'s `==` takes -0.0 for 0.0, the text does not.
fn same_text(a: &Value, b: &Value) -> bool {
    serde_json::to_vec(a).ok() == serde_json::to_vec(b).ok()
}

#[test]
fn documents_parse_as_serde_json_parses_them() {
    let pod =
        br#" {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","labels":{"app":"web"},
        "annotations":{"a":"x\"y\u00e9\ud83d\ude00"}},"spec":{"containers":[{"name":"app","ports":[
        {"containerPort":8080,"hostPort":-1}],"resources":{"limits":{"cpu":"1"}},"x":[1.5,-0,1e3,
        -12,18446744073709551615,18446744073709551616,-9223372036854775808,0,true,false,null]}]},
        "dup":1,"dup":{"b":[]}} "#;
    let fast = parse(pod).expect("a plain pod is read directly");
    let exact: Value = serde_json::from_slice(pod).expect("valid JSON");
    assert_eq!(fast, exact);
    assert!(same_text(&fast, &exact));
    assert_eq!(fast["dup"], json!({"b": []}));
}

#[test]
fn what_serde_json_rejects_is_left_to_it() {
    for text in [
        &b""[..],
        b"{",
        b"[1,]",
        b"{\"a\":1,}",
        b"01",
        b"-",
        b"1.",
        b"1 2",
        b"\"\x01\"",
        b"\"\xff\"",
        b"\"\\ud800\"",
        b"nul",
        b"{\"a\" 1}",
        b"[1-2]",
        b"\xef\xbb\xbf{}",
    ] {
        assert!(agrees(text), "{text:?}");
        assert!(
            parse(text).is_none() || serde_json::from_slice::<Value>(text).is_ok(),
            "{text:?}"
        );
    }
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    assert_eq!(
        parse(deep.as_bytes()),
        None,
        "deep nesting is serde_json's to judge"
    );
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-z\"\\\\/\u{0}-\u{1f}é😀]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-c\"\\\\]{0,3}", inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_document_parses_as_serde_json_parses_it(value in json_value(), pretty in any::<bool>()) {
        let text = crate::rawjson::serialised(&value, pretty);
        prop_assert!(parse(&text).is_some(), "valid JSON of plain shape is read directly");
        prop_assert!(agrees(&text));
    }

    #[test]
    fn damaged_documents_never_disagree(
        value in json_value(),
        cut in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut text = serde_json::to_vec(&value).expect("serialisable");
        let at = cut.index(text.len() + 1);
        prop_assert!(agrees(&text[..at]));
        text.insert(at, byte);
        prop_assert!(agrees(&text));
    }

    #[test]
    fn number_tokens_read_as_serde_json_reads_them(
        token in "-?[0-9]{1,21}(\\.[0-9]{1,3})?([eE][-+]?[0-9]{1,3})?",
    ) {
        prop_assert!(agrees(token.as_bytes()));
        let in_array = format!("[{token}]");
        prop_assert!(agrees(in_array.as_bytes()));
    }
}
