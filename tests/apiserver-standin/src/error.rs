//! API errors, rendered as `metav1.Status` objects exactly like kube-apiserver does.

use serde_json::{Value, json};

use crate::resources::ResourceDef;

/// One field-level cause of an `Invalid` error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// `FieldValueForbidden`, `FieldValueInvalid`, `FieldValueRequired`, ...
    pub reason: &'static str,
    /// The field path, e.g. `spec` or `spec.containers[0].image`.
    pub field: String,
    /// The message without the field, e.g. `Forbidden: pod updates may not ...` (as in a Status cause).
    pub message: String,
}

impl Cause {
    /// `<field>: Forbidden: <detail>`.
    pub fn forbidden(field: impl Into<String>, detail: impl AsRef<str>) -> Cause {
        let field = field.into();
        let message = format!("Forbidden: {}", detail.as_ref());
        Cause {
            reason: "FieldValueForbidden",
            field,
            message,
        }
    }

    /// `<field>: Required value[: <detail>]`.
    pub fn required(field: impl Into<String>, detail: impl AsRef<str>) -> Cause {
        let field = field.into();
        let detail = detail.as_ref();
        let message = if detail.is_empty() {
            "Required value".to_string()
        } else {
            format!("Required value: {detail}")
        };
        Cause {
            reason: "FieldValueRequired",
            field,
            message,
        }
    }

    /// `<field>: Invalid value: <value>: <detail>` (the value as JSON, like `field.Error`).
    pub fn invalid(field: impl Into<String>, value: &Value, detail: impl AsRef<str>) -> Cause {
        let field = field.into();
        let message = format!("Invalid value: {value}: {}", detail.as_ref());
        Cause {
            reason: "FieldValueInvalid",
            field,
            message,
        }
    }
}

impl Cause {
    /// `<field>: Too long: may not be more than <max> bytes` (`field.TooLong`).
    pub fn too_long(field: impl Into<String>, max: usize) -> Cause {
        let unit = if max == 1 { "byte" } else { "bytes" };
        Cause {
            reason: "FieldValueTooLong",
            field: field.into(),
            message: format!("Too long: may not be more than {max} {unit}"),
        }
    }
}

/// An error answered to a client as a `metav1.Status`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `metav1.StatusReason`, e.g. `NotFound`, `Conflict`, `Invalid`.
    pub reason: &'static str,
    /// Human readable message in the API server's wording.
    pub message: String,
    /// `details` of the Status (name, group, kind, causes, retryAfterSeconds).
    pub details: Option<Value>,
    /// A whole Status answered as it is (a webhook's denial keeps the webhook's own reason and details).
    pub status: Option<Value>,
}

fn qualified(def: &ResourceDef) -> String {
    if def.group.is_empty() {
        def.plural.to_string()
    } else {
        format!("{}.{}", def.plural, def.group)
    }
}

