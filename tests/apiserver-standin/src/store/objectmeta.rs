//! ObjectMeta validation as in apimachinery (`api/validation/objectmeta.go`,
//! `apis/meta/v1/validation`, `api/validate/content`): label and annotation syntax and size,
//! and the fields an update may not change.

use serde_json::{Map, Value, json};

use crate::error::Cause;

/// `TotalAnnotationSizeLimitB`: keys plus values, in bytes.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const NAME_MAX: usize = 63;
const SUBDOMAIN_MAX: usize = 253;

/// `content.RegexError`.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{e}', "));
    }
    out.push_str(&format!("regex used for validation is '{fmt}')"));
    out
}

/// `content.MaxLenError`.
fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

/// Matches `LABEL_KEY_FMT` (non-empty, alphanumeric ends, `-_.` inside).
fn matches_label_name(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            alnum(*f)
                && alnum(*l)
                && b.iter()
                    .all(|c| alnum(*c) || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

fn matches_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let b = label.as_bytes();
        let ok = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        match (b.first(), b.last()) {
            (Some(f), Some(l)) => ok(f) && ok(l) && b.iter().all(|c| ok(c) || *c == b'-'),
            _ => false,
        }
    })
}

/// `content.IsDNS1123Subdomain`.
fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > SUBDOMAIN_MAX {
        errs.push(max_len_error(SUBDOMAIN_MAX));
    }
    if !matches_subdomain(s) {
        errs.push(regex_error(SUBDOMAIN_ERR, SUBDOMAIN_FMT, &["example.com"]));
    }
    errs
}

/// `content.IsLabelKey` (a.k.a. `IsQualifiedName`): the messages for an invalid key.
pub fn qualified_name_errors(value: &str) -> Vec<String> {
    let name_examples = ["MyName", "my.name", "123-abc"];
    let parts: Vec<&str> = value.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_ERR, LABEL_KEY_FMT, &name_examples)
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > NAME_MAX {
        errs.push(format!("name part {}", max_len_error(NAME_MAX)));
    }
    if !matches_label_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(LABEL_KEY_ERR, LABEL_KEY_FMT, &name_examples)
        ));
    }
    errs
}

/// `content.IsLabelValue`.
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > NAME_MAX {
        errs.push(max_len_error(NAME_MAX));
    }
    if !value.is_empty() && !matches_label_name(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

fn string_map<'a>(meta: Option<&'a Value>, field: &str) -> Vec<(&'a str, &'a str)> {
    meta.and_then(|m| m.get(field))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default()
}

/// `v1validation.ValidateLabels` on `metadata.labels` (errors name the map, not the key).
pub fn validate_labels(meta: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (k, v) in string_map(meta, "labels") {
        for msg in qualified_name_errors(k) {
            causes.push(Cause::invalid("metadata.labels", &json!(k), msg));
        }
        for msg in label_value_errors(v) {
            causes.push(Cause::invalid("metadata.labels", &json!(v), msg));
        }
    }
    causes
}

/// `ValidateAnnotations` on `metadata.annotations`: key syntax (case-insensitive) and total size.
pub fn validate_annotations(meta: Option<&Value>) -> Vec<Cause> {
    let annotations = string_map(meta, "annotations");
    let mut causes = Vec::new();
    for (k, _) in &annotations {
        for msg in qualified_name_errors(&k.to_lowercase()) {
            causes.push(Cause::invalid("metadata.annotations", &json!(k), msg));
        }
    }
    let total: usize = annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        causes.push(Cause::too_long(
            "metadata.annotations",
            TOTAL_ANNOTATION_SIZE_LIMIT,
        ));
    }
    causes
}

/// The label and annotation part of `ValidateObjectMetaAccessor` (create and update).
pub fn validate_object_meta(obj: &Value) -> Vec<Cause> {
    let meta = obj.get("metadata");
    let mut causes = validate_labels(meta);
    causes.extend(validate_annotations(meta));
    causes
}

fn field<'a>(m: &'a Map<String, Value>, f: &str) -> Option<&'a Value> {
    m.get(f).filter(|v| !v.is_null())
}

