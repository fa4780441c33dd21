//! TLS for `serve`: PEM certificate chain and private key into a rustls server configuration.

use std::path::Path;
use std::sync::Arc;

use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::ServeError;

fn tls_error(path: &Path, message: impl std::fmt::Display) -> ServeError {
    ServeError::Tls(format!("{}: {message}", path.display()))
}

/// Loads `cert` (PEM chain, leaf first) and `key` (PEM, PKCS#8, PKCS#1 or SEC1).
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, ServeError> {
    let certs = CertificateDer::pem_file_iter(cert)
        .map_err(|e| tls_error(cert, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls_error(cert, e))?;
    if certs.is_empty() {
        return Err(tls_error(cert, "no certificate found"));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| tls_error(key, e))?;
    server_config_from_der(certs, key)
}

/// Builds the configuration from DER values (ring provider, TLS 1.2 and 1.3, HTTP/1.1 over ALPN).
pub fn server_config_from_der(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<ServerConfig>, ServeError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ServeError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| ServeError::Tls(format!("certificate and key do not match: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
