//! The waPC `validate` call as bytes: a ValidationRequest in, a ValidationResponse out. This is
//! everything the module does per request, so it also runs natively (tests, benchmarks).

use super::{Cluster, MAX_REQUEST_BYTES, Outcome, Verdict, evaluate, too_large};
use crate::settings::Settings;
use serde_json::{Value, json};

/// Kubewarden's ValidationResponse, serialised straight from the verdict (no `Value` copy).
#[derive(serde::Serialize)]
struct ValidationResponse<'a> {
    accepted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    mutated_object: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<u16>,
    warnings: Option<&'a [String]>,
}

/// Decodes a `validate` payload, decides, and encodes the answer. Malformed input is a rejection
/// with a message, never an error: the only error is a response that cannot be serialised.
pub fn validate(
    payload: &[u8],
    cluster: &mut dyn Cluster,
    now: &str,
) -> Result<Vec<u8>, serde_json::Error> {
    if payload.len() > MAX_REQUEST_BYTES {
        return respond(&too_large(payload.len()));
    }
    // Any JSON is taken: what is not a ValidationRequest object is rejected by `evaluate`.
    let parsed =
        crate::rawjson::value::parse(payload).map_or_else(|| serde_json::from_slice(payload), Ok);
    let mut input: Value = match parsed {
        Ok(input) => input,
        Err(error) => {
            return reject(&format!("invalid ValidationRequest JSON: {error}"), 400);
        }
    };
    let settings = match Settings::from_value(input.get("settings").unwrap_or(&Value::Null)) {
        Ok(settings) => settings,
        Err(error) => return reject(&error.to_string(), 400),
    };
    let request = input
        .get_mut("request")
        .map(Value::take)
        .unwrap_or(Value::Null);
    respond(&evaluate(request, &settings, cluster, now))
}

fn respond(verdict: &Verdict) -> Result<Vec<u8>, serde_json::Error> {
    let mut response = ValidationResponse {
        accepted: true,
        mutated_object: None,
        message: None,
        code: None,
        warnings: (!verdict.warnings.is_empty()).then_some(verdict.warnings.as_slice()),
    };
    match &verdict.outcome {
        Outcome::Accept => {}
        Outcome::Mutate(object) => response.mutated_object = Some(object),
        Outcome::Reject { message, code } => {
            response.accepted = false;
            response.message = Some(message);
            response.code = Some(*code);
        }
    }
    let mut out = Vec::with_capacity(16 * 1024);
    serde_json::to_writer(&mut out, &response)?;
    Ok(out)
}

fn reject(message: &str, code: u16) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&json!({"accepted": false, "message": message, "code": code}))
}

#[cfg(test)]
mod tests;
