//! The types whose JSON form is not their protobuf structure: times, durations, int-or-string,
//! quantities, embedded raw JSON and the schema unions, converted as their Go `MarshalJSON` does.

use base64::Engine;
use serde_json::{Value, json};

use super::wire::{Reader, Value as Wire, WireError};

/// A message with a JSON form of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Time,
    MicroTime,
    Duration,
    IntOrString,
    Quantity,
    /// `raw` bytes holding JSON (RawExtension, FieldsV1, apiextensions JSON).
    RawJson,
    /// JSONSchemaPropsOrBool: the schema if set, else the bool.
    SchemaOrBool,
    /// JSONSchemaPropsOrArray / OrStringArray: the schema if set, else the list (field 2).
    SchemaOrList,
}

/// The special JSON form of a message path, if it has one.
pub fn special(path: &str) -> Option<Special> {
    let name = path.rsplit("::").next().unwrap_or(path);
    Some(match (path, name) {
        (p, "Time") if p.starts_with("apimachinery::") => Special::Time,
        (p, "MicroTime") if p.starts_with("apimachinery::") => Special::MicroTime,
        (p, "Duration") if p.starts_with("apimachinery::") => Special::Duration,
        (_, "IntOrString") => Special::IntOrString,
        (p, "Quantity") if p.starts_with("apimachinery::") => Special::Quantity,
        (p, "RawExtension" | "FieldsV1") if p.starts_with("apimachinery::") => Special::RawJson,
        (p, "Json") if p.starts_with("apiextensions_apiserver::") => Special::RawJson,
        (_, "JsonSchemaPropsOrBool") => Special::SchemaOrBool,
        (_, "JsonSchemaPropsOrArray" | "JsonSchemaPropsOrStringArray") => Special::SchemaOrList,
        _ => return None,
    })
}

/// The scalar fields of a small message by number (last occurrence wins).
fn scalars<'a>(buf: &'a [u8], message: &str) -> Result<Vec<(u32, Wire<'a>)>, WireError> {
    let mut r = Reader::new(buf);
    let mut out = Vec::new();
    while !r.is_empty() {
        let (n, _, v) = r.field(message)?;
        out.push((n, v));
    }
    Ok(out)
}

fn varint_of(fields: &[(u32, Wire<'_>)], n: u32) -> Option<u64> {
    fields.iter().rev().find_map(|(k, v)| match v {
        Wire::Varint(x) if *k == n => Some(*x),
        _ => None,
    })
}

fn bytes_of<'a>(fields: &[(u32, Wire<'a>)], n: u32) -> Option<&'a [u8]> {
    fields.iter().rev().find_map(|(k, v)| match v {
        Wire::Bytes(b) if *k == n => Some(*b),
        _ => None,
    })
}

fn timestamp(seconds: i64, nanos: i64, micro: bool) -> Result<Value, WireError> {
    let invalid = |e: jiff::Error| WireError::Invalid(format!("invalid time: {e}"));
    let ts = jiff::Timestamp::new(seconds, 0).map_err(invalid)?;
    if !micro {
        return Ok(json!(ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()));
    }
    let micros = nanos.clamp(0, 999_999_999) / 1000;
    Ok(json!(format!(
        "{}.{micros:06}Z",
        ts.strftime("%Y-%m-%dT%H:%M:%S")
    )))
}

/// Go's `time.Duration.String()`: `1h2m3.5s`, `1.5ms`, `0s`.
pub fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".to_string();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    let frac = |value: u64, unit: u64| -> String {
        let whole = value / unit;
        let rest = value % unit;
        if rest == 0 {
            return whole.to_string();
        }
        let digits = unit.to_string().len() - 1;
        let f = format!("{rest:0digits$}");
        format!("{whole}.{}", f.trim_end_matches('0'))
    };
    if n < 1_000 {
        return format!("{sign}{n}ns");
    }
    if n < 1_000_000 {
        return format!("{sign}{}µs", frac(n, 1_000));
    }
    if n < 1_000_000_000 {
        return format!("{sign}{}ms", frac(n, 1_000_000));
    }
    let secs = n / 1_000_000_000;
    let sub = n % 1_000_000_000;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let seconds = frac(s * 1_000_000_000 + sub, 1_000_000_000);
    match (h, m) {
        (0, 0) => format!("{sign}{seconds}s"),
        (0, m) => format!("{sign}{m}m{seconds}s"),
        (h, m) => format!("{sign}{h}h{m}m{seconds}s"),
    }
}

fn raw_json(raw: Option<&[u8]>) -> Result<Value, WireError> {
    match raw {
        None | Some([]) => Ok(Value::Null),
        Some(b) => serde_json::from_slice(b)
            .map_err(|e| WireError::Invalid(format!("embedded object is not JSON: {e}"))),
    }
}

/// Decodes a special message; `message` decodes an embedded schema (field type known to the caller).
pub fn decode(
    special: Special,
    path: &str,
    buf: &[u8],
    mut message: impl FnMut(&[u8]) -> Result<Value, WireError>,
) -> Result<Value, WireError> {
    let name = path.rsplit("::").next().unwrap_or(path);
    if matches!(special, Special::SchemaOrBool | Special::SchemaOrList) {
        let mut r = Reader::new(buf);
        let (mut schema, mut flag, mut list) = (None, false, Vec::new());
        while !r.is_empty() {
            match (special, r.field(name)?) {
                (Special::SchemaOrBool, (1, _, Wire::Varint(v))) => flag = v != 0,
                (Special::SchemaOrBool, (2, _, Wire::Bytes(b))) => schema = Some(message(b)?),
                (_, (1, _, Wire::Bytes(b))) => schema = Some(message(b)?),
                (_, (2, _, Wire::Bytes(b))) if name == "JsonSchemaPropsOrStringArray" => {
                    list.push(json!(String::from_utf8_lossy(b)));
                }
                (_, (2, _, Wire::Bytes(b))) => list.push(message(b)?),
                _ => {}
            }
        }
        return Ok(match (special, schema) {
            (_, Some(s)) => s,
            (Special::SchemaOrBool, None) => json!(flag),
            (_, None) => json!(list),
        });
    }
    let f = scalars(buf, name)?;
    // Wire varints are two's-complement 64-bit integers; the casts read them as Go does.
    let int = |n: u32| varint_of(&f, n).unwrap_or(0) as i64;
    let text = |n: u32| String::from_utf8_lossy(bytes_of(&f, n).unwrap_or_default()).into_owned();
    match special {
        // Go decodes an empty Time as the zero time, which marshals as null.
        Special::Time if buf.is_empty() => Ok(Value::Null),
        Special::Time => timestamp(int(1), 0, false),
        Special::MicroTime if buf.is_empty() => Ok(Value::Null),
        Special::MicroTime => timestamp(int(1), int(2) as i32 as i64, true),
        Special::Duration => Ok(json!(go_duration(int(1)))),
        Special::IntOrString if int(1) == 1 => Ok(json!(text(3))),
        Special::IntOrString => Ok(json!(int(2) as i32)),
        Special::Quantity => Ok(json!(text(1))),
        Special::RawJson => raw_json(bytes_of(&f, 1)),
        Special::SchemaOrBool | Special::SchemaOrList => Ok(Value::Null),
    }
}

/// `[]byte` fields marshal as standard base64.
pub fn bytes(b: &[u8]) -> Value {
    json!(base64::engine::general_purpose::STANDARD.encode(b))
}
