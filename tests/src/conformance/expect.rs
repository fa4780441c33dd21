//! The expectation rules of a case: subset matching, decoded JSON annotations, absent pointers.

use base64::Engine as _;
use serde_json::Value;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub path: String,
    pub detail: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.detail)
    }
}

fn mismatch(path: &str, detail: impl Into<String>) -> Mismatch {
    Mismatch {
        path: path.to_string(),
        detail: detail.into(),
    }
}

/// Compare an AdmissionResponse (as JSON) for `request` with `expect`.
pub fn check(request: &Value, response: &Value, expect: &Value) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let allowed = response
        .get("allowed")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if let Some(want) = expect.get("allowed").and_then(Value::as_bool)
        && want != allowed
    {
        let message = response
            .pointer("/status/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        out.push(mismatch(
            "allowed",
            format!("want {want}, got {allowed} ({message})"),
        ));
    }
    let patch = match decode_patch(response) {
        Ok(patch) => patch,
        Err(detail) => {
            out.push(mismatch("patch", detail));
            return out;
        }
    };
    if let Some(want) = expect.get("mutated").and_then(Value::as_bool)
        && want != patch.is_some()
    {
        out.push(mismatch(
            "mutated",
            format!("want {want}, got {}", patch.is_some()),
        ));
    }
    if let Some(want) = expect.get("messageContains").and_then(Value::as_str) {
        let message = response
            .pointer("/status/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !message.to_lowercase().contains(&want.to_lowercase()) {
            out.push(mismatch(
                "message",
                format!("{message:?} does not contain {want:?}"),
            ));
        }
    }
    let mut object = request.get("object").cloned().unwrap_or(Value::Null);
    if let Some(patch) = patch
        && let Err(error) = json_patch::patch(&mut object, &patch)
    {
        out.push(mismatch(
            "patch",
            format!("does not apply to the request object: {error}"),
        ));
        return out;
    }
    if let Some(want) = expect.get("object") {
        subset("", want, &object, &mut out);
    }
    if let Some(Value::Object(wanted)) = expect.get("annotationsJson") {
        for (key, want) in wanted {
            let path = format!("annotations[{key}]");
            let raw = object
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(key));
            match raw
                .and_then(Value::as_str)
                .map(serde_json::from_str::<Value>)
            {
                Some(Ok(actual)) => subset(&path, want, &actual, &mut out),
                Some(Err(error)) => out.push(mismatch(&path, format!("not JSON: {error}"))),
                None => out.push(mismatch(&path, "missing")),
            }
        }
    }
    for pointer in expect
        .get("absent")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(pointer) = pointer.as_str()
            && object.pointer(pointer).is_some()
        {
            out.push(mismatch(pointer, "present but must be absent"));
        }
    }
    out
}

fn decode_patch(response: &Value) -> Result<Option<json_patch::Patch>, String> {
    let Some(encoded) = response.get("patch").and_then(Value::as_str) else {
        return Ok(None);
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| format!("not base64: {e}"))?;
    let patch: json_patch::Patch =
        serde_json::from_slice(&bytes).map_err(|e| format!("not a JSONPatch: {e}"))?;
    Ok((!patch.0.is_empty()).then_some(patch))
}

/// Objects: every listed key matches; lists: same length, element-wise; scalars: equal.
fn subset(path: &str, want: &Value, actual: &Value, out: &mut Vec<Mismatch>) {
    match (want, actual) {
        (Value::Object(want), Value::Object(actual)) => {
            for (key, want) in want {
                let child = format!("{path}/{key}");
                match actual.get(key) {
                    Some(actual) => subset(&child, want, actual, out),
                    None => out.push(mismatch(&child, format!("missing, want {want}"))),
                }
            }
        }
        (Value::Array(want), Value::Array(actual)) => {
            if want.len() != actual.len() {
                out.push(mismatch(
                    path,
                    format!(
                        "want {} items, got {}: {}",
                        want.len(),
                        actual.len(),
                        Value::Array(actual.clone())
                    ),
                ));
                return;
            }
            for (index, (want, actual)) in want.iter().zip(actual).enumerate() {
                subset(&format!("{path}/{index}"), want, actual, out);
            }
        }
        (want, actual) if want == actual => {}
        (want, actual) => out.push(mismatch(path, format!("want {want}, got {actual}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subset_rules() {
        let mut out = Vec::new();
        subset(
            "",
            &json!({"a": [{"b": 1}]}),
            &json!({"a": [{"b": 1, "c": 2}], "d": 3}),
            &mut out,
        );
        assert!(out.is_empty());
        subset(
            "",
            &json!({"a": [{"b": 1}]}),
            &json!({"a": [{"b": 1}, {"b": 2}]}),
            &mut out,
        );
        assert_eq!(out.len(), 1, "list length differs");
        subset("", &json!({"x": 1}), &json!({}), &mut out);
        assert_eq!(out.len(), 2, "missing key");
    }

    #[test]
    fn checks_a_patched_response() {
        let patch = json!([{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]);
        let encoded = base64::engine::general_purpose::STANDARD.encode(patch.to_string());
        let response = json!({"allowed": true, "patch": encoded, "patchType": "JSONPatch"});
        let request = json!({"object": {"metadata": {}}});
        let expect = json!({"allowed": true, "mutated": true, "object": {"metadata": {"labels": {"a": "b"}}}, "absent": ["/spec"]});
        assert!(check(&request, &response, &expect).is_empty());
        let wrong = json!({"mutated": false, "absent": ["/metadata/labels/a"]});
        assert_eq!(check(&request, &response, &wrong).len(), 2);
        let rejected = json!({"allowed": false, "status": {"message": "Bad Selector"}});
        assert!(
            check(
                &request,
                &rejected,
                &json!({"allowed": false, "messageContains": "selector"})
            )
            .is_empty()
        );
    }
}
