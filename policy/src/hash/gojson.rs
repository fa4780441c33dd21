//! A Go `encoding/json` compatible encoder driven by Go struct schemas.
//!
//! It takes a JSON value as served and writes what Go would write after decoding that value into
//! the typed struct and marshalling it again with `json.Marshal`: known fields only, in
//! declaration order, `omitempty` as Go applies it, struct-typed fields always present, map keys
//! sorted, quantities in their `Quantity.String()` form, HTML-safe string escaping, no whitespace.
//!
//! Values Go could not decode (a JSON value of the wrong type for its field, an unparsable
//! quantity, an integer outside its Go type's range) are treated as absent, i.e. as the field's
//! zero value. Go Kruise rejects such objects at decoding, so no Go hash exists to compare with;
//! treating them as absent keeps this encoder total (it never fails and never panics).
//! `decodes` tells such values apart, for callers that must not treat them as absent.

use super::schema::{Field, Ty};
use crate::quantity::Quantity;
use serde_json::{Map, Value};

/// Go's `appendString` with HTML escaping on (as `json.Marshal` does).
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        push_escaped_char(out, c);
    }
    out.push('"');
}

/// The same for raw bytes: each byte of an invalid UTF-8 sequence becomes `\ufffd`, like Go.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn write_bytes_as_string(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            push_escaped_char(out, c);
        }
        for _ in chunk.invalid() {
            out.push_str("\\ufffd");
        }
    }
    out.push('"');
}

fn push_escaped_char(out: &mut String, c: char) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match c {
        '\\' => out.push_str("\\\\"),
        '"' => out.push_str("\\\""),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '<' | '>' | '&' | '\u{0}'..='\u{1f}' => {
            let b = c as u32;
            out.push_str("\\u00");
            out.push(char::from(HEX[((b >> 4) & 0xf) as usize]));
            out.push(char::from(HEX[(b & 0xf) as usize]));
        }
        '\u{2028}' => out.push_str("\\u2028"),
        '\u{2029}' => out.push_str("\\u2029"),
        _ => out.push(c),
    }
}

/// Options that change what is encoded, not how.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Options {
    /// Leave out the top-level `image` field (the "without image" hash).
    pub skip_image: bool,
}

/// `[...]` of the given struct, or `null` when the value is absent or not an array.
pub(crate) fn write_struct_slice(
    out: &mut String,
    fields: &'static [Field],
    v: Option<&Value>,
    opts: Options,
) {
    match v {
        Some(Value::Array(items)) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_struct(out, fields, item.as_object(), opts);
            }
            out.push(']');
        }
        _ => out.push_str("null"),
    }
}

fn write_struct(
    out: &mut String,
    fields: &'static [Field],
    obj: Option<&Map<String, Value>>,
    opts: Options,
) {
    out.push('{');
    let mut first = true;
    for f in fields {
        if opts.skip_image && f.json == "image" {
            continue;
        }
        let v = obj
            .and_then(|o| o.get(f.json))
            .filter(|v| is_valid(f.ty, v));
        let omit = if f.ptr {
            f.omitempty && v.is_none()
        } else {
            f.omitempty && is_empty(f.ty, v)
        };
        if omit {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        write_string(out, f.json);
        out.push(':');
        if f.ptr && v.is_none() {
            out.push_str("null");
        } else {
            // Nested structs never inherit `skip_image`: only the container's own image is blanked.
            write_value(out, f.ty, v);
        }
    }
    out.push('}');
}

fn as_i32(v: &Value) -> Option<i64> {
    v.as_i64().filter(|n| i32::try_from(*n).is_ok())
}

/// Whether Go could decode `v` into a field of type `ty` (`null` counts as absent).
fn is_valid(ty: Ty, v: &Value) -> bool {
    match ty {
        Ty::Str | Ty::Time => v.is_string(),
        Ty::Bool => v.is_boolean(),
        Ty::I32 => as_i32(v).is_some(),
        Ty::I64 => v.as_i64().is_some(),
        Ty::Quantity => matches!(Quantity::from_json(v), Some(Ok(_))),
        Ty::IntOrString => v.is_string() || as_i32(v).is_some(),
        Ty::Struct(_) | Ty::QuantityMap | Ty::StrMap => v.is_object(),
        Ty::Slice(_) => v.is_array(),
        Ty::Raw => !v.is_null(),
    }
}

/// Whether Go's decoder accepts all of `v` as a `ty`: `null` and unknown members anywhere, but no
/// member of the wrong type (which `is_valid` alone would quietly treat as absent).
pub(crate) fn decodes(ty: Ty, v: &Value) -> bool {
    if v.is_null() {
        return true;
    }
    match ty {
        Ty::Struct(fields) => v.as_object().is_some_and(|obj| {
            fields
                .iter()
                .all(|f| obj.get(f.json).is_none_or(|member| decodes(f.ty, member)))
        }),
        Ty::Slice(elem) => v
            .as_array()
            .is_some_and(|items| items.iter().all(|item| decodes(*elem, item))),
        Ty::QuantityMap => v
            .as_object()
            .is_some_and(|map| map.values().all(|q| decodes(Ty::Quantity, q))),
        Ty::StrMap => v
            .as_object()
            .is_some_and(|map| map.values().all(|s| decodes(Ty::Str, s))),
        _ => is_valid(ty, v),
    }
}

/// Go's `json.Marshal` of `v` decoded as a `ty`.
pub(crate) fn encode(ty: Ty, v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, ty, Some(v).filter(|v| is_valid(ty, v)));
    out
}