/// What `rest.BeforeUpdate` does to system fields before validating: uid defaults to the
/// stored one, creationTimestamp and generation are the stored ones, a deletionTimestamp
/// already set stays, a deletionGracePeriodSeconds already set stays unless changed.
pub fn carry_system_fields(new: &mut Value, old: &Value) {
    let empty = Map::new();
    let old_meta = old
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty)
        .clone();
    let m = crate::meta::metadata_mut(new);
    if field(m, "uid")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        set_or_remove(m, "uid", old_meta.get("uid"));
    }
    set_or_remove(m, "creationTimestamp", old_meta.get("creationTimestamp"));
    set_or_remove(m, "generation", old_meta.get("generation"));
    if field(&old_meta, "deletionTimestamp").is_some() {
        set_or_remove(m, "deletionTimestamp", old_meta.get("deletionTimestamp"));
    }
    if field(&old_meta, "deletionGracePeriodSeconds").is_some()
        && field(m, "deletionGracePeriodSeconds").is_none()
    {
        set_or_remove(
            m,
            "deletionGracePeriodSeconds",
            old_meta.get("deletionGracePeriodSeconds"),
        );
    }
}

fn set_or_remove(m: &mut Map<String, Value>, f: &str, v: Option<&Value>) {
    match v.filter(|v| !v.is_null()) {
        Some(v) => m.insert(f.to_string(), v.clone()),
        None => m.remove(f),
    };
}

/// `ValidateObjectMetaAccessorUpdate` for the fields the stand-in keeps: no new finalizers
/// while deleting, immutable uid, deletionTimestamp and deletionGracePeriodSeconds, then
/// labels and annotations of the new object.
pub fn validate_object_meta_update(new: &Value, old: &Value) -> Vec<Cause> {
    let empty = Map::new();
    let nm = new
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let om = old
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut causes = Vec::new();
    if field(om, "deletionTimestamp").is_some() {
        let before = finalizers(om);
        let mut added: Vec<String> = finalizers(nm)
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        added.sort();
        added.dedup();
        if !added.is_empty() {
            let shown: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
            causes.push(Cause::forbidden(
                "metadata.finalizers",
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    shown.join(", ")
                ),
            ));
        }
    }
    for f in ["uid", "deletionTimestamp", "deletionGracePeriodSeconds"] {
        let (n, o) = (field(nm, f), field(om, f));
        if n != o {
            causes.push(Cause::invalid(
                format!("metadata.{f}"),
                n.unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
    }
    causes.extend(validate_object_meta(new));
    causes
}

fn finalizers(m: &Map<String, Value>) -> Vec<String> {
    m.get("finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_keys() {
        assert!(qualified_name_errors("app").is_empty());
        assert!(qualified_name_errors("example.com/My_name.1").is_empty());
        assert_eq!(
            qualified_name_errors("bad key"),
            vec![
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ]
        );
        assert_eq!(
            qualified_name_errors("/x"),
            vec!["prefix part must be non-empty"]
        );
        assert_eq!(qualified_name_errors("a/b/c").len(), 1);
        assert_eq!(
            qualified_name_errors(&"a".repeat(64)),
            vec!["name part must be no more than 63 bytes"]
        );
        assert_eq!(
            qualified_name_errors("Example.com/x"),
            vec![
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );
    }

    #[test]
    fn label_values() {
        assert!(label_value_errors("").is_empty());
        assert!(label_value_errors("v1.2_x-y").is_empty());
        assert_eq!(label_value_errors("-x").len(), 1);
        assert_eq!(label_value_errors(&"a".repeat(64)).len(), 1);
    }

    #[test]
    fn annotation_size_limit() {
        let big = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT);
        let ok = json!({"metadata": {"annotations": {"k": big[1..]}}});
        assert!(validate_object_meta(&ok).is_empty());
        let over = json!({"metadata": {"annotations": {"k": big}}});
        let causes = validate_object_meta(&over);
        assert_eq!(
            causes[0].message,
            "Too long: may not be more than 262144 bytes"
        );
    }
}
