//! HTTP routing and the AdmissionReview handler of `serve`.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::AppState;
use super::metrics::Verdict;
use crate::admission::AdmissionResponse;
use crate::engine::EngineError;

/// What a listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Admission paths plus health and metrics.
    Webhook,
    /// Health and metrics only (`--metrics-listen`).
    Metrics,
}

type HttpResponse = Response<Full<Bytes>>;

fn text(status: StatusCode, body: impl Into<String>) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(body.into())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// `/`, `/validate`, `/mutate`, and Kubewarden's `/validate/{policy_id}` (also `/mutate/{id}`).
pub fn is_admission_path(path: &str) -> bool {
    matches!(path, "/" | "/validate" | "/mutate")
        || ["/validate/", "/mutate/"].iter().any(|prefix| {
            path.strip_prefix(prefix)
                .is_some_and(|id| !id.is_empty() && !id.contains('/'))
        })
}

/// Routes one request.
pub async fn handle(state: Arc<AppState>, role: Role, request: Request<Incoming>) -> HttpResponse {
    let path = request.uri().path().to_string();
    let response = match (request.method(), path.as_str()) {
        (&Method::GET, "/healthz") => text(StatusCode::OK, "ok\n"),
        (&Method::GET, "/readyz") if state.context.is_ready() => text(StatusCode::OK, "ready\n"),
        (&Method::GET, "/readyz") => text(
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: caches not synced\n",
        ),
        (&Method::GET, "/metrics") => {
            let mut response = text(StatusCode::OK, state.metrics.render());
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            response
        }
        (&Method::POST, p) if role == Role::Webhook && is_admission_path(p) => {
            admit(&state, request).await
        }
        (_, p) if role == Role::Webhook && is_admission_path(p) => text(
            StatusCode::METHOD_NOT_ALLOWED,
            "admission requests must be POSTed\n",
        ),
        _ => text(StatusCode::NOT_FOUND, format!("no route for {path}\n")),
    };
    if response.status().is_client_error() || response.status().is_server_error() {
        state.metrics.record_http_error(response.status().as_u16());
    }
    response
}

fn too_large(limit: usize) -> HttpResponse {
    text(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("request body larger than {limit} bytes\n"),
    )
}

fn bad_request(message: impl std::fmt::Display) -> HttpResponse {
    text(
        StatusCode::BAD_REQUEST,
        format!("malformed AdmissionReview: {message}\n"),
    )
}

/// The fields of an AdmissionReview the handler reads; the request stays JSON text for the guest.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, rename = "apiVersion")]
    api_version: Option<Value>,
    #[serde(default)]
    kind: Option<Value>,
    #[serde(default, borrow)]
    request: Option<&'a RawValue>,
}

/// The fields of the request the handler reads: `object` is what the patch is computed against.
#[derive(Deserialize)]
struct RequestHead<'a> {
    #[serde(default)]
    uid: Value,
    #[serde(default)]
    kind: Value,
    #[serde(default, borrow)]
    object: Option<&'a RawValue>,
}

/// A parsed AdmissionReview: its apiVersion (echoed back), its request's JSON text (sent to the
/// guest as it came), and what of the request the handler needs. The object stays text until a
/// patch is computed against it, on the evaluation thread (which then frees it too).
#[derive(Debug)]
struct Review {
    api_version: &'static str,
    request_json: Box<RawValue>,
    uid: String,
    kind: Value,
    object: Option<Box<RawValue>>,
}