/// Go's `isEmptyValue` for `omitempty` on a non-pointer field (`v` already validated).
fn is_empty(ty: Ty, v: Option<&Value>) -> bool {
    let Some(v) = v else {
        // Absent: the zero value. Structs (incl. Quantity, IntOrString, Time) are never "empty".
        return !matches!(
            ty,
            Ty::Struct(_) | Ty::Quantity | Ty::IntOrString | Ty::Time
        );
    };
    match ty {
        Ty::Str => v.as_str().is_some_and(str::is_empty),
        Ty::Bool => v == &Value::Bool(false),
        Ty::I32 | Ty::I64 => v.as_i64() == Some(0),
        Ty::Slice(_) => v.as_array().is_some_and(Vec::is_empty),
        Ty::QuantityMap => quantity_entries(v).is_empty(),
        Ty::StrMap => string_entries(v).is_empty(),
        // Raw JSON only backs pointer fields, where `omitempty` means nil.
        Ty::Struct(_) | Ty::Quantity | Ty::IntOrString | Ty::Time | Ty::Raw => false,
    }
}

/// Writes a (validated or absent) value; absent writes the Go zero value.
fn write_value(out: &mut String, ty: Ty, v: Option<&Value>) {
    match ty {
        Ty::Str => write_string(out, v.and_then(Value::as_str).unwrap_or("")),
        Ty::Bool => out.push_str(if v.and_then(Value::as_bool).unwrap_or(false) {
            "true"
        } else {
            "false"
        }),
        Ty::I32 | Ty::I64 => out.push_str(&v.and_then(Value::as_i64).unwrap_or(0).to_string()),
        Ty::Quantity => {
            let q = v
                .and_then(Quantity::from_json)
                .and_then(Result::ok)
                .unwrap_or_else(Quantity::zero);
            write_string(out, &q.to_string());
        }
        Ty::IntOrString => match v {
            Some(Value::String(s)) => write_string(out, s),
            _ => out.push_str(&v.and_then(Value::as_i64).unwrap_or(0).to_string()),
        },
        Ty::Struct(fields) => write_struct(
            out,
            fields,
            v.and_then(Value::as_object),
            Options::default(),
        ),
        Ty::Slice(elem) => match v.and_then(Value::as_array) {
            Some(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_value(out, *elem, Some(item).filter(|v| is_valid(*elem, v)));
                }
                out.push(']');
            }
            None => out.push_str("null"),
        },
        Ty::QuantityMap => match v {
            Some(v) => {
                let entries = quantity_entries(v);
                write_string_map(out, entries.iter().map(|(k, q)| (*k, q.to_string())));
            }
            None => out.push_str("null"),
        },
        Ty::StrMap => match v {
            Some(v) => write_string_map(out, string_entries(v).into_iter()),
            None => out.push_str("null"),
        },
        Ty::Time => match v.and_then(Value::as_str) {
            // Compared as written: Go would reformat the instant in UTC, whole seconds.
            Some(t) => write_string(out, t),
            None => out.push_str("null"),
        },
        // Compact JSON: a little looser than Go, which keeps and compares the bytes as written.
        Ty::Raw => out.push_str(&v.map_or_else(|| "null".into(), Value::to_string)),
    }
}

/// A Go map with string values, its entries already sorted by key.
fn write_string_map<'a, S: AsRef<str>>(
    out: &mut String,
    entries: impl Iterator<Item = (&'a str, S)>,
) {
    out.push('{');
    for (i, (key, value)) in entries.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        write_string(out, value.as_ref());
    }
    out.push('}');
}

