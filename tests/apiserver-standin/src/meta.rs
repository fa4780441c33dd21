//! Small helpers on JSON objects: metadata access, timestamps, uids, name generation.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// `metadata.<field>` as a string, or `""`.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `metadata.name`.
pub fn name(obj: &Value) -> &str {
    meta_str(obj, "name")
}

/// `metadata.namespace`.
pub fn namespace(obj: &Value) -> &str {
    meta_str(obj, "namespace")
}

/// `metadata.resourceVersion`.
pub fn resource_version(obj: &Value) -> &str {
    meta_str(obj, "resourceVersion")
}

/// `metadata` as a mutable map, created if missing or not an object.
pub fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let map = match obj.as_object_mut() {
        Some(m) => m,
        None => unreachable!("made an object above"),
    };
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    match meta.as_object_mut() {
        Some(m) => m,
        None => unreachable!("made an object above"),
    }
}

/// Follows a dotted path (`spec.nodeName`) to a value.
pub fn path<'a>(obj: &'a Value, dotted: &str) -> Option<&'a Value> {
    dotted.split('.').try_fold(obj, |v, seg| v.get(seg))
}

/// A value rendered as a field-selector string (`""` when missing).
pub fn path_string(obj: &Value, dotted: &str) -> String {
    match path(obj, dotted) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// The current time as RFC 3339 with seconds precision (`metav1.Time`).
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The current time with microseconds (`metav1.MicroTime`).
pub fn now_micro() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
        .to_string()
}

static COUNTER: AtomicU64 = AtomicU64::new(1);

fn entropy() -> [u8; 32] {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = jiff::Timestamp::now().as_nanosecond();
    let mut h = Sha256::new();
    h.update(n.to_le_bytes());
    h.update(t.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.finalize().into()
}

/// A random version-4 UUID string.
pub fn new_uid() -> String {
    let mut b = entropy();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b[..16].iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The 5-character random suffix the API server appends to `generateName`.
pub fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    entropy()[..5]
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect()
}

/// Whether `s` is a DNS-1123 subdomain (object names of most resources).
pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// Whether `s` is a DNS-1123 label (namespace and container names).
pub fn is_dns_label(s: &str) -> bool {
    s.len() <= 63 && !s.contains('.') && is_dns_subdomain(s)
}
