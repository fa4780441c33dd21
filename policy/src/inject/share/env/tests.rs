use super::*;
use crate::inject::InjectError;
use crate::inject::pod::{LISTS_OF_OBJECTS, SHAPE, check_shape};

/// Containers whose env a naive reader gets wrong: duplicated and escaped members, names that
/// are not strings, `IS_INJECTED` values, whitespace, and wrong shapes (the last six).
const CONTAINERS: &[&str] = &[
    r#"{"name":"app","env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}"#,
    r#"{"env":[{"name":"A","name":"B","value":"x"}]}"#,
    r#"{"env":[{"na\u006de":"C","value":"true"}]}"#,
    r#"{"env":[{"name":"R\"x\u00e9\n"},{"name":"\u0041"}]}"#,
    r#"{"env":[{"name":5},{"name":null},{"value":"v"},{},{"name":["A"]}]}"#,
    r#"{"env":null}"#,
    r#"{"name":"no-env","image":"i"}"#,
    r#"{"env":[{"name":"X"}],"image":"i","env":[{"name":"Y"}]}"#,
    r#"{"e\u006ev":[{"name":"Z","value":"z"}]}"#,
    r#"{"env":[{"name":"IS_INJECTED","value":"true"}]}"#,
    r#"{"env":[{"name":"IS_INJECTED","value":"TRUE"},{"name":"IS_INJECTED","value":"true"}]}"#,
    r#"{"env":[{"name":"IS_INJECTED","value":"false","value":"true"}]}"#,
    r#"{"env":[{"name":"IS_INJECTED","value":true}]}"#,
    "{ \"env\" :\n [ { \"name\" : \"A\" ,\t\"value\" : \"1\" } , {\"name\":\"B\"} ] }",
    r#"{"env":[]}"#,
    r#"{"env":{}}"#,
    r#"{"env":5}"#,
    r#"{"env":"x"}"#,
    r#"{"env":[1]}"#,
    r#"{"env":[{"name":"A"},null]}"#,
    r#"{"env":[[]]}"#,
];

/// Vars next to the compact form the API server writes, which is read without a cursor.
const NEAR_COMPACT: &[&str] = &[
    r#"{"env":[{"name":"A","value":"1","valueFrom":{}},{"name":"B"},{"name":"C","value":""}]}"#,
    r#"{"env":[{"name":"A\u0042"},{"name":"é","value":"x"},{"name":"D","value":"x\"y"}]}"#,
    r#"{"env":[{"name":"E","value":"x"} ,{"name":"F" },{"name":"G","value":5},{"name":"H","valueFrom":"v"}]}"#,
    r#"{"env":[{"name":"I","value":"1"},{"name":"I","value":"2"},{"value":"3","name":"J"}]}"#,
];

/// An env given twice, one of them not a list of objects: the last one counts.
const REPEATED: &[&str] = &[
    r#"{"env":5,"env":[{"name":"A","value":"1"}]}"#,
    r#"{"env":[{"name":"A","value":"1"}],"env":5}"#,
    r#"{"env":[1],"env":null}"#,
];

