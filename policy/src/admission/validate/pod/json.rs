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

/// The member `key` read by `read`; `None` when absent or null. Any other type is reported as
/// not `expected`.
fn member_at<'a, T>(
    obj: &'a Object,
    key: &str,
    path: &str,
    errs: &mut Vec<FieldError>,
    expected: &str,
    read: impl Fn(&'a Value) -> Option<T>,
) -> Option<T> {
    let value = obj.get(key).filter(|v| !v.is_null())?;
    let read = read(value);
    if read.is_none() {
        errs.push(type_error(format!("{path}.{key}"), value, expected));
    }
    read
}

/// A string member; `""` when absent or null.
pub fn str_at<'a>(obj: &'a Object, key: &str, path: &str, errs: &mut Vec<FieldError>) -> &'a str {
    opt_str_at(obj, key, path, errs).unwrap_or("")
}

/// An optional string member (a Go `*string`); `None` when absent or null.
pub fn opt_str_at<'a>(
    obj: &'a Object,
    key: &str,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> Option<&'a str> {
    member_at(obj, key, path, errs, "a string", Value::as_str)
}

/// A boolean member; `None` when absent or null.
pub fn bool_at(obj: &Object, key: &str, path: &str, errs: &mut Vec<FieldError>) -> Option<bool> {
    member_at(obj, key, path, errs, "a boolean", Value::as_bool)
}

/// Whether a member is present and not null.
pub fn has(obj: &Object, key: &str) -> bool {
    obj.get(key).is_some_and(|v| !v.is_null())
}

/// An integer member; `None` when absent or null.
pub fn int_at(obj: &Object, key: &str, path: &str, errs: &mut Vec<FieldError>) -> Option<i64> {
    member_at(obj, key, path, errs, "an integer", Value::as_i64)
}

/// An object member; `None` when absent or null.
pub fn obj_at<'a>(
    obj: &'a Object,
    key: &str,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> Option<&'a Object> {
    member_at(obj, key, path, errs, "an object", Value::as_object)
}

/// An array member; empty when absent or null.
pub fn list_at<'a>(
    obj: &'a Object,
    key: &str,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> &'a [Value] {
    member_at(obj, key, path, errs, "a list", |v| {
        v.as_array().map(Vec::as_slice)
    })
    .unwrap_or(&[])
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
