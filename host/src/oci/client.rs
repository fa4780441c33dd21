//! A minimal OCI distribution v2 client: blobs, manifests, Basic and Bearer token auth.

use std::sync::Mutex;

use bytes::Bytes;
use http::{HeaderMap, StatusCode, header};
use reqwest::{Method, RequestBuilder, Response};
use serde::Deserialize;

use super::OciError;
use super::auth::{Challenge, Credentials, parse_challenge};
use super::reference::Reference;

/// Talks to one repository of one registry.
pub struct RegistryClient {
    http: reqwest::Client,
    base: String,
    repository: String,
    credentials: Option<Credentials>,
    /// The `Authorization` value that worked last (Basic, or a Bearer token).
    authorization: Mutex<Option<String>>,
}

#[derive(Deserialize)]
struct TokenResponse {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    access_token: Option<String>,
}

fn http_error(context: &str, e: reqwest::Error) -> OciError {
    OciError::Http(format!("{context}: {e}"))
}

async fn unexpected(context: &str, response: Response) -> OciError {
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    let body: String = body.chars().take(500).collect();
    OciError::Registry(format!("{context}: HTTP {status}: {}", body.trim()))
}

impl RegistryClient {
    /// Plain HTTP for 127.0.0.1 / localhost / [::1], HTTPS otherwise.
    pub fn new(reference: &Reference, credentials: Option<Credentials>) -> Result<Self, OciError> {
        let http = reqwest::Client::builder()
            .use_rustls_tls()
            .user_agent(concat!("sidecarset-host/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| http_error("cannot build the HTTP client", e))?;
        let scheme = if reference.is_local() {
            "http"
        } else {
            "https"
        };
        Ok(Self {
            http,
            base: format!("{scheme}://{}", reference.registry),
            repository: reference.repository.clone(),
            credentials,
            authorization: Mutex::new(None),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/v2/{}/{path}", self.base, self.repository)
    }

    fn current_authorization(&self) -> Option<String> {
        self.authorization
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sends a request built by `build`; on 401 answers the challenge once and retries.
    async fn send(
        &self,
        context: &str,
        build: impl Fn(&reqwest::Client) -> RequestBuilder,
    ) -> Result<Response, OciError> {
        let with_auth = |authorization: Option<String>| {
            let request = build(&self.http);
            match authorization {
                Some(value) => request.header(header::AUTHORIZATION, value),
                None => request,
            }
        };
        let response = with_auth(self.current_authorization())
            .send()
            .await
            .map_err(|e| http_error(context, e))?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        let authorization = self.answer_challenge(response.headers()).await?;
        *self.authorization.lock().unwrap_or_else(|e| e.into_inner()) = Some(authorization.clone());
        let response = with_auth(Some(authorization))
            .send()
            .await
            .map_err(|e| http_error(context, e))?;
        if response.status() == StatusCode::UNAUTHORIZED {
            return Err(OciError::Unauthorized(format!(
                "{context}: the registry refused the credentials{}",
                if self.credentials.is_none() {
                    " (none found in the Docker config)"
                } else {
                    ""
                }
            )));
        }
        Ok(response)
    }

    async fn answer_challenge(&self, headers: &HeaderMap) -> Result<String, OciError> {
        let challenge = headers
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_challenge)
            .ok_or_else(|| {
                OciError::Unauthorized("401 without a usable WWW-Authenticate challenge".into())
            })?;
        match challenge {
            Challenge::Basic => self
                .credentials
                .as_ref()
                .map(Credentials::basic)
                .ok_or_else(|| {
                    OciError::Unauthorized(format!(
                        "{} needs credentials: run `docker login` or add them to the Docker config",
                        self.base
                    ))
                }),
            Challenge::Bearer(params) => {
                let realm = params.get("realm").ok_or_else(|| {
                    OciError::Unauthorized("Bearer challenge without realm".into())
                })?;
                let query: Vec<(&str, &str)> = ["service", "scope"]
                    .iter()
                    .filter_map(|k| params.get(*k).map(|v| (*k, v.as_str())))
                    .collect();
                let mut request = self.http.get(realm).query(&query);
                if let Some(credentials) = &self.credentials {
                    request = request.header(header::AUTHORIZATION, credentials.basic());
                }
                let response = request
                    .send()
                    .await
                    .map_err(|e| http_error("token request", e))?;
                if !response.status().is_success() {
                    return Err(unexpected("token request", response).await);
                }
                let body = response
                    .bytes()
                    .await
                    .map_err(|e| http_error("token response", e))?;
                let token: TokenResponse = serde_json::from_slice(&body)
                    .map_err(|e| OciError::Unauthorized(format!("token response: {e}")))?;
                token
                    .token
                    .or(token.access_token)
                    .map(|t| format!("Bearer {t}"))
                    .ok_or_else(|| OciError::Unauthorized("token response without a token".into()))
            }
        }
    }

    /// Uploads a blob unless the registry already has it (monolithic POST + PUT).
    pub async fn upload_blob(&self, digest: &str, data: Bytes) -> Result<(), OciError> {
        let context = format!("upload of blob {digest}");
        let head = self
            .send(&context, |http| {
                http.head(self.url(&format!("blobs/{digest}")))
            })
            .await?;
        if head.status().is_success() {
            return Ok(());
        }
        let started = self
            .send(&context, |http| http.post(self.url("blobs/uploads/")))
            .await?;
        if started.status() != StatusCode::ACCEPTED {
            return Err(unexpected(&context, started).await);
        }
        let location = started
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| {
                OciError::Registry(format!("{context}: no Location in the upload answer"))
            })?;
        let mut upload = if location.starts_with('/') {
            format!("{}{location}", self.base)
        } else {
            location.to_string()
        };
        upload.push(if upload.contains('?') { '&' } else { '?' });
        upload.push_str("digest=");
        upload.push_str(digest);
        let done = self
            .send(&context, |http| {
                http.put(&upload)
                    .header(header::CONTENT_TYPE, "application/octet-stream")
                    .body(data.clone())
            })
            .await?;
        if done.status() != StatusCode::CREATED {
            return Err(unexpected(&context, done).await);
        }
        Ok(())
    }

    /// Puts a manifest under `tag`; returns the digest the registry reports (or none).
    pub async fn put_manifest(
        &self,
        tag: &str,
        media_type: &str,
        manifest: Bytes,
    ) -> Result<Option<String>, OciError> {
        let context = format!("upload of manifest {tag}");
        let response = self
            .send(&context, |http| {
                http.put(self.url(&format!("manifests/{tag}")))
                    .header(header::CONTENT_TYPE, media_type)
                    .body(manifest.clone())
            })
            .await?;
        if response.status() != StatusCode::CREATED {
            return Err(unexpected(&context, response).await);
        }
        Ok(response
            .headers()
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string))
    }

    /// The raw manifest bytes for a tag or digest.
    pub async fn get_manifest(&self, reference: &str, accept: &str) -> Result<Bytes, OciError> {
        let context = format!("download of manifest {reference}");
        self.get(&context, &format!("manifests/{reference}"), accept)
            .await
    }

    /// The raw bytes of a blob.
    pub async fn get_blob(&self, digest: &str) -> Result<Bytes, OciError> {
        let context = format!("download of blob {digest}");
        self.get(&context, &format!("blobs/{digest}"), "*/*").await
    }

    async fn get(&self, context: &str, path: &str, accept: &str) -> Result<Bytes, OciError> {
        let response = self
            .send(context, |http| {
                http.request(Method::GET, self.url(path))
                    .header(header::ACCEPT, accept)
            })
            .await?;
        if !response.status().is_success() {
            return Err(unexpected(context, response).await);
        }
        response.bytes().await.map_err(|e| http_error(context, e))
    }
}