fn pod_text(container: &str) -> String {
    format!(r#"{{"metadata":{{"name":"p"}},"spec":{{"containers":[{container}]}}}}"#)
}

fn shaped(container: &str) -> Value {
    crate::rawjson::shaped::parse(pod_text(container).as_bytes(), &SHAPE)
        .unwrap_or_else(|| panic!("read by shape: {container}"))
}

fn first_container(pod: &Value) -> &Map<String, Value> {
    pod["spec"]["containers"][0].as_object().unwrap()
}

/// What injection reads of each var: its name, its value as built, whether it says "true".
fn read(container: &Map<String, Value>) -> Vec<(String, Value, bool)> {
    env_of(container)
        .into_iter()
        .map(|(name, var)| (name.into_owned(), var.to_value(), var.value_is("true")))
        .collect()
}

#[test]
fn env_read_from_text_is_the_env_read_from_values() {
    for container in CONTAINERS.iter().chain(NEAR_COMPACT).chain(REPEATED) {
        let shaped = shaped(container);
        let full: Value = serde_json::from_str(&pod_text(container)).unwrap();
        let (text, built) = (first_container(&shaped), first_container(&full));
        let objects = built.get("env").map(|env| {
            env.is_null()
                || env
                    .as_array()
                    .is_some_and(|items| items.iter().all(Value::is_object))
        });
        assert!(
            text.contains_key(crate::rawjson::shaped::VERBATIM)
                && text.contains_key(ENV_TEXT) == (objects == Some(true))
                && text.contains_key("env") == (objects == Some(false)),
            "a list of objects stays text, anything else is built: {container}"
        );
        assert_eq!(check_shape(&shaped), check_shape(&full), "{container}");
        if check_shape(&full).is_ok() {
            assert_eq!(read(text), read(built), "{container}");
        }
    }
}

#[test]
fn names_values_and_shapes_are_read_as_serde_json_reads_them() {
    let names = |container: &str| -> Vec<String> {
        let pod = shaped(container);
        read(first_container(&pod))
            .into_iter()
            .map(|(name, _, _)| name)
            .collect()
    };
    assert_eq!(names(CONTAINERS[1]), ["B"], "the last duplicated name");
    assert_eq!(names(CONTAINERS[2]), ["C"], "an escaped key");
    assert_eq!(names(CONTAINERS[3]), ["R\"x\u{e9}\n", "A"], "escaped names");
    assert_eq!(names(CONTAINERS[4]), ["", "", "", "", ""], "not strings");
    assert_eq!(names(CONTAINERS[7]), ["Y"], "the last duplicated env");
    assert_eq!(names(CONTAINERS[8]), ["Z"], "an escaped env key");
    assert_eq!(names(CONTAINERS[13]), ["A", "B"], "whitespace");
    assert_eq!(
        names(NEAR_COMPACT[1]),
        ["AB", "\u{e9}", "D"],
        "escapes, not ASCII"
    );
    assert_eq!(names(NEAR_COMPACT[3]), ["I", "I", "J"]);
    let says_true = |container: &str| -> Vec<bool> {
        let pod = shaped(container);
        read(first_container(&pod))
            .into_iter()
            .map(|(_, _, yes)| yes)
            .collect()
    };
    assert_eq!(says_true(CONTAINERS[9]), [true]);
    assert_eq!(says_true(CONTAINERS[10]), [false, true]);
    assert_eq!(
        says_true(CONTAINERS[11]),
        [true],
        "the last duplicated value"
    );
    assert_eq!(
        says_true(CONTAINERS[12]),
        [false],
        "a boolean is not the string"
    );
    assert_eq!(names(REPEATED[0]), ["A"], "the last env, a list");
    assert_eq!(
        check_shape(&shaped(REPEATED[1])),
        Err(InjectError::Malformed(LISTS_OF_OBJECTS)),
        "the last env, not a list"
    );
    assert_eq!(
        check_shape(&shaped(REPEATED[2])),
        Ok(()),
        "the last env, null"
    );
    for wrong in &CONTAINERS[15..] {
        assert_eq!(
            check_shape(&shaped(wrong)),
            Err(InjectError::Malformed(LISTS_OF_OBJECTS)),
            "{wrong}"
        );
    }
}

#[test]
fn vars_as_the_api_server_writes_them_are_read_in_one_go() {
    let text =
        br#"[{"name":"SETTING_0","value":"value-0"},{"name":"B"},{"name":"C","valueFrom":{}}]"#;
    assert_eq!(compact_var(text, 1), Some(("SETTING_0", 39)));
    assert_eq!(compact_var(text, 40), Some(("B", 52)));
    assert_eq!(compact_var(text, 53), None);
    let names: Vec<_> = text_items(text)
        .unwrap()
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(names, ["SETTING_0", "B", "C"]);
}
