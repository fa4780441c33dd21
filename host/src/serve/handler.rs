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
use crate::admission::{AdmissionError, AdmissionRequest, AdmissionResponse, GroupVersionKind};
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

/// The fields of an AdmissionReview the handler reads; the request stays JSON text until decoded.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, rename = "apiVersion")]
    api_version: Option<Value>,
    #[serde(default)]
    kind: Option<Value>,
    #[serde(default, borrow)]
    request: Option<&'a RawValue>,
}

/// The request with `object`, `oldObject` and `options` kept as JSON text: re-serialising it
/// copies them to the guest unparsed, and the object is parsed only when a patch needs it.
type RawRequest = AdmissionRequest<Box<RawValue>>;

/// A parsed AdmissionReview: its apiVersion (echoed back) and its typed request.
#[derive(Debug)]
struct Review {
    api_version: &'static str,
    request: RawRequest,
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
    let request: RawRequest = serde_json::from_str(request.get())
        .map_err(|e| AdmissionError::Decode(e.to_string()).to_string())?;
    Ok(Review {
        api_version,
        request,
    })
}

/// The metrics label of the request's kind; `None` for kinds the policy does not handle.
fn handled_kind(kind: &GroupVersionKind) -> Option<&'static str> {
    match (kind.group.as_str(), kind.kind.as_str()) {
        ("", "Pod") => Some("Pod"),
        ("apps.kruise.io", "SidecarSet") => Some("SidecarSet"),
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
        request,
    } = match parse_review(&body) {
        Ok(review) => review,
        Err(message) => return bad_request(message),
    };
    let Some(kind) = handled_kind(&request.kind) else {
        // The policy only handles Pods and SidecarSets: anything else passes unchanged.
        state.metrics.record_request("other", Verdict::Accepted);
        return review_response(
            api_version,
            &AdmissionResponse {
                uid: request.uid,
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
        let (response, verdict) = evaluate(state, &request);
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

/// One evaluation and its AdmissionResponse; the patch is computed on the objects' text.
fn evaluate(state: &AppState, request: &RawRequest) -> (AdmissionResponse, Verdict) {
    let _running = state.metrics.running();
    let started = Instant::now();
    let uid = request.uid.as_str();
    let result = request
        .to_json()
        .map_err(|e| EngineError::InvalidInput(e.to_string()))
        .and_then(|json| {
            state
                .engine
                .validate_json(&json, &state.settings_json, &state.callbacks)
        });
    state.metrics.observe_latency(started.elapsed());
    match result {
        Ok(validation) => {
            let object = request.object.as_deref().map(RawValue::get);
            let response = AdmissionResponse::from_validation_response(uid, object, &validation);
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

    fn review(request: &str) -> Vec<u8> {
        format!(
            r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{request}}}"#
        )
        .into_bytes()
    }

    const REQUEST: &str = r#"{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE","userInfo":{}"#;

    #[test]
    fn reviews_are_checked() {
        assert!(parse_review(&review(&format!("{REQUEST}}}"))).is_ok());
        assert!(parse_review(b"{").unwrap_err().contains("invalid JSON"));
        assert!(parse_review(b"[]").unwrap_err().contains("apiVersion"));
        let no_request = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#;
        assert!(parse_review(no_request).unwrap_err().contains("no request"));
        let no_uid = review(&format!("{}}}", REQUEST.replace(r#""uid":"u","#, "")));
        let error = parse_review(&no_uid).unwrap_err();
        assert!(
            error.starts_with(
                "cannot build AdmissionRequest object from given input: missing field `uid`"
            ),
            "{error}"
        );
        let uid_number = review(&format!("{}}}", REQUEST.replace(r#""u""#, "123")));
        let error = parse_review(&uid_number).unwrap_err();
        assert!(
            error.contains("invalid type: integer `123`, expected a string"),
            "{error}"
        );
        let array = br#"["admission.k8s.io/v1","AdmissionReview",{"uid":"u","kind":{}}]"#;
        assert!(parse_review(array).unwrap_err().contains("apiVersion"));
        assert!(
            parse_review(&review("[]"))
                .unwrap_err()
                .contains("no request")
        );
    }

    #[test]
    fn the_guest_gets_the_request_re_serialised() {
        let body = review(&format!(
            r#"{REQUEST},"unknown":1,"name":null,"dryRun":false,"object":{{"a" : null}},"oldObject":null}}"#
        ));
        let review = parse_review(&body).expect("a review");
        assert_eq!(review.request.uid, "u");
        assert_eq!(
            review.request.to_json().unwrap(),
            format!(r#"{REQUEST},"object":{{"a" : null}},"dryRun":false}}"#)
        );
    }
}
