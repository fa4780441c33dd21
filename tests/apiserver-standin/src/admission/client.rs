//! Calls one webhook over HTTPS: the URL kube-apiserver builds (`?timeout=` appended), the
//! server verified against `caBundle`, services reached through the stand-in's endpoint map,
//! and Go's wording for what can go wrong on the way.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use serde_json::Value;

use super::configuration::{Endpoint, Webhook};

/// The stand-in's guard on answer sizes (the real server reads any size).
pub const MAX_ANSWER_BYTES: usize = 16 << 20;

/// `(namespace, name, port)` of a Service.
type ServiceKey = (String, String, u16);

/// Where services are: `(namespace, name, port)` → a loopback address. The stand-in has no
/// cluster network, so tests say where a Service's pods listen (`--service` or `map_service`).
#[derive(Debug, Clone, Default)]
pub struct ServiceMap {
    inner: Arc<Mutex<HashMap<ServiceKey, SocketAddr>>>,
}

impl ServiceMap {
    /// Maps `namespace/name:port` to `addr`.
    pub fn insert(&self, namespace: &str, name: &str, port: u16, addr: SocketAddr) {
        self.lock()
            .insert((namespace.to_string(), name.to_string(), port), addr);
    }

    /// Removes a mapping (the service then has no endpoints).
    pub fn remove(&self, namespace: &str, name: &str, port: u16) {
        self.lock()
            .remove(&(namespace.to_string(), name.to_string(), port));
    }

    fn get(&self, namespace: &str, name: &str, port: u16) -> Option<SocketAddr> {
        self.lock()
            .get(&(namespace.to_string(), name.to_string(), port))
            .copied()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ServiceKey, SocketAddr>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn with_timeout(url: &str, hook: &Webhook) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}timeout={}s", hook.timeout.as_secs())
}

fn tls_config(ca_bundle: &[u8]) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_bundle) {
        let cert = cert.map_err(|e| format!("unable to load root certificates: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("unable to load root certificates: {e}"))?;
    }
    if roots.is_empty() {
        return Err("unable to load root certificates: unable to parse bytes as PEM block".into());
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// The causes of an error, looking inside io::Errors too (their `source()` skips the wrapped error).
fn causes<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Vec<&'a (dyn std::error::Error + 'static)> {
    let mut out = Vec::new();
    let mut next = Some(e);
    while let Some(err) = next {
        out.push(err);
        next = match err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => err.source(),
        };
    }
    out
}

/// Go's text for a failed round trip.
fn round_trip_error(e: &reqwest::Error, addr: Option<SocketAddr>) -> String {
    if e.is_timeout() {
        return "context deadline exceeded".into();
    }
    for cause in causes(e) {
        if let Some(tls) = cause.downcast_ref::<rustls::Error>() {
            use rustls::CertificateError as C;
            return match tls {
                rustls::Error::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => {
                    "tls: failed to verify certificate: x509: certificate signed by unknown authority".into()
                }
                rustls::Error::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => {
                    "tls: failed to verify certificate: x509: certificate is not valid for the requested name".into()
                }
                other => format!("tls: {other}"),
            };
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            let at = addr.map(|a| a.to_string()).unwrap_or_default();
            return format!("dial tcp {at}: connect: connection refused");
        }
    }
    e.to_string()
}

/// client-go's error for a non-2xx answer that is not a Status.
fn status_error(code: u16, body: &[u8]) -> String {
    if let Ok(status) = serde_json::from_slice::<Value>(body)
        && status.get("kind").and_then(Value::as_str) == Some("Status")
        && let Some(message) = status.get("message").and_then(Value::as_str)
    {
        return message.to_string();
    }
    match code {
        404 => "the server could not find the requested resource".into(),
        _ if body.is_empty() => {
            format!(
                "the server responded with the status code {code} but did not return more information"
            )
        }
        _ => {
            let text = String::from_utf8_lossy(&body[..body.len().min(512)]);
            format!("an error on the server ({text:?}) has prevented the request from succeeding")
        }
    }
}

/// POSTs `body` to the webhook; `Err` is the reason after "failed to call webhook: ".
pub async fn call(hook: &Webhook, services: &ServiceMap, body: Vec<u8>) -> Result<Value, String> {
    let mut builder = reqwest::Client::builder().timeout(hook.timeout).no_proxy();
    if !hook.ca_bundle.is_empty() {
        builder = builder.use_preconfigured_tls(tls_config(&hook.ca_bundle)?);
    }
    let (shown, actual, addr) = match &hook.endpoint {
        Endpoint::Url(url) => (with_timeout(url, hook), with_timeout(url, hook), None),
        Endpoint::Service {
            namespace,
            name,
            port,
            path,
        } => {
            let host = format!("{name}.{namespace}.svc");
            let shown = with_timeout(&format!("https://{host}:{port}{path}"), hook);
            let Some(addr) = services.get(namespace, name, *port) else {
                return Err(format!(
                    "Post {shown:?}: no endpoints available for service {name:?}"
                ));
            };
            // The name stays the service's (SNI and certificate check); only the address is mapped.
            builder = builder.resolve(&host, addr);
            let actual = with_timeout(&format!("https://{host}:{}{path}", addr.port()), hook);
            (shown, actual, Some(addr))
        }
    };
    let client = builder.build().map_err(|e| e.to_string())?;
    let sent = client
        .post(&actual)
        .header("content-type", "application/json")
        .header("accept", "application/json, */*")
        .body(body)
        .send();
    let mut resp = sent
        .await
        .map_err(|e| format!("Post {shown:?}: {}", round_trip_error(&e, addr)))?;
    let code = resp.status().as_u16();
    let mut answer = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if answer.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return Err(format!(
                        "Post {shown:?}: the answer is larger than {MAX_ANSWER_BYTES} bytes"
                    ));
                }
                answer.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) => return Err(format!("Post {shown:?}: {}", round_trip_error(&e, addr))),
        }
    }
    if !(200..300).contains(&code) {
        return Err(status_error(code, &answer));
    }
    serde_json::from_slice(&answer)
        .map_err(|e| format!("couldn't get version/kind; json parse error: {e}"))
}
