//! Schema-driven decoding of a protobuf message into the JSON the same object has: fields by
//! number, JSON names from the schema, unknown fields skipped (as gogo's `Unmarshal` skips them).

use serde_json::{Map, Value, json};

use super::schema::{Field, Kind, MESSAGES};
use super::wellknown;
use super::wire::{Reader, Value as Wire, WireError};

/// Nesting limit: deeper bodies are refused rather than recursing without bound.
const MAX_DEPTH: usize = 100;

fn wrong_wire(wire: u8, message: &str, field: &Field) -> WireError {
    let name = message.rsplit("::").next().unwrap_or(message);
    WireError::WrongWireType {
        wire,
        field: format!("{name}.{}", field.json),
    }
}

fn scalar(kind: &Kind, v: Wire<'_>) -> Option<Value> {
    // Varints carry Go's int32/int64 as two's-complement 64-bit values.
    Some(match (kind, v) {
        (Kind::Bool, Wire::Varint(x)) => json!(x != 0),
        (Kind::Int32, Wire::Varint(x)) => json!(x as i64 as i32),
        (Kind::Int64, Wire::Varint(x)) => json!(x as i64),
        (Kind::Double, Wire::Fixed64(x)) => json!(f64::from_bits(x)),
        (Kind::String, Wire::Bytes(b)) => json!(String::from_utf8_lossy(b)),
        (Kind::Bytes, Wire::Bytes(b)) => wellknown::bytes(b),
        _ => return None,
    })
}

/// Packed repeated scalars (accepted as Go accepts them, though gogo writes them unpacked).
fn packed(kind: &Kind, buf: &[u8]) -> Result<Vec<Value>, WireError> {
    let mut r = Reader::new(buf);
    let mut out = Vec::new();
    while !r.is_empty() {
        let v = match kind {
            Kind::Double => Wire::Fixed64(r.fixed64()?),
            _ => Wire::Varint(r.varint()?),
        };
        out.extend(scalar(kind, v));
    }
    Ok(out)
}

fn map_entry(value_kind: &Kind, buf: &[u8], depth: usize) -> Result<(String, Value), WireError> {
    let mut r = Reader::new(buf);
    let mut key = String::new();
    let mut value = None;
    while !r.is_empty() {
        match r.field("map entry")? {
            (1, _, Wire::Bytes(b)) => key = String::from_utf8_lossy(b).into_owned(),
            (2, _, Wire::Bytes(b)) => {
                value = Some(match value_kind {
                    Kind::Message(i) => message(*i, b, depth + 1)?,
                    other => scalar(other, Wire::Bytes(b)).unwrap_or(Value::Null),
                });
            }
            _ => {}
        }
    }
    let value = value.unwrap_or_else(|| match value_kind {
        Kind::Message(_) => json!({}),
        _ => json!(""),
    });
    Ok((key, value))
}

fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                a.insert(k, v);
            }
        }
        (slot, v) => *slot = v,
    }
}

/// Decodes message `index` of the schema from `buf`.
pub fn message(index: usize, buf: &[u8], depth: usize) -> Result<Value, WireError> {
    if depth > MAX_DEPTH {
        return Err(WireError::Invalid("exceeded max depth".to_string()));
    }
    let Some(msg) = MESSAGES.get(index) else {
        return Err(WireError::Invalid(format!(
            "no message {index} in the schema"
        )));
    };
    if let Some(special) = wellknown::special(msg.path) {
        // The embedded schema of the union types is their field 1 or 2, a JSONSchemaProps.
        let inner = msg.fields.iter().find_map(|f| match f.kind {
            Kind::Message(i) => Some(i),
            _ => None,
        });
        return wellknown::decode(special, msg.path, buf, |b| match inner {
            Some(i) => message(i, b, depth + 1),
            None => Ok(Value::Null),
        });
    }
    let mut out = Map::new();
    let mut r = Reader::new(buf);
    while !r.is_empty() {
        let (number, wire, v) = r.field(msg.path)?;
        let Ok(at) = msg.fields.binary_search_by_key(&number, |f| f.tag) else {
            continue;
        };
        let field = &msg.fields[at];
        let decoded: Vec<Value> = match (&field.kind, v) {
            (Kind::Message(i), Wire::Bytes(b)) => vec![message(*i, b, depth + 1)?],
            (Kind::Map(value_kind), Wire::Bytes(b)) => {
                let (k, val) = map_entry(value_kind, b, depth)?;
                let slot = out.entry(field.json).or_insert_with(|| json!({}));
                if let Some(m) = slot.as_object_mut() {
                    m.insert(k, val);
                }
                continue;
            }
            (kind @ (Kind::Bool | Kind::Int32 | Kind::Int64 | Kind::Double), Wire::Bytes(b))
                if field.repeated =>
            {
                packed(kind, b)?
            }
            (kind, v) => vec![scalar(kind, v).ok_or_else(|| wrong_wire(wire, msg.path, field))?],
        };
        if field.repeated {
            let slot = out.entry(field.json).or_insert_with(|| json!([]));
            if let Some(list) = slot.as_array_mut() {
                list.extend(decoded);
            }
        } else if let Some(value) = decoded.into_iter().next() {
            // An unset Go string and an empty one are one value; its JSON omits it.
            if value.as_str() == Some("") {
                continue;
            }
            match out.get_mut(field.json) {
                Some(existing) if matches!(field.kind, Kind::Message(_)) => merge(existing, value),
                _ => {
                    out.insert(field.json.to_string(), value);
                }
            }
        }
    }
    Ok(Value::Object(out))
}
