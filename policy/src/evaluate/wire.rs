//! The waPC `validate` call as bytes: a ValidationRequest in, a ValidationResponse out. This is
//! everything the module does per request, so it also runs natively (tests, benchmarks).

use super::{Cluster, MAX_REQUEST_BYTES, Outcome, Verdict, evaluate, too_large};
use crate::rawjson::shaped::{self, Rest, Shape};
use crate::settings::Settings;
use serde_json::{Value, json};

/// A payload whose request is a pod's: its object is read only as far as injection reads it.
const POD_PAYLOAD: Shape = Shape::Object {
    keep: &[("request", &POD_REQUEST)],
    rest: Rest::Full,
};
const POD_REQUEST: Shape = Shape::Object {
    keep: &[("object", &crate::inject::pod::SHAPE)],
    rest: Rest::Full,
};

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
    draw: &mut dyn FnMut() -> f64,
) -> Result<Vec<u8>, serde_json::Error> {
    if payload.len() > MAX_REQUEST_BYTES {
        return respond(&too_large(payload.len()), false);
    }
    // Any JSON is taken: what is not a ValidationRequest object is rejected by `evaluate`.
    let (mut input, shaped) = match shaped::parse(payload, &POD_PAYLOAD).filter(is_pod_request) {
        Some(input) => (input, true),
        None => match crate::rawjson::value::parse(payload)
            .map_or_else(|| serde_json::from_slice(payload), Ok)
        {
            Ok(input) => (input, false),
            Err(error) => {
                return reject(&format!("invalid ValidationRequest JSON: {error}"), 400);
            }
        },
    };
    let settings = match Settings::from_value(input.get("settings").unwrap_or(&Value::Null)) {
        Ok(settings) => settings,
        Err(error) => return reject(&error.to_string(), 400),
    };
    let request = input
        .get_mut("request")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let verdict = evaluate(request, &settings, cluster, now, draw);
    let response = respond(&verdict, shaped);
    crate::arena::release((verdict, input, settings));
    response
}

/// Whether `evaluate` takes the request as a pod's (only then is its object read by shape).
fn is_pod_request(input: &Value) -> bool {
    let kind = |key: &str| {
        input
            .get("request")
            .and_then(|r| r.get("kind"))
            .and_then(|k| k.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    kind("group").is_empty() && kind("kind") == "Pod"
}

/// `shaped`: a mutated object read by shape is written with its unread text put back.
fn respond(verdict: &Verdict, shaped: bool) -> Result<Vec<u8>, serde_json::Error> {
    let mut response = ValidationResponse {
        accepted: true,
        mutated_object: None,
        message: None,
        code: None,
        warnings: (!verdict.warnings.is_empty()).then_some(verdict.warnings.as_slice()),
    };
    let mut out = Vec::with_capacity(16 * 1024);
    match &verdict.outcome {
        Outcome::Accept => {}
        Outcome::Mutate(object) if shaped => {
            // `{"mutated_object":…,` and then the other members' `"accepted":…}`.
            out.extend_from_slice(b"{\"mutated_object\":");
            shaped::write(&mut out, object)?;
            out.push(b',');
            let rest = serde_json::to_vec(&response)?;
            out.extend_from_slice(rest.get(1..).unwrap_or_default());
            return Ok(out);
        }
        Outcome::Mutate(object) => response.mutated_object = Some(object),
        Outcome::Reject { message, code } => {
            response.accepted = false;
            response.message = Some(message);
            response.code = Some(*code);
        }
    }
    serde_json::to_writer(&mut out, &response)?;
    Ok(out)
}

fn reject(message: &str, code: u16) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&json!({"accepted": false, "message": message, "code": code}))
}

#[cfg(test)]
mod tests;
