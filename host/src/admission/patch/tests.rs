use super::{PatchError, diff};
use serde_json::{Value, json};

/// What policy-evaluator sends: json-patch's diff of the parsed texts, serialized.
fn reference(left: &str, right: &str) -> Option<Vec<u8>> {
    let (left, right): (Value, Value) = (parse(left), parse(right));
    let patch = json_patch::diff(&left, &right);
    (!patch.0.is_empty()).then(|| serde_json::to_vec(&patch).expect("patch JSON"))
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("test JSON")
}

fn assert_same(left: &str, right: &str) {
    let ours = diff(left, right).expect("a diff");
    let theirs = reference(left, right);
    assert_eq!(
        ours.as_deref().map(String::from_utf8_lossy),
        theirs.as_deref().map(String::from_utf8_lossy),
        "left {left}\nright {right}"
    );
    if let Some(bytes) = ours {
        let patch: json_patch::Patch = serde_json::from_slice(&bytes).expect("a JSONPatch");
        let mut patched = parse(left);
        json_patch::patch(&mut patched, &patch).expect("the patch applies");
        assert_eq!(patched, parse(right));
    }
}

fn assert_same_values(left: &Value, right: &Value) {
    assert_same(&left.to_string(), &right.to_string());
}

#[test]
fn equal_objects_give_no_patch() {
    let pod = json!({"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"containers": [{"name": "app"}]}});
    assert_eq!(
        diff(&pod.to_string(), &pod.to_string()).expect("a diff"),
        None
    );
    // Equal values written differently: key order, whitespace, escapes, number forms, duplicates.
    let left = r#"{"b": [1, 0.5, "x"], "a": {"k": null, "k": true}}"#;
    let right = r#"{"a":{"k":true},"b":[1,5e-1,"\u0078"]}"#;
    assert_eq!(diff(left, right).expect("a diff"), None);
}

#[test]
fn injection_shaped_changes() {
    let left = json!({
        "metadata": {"name": "web", "annotations": {"a/b": "1"}},
        "spec": {"containers": [{"name": "app", "image": "web:1"}], "volumes": [{"name": "v"}]}
    });
    let right = json!({
        "metadata": {"name": "web", "annotations": {"a/b": "1", "kruise.io/sidecarset-hash": "{}", "x~y": "2"}},
        "spec": {"containers": [{"name": "app", "image": "web:1"}, {"name": "log", "image": "log:1"}],
                 "volumes": [{"name": "v"}, {"name": "buffer", "emptyDir": {}}]}
    });
    assert_same_values(&left, &right);
    let bytes = diff(&left.to_string(), &right.to_string())
        .expect("a diff")
        .expect("a patch");
    let text = String::from_utf8(bytes).expect("UTF-8");
    assert!(
        text.contains(r#""path":"/metadata/annotations/x~0y""#),
        "{text}"
    );
    assert!(text.contains(r#""path":"/spec/containers/1""#), "{text}");
}

#[test]
fn removals_shift_array_indices_and_scalars_are_replaced() {
    assert_same_values(&json!([1, 2, 3, 4]), &json!([1]));
    assert_same_values(
        &json!({"a": [1, {"b": 2}], "c": "x"}),
        &json!({"a": [3], "d": null}),
    );
    assert_same_values(&json!({"a": 1}), &json!([1]));
    assert_same_values(&json!(1.5), &json!("1.5"));
    assert_same_values(&json!({"": {"/": 1}}), &json!({"": {"/": 2}}));
    // Added and replaced values are written as serde_json writes them, not as they came.
    assert_same(
        r#"{"a": 1}"#,
        r#"{"b": {"z": 1e2, "y": "\u00fc"}, "a": 1.0}"#,
    );
}

#[test]
fn nesting_past_serde_json_limit_is_an_error() {
    let deep = |leaf: &str| format!("{}{leaf}{}", "[".repeat(200), "]".repeat(200));
    assert!(matches!(
        diff(&deep("1"), &deep("2")),
        Err(PatchError::TooDeep)
    ));
    // Equal text needs no parse, however deep.
    assert_eq!(diff(&deep("1"), &deep("1")).expect("a diff"), None);
    assert!(matches!(diff("{", "{}"), Err(PatchError::Malformed(_))));
}

/// A small deterministic generator (xorshift): random trees and random edits of them.
struct Random(u64);

impl Random {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }

    fn key(&mut self) -> String {
        ["a", "b", "c/d", "e~f", "", "name", "ü"][self.next(7) as usize].to_string()
    }

    fn value(&mut self, depth: u32) -> Value {
        match self.next(if depth == 0 { 4 } else { 7 }) {
            0 => Value::Null,
            1 => json!(self.next(3) == 0),
            2 => json!(self.next(5)),
            3 => json!(["s0", "s1", "s2", "q\"\\\u{1b}\u{8}\n/"][self.next(4) as usize]),
            4 => json!(self.next(3) as f64 / 2.0),
            5 => Value::Array((0..self.next(4)).map(|_| self.value(depth - 1)).collect()),
            _ => Value::Object(
                (0..self.next(5))
                    .map(|_| (self.key(), self.value(depth - 1)))
                    .collect(),
            ),
        }
    }

    fn edit(&mut self, value: &Value, depth: u32) -> Value {
        if self.next(6) == 0 {
            return self.value(depth);
        }
        match value {
            Value::Array(items) => {
                let mut items: Vec<Value> = items.iter().map(|v| self.edit(v, depth)).collect();
                match self.next(4) {
                    0 => items.push(self.value(depth)),
                    1 if !items.is_empty() => {
                        items.truncate(self.next(items.len() as u64) as usize);
                    }
                    _ => {}
                }
                Value::Array(items)
            }
            Value::Object(map) => {
                let mut edited = serde_json::Map::new();
                for (key, value) in map {
                    if self.next(8) != 0 {
                        let value = self.edit(value, depth);
                        edited.insert(key.clone(), value);
                    }
                }
                let mut map = edited;
                if self.next(3) == 0 {
                    map.insert(self.key(), self.value(depth));
                }
                Value::Object(map)
            }
            other => other.clone(),
        }
    }
}

/// `value` as JSON text written one of the many ways that parse back to it: whitespace, key
/// order, escapes, number forms and overridden duplicate keys chosen at random.
fn write_randomly(random: &mut Random, value: &Value, out: &mut String) {
    let space = |random: &mut Random, out: &mut String| {
        out.push_str([" ", "", "", "\n\t", ""][random.next(5) as usize]);
    };
    space(random, out);
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            let forms = [
                format!("{f:?}"),
                format!("{}e-1", f * 10.0),
                format!("{f:?}0"),
            ];
            out.push_str(&forms[random.next(3) as usize]);
        }
        Value::String(text) => write_string(random, text, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_randomly(random, item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            for index in (1..members.len()).rev() {
                members.swap(index, random.next(index as u64 + 1) as usize);
            }
            out.push('{');
            for (index, (key, member)) in members.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                // A duplicate before the member: the parse keeps the last.
                if random.next(8) == 0 {
                    write_string(random, key, out);
                    out.push(':');
                    let decoy = random.value(1);
                    write_randomly(random, &decoy, out);
                    out.push(',');
                }
                write_string(random, key, out);
                space(random, out);
                out.push(':');
                write_randomly(random, member, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
    space(random, out);
}

fn write_string(random: &mut Random, text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        let short = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            _ => "",
        };
        // Control characters always escaped, in every form JSON allows.
        let control = (c as u32) < 0x20;
        match random.next(4) {
            0 if !short.is_empty() => out.push_str(short),
            1 if control => {
                let _ = std::fmt::Write::write_fmt(out, format_args!("\\u{:04X}", c as u32));
            }
            _ if c == '/' && random.next(2) == 0 => out.push_str("\\/"),
            2 => {
                let _ = std::fmt::Write::write_fmt(out, format_args!("\\u{:04x}", c as u32));
            }
            _ if !short.is_empty() => out.push_str(short),
            _ if control => {
                let _ = std::fmt::Write::write_fmt(out, format_args!("\\u{:04x}", c as u32));
            }
            _ => out.push(c),
        }
    }
    out.push('"');
}

#[test]
fn matches_json_patch_on_random_trees() {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut patched = 0;
    for round in 0..3_000 {
        let left = random.value(6);
        let right = random.edit(&left, 3);
        // Half the pairs as serde_json writes them (equal parts then have equal text), half
        // written at random.
        let (left_text, right_text) = if round % 2 == 0 {
            (left.to_string(), right.to_string())
        } else {
            let (mut l, mut r) = (String::new(), String::new());
            write_randomly(&mut random, &left, &mut l);
            write_randomly(&mut random, &right, &mut r);
            (l, r)
        };
        assert_eq!(parse(&left_text), left, "{left_text}");
        assert_eq!(parse(&right_text), right, "{right_text}");
        assert_same(&left_text, &right_text);
        patched += usize::from(reference(&left_text, &right_text).is_some());
    }
    // Most pairs differ, some do not: both paths are exercised.
    assert!(
        (500..3_000).contains(&patched),
        "{patched} of 3000 pairs differ"
    );
}

#[test]
fn text_taken_as_written_is_what_serde_json_writes() {
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let mut taken = 0;
    for round in 0..3_000 {
        let value = random.value(5);
        // Half as serde_json writes it, half compact but in any order, escapes, number forms and
        // duplicates (no generated string holds whitespace).
        let text = if round % 2 == 0 {
            value.to_string()
        } else {
            let mut text = String::new();
            write_randomly(&mut random, &value, &mut text);
            text.replace([' ', '\n', '\t'], "")
        };
        assert_eq!(parse(&text), value, "{text}");
        if super::written::written_by_serde_json(&text) {
            taken += 1;
            assert_eq!(parse(&text).to_string(), text);
        }
    }
    // serde_json's own text is taken unless it holds a float (written with a fraction).
    assert!(taken > 1_000, "{taken} of 3000 taken as written");
}