/// The entries of a `map[string]string` as Go decodes them, sorted by key: `null` is the empty
/// string; values that do not decode are left out.
fn string_entries(v: &Value) -> Vec<(&str, &str)> {
    let Some(map) = v.as_object() else {
        return Vec::new();
    };
    let mut entries: Vec<(&str, &str)> = map
        .iter()
        .filter_map(|(k, v)| match v {
            Value::Null => Some((k.as_str(), "")),
            other => other.as_str().map(|s| (k.as_str(), s)),
        })
        .collect();
    crate::order::sort_by_text(&mut entries, |entry| entry.0);
    entries
}

/// The entries of a `ResourceList` as Go decodes them, sorted by key: `null` is the zero
/// quantity; values that do not decode are left out.
fn quantity_entries(v: &Value) -> Vec<(&str, Quantity)> {
    let Some(map) = v.as_object() else {
        return Vec::new();
    };
    let mut entries: Vec<(&str, Quantity)> = map
        .iter()
        .filter_map(|(k, v)| match v {
            Value::Null => Some((k.as_str(), Quantity::zero())),
            other => Quantity::from_json(other)
                .and_then(Result::ok)
                .map(|q| (k.as_str(), q)),
        })
        .collect();
    crate::order::sort_by_text(&mut entries, |entry| entry.0);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::schema::SIDECAR_CONTAINER;
    use serde_json::json;

    fn s(input: &str) -> String {
        let mut out = String::new();
        write_string(&mut out, input);
        out
    }

    fn container(v: Value) -> String {
        let mut out = String::new();
        write_struct(
            &mut out,
            SIDECAR_CONTAINER,
            v.as_object(),
            Options::default(),
        );
        out
    }

    #[test]
    fn escapes_like_go() {
        assert_eq!(s("a<b>&c"), r#""a\u003cb\u003e\u0026c""#);
        assert_eq!(s("q\"b\\"), r#""q\"b\\""#);
        assert_eq!(s("\n\r\t\u{8}\u{c}"), r#""\n\r\t\b\f""#);
        assert_eq!(s("\u{0}\u{1}\u{1f}"), r#""\u0000\u0001\u001f""#);
        assert_eq!(s("\u{7f}é€😀"), "\"\u{7f}é€😀\"");
        assert_eq!(s("\u{2028}\u{2029}"), r#""\u2028\u2029""#);
        assert_eq!(s("/"), r#""/""#);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_escapes() {
        let mut out = String::new();
        write_bytes_as_string(&mut out, b"a\xffb\xe2\x82");
        assert_eq!(out, r#""a\ufffdb\ufffd\ufffd""#);
    }

    #[test]
    fn declaration_order_not_alphabetical() {
        let got = container(json!({
            "tty": true, "args": ["x"], "name": "n", "image": "i", "env": [{"value": "v", "name": "E"}],
            "command": ["c"], "workingDir": "/w", "unknownField": 1
        }));
        assert_eq!(
            got,
            r#"{"name":"n","image":"i","command":["c"],"args":["x"],"workingDir":"/w","env":[{"name":"E","value":"v"}],"resources":{},"tty":true,"upgradeStrategy":{},"shareVolumePolicy":{}}"#
        );
    }

    #[test]
    fn zero_values_pointers_and_quantities() {
        let got = container(json!({
            "name": "n",
            "ports": [{"containerPort": 80}],
            "env": [{"name": "R", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}],
            "resources": {"limits": {"memory": "1024Mi", "cpu": 0.5}, "requests": {}},
            "readinessProbe": {"grpc": {"port": 9000}, "tcpSocket": {"port": "http"}},
            "livenessProbe": {"httpGet": {"port": 8080}, "terminationGracePeriodSeconds": 0},
            "securityContext": {"privileged": false, "runAsUser": 0, "capabilities": {}},
            "stdin": false,
            "shareVolumeDevicePolicy": {},
            "transferEnv": [{"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.labels['x']"}}}]
        }));
        assert_eq!(
            got,
            concat!(
                r#"{"name":"n","ports":[{"containerPort":80}],"#,
                r#""env":[{"name":"R","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"0"}}}],"#,
                r#""resources":{"limits":{"cpu":"500m","memory":"1Gi"}},"#,
                r#""livenessProbe":{"httpGet":{"port":8080},"terminationGracePeriodSeconds":0},"#,
                r#""readinessProbe":{"tcpSocket":{"port":"http"},"grpc":{"port":9000,"service":null}},"#,
                r#""securityContext":{"capabilities":{},"privileged":false,"runAsUser":0},"#,
                r#""upgradeStrategy":{},"shareVolumePolicy":{},"shareVolumeDevicePolicy":{},"#,
                r#""transferEnv":[{"sourceContainerNameFrom":{"fieldRef":{"fieldPath":"metadata.labels['x']"}}}]}"#
            )
        );
    }

    #[test]
    fn wrong_types_are_absent_and_never_panic() {
        let got = container(json!({
            "name": 5, "image": null, "command": "sh", "ports": [null, 3, {"containerPort": 1.5}],
            "resources": [], "stdin": "yes", "livenessProbe": "x",
            "env": [{"name": "A", "valueFrom": {"fieldRef": null}}],
            "upgradeStrategy": {"upgradeType": 1}, "transferEnv": {}
        }));
        assert_eq!(
            got,
            concat!(
                r#"{"name":"","ports":[{"containerPort":0},{"containerPort":0},{"containerPort":0}],"#,
                r#""env":[{"name":"A","valueFrom":{}}],"resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}"#
            )
        );
    }

    #[test]
    fn nested_orders_and_extension_fields() {
        let got = container(json!({
            "resourcesPolicy": {"resourcesExpr": {"requests": {"memory": "100Mi", "cpu": "cpu*50%"}},
                "targetContainersNameRegex": ".*", "targetContainersMode": "sum"},
            "volumeMounts": [{"subPathExpr": "$(P)", "mountPropagation": "None", "subPath": "",
                "mountPath": "/m", "recursiveReadOnly": "Disabled", "readOnly": true, "name": "v"}],
            "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}, "seccompProfile": {"localhostProfile": "p"},
                "runAsNonRoot": true, "runAsGroup": 2, "runAsUser": 1, "windowsOptions": {"hostProcess": false}},
            "lifecycle": {"preStop": {"sleep": {"seconds": 5}}, "postStart": {"exec": {"command": ["a<b"]}},
                "stopSignal": "SIGTERM"},
            "name": "n", "podInjectPolicy": "AfterAppContainer",
            "upgradeStrategy": {"hotUpgradeEmptyImage": "e", "upgradeType": "HotUpgrade"}
        }));
        assert_eq!(
            got,
            concat!(
                r#"{"name":"n","resources":{},"#,
                r#""volumeMounts":[{"name":"v","readOnly":true,"recursiveReadOnly":"Disabled","mountPath":"/m","mountPropagation":"None","subPathExpr":"$(P)"}],"#,
                r#""lifecycle":{"postStart":{"exec":{"command":["a\u003cb"]}},"preStop":{"sleep":{"seconds":5}}},"#,
                r#""securityContext":{"windowsOptions":{"hostProcess":false},"runAsUser":1,"runAsGroup":2,"runAsNonRoot":true,"#,
                r#""seccompProfile":{"type":"","localhostProfile":"p"},"appArmorProfile":{"type":"RuntimeDefault"}},"#,
                r#""podInjectPolicy":"AfterAppContainer","upgradeStrategy":{"upgradeType":"HotUpgrade","hotUpgradeEmptyImage":"e"},"#,
                r#""shareVolumePolicy":{},"resourcesPolicy":{"targetContainersMode":"sum","targetContainersNameRegex":".*","#,
                r#""resourcesExpr":{"requests":{"cpu":"cpu*50%","memory":"100Mi"}}}}"#
            )
        );
    }

    #[test]
    fn quantity_map_null_is_zero_and_garbage_is_dropped() {
        let got = container(
            json!({"name": "n", "resources": {"limits": {"b": null, "a": "bad", "c": true}}}),
        );
        assert_eq!(
            got,
            r#"{"name":"n","resources":{"limits":{"b":"0"}},"upgradeStrategy":{},"shareVolumePolicy":{}}"#
        );
    }

    #[test]
    fn skip_image_only_at_top_level() {
        let mut out = String::new();
        let v = json!([{"name": "n", "image": "img:1"}]);
        write_struct_slice(
            &mut out,
            SIDECAR_CONTAINER,
            Some(&v),
            Options { skip_image: true },
        );
        assert_eq!(
            out,
            r#"[{"name":"n","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]"#
        );
        let mut out = String::new();
        write_struct_slice(&mut out, SIDECAR_CONTAINER, None, Options::default());
        assert_eq!(out, "null");
    }
}