fn gr_details(def: &ResourceDef, name: &str) -> Value {
    let mut d = json!({ "name": name, "kind": def.plural });
    if !def.group.is_empty() {
        d["group"] = json!(def.group);
    }
    d
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
            status: None,
        }
    }

    /// An error answered with `status` as it is (its `code` is the HTTP status).
    pub fn from_status(status: Value) -> ApiError {
        let code = status
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
            .filter(|c| (400..600).contains(c))
            .unwrap_or(400);
        let message = status
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        ApiError {
            status: Some(status),
            ..ApiError::new(code, "", message)
        }
    }

    /// 404 `<resource> "<name>" not found`.
    pub fn not_found(def: &ResourceDef, name: &str) -> ApiError {
        ApiError {
            details: Some(gr_details(def, name)),
            ..ApiError::new(
                404,
                "NotFound",
                format!("{} \"{name}\" not found", qualified(def)),
            )
        }
    }

    /// 404 for a namespace that does not exist (create in a missing namespace).
    pub fn namespace_not_found(ns: &str) -> ApiError {
        ApiError {
            details: Some(json!({ "name": ns, "kind": "namespaces" })),
            ..ApiError::new(404, "NotFound", format!("namespaces \"{ns}\" not found"))
        }
    }

    /// 404 for a path that serves nothing.
    pub fn path_not_found() -> ApiError {
        ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 409 `<resource> "<name>" already exists`.
    pub fn already_exists(def: &ResourceDef, name: &str) -> ApiError {
        ApiError {
            details: Some(gr_details(def, name)),
            ..ApiError::new(
                409,
                "AlreadyExists",
                format!("{} \"{name}\" already exists", qualified(def)),
            )
        }
    }

    /// 409 Conflict with the API server's optimistic-concurrency wording.
    pub fn conflict(def: &ResourceDef, name: &str) -> ApiError {
        ApiError::conflict_because(
            def,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 Conflict with a custom cause.
    pub fn conflict_because(def: &ResourceDef, name: &str, why: &str) -> ApiError {
        ApiError {
            details: Some(gr_details(def, name)),
            ..ApiError::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{name}\": {why}",
                    qualified(def)
                ),
            )
        }
    }

    /// 422 `<Kind> "<name>" is invalid: <causes>`.
    pub fn invalid(def: &ResourceDef, name: &str, causes: Vec<Cause>) -> ApiError {
        let kind_q = if def.group.is_empty() {
            def.kind.to_string()
        } else {
            format!("{}.{}", def.kind, def.group)
        };
        // The message lists each distinct error once (`ErrorList.ToAggregate`); causes keep all.
        let mut msgs: Vec<String> = Vec::new();
        for c in &causes {
            let m = format!("{}: {}", c.field, c.message);
            if !msgs.contains(&m) {
                msgs.push(m);
            }
        }
        let joined = if msgs.len() == 1 {
            msgs[0].clone()
        } else {
            format!("[{}]", msgs.join(", "))
        };
        let mut details = json!({ "name": name, "kind": def.kind });
        if !def.group.is_empty() {
            details["group"] = json!(def.group);
        }
        details["causes"] = causes
            .iter()
            .map(|c| json!({ "reason": c.reason, "message": c.message, "field": c.field }))
            .collect();
        ApiError {
            details: Some(details),
            ..ApiError::new(
                422,
                "Invalid",
                format!("{kind_q} \"{name}\" is invalid: {joined}"),
            )
        }
    }

    /// 422 without a kind.
    pub fn unprocessable(message: impl Into<String>) -> ApiError {
        ApiError::new(422, "Invalid", message)
    }

    /// What a JSON patch that cannot be applied (a failed `test`, a missing path) gets:
    /// `NewGenericServerResponse(422, "", GroupResource{}, "", err, 0, false)`, i.e. the
    /// generic message, empty details and no causes (the jsonpatch error is dropped).
    pub fn json_patch_not_applicable() -> ApiError {
        ApiError {
            details: Some(json!({})),
            ..ApiError::new(
                422,
                "Invalid",
                "the server rejected our request due to an error in our request",
            )
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", message)
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(message: impl Into<String>) -> ApiError {
        ApiError::new(405, "MethodNotAllowed", message)
    }

    /// 410 Gone for a too-old resourceVersion.
    pub fn gone(requested: u64, oldest: u64) -> ApiError {
        ApiError::new(
            410,
            "Expired",
            format!("too old resource version: {requested} ({oldest})"),
        )
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(message: impl Into<String>) -> ApiError {
        ApiError::new(415, "UnsupportedMediaType", message)
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> ApiError {
        let message = message.into();
        ApiError {
            details: Some(json!({ "causes": [{ "message": message }] })),
            ..ApiError::new(
                500,
                "InternalError",
                format!("Internal error occurred: {message}"),
            )
        }
    }

    /// An injected fault with an arbitrary status code.
    pub fn injected(code: u16) -> ApiError {
        match code {
            409 => ApiError::new(
                409,
                "Conflict",
                "injected fault: the object has been modified; please apply your changes to the latest version and try again",
            ),
            429 => ApiError {
                details: Some(json!({ "retryAfterSeconds": 1 })),
                ..ApiError::new(
                    429,
                    "TooManyRequests",
                    "injected fault: too many requests, please try again later",
                )
            },
            500 => ApiError::internal("injected fault"),
            503 => ApiError::new(
                503,
                "ServiceUnavailable",
                "injected fault: the server is currently unable to handle the request",
            ),
            504 => ApiError::new(
                504,
                "Timeout",
                "injected fault: the server was unable to return a response in the time allotted",
            ),
            other => ApiError::new(
                other,
                "Unknown",
                format!("injected fault with status {other}"),
            ),
        }
    }

    /// The `metav1.Status` JSON of this error.
    pub fn to_status(&self) -> Value {
        if let Some(status) = &self.status {
            return status.clone();
        }
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}