fn parse_review(body: &[u8]) -> Result<Review, String> {
    let not_an_object = Envelope {
        api_version: None,
        kind: None,
        request: None,
    };
    let envelope: Envelope<'_> = match serde_json::from_slice(body) {
        // A derived struct also reads from an array: only an object is an AdmissionReview.
        Ok(_) if body.trim_ascii_start().first() != Some(&b'{') => not_an_object,
        Ok(envelope) => envelope,
        // Not an object at all (a number, a string): say what the apiVersion should have been.
        Err(e) if e.is_data() => not_an_object,
        Err(e) => return Err(format!("invalid JSON: {e}")),
    };
    let api_version = match envelope.api_version.as_ref().and_then(Value::as_str) {
        Some("admission.k8s.io/v1") => "admission.k8s.io/v1",
        Some("admission.k8s.io/v1beta1") => "admission.k8s.io/v1beta1",
        _ => {
            return Err(format!(
                "apiVersion must be admission.k8s.io/v1, got {}",
                envelope.api_version.unwrap_or(Value::Null)
            ));
        }
    };
    if envelope.kind.as_ref().and_then(Value::as_str) != Some("AdmissionReview") {
        return Err("kind must be AdmissionReview".into());
    }
    let request = envelope
        .request
        .filter(|request| request.get().starts_with('{'))
        .ok_or("the AdmissionReview has no request object")?;
    let head: RequestHead<'_> = serde_json::from_str(request.get())
        .map_err(|_| "the AdmissionReview has no request object".to_string())?;
    let Value::String(uid) = head.uid else {
        return Err("request.uid must be a string".into());
    };
    if !head.kind.is_object() {
        return Err("request.kind must be a GroupVersionKind object".into());
    }
    Ok(Review {
        api_version,
        request_json: request.to_owned(),
        uid,
        kind: head.kind,
        object: head.object.map(ToOwned::to_owned),
    })
}

/// The metrics label of the request's kind; `None` for kinds the policy does not handle.
fn handled_kind(kind: &Value) -> Option<&'static str> {
    let group = kind
        .get("group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match (group, kind.get("kind").and_then(Value::as_str)) {
        ("", Some("Pod")) => Some("Pod"),
        ("apps.kruise.io", Some("SidecarSet")) => Some("SidecarSet"),
        _ => None,
    }
}

/// How much of an oversized body without a Content-Length is still read (and dropped) before the
/// 413: a server that closes with unread bytes makes the kernel reset the connection, and the
/// client may lose the answer. A declared oversized length is refused before its body is read.
const DRAIN_BYTES: u64 = 4 * 1024 * 1024;

async fn read_body(state: &AppState, request: Request<Incoming>) -> Result<Bytes, HttpResponse> {
    let limit = state.max_body_bytes;
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large(limit));
    }
    let mut body = request.into_body();
    let mut kept = Vec::with_capacity(declared.map_or(0, |n| n.min(limit as u64) as usize));
    let mut total = 0u64;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| bad_request(format!("cannot read the body: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        total += data.len() as u64;
        if total <= limit as u64 {
            kept.extend_from_slice(&data);
        } else if total > limit as u64 + DRAIN_BYTES {
            break;
        }
    }
    if total > limit as u64 {
        return Err(too_large(limit));
    }
    Ok(Bytes::from(kept))
}

/// The AdmissionReview answer, serialized straight from the response (no `Value` copy).
#[derive(Serialize)]
struct ReviewAnswer<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    kind: &'static str,
    response: &'a AdmissionResponse,
}

fn review_response(api_version: &str, response: &AdmissionResponse) -> HttpResponse {
    let answer = ReviewAnswer {
        api_version,
        kind: "AdmissionReview",
        response,
    };
    match serde_json::to_vec(&answer) {
        Ok(body) => {
            let mut response = Response::new(Full::new(Bytes::from(body)));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(e) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot serialize the AdmissionReview: {e}\n"),
        ),
    }
}

fn error_reason(error: &EngineError) -> &'static str {
    match error {
        e if e.is_deadline() => "deadline",
        EngineError::MemoryLimitExceeded { .. } => "memory",
        EngineError::GuestCallFailure(_) | EngineError::InitFailed(_) => "guest",
        EngineError::InvalidResponse(_) => "invalid_response",
        _ => "internal",
    }
}

