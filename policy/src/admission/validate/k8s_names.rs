//! apimachinery's name validators (`k8s.io/apimachinery/pkg/util/validation`) with their messages.
//! Each returns the list of problems (empty = valid).

use super::errors::FieldError;
use std::collections::BTreeMap;

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

pub const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// `TotalAnnotationSizeLimitB`: 256 KiB over all keys and values.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// `validation.RegexError`.
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let quoted: Vec<String> = examples.iter().map(|e| format!("'{e}'")).collect();
    format!(
        "{msg} (e.g. {}, regex used for validation is '{fmt}')",
        quoted.join(" or ")
    )
}

pub fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

fn is_alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]` over the whole string.
fn matches_qualified_part(value: &str) -> bool {
    let bytes = value.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&first), Some(&last)) => {
            is_alnum(first)
                && is_alnum(last)
                && bytes
                    .iter()
                    .all(|&c| is_alnum(c) || c == b'-' || c == b'_' || c == b'.')
        }
        _ => false,
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` over the whole string.
fn matches_dns1123_label(value: &str) -> bool {
    let bytes = value.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&first), Some(&last)) => {
            is_lower_alnum(first)
                && is_lower_alnum(last)
                && bytes.iter().all(|&c| is_lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

fn matches_dns1123_subdomain(value: &str) -> bool {
    value.split('.').all(matches_dns1123_label)
}

/// `IsDNS1123Label`.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !matches_dns1123_label(value) {
        if matches_dns1123_subdomain(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_ERR,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_dns1123_subdomain(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsQualifiedName`: an optional DNS-subdomain prefix and '/', then a name of ≤ 63 characters.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                for msg in is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {msg}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_ERR,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !matches_qualified_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`: empty, or ≤ 63 characters of the qualified-name alphabet.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !value.is_empty() && !matches_qualified_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `IsValidPortName` (IANA_SVC_NAME).
pub fn is_valid_port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push(max_len_error(15));
    }
    if !port
        .bytes()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        || port.is_empty()
    {
        errs.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string(),
        );
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".to_string());
    }
    if !port.bytes().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_string());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".to_string());
    }
    errs
}

/// `IsValidPortNum`.
pub fn is_valid_port_num(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".to_string()]
    }
}

/// `IsRelaxedEnvVarName` (Kubernetes ≥ 1.32 default): printable ASCII except '='.
pub fn is_relaxed_env_var_name(value: &str) -> Vec<String> {
    if value
        .bytes()
        .all(|c| (b' '..=b'~').contains(&c) && c != b'=')
    {
        Vec::new()
    } else {
        vec![
            "a valid environment variable name must consist only of printable ASCII characters other than '='"
                .to_string(),
        ]
    }
}

/// `ValidateLabelName`: a label key must be a qualified name.
pub fn validate_label_name(key: &str, field: &str) -> Vec<FieldError> {
    is_qualified_name(key)
        .into_iter()
        .map(|msg| FieldError::invalid_str(field, key, &msg))
        .collect()
}

/// `ValidateLabels`: keys are qualified names, values label values.
pub fn validate_labels(labels: &BTreeMap<String, String>, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, value) in labels {
        errs.extend(validate_label_name(key, field));
        for msg in is_valid_label_value(value) {
            errs.push(FieldError::invalid_str(field, value, &msg));
        }
    }
    errs
}

/// `ValidateAnnotations`: keys are qualified names (case-insensitive), total size ≤ 256 KiB.
pub fn validate_annotations(
    annotations: &BTreeMap<String, String>,
    field: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0usize;
    for (key, value) in annotations {
        for msg in is_qualified_name(&key.to_lowercase()) {
            errs.push(FieldError::invalid_str(field, key, &msg));
        }
        total = total.saturating_add(key.len()).saturating_add(value.len());
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long_bytes(
            field,
            TOTAL_ANNOTATION_SIZE_LIMIT,
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        for ok in ["a", "A", "app", "app.kubernetes.io/name", "a_b.c-d", "x/Y1"] {
            assert!(is_qualified_name(ok).is_empty(), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "a/b/c",
            "/a",
            "A.B/c",
            "a/",
            &"x".repeat(64),
        ] {
            assert!(!is_qualified_name(bad).is_empty(), "{bad}");
        }
        // empty name part: non-empty error and regex error, as upstream
        assert_eq!(is_qualified_name("a/").len(), 2);
        assert!(is_qualified_name(&format!("{}/a", "b".repeat(254)))[0].contains("253"));
    }

    #[test]
    fn label_values() {
        for ok in ["", "a", "app-risk", "A_b.c", &"x".repeat(63)] {
            assert!(is_valid_label_value(ok).is_empty(), "{ok}");
        }
        for bad in ["app-risk-", "-a", "a b", "a/b", &"x".repeat(64)] {
            assert!(!is_valid_label_value(bad).is_empty(), "{bad}");
        }
    }

    #[test]
    fn dns1123() {
        assert!(is_dns1123_label("my-name").is_empty());
        assert_eq!(is_dns1123_label("a.b"), vec!["must not contain dots"]);
        assert!(!is_dns1123_label("My").is_empty());
        assert!(!is_dns1123_label("").is_empty());
        assert!(is_dns1123_subdomain("example.com").is_empty());
        assert!(!is_dns1123_subdomain("example..com").is_empty());
        assert!(!is_dns1123_subdomain("Example.com").is_empty());
    }

    #[test]
    fn ports_and_env() {
        assert!(is_valid_port_name("http").is_empty());
        assert!(!is_valid_port_name("8080").is_empty());
        assert!(!is_valid_port_name("a--b").is_empty());
        assert!(!is_valid_port_name("this-is-too-long-x").is_empty());
        assert!(is_valid_port_num(1).is_empty() && is_valid_port_num(65535).is_empty());
        assert!(!is_valid_port_num(0).is_empty() && !is_valid_port_num(65536).is_empty());
        assert!(is_relaxed_env_var_name("MY VAR.1").is_empty());
        assert!(!is_relaxed_env_var_name("A=B").is_empty());
        assert!(!is_relaxed_env_var_name("é").is_empty());
    }

    #[test]
    fn annotations_size_limit() {
        let mut big = BTreeMap::new();
        big.insert("k".to_string(), "v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT));
        let errs = validate_annotations(&big, "metadata.annotations");
        assert_eq!(errs.len(), 1);
        assert!(errs[0].message.starts_with("Too long"));
        let mut ok = BTreeMap::new();
        ok.insert("Example.COM/Key".to_string(), "v".to_string());
        assert!(validate_annotations(&ok, "a").is_empty());
    }
}
