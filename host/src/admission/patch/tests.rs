use super::diff;
use serde_json::{Value, json};

/// What policy-evaluator sends: json-patch's diff, serialized.
fn reference(left: &Value, right: &Value) -> Option<Vec<u8>> {
    let patch = json_patch::diff(left, right);
    (!patch.0.is_empty()).then(|| serde_json::to_vec(&patch).expect("patch JSON"))
}

fn assert_same(left: &Value, right: &Value) {
    let ours = diff(left, right);
    let theirs = reference(left, right);
    assert_eq!(
        ours.as_deref().map(String::from_utf8_lossy),
        theirs.as_deref().map(String::from_utf8_lossy),
        "left {left}\nright {right}"
    );
    if let Some(bytes) = ours {
        let patch: json_patch::Patch = serde_json::from_slice(&bytes).expect("a JSONPatch");
        let mut patched = left.clone();
        json_patch::patch(&mut patched, &patch).expect("the patch applies");
        assert_eq!(&patched, right);
    }
}

#[test]
fn equal_objects_give_no_patch() {
    let pod = json!({"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"containers": [{"name": "app"}]}});
    assert_eq!(diff(&pod, &pod.clone()), None);
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
    assert_same(&left, &right);
    let bytes = diff(&left, &right).expect("a patch");
    let text = String::from_utf8(bytes).expect("UTF-8");
    assert!(
        text.contains(r#""path":"/metadata/annotations/x~0y""#),
        "{text}"
    );
    assert!(text.contains(r#""path":"/spec/containers/1""#), "{text}");
}

#[test]
fn removals_shift_array_indices_and_scalars_are_replaced() {
    assert_same(&json!([1, 2, 3, 4]), &json!([1]));
    assert_same(
        &json!({"a": [1, {"b": 2}], "c": "x"}),
        &json!({"a": [3], "d": null}),
    );
    assert_same(&json!({"a": 1}), &json!([1]));
    assert_same(&json!(1.5), &json!("1.5"));
    assert_same(&json!({"": {"/": 1}}), &json!({"": {"/": 2}}));
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
            3 => json!(format!("s{}", self.next(4))),
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

#[test]
fn matches_json_patch_on_random_trees() {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut patched = 0;
    for _ in 0..3_000 {
        let left = random.value(6);
        let right = random.edit(&left, 3);
        assert_same(&left, &right);
        patched += usize::from(diff(&left, &right).is_some());
    }
    // Most pairs differ, some do not: both paths are exercised.
    assert!(
        (500..3_000).contains(&patched),
        "{patched} of 3000 pairs differ"
    );
}
