//! The host side of `__host_call`: a trait the embedder implements, plus Kubewarden's dispatch rules.

use std::sync::Arc;

use serde_json::Value;

/// Answers the guest's host-capability calls (`kubernetes/get_resource`, …).
///
/// Called synchronously on the thread that runs the guest; errors are strings, as in waPC.
pub trait HostCallbacks: Send + Sync {
    /// Handles one capability call; `binding` is always `kubewarden` when the engine calls this.
    fn call(
        &self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String>;

    /// Receives the guest's `tracing/log` records (JSON with `level`, `message`, …).
    fn log(&self, payload: &[u8]) {
        default_log(payload);
    }
}

impl<T: HostCallbacks + ?Sized> HostCallbacks for Arc<T> {
    fn call(&self, b: &str, n: &str, o: &str, p: &[u8]) -> Result<Vec<u8>, String> {
        (**self).call(b, n, o, p)
    }
    fn log(&self, payload: &[u8]) {
        (**self).log(payload)
    }
}

impl<T: HostCallbacks + ?Sized> HostCallbacks for &T {
    fn call(&self, b: &str, n: &str, o: &str, p: &[u8]) -> Result<Vec<u8>, String> {
        (**self).call(b, n, o, p)
    }
    fn log(&self, payload: &[u8]) {
        (**self).log(payload)
    }
}

impl<T: HostCallbacks + ?Sized> HostCallbacks for Box<T> {
    fn call(&self, b: &str, n: &str, o: &str, p: &[u8]) -> Result<Vec<u8>, String> {
        (**self).call(b, n, o, p)
    }
    fn log(&self, payload: &[u8]) {
        (**self).log(payload)
    }
}

/// Writes a policy log record to stderr as `policy_log <level>: <message> <other fields>`.
pub fn default_log(payload: &[u8]) {
    eprintln!("{}", format_log_record(payload));
}

/// Renders a `tracing/log` payload on one line; non-JSON payloads are shown verbatim.
pub fn format_log_record(payload: &[u8]) -> String {
    match serde_json::from_slice::<Value>(payload) {
        Ok(Value::Object(mut record)) => {
            let level = take_string(&mut record, "level").unwrap_or_else(|| "info".into());
            let message = take_string(&mut record, "message").unwrap_or_default();
            if record.is_empty() {
                format!("policy_log {level}: {message}")
            } else {
                format!("policy_log {level}: {message} {}", Value::Object(record))
            }
        }
        _ => format!("policy_log: {}", String::from_utf8_lossy(payload)),
    }
}

fn take_string(record: &mut serde_json::Map<String, Value>, key: &str) -> Option<String> {
    match record.remove(key)? {
        Value::String(s) => Some(s),
        other => Some(other.to_string()),
    }
}

/// Kubewarden's rules (binding must be `kubewarden`, `tracing/log` always allowed) in front of `host`.
pub(crate) fn dispatch(
    host: &dyn HostCallbacks,
    binding: &str,
    namespace: &str,
    operation: &str,
    payload: &[u8],
) -> Result<Vec<u8>, String> {
    if binding != "kubewarden" {
        return Err(format!("unknown binding: {binding}"));
    }
    if namespace == "tracing" {
        return match operation {
            "log" => {
                host.log(payload);
                Ok(Vec::new())
            }
            _ => Err(format!("unknown operation: {operation}")),
        };
    }
    host.call(binding, namespace, operation, payload)
}

/// Host that grants no capability at all (logging still works).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHostCallbacks;

impl HostCallbacks for NoHostCallbacks {
    fn call(&self, _: &str, namespace: &str, operation: &str, _: &[u8]) -> Result<Vec<u8>, String> {
        Err(format!(
            "Policy has not been granted access to the '{namespace}/{operation}' host capability. The violation has been reported."
        ))
    }
}
