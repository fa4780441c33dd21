//! Typed reads of core/v1 JSON kept as `serde_json` values. A value of the wrong JSON type is
//! reported (Go's decoder would have refused the object) and read as absent.

use super::super::errors::FieldError;
use serde_json::{Map, Value};

pub type Object = Map<String, Value>;

/// A JSON value as an error shows it: compact, cut after 64 bytes.
pub fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 64 {
        let cut = (0..=64)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        format!("{}…", text.get(..cut).unwrap_or(""))
    } else {
        text
    }
}

fn type_error(path: String, value: &Value, expected: &str) -> FieldError {
    FieldError::invalid(path, shown(value), &format!("must be {expected}"))
}

/// A string member; `""` when absent or null.
pub fn str_at<'a>(obj: &'a Object, key: &str, path: &str, errs: &mut Vec<FieldError>) -> &'a str {
    match obj.get(key) {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s,
        Some(other) => {
            errs.push(type_error(format!("{path}.{key}"), other, "a string"));
            ""
        }
    }
}

/// An optional string member (a Go `*string`); `None` when absent or null.
pub fn opt_str_at<'a>(
    obj: &'a Object,
    key: &str,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> Option<&'a str> {
    match obj.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            errs.push(type_error(format!("{path}.{key}"), other, "a string"));
            None
        }
    }
}

/// A boolean member; `None` when absent or null.
pub fn bool_at(obj: &Object, key: &str, path: &str, errs: &mut Vec<FieldError>) -> Option<bool> {
    match obj.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            errs.push(type_error(format!("{path}.{key}"), other, "a boolean"));
            None
        }
    }
}

/// Whether a member is present and not null.
pub fn has(obj: &Object, key: &str) -> bool {
    obj.get(key).is_some_and(|v| !v.is_null())
}

/// An integer member; `None` when absent or null.
pub fn int_at(obj: &Object, key: &str, path: &str, errs: &mut Vec<FieldError>) -> Option<i64> {
    match obj.get(key) {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_i64() {
            Some(i) => Some(i),
            None => {
                errs.push(type_error(format!("{path}.{key}"), v, "an integer"));
                None
            }
        },
    }
}

/// An object member; `None` when absent or null.
pub fn obj_at<'a>(
    obj: &'a Object,
    key: &str,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> Option<&'a Object> {
    match obj.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(other) => {
            errs.push(type_error(format!("{path}.{key}"), other, "an object"));
            None
        }
    }
}

/// An array member; empty when absent or null.
pub fn list_at<'a>(
    obj: &'a Object,
    key: &str,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> &'a [Value] {
    match obj.get(key) {
        None | Some(Value::Null) => &[],
        Some(Value::Array(items)) => items,
        Some(other) => {
            errs.push(type_error(format!("{path}.{key}"), other, "a list"));
            &[]
        }
    }
}

/// The objects of an array member with their paths (`path.key[i]`); non-objects are reported.
pub fn objects_at<'a>(
    obj: &'a Object,
    key: &str,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> Vec<(String, &'a Object)> {
    let mut out = Vec::new();
    for (i, item) in list_at(obj, key, path, errs).iter().enumerate() {
        let item_path = format!("{path}.{key}[{i}]");
        match item {
            Value::Object(m) => out.push((item_path, m)),
            other => errs.push(type_error(item_path, other, "an object")),
        }
    }
    out
}
