//! ConfigMap and Secret strategies: key names, `stringData` folded into `data`, `immutable`.

use base64::Engine;
use serde_json::{Value, json};

use crate::error::Cause;

const KEY_MAX: usize = 253;

/// `IsConfigMapKey`: the messages for an invalid data key.
fn key_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > KEY_MAX {
        errs.push(format!("must be no more than {KEY_MAX} characters"));
    }
    let ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        errs.push(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
                .to_string(),
        );
    }
    if key == "." {
        errs.push("must not be '.'".to_string());
    } else if key == ".." {
        errs.push("must not be '..'".to_string());
    } else if key.starts_with("..") {
        errs.push("must not start with '..'".to_string());
    }
    errs
}

fn keys_causes(obj: &Value, fields: &[&str]) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for field in fields {
        let Some(map) = obj.get(*field).and_then(Value::as_object) else {
            continue;
        };
        for key in map.keys() {
            for e in key_errors(key) {
                causes.push(Cause::invalid(format!("{field}[{key}]"), &json!(key), e));
            }
            if !seen.insert(key.clone()) {
                causes.push(Cause::invalid(
                    format!("{field}[{key}]"),
                    &json!(key),
                    "duplicate of key present in data",
                ));
            }
        }
    }
    causes
}

/// The API server's decoding of `data`: each value must be standard base64.
fn secret_data_causes(obj: &Value) -> Vec<Cause> {
    let Some(map) = obj.get("data").and_then(Value::as_object) else {
        return Vec::new();
    };
    map.iter()
        .filter(|(_, v)| {
            v.as_str()
                .is_none_or(|s| base64::engine::general_purpose::STANDARD.decode(s).is_err())
        })
        .map(|(k, v)| Cause::invalid(format!("data[{k}]"), v, "illegal base64 data"))
        .collect()
}

/// `stringData` is write-only: merged over `data` (base64-encoded) and dropped, as the
/// Secret's internal conversion does.
fn fold_string_data(obj: &mut Value) {
    let Some(m) = obj.as_object_mut() else {
        return;
    };
    let Some(Value::Object(strings)) = m.remove("stringData") else {
        return;
    };
    let data = m.entry("data").or_insert_with(|| json!({}));
    if !data.is_object() {
        *data = json!({});
    }
    if let Some(d) = data.as_object_mut() {
        for (k, v) in strings {
            let text = v.as_str().unwrap_or_default().to_string();
            d.insert(
                k,
                json!(base64::engine::general_purpose::STANDARD.encode(text)),
            );
        }
    }
}

fn immutable_causes(old: &Value, new: &Value, fields: &[&str]) -> Vec<Cause> {
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return Vec::new();
    }
    let mut causes: Vec<Cause> = fields
        .iter()
        .filter(|f| old.get(**f) != new.get(**f))
        .map(|f| Cause::forbidden(*f, "field is immutable when `immutable` is set"))
        .collect();
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        causes.push(Cause::forbidden(
            "immutable",
            "field is immutable when `immutable` is set",
        ));
    }
    causes
}

/// ConfigMap create: key names.
pub fn configmap_create(obj: &mut Value) -> Vec<Cause> {
    keys_causes(obj, &["data", "binaryData"])
}

/// ConfigMap update: key names and `immutable`.
pub fn configmap_update(old: &Value, new: &mut Value) -> Vec<Cause> {
    let mut causes = keys_causes(new, &["data", "binaryData"]);
    causes.extend(immutable_causes(old, new, &["data", "binaryData"]));
    causes
}

/// Secret create: `stringData` folded, `type` defaulted to Opaque, keys and base64 checked.
pub fn secret_create(obj: &mut Value) -> Vec<Cause> {
    let mut causes = secret_data_causes(obj);
    fold_string_data(obj);
    if let Some(m) = obj.as_object_mut() {
        let t = m.entry("type").or_insert_with(|| json!("Opaque"));
        if t.as_str().is_none_or(str::is_empty) {
            *t = json!("Opaque");
        }
    }
    causes.extend(keys_causes(obj, &["data"]));
    causes
}

/// Secret update: as create, plus `type` and `immutable` rules.
pub fn secret_update(old: &Value, new: &mut Value) -> Vec<Cause> {
    let mut causes = secret_create(new);
    if old.get("type") != new.get("type") {
        causes.push(Cause::invalid(
            "type",
            new.get("type").unwrap_or(&Value::Null),
            "field is immutable",
        ));
    }
    causes.extend(immutable_causes(old, new, &["data"]));
    causes
}
