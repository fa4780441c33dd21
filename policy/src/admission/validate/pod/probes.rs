//! Probes and lifecycle handlers (`validateProbe`, `validateLifecycle`, `validateHandler`).

use super::super::errors::FieldError;
use super::super::k8s_names::{is_valid_port_name, is_valid_port_num};
use super::json::{Object, int_at, list_at, obj_at, str_at};
use serde_json::Value;

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

/// Exactly one handler type, and the basic checks of each.
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
    if let Some(exec) = obj_at(handler, "exec", path, errs)
        && list_at(exec, "command", &format!("{path}.exec"), errs).is_empty()
    {
        errs.push(FieldError::required(format!("{path}.exec.command"), ""));
    }
    if let Some(http) = obj_at(handler, "httpGet", path, errs) {
        let hpath = format!("{path}.httpGet");
        if str_at(http, "path", &hpath, errs).is_empty() {
            errs.push(FieldError::required(format!("{hpath}.path"), ""));
        }
        validate_port_num_or_name(http.get("port"), &format!("{hpath}.port"), errs);
        let scheme = str_at(http, "scheme", &hpath, errs);
        if scheme != "HTTP" && scheme != "HTTPS" {
            errs.push(FieldError::not_supported(
                format!("{hpath}.scheme"),
                scheme,
                &["HTTP", "HTTPS"],
            ));
        }
    }
    if let Some(tcp) = obj_at(handler, "tcpSocket", path, errs) {
        validate_port_num_or_name(tcp.get("port"), &format!("{path}.tcpSocket.port"), errs);
    }
    if let Some(grpc) = obj_at(handler, "grpc", path, errs) {
        let gpath = format!("{path}.grpc");
        let port = int_at(grpc, "port", &gpath, errs).unwrap_or(0);
        for msg in is_valid_port_num(port) {
            errs.push(FieldError::invalid(format!("{gpath}.port"), port, &msg));
        }
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
