//! The RFC 6902 JSONPatch from the request's object to the mutated one, written straight to JSON.
//!
//! Byte-identical to `serde_json::to_vec(&json_patch::diff(left, right))` (policy-evaluator's
//! diff, the tests compare them): the same operations in the same order, but no `Patch` of cloned
//! values is built first, and subtrees near the root that did not change are skipped whole.

use serde_json::{Map, Value};
use std::fmt::Write as _;

/// Levels from the root where an unchanged subtree is skipped after one equality check (the pod's
/// metadata, spec, containers): deeper down, a check per level would repeat work on changed paths.
const EQUALITY_CHECK_DEPTH: usize = 4;

/// The patch as JSON bytes, or `None` when the objects are equal.
pub fn diff(left: &Value, right: &Value) -> Option<Vec<u8>> {
    let mut writer = PatchWriter {
        out: Vec::new(),
        pointer: String::new(),
    };
    writer.value(left, right, 0);
    if writer.out.is_empty() {
        return None;
    }
    writer.out.push(b']');
    Some(writer.out)
}

struct PatchWriter {
    out: Vec<u8>,
    /// The RFC 6901 pointer of the current location, already escaped.
    pointer: String,
}

impl PatchWriter {
    fn value(&mut self, left: &Value, right: &Value, depth: usize) {
        match (left, right) {
            (Value::Object(left), Value::Object(right)) => self.object(left, right, depth),
            (Value::Array(left), Value::Array(right)) => self.array(left, right, depth),
            _ if left == right => {}
            _ => self.operation("replace", Some(right)),
        }
    }

    fn child(&mut self, left: &Value, right: &Value, depth: usize) {
        if depth < EQUALITY_CHECK_DEPTH && left == right {
            return;
        }
        self.value(left, right, depth + 1);
    }

    fn object(&mut self, left: &Map<String, Value>, right: &Map<String, Value>, depth: usize) {
        for (key, right_value) in right {
            let mark = self.push_key(key);
            match left.get(key) {
                Some(left_value) => self.child(left_value, right_value, depth),
                None => self.operation("add", Some(right_value)),
            }
            self.pointer.truncate(mark);
        }
        for key in left.keys().filter(|key| !right.contains_key(*key)) {
            let mark = self.push_key(key);
            self.operation("remove", None);
            self.pointer.truncate(mark);
        }
    }

    fn array(&mut self, left: &[Value], right: &[Value], depth: usize) {
        let mut shift = 0usize;
        for index in 0..left.len().max(right.len()) {
            let mark = self.pointer.len();
            // Writing to a String cannot fail.
            let _ = write!(self.pointer, "/{}", index - shift);
            match (left.get(index), right.get(index)) {
                (Some(left), Some(right)) => self.child(left, right, depth),
                (Some(_), None) => {
                    shift += 1;
                    self.operation("remove", None);
                }
                (None, Some(right)) => self.operation("add", Some(right)),
                (None, None) => {}
            }
            self.pointer.truncate(mark);
        }
    }

    /// Appends `/key` (with `~` and `/` escaped) and returns the length to truncate back to.
    fn push_key(&mut self, key: &str) -> usize {
        let mark = self.pointer.len();
        self.pointer.push('/');
        for c in key.chars() {
            match c {
                '~' => self.pointer.push_str("~0"),
                '/' => self.pointer.push_str("~1"),
                c => self.pointer.push(c),
            }
        }
        mark
    }

    /// `{"op":…,"path":…[,"value":…]}` after `[` or `,`.
    fn operation(&mut self, op: &str, value: Option<&Value>) {
        self.out.push(if self.out.is_empty() { b'[' } else { b',' });
        self.out.extend_from_slice(b"{\"op\":\"");
        self.out.extend_from_slice(op.as_bytes());
        self.out.extend_from_slice(b"\",\"path\":");
        // Serializing a str or a Value into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.out, self.pointer.as_str());
        if let Some(value) = value {
            self.out.extend_from_slice(b",\"value\":");
            let _ = serde_json::to_writer(&mut self.out, value);
        }
        self.out.push(b'}');
    }
}

#[cfg(test)]
mod tests;
