//! `FieldError`: one validation problem, formatted like apimachinery's `field.Error`.

use std::fmt;

/// One problem found by validation: the offending field and what is wrong with it.
///
/// `message` is the body of an apimachinery `field.Error` (`Required value: …`,
/// `Invalid value: "x": …`), so `to_string()` reads exactly like upstream's errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for FieldError {}

fn with_detail(head: String, detail: &str) -> String {
    if detail.is_empty() {
        head
    } else {
        format!("{head}: {detail}")
    }
}

/// Go's `%q` for a string (close enough: Rust's debug escaping).
pub(crate) fn quote(value: &str) -> String {
    format!("{value:?}")
}

impl FieldError {
    pub(crate) fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }

    pub(crate) fn required(field: impl Into<String>, detail: &str) -> Self {
        Self::new(field, with_detail("Required value".into(), detail))
    }

    pub(crate) fn forbidden(field: impl Into<String>, detail: &str) -> Self {
        Self::new(field, with_detail("Forbidden".into(), detail))
    }

    /// `Invalid value: <value>: detail`; `value` is already formatted (see [`quote`]).
    pub(crate) fn invalid(
        field: impl Into<String>,
        value: impl fmt::Display,
        detail: &str,
    ) -> Self {
        Self::new(
            field,
            with_detail(format!("Invalid value: {value}"), detail),
        )
    }

    pub(crate) fn invalid_str(field: impl Into<String>, value: &str, detail: &str) -> Self {
        Self::invalid(field, quote(value), detail)
    }

    pub(crate) fn not_found(field: impl Into<String>, value: &str) -> Self {
        Self::new(field, format!("Not found: {}", quote(value)))
    }

    pub(crate) fn duplicate(field: impl Into<String>, value: &str) -> Self {
        Self::new(field, format!("Duplicate value: {}", quote(value)))
    }

    pub(crate) fn not_supported(field: impl Into<String>, value: &str, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|s| quote(s)).collect();
        Self::new(
            field,
            format!(
                "Unsupported value: {}: supported values: {}",
                quote(value),
                list.join(", ")
            ),
        )
    }

    pub(crate) fn too_long_bytes(field: impl Into<String>, max: usize) -> Self {
        Self::new(field, format!("Too long: may not be more than {max} bytes"))
    }
}

/// One message for a list of problems, as apimachinery's `ToAggregate().Error()` writes it:
/// the single error, or `[e1, e2, …]`.
pub fn summarize(errors: &[FieldError]) -> String {
    match errors {
        [] => String::new(),
        [one] => one.to_string(),
        many => {
            let parts: Vec<String> = many.iter().map(ToString::to_string).collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_apimachinery() {
        let e = FieldError::required("spec.selector", "no selector defined for SidecarSet");
        assert_eq!(
            e.to_string(),
            "spec.selector: Required value: no selector defined for SidecarSet"
        );
        let e = FieldError::invalid_str("metadata.name", "a_b", "bad");
        assert_eq!(e.to_string(), "metadata.name: Invalid value: \"a_b\": bad");
        let e = FieldError::not_supported("x", "y", &["A", "B"]);
        assert_eq!(
            e.to_string(),
            "x: Unsupported value: \"y\": supported values: \"A\", \"B\""
        );
        assert_eq!(summarize(&[]), "");
        assert_eq!(
            summarize(&[e.clone(), e.clone()]).matches(", x:").count(),
            1
        );
    }
}
