//! A scripted admission webhook over real HTTPS (a certificate made here): each path answers
//! with its own script, and every AdmissionReview it receives is kept.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// What a path answers: a status code and a body.
pub type Script = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

/// One answer.
pub enum Reply {
    /// HTTP status and raw body.
    Raw(u16, Vec<u8>),
    /// Answer after waiting (to outlast the caller's timeout).
    Late(Duration, Box<Reply>),
}

pub struct Webhook {
    pub addr: SocketAddr,
    /// PEM of the self-signed certificate (valid for 127.0.0.1 and `hook.webhooks.svc`).
    pub ca_pem: String,
    scripts: Arc<Mutex<HashMap<String, Script>>>,
    calls: Arc<Mutex<Vec<(String, Value)>>>,
}

/// `response` for the review's uid.
pub fn answer(review: &Value, response: Value) -> Reply {
    let mut r = response;
    r["uid"] = review["request"]["uid"].clone();
    let body =
        json!({ "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": r });
    Reply::Raw(200, serde_json::to_vec(&body).unwrap())
}

pub fn allow(review: &Value) -> Reply {
    answer(review, json!({ "allowed": true }))
}

pub fn patch(review: &Value, ops: Value) -> Reply {
    let b64 = base64::engine::general_purpose::STANDARD.encode(ops.to_string());
    answer(
        review,
        json!({ "allowed": true, "patchType": "JSONPatch", "patch": b64 }),
    )
}

pub fn script(f: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Script {
    Arc::new(f)
}

impl Webhook {
    pub async fn start() -> Webhook {
        let certified = rcgen::generate_simple_self_signed(vec![
            "127.0.0.1".into(),
            "hook.webhooks.svc".into(),
        ])
        .unwrap();
        let ca_pem = certified.cert.pem();
        let key = rustls_pki_types::PrivateKeyDer::try_from(certified.signing_key.serialize_der())
            .unwrap();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![certified.cert.der().clone()], key)
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let scripts: Arc<Mutex<HashMap<String, Script>>> = Arc::default();
        let calls: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
        let (s2, c2) = (scripts.clone(), calls.clone());
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let (acceptor, scripts, calls) = (acceptor.clone(), s2.clone(), c2.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            let (scripts, calls) = (scripts.clone(), calls.clone());
                            async move {
                                let path = req.uri().path().to_string();
                                let body = req
                                    .into_body()
                                    .collect()
                                    .await
                                    .map(|b| b.to_bytes())
                                    .unwrap_or_default();
                                let review: Value =
                                    serde_json::from_slice(&body).unwrap_or(Value::Null);
                                calls.lock().unwrap().push((path.clone(), review.clone()));
                                let script = scripts.lock().unwrap().get(&path).cloned();
                                let mut reply = match script {
                                    Some(s) => s(&review),
                                    None => Reply::Raw(404, b"no script".to_vec()),
                                };
                                while let Reply::Late(d, inner) = reply {
                                    tokio::time::sleep(d).await;
                                    reply = *inner;
                                }
                                let Reply::Raw(code, bytes) = reply else {
                                    unreachable!()
                                };
                                Ok::<_, std::convert::Infallible>(
                                    hyper::Response::builder()
                                        .status(code)
                                        .header("content-type", "application/json")
                                        .body(Full::new(Bytes::from(bytes)))
                                        .unwrap(),
                                )
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        Webhook {
            addr,
            ca_pem,
            scripts,
            calls,
        }
    }

    /// Sets what `path` answers.
    pub fn on(&self, path: &str, s: Script) {
        self.scripts.lock().unwrap().insert(path.to_string(), s);
    }

    /// `https://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// `caBundle`: the certificate, base64.
    pub fn ca_bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)
    }

    /// The reviews `path` received, oldest first.
    pub fn calls(&self, path: &str) -> Vec<Value> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, v)| v.clone())
            .collect()
    }
}