async fn admit(state: &Arc<AppState>, request: Request<Incoming>) -> HttpResponse {
    let body = match read_body(state, request).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let Review {
        api_version,
        request_json,
        uid,
        kind,
        object,
    } = match parse_review(&body) {
        Ok(review) => review,
        Err(message) => return bad_request(message),
    };
    let Some(kind) = handled_kind(&kind) else {
        // The policy only handles Pods and SidecarSets: anything else passes unchanged.
        state.metrics.record_request("other", Verdict::Accepted);
        return review_response(
            api_version,
            &AdmissionResponse {
                uid,
                allowed: true,
                ..Default::default()
            },
        );
    };
    if !state.context.is_ready() {
        return text(
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: caches not synced\n",
        );
    }
    let _in_flight = state.metrics.in_flight();
    let Ok(permit) = Arc::clone(&state.workers).acquire_owned().await else {
        return text(StatusCode::SERVICE_UNAVAILABLE, "shutting down\n");
    };
    let answer = move |state: &AppState| {
        let _permit = permit;
        let (response, verdict) = evaluate(state, &request_json, &uid, object.as_deref());
        state.metrics.record_request(kind, verdict);
        review_response(api_version, &response)
    };
    // On a connection thread a guest that cannot block on a runtime runs right here: no handoff
    // to a blocking thread and back (host/BENCHMARKS.md). It holds up only that thread.
    if super::threads::on_connection_thread() && state.engine.runs_on_async_threads() {
        return answer(state);
    }
    // wasmtime-wasi's sync functions block on a runtime: never on an async worker thread.
    let worker_state = Arc::clone(state);
    tokio::task::spawn_blocking(move || answer(&worker_state))
        .await
        .unwrap_or_else(|e| {
            tracing::error!(error = %e, "evaluation thread failed");
            state.metrics.record_error("internal");
            text(StatusCode::INTERNAL_SERVER_ERROR, "evaluation failed\n")
        })
}

/// One evaluation and its AdmissionResponse; the object is parsed only when a patch needs it.
fn evaluate(
    state: &AppState,
    request_json: &RawValue,
    uid: &str,
    object: Option<&RawValue>,
) -> (AdmissionResponse, Verdict) {
    let _running = state.metrics.running();
    let started = Instant::now();
    let result =
        state
            .engine
            .validate_json(request_json.get(), &state.settings_json, &state.callbacks);
    state.metrics.observe_latency(started.elapsed());
    match result {
        Ok(validation) => {
            let object: Option<Value> = match (&validation.mutated_object, object) {
                // Valid JSON (checked as a RawValue); only a nesting past serde's limit fails.
                (Some(_), Some(raw)) => serde_json::from_str(raw.get()).ok(),
                _ => None,
            };
            let response =
                AdmissionResponse::from_validation_response(uid, object.as_ref(), &validation);
            let verdict = match (response.allowed, response.patch.is_some()) {
                (true, true) => Verdict::Mutated,
                (true, false) => Verdict::Accepted,
                (false, _) => Verdict::Rejected,
            };
            (response, verdict)
        }
        Err(e) => {
            tracing::warn!(uid = %uid, error = %e, "policy evaluation failed");
            state.metrics.record_error(error_reason(&e));
            (
                AdmissionResponse::from_engine_error(uid, &e),
                Verdict::Error,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_paths() {
        for path in [
            "/",
            "/validate",
            "/mutate",
            "/validate/sidecarset",
            "/mutate/x",
        ] {
            assert!(is_admission_path(path), "{path}");
        }
        for path in ["/validate/", "/validate/a/b", "/audit/x", "/metrics"] {
            assert!(!is_admission_path(path), "{path}");
        }
    }

    #[test]
    fn reviews_are_checked() {
        let ok = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"}}}"#;
        assert!(parse_review(ok).is_ok());
        assert!(parse_review(b"{").unwrap_err().contains("invalid JSON"));
        assert!(parse_review(b"[]").unwrap_err().contains("apiVersion"));
        let no_request = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#;
        assert!(parse_review(no_request).unwrap_err().contains("no request"));
        let no_uid = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"kind":{}}}"#;
        assert!(parse_review(no_uid).unwrap_err().contains("uid"));
        let array = br#"["admission.k8s.io/v1","AdmissionReview",{"uid":"u","kind":{}}]"#;
        assert!(parse_review(array).unwrap_err().contains("apiVersion"));
        let not_object =
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":[]}"#;
        assert!(parse_review(not_object).unwrap_err().contains("no request"));
        let review = parse_review(ok).expect("a review");
        assert_eq!(review.uid, "u");
        assert_eq!(
            review.request_json.get(),
            r#"{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"}}"#
        );
    }
}
