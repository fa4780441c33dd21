//! Probes and lifecycle handlers (`validateProbe`, `validateLifecycle`, `validateHandler`).

use super::super::errors::FieldError;
use super::super::k8s_names::{is_valid_port_name, is_valid_port_num, regex_error};
use super::json::{Object, int_at, list_at, obj_at, objects_at, str_at};
use serde_json::Value;

/// The synthetic pod's `terminationGracePeriodSeconds` (`v1.DefaultTerminationGracePeriodSeconds`).
const TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;
const HTTP_HEADER_NAME_FMT: &str = "[-A-Za-z0-9]+";
const HTTP_HEADER_NAME_ERR: &str =
    "a valid HTTP header must consist of alphanumeric characters or '-'";

/// Which probe: liveness and startup probes need `successThreshold: 1`; readiness probes may
/// not set `terminationGracePeriodSeconds`.
#[derive(Clone, Copy, PartialEq)]
pub enum ProbeKind {
    Liveness,
    Readiness,
    Startup,
}

pub fn validate_probe(probe: &Object, kind: ProbeKind, path: &str, errs: &mut Vec<FieldError>) {
    validate_handler(probe, &["exec", "httpGet", "tcpSocket", "grpc"], path, errs);
    for key in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        if let Some(n) = int_at(probe, key, path, errs).filter(|n| *n < 0) {
            errs.push(FieldError::invalid(
                format!("{path}.{key}"),
                n,
                "must be greater than or equal to 0",
            ));
        }
    }
    let grace = int_at(probe, "terminationGracePeriodSeconds", path, errs);
    if let Some(g) = grace.filter(|g| *g <= 0) {
        errs.push(FieldError::invalid(
            format!("{path}.terminationGracePeriodSeconds"),
            g,
            "must be greater than 0",
        ));
    }
    match kind {
        ProbeKind::Liveness | ProbeKind::Startup => {
            let threshold = int_at(probe, "successThreshold", path, errs).unwrap_or(0);
            if threshold != 1 {
                errs.push(FieldError::invalid(
                    format!("{path}.successThreshold"),
                    threshold,
                    "must be 1",
                ));
            }
        }
        ProbeKind::Readiness => {
            if let Some(g) = grace {
                errs.push(FieldError::invalid(
                    format!("{path}.terminationGracePeriodSeconds"),
                    g,
                    "must not be set for readinessProbes",
                ));
            }
        }
    }
}

pub fn validate_lifecycle(lifecycle: &Object, path: &str, errs: &mut Vec<FieldError>) {
    for hook in ["postStart", "preStop"] {
        if let Some(handler) = obj_at(lifecycle, hook, path, errs) {
            validate_handler(
                handler,
                &["exec", "httpGet", "tcpSocket", "sleep"],
                &format!("{path}.{hook}"),
                errs,
            );
        }
    }
}

/// Exactly one handler type, and the checks of the first one present (upstream checks the
/// handlers in the order exec, httpGet, tcpSocket, grpc, sleep and only reports the others).
fn validate_handler(handler: &Object, kinds: &[&str], path: &str, errs: &mut Vec<FieldError>) {
    let present: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| handler.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    match present.as_slice() {
        [] => errs.push(FieldError::required(path, "must specify a handler type")),
        [_] => {}
        [_, rest @ ..] => {
            for extra in rest {
                errs.push(FieldError::forbidden(
                    format!("{path}.{extra}"),
                    "may not specify more than 1 handler type",
                ));
            }
        }
    }
    for (i, kind) in present.iter().enumerate() {
        let Some(action) = obj_at(handler, kind, path, errs) else {
            continue;
        };
        if i == 0 {
            validate_action(kind, action, &format!("{path}.{kind}"), errs);
        }
    }
}

/// The checks of one handler action (`apath` = its path, e.g. `….preStop.sleep`).
fn validate_action(kind: &str, action: &Object, apath: &str, errs: &mut Vec<FieldError>) {
    match kind {
        "exec" if list_at(action, "command", apath, errs).is_empty() => {
            errs.push(FieldError::required(format!("{apath}.command"), ""));
        }
        "httpGet" => validate_http_get(action, apath, errs),
        "tcpSocket" => {
            validate_port_num_or_name(action.get("port"), &format!("{apath}.port"), errs)
        }
        "grpc" => {
            let port = int_at(action, "port", apath, errs).unwrap_or(0);
            for msg in is_valid_port_num(port) {
                errs.push(FieldError::invalid(format!("{apath}.port"), port, &msg));
            }
        }
        "sleep" => validate_sleep(action, apath, errs),
        _ => {}
    }
}

fn validate_http_get(http: &Object, hpath: &str, errs: &mut Vec<FieldError>) {
    if str_at(http, "path", hpath, errs).is_empty() {
        errs.push(FieldError::required(format!("{hpath}.path"), ""));
    }
    validate_port_num_or_name(http.get("port"), &format!("{hpath}.port"), errs);
    let scheme = str_at(http, "scheme", hpath, errs);
    if scheme != "HTTP" && scheme != "HTTPS" {
        errs.push(FieldError::not_supported(
            format!("{hpath}.scheme"),
            scheme,
            &["HTTP", "HTTPS"],
        ));
    }
    for (header_path, header) in objects_at(http, "httpHeaders", hpath, errs) {
        let name = str_at(header, "name", &header_path, errs);
        str_at(header, "value", &header_path, errs);
        if !is_http_header_name(name) {
            errs.push(FieldError::invalid_str(
                format!("{header_path}.name"),
                name,
                &regex_error(
                    HTTP_HEADER_NAME_ERR,
                    HTTP_HEADER_NAME_FMT,
                    &["X-Header-Name"],
                ),
            ));
        }
    }
}

/// `IsHTTPHeaderName`: `[-A-Za-z0-9]+` (stricter than RFC 7230's token).
fn is_http_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
}

/// `validateSleepAction` with the synthetic pod's grace period. Kruise's validation options
/// leave `AllowPodLifecycleSleepActionZeroValue` off, so zero seconds are refused too.
fn validate_sleep(sleep: &Object, spath: &str, errs: &mut Vec<FieldError>) {
    let seconds = int_at(sleep, "seconds", spath, errs).unwrap_or(0);
    let grace = TERMINATION_GRACE_PERIOD_SECONDS;
    if seconds <= 0 || seconds > grace {
        errs.push(FieldError::invalid(
            format!("{spath}.seconds"),
            seconds,
            &format!(
                "must be greater than 0 and less than terminationGracePeriodSeconds ({grace}). \
                 Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."
            ),
        ));
    }
}

/// `ValidatePortNumOrName` over an IntOrString port.
fn validate_port_num_or_name(port: Option<&Value>, field: &str, errs: &mut Vec<FieldError>) {
    match port {
        Some(Value::String(name)) => {
            for msg in is_valid_port_name(name) {
                errs.push(FieldError::invalid_str(field, name, &msg));
            }
        }
        Some(v) if v.is_i64() || v.is_u64() => {
            let n = v.as_i64().unwrap_or(i64::MAX);
            for msg in is_valid_port_num(n) {
                errs.push(FieldError::invalid(field, n, &msg));
            }
        }
        None | Some(Value::Null) => errs.push(FieldError::invalid(
            field,
            0,
            "must be between 1 and 65535, inclusive",
        )),
        Some(other) => errs.push(FieldError::invalid(
            field,
            other.to_string(),
            "must be an integer or a port name",
        )),
    }
}
