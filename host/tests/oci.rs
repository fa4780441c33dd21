//! push / pull against a real registry: Debian's `docker-registry` (distribution v2) on 127.0.0.1.

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;
use sidecarset_host::annotate::{Metadata, annotate};

const REGISTRY: &str = "/usr/bin/docker-registry";

const METADATA: &str = r#"
rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["pods"]
    operations: ["CREATE"]
mutating: true
annotations:
  io.kubewarden.policy.title: probe
  io.kubewarden.policy.source: https://example.com/probe
"#;

struct Registry {
    child: Child,
    addr: String,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `alice` / `secret`, bcrypt (cost 4) as `htpasswd -B` writes it.
const HTPASSWD: &str = "alice:$2b$04$5yY.G1xQGOrYu0TNoVlJXOeiEiVLz2M37WByX1saMGHOGOg7MQsDa\n";

fn start_registry(dir: &Path) -> Registry {
    start_registry_with(dir, "")
}

/// Starts the registry with extra top-level config (e.g. an `auth:` block).
fn start_registry_with(dir: &Path, extra_config: &str) -> Registry {
    let binary = std::env::var("DOCKER_REGISTRY_BIN").unwrap_or_else(|_| REGISTRY.into());
    assert!(
        Path::new(&binary).is_file(),
        "{binary} is missing: run `make setup` (it installs Debian's docker-registry package)"
    );
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let storage = dir.join("storage");
    std::fs::create_dir_all(&storage).unwrap();
    let config = dir.join("config.yml");
    std::fs::write(
        &config,
        format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {addr}\n{extra_config}",
            storage.display()
        ),
    )
    .unwrap();
    let child = Command::new(binary)
        .arg("serve")
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut registry = Registry { child, addr };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if std::net::TcpStream::connect(&registry.addr).is_ok() {
            break;
        }
        if let Some(status) = registry.child.try_wait().unwrap() {
            panic!("docker-registry exited at start: {status}");
        }
        assert!(Instant::now() < deadline, "docker-registry did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    registry
}

fn host(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sidecarset-host"));
    // An empty Docker config: no credentials leak in from the machine.
    command.env("DOCKER_CONFIG", dir);
    command
}

fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}, stderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn annotated_module(dir: &Path) -> PathBuf {
    let (wasm, _) = annotate(
        &misbehaving_guest(),
        Metadata::from_yaml(METADATA).unwrap(),
        Some("# Probe\n\nmulti-line usage\n".into()),
    )
    .unwrap();
    let path = dir.join("annotated.wasm");
    std::fs::write(&path, wasm).unwrap();
    path
}

#[test]
fn push_then_pull_returns_the_same_bytes_with_kubewardens_layout() {
    let dir = scratch_dir("oci-roundtrip");
    let registry = start_registry(&dir);
    let module = annotated_module(&dir);
    let uri = format!("registry://{}/policies/probe:v0.1.0", registry.addr);

    let stdout = ok(host(&dir)
        .arg("push")
        .arg(&module)
        .arg(&uri)
        .output()
        .unwrap());
    let prefix = format!("Policy successfully pushed: {uri}@sha256:");
    assert!(stdout.starts_with(&prefix), "{stdout}");
    let digest = format!("sha256:{}", stdout.trim().strip_prefix(&prefix).unwrap());
    assert_eq!(digest.len(), 71);

    let pulled = dir.join("pulled.wasm");
    let pull_stdout = ok(host(&dir)
        .args(["pull", "-o"])
        .arg(&pulled)
        .arg(&uri)
        .output()
        .unwrap());
    // pull names the manifest digest push printed.
    assert_eq!(
        pull_stdout,
        format!(
            "Policy successfully pulled: {uri}@{digest} to {}\n",
            pulled.display()
        )
    );
    assert_eq!(
        std::fs::read(&pulled).unwrap(),
        std::fs::read(&module).unwrap()
    );

    let by_digest = dir.join("by-digest.wasm");
    let digest_uri = format!("registry://{}/policies/probe@{digest}", registry.addr);
    let pull_stdout = ok(host(&dir)
        .args(["pull", "-o"])
        .arg(&by_digest)
        .arg(&digest_uri)
        .output()
        .unwrap());
    assert_eq!(
        pull_stdout,
        format!(
            "Policy successfully pulled: {digest_uri} to {}\n",
            by_digest.display()
        )
    );
    assert_eq!(
        std::fs::read(&by_digest).unwrap(),
        std::fs::read(&module).unwrap()
    );

    // The raw manifest, as the registry serves it.
    let url = format!(
        "http://{}/v2/policies/probe/manifests/v0.1.0",
        registry.addr
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let raw = rt.block_on(async {
        let response = reqwest::Client::new()
            .get(&url)
            .header("accept", "application/vnd.oci.image.manifest.v1+json")
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.headers()["content-type"],
            "application/vnd.oci.image.manifest.v1+json"
        );
        response.bytes().await.unwrap().to_vec()
    });
    assert_eq!(sidecarset_host::oci::sha256_digest(&raw), digest);
    let manifest: Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(manifest["schemaVersion"], 2);
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v1+json"
    );
    assert_eq!(manifest["config"]["size"], 2);
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1);
    assert_eq!(
        layers[0]["mediaType"],
        "application/vnd.wasm.content.layer.v1+wasm"
    );
    let annotations = &manifest["annotations"];
    assert_eq!(annotations["io.kubewarden.policy.title"], "probe");
    assert_eq!(
        annotations["org.opencontainers.image.source"],
        "https://example.com/probe"
    );
    assert!(
        annotations.get("io.kubewarden.policy.usage").is_none(),
        "multi-line values are dropped"
    );
    assert!(annotations["io.kubewarden.kwctl"].is_string());

    // Pushing again is idempotent (blobs exist) and gives the same digest.
    let again = ok(host(&dir)
        .arg("push")
        .arg(&module)
        .arg(&uri)
        .output()
        .unwrap());
    assert_eq!(again, stdout);
}

#[test]
fn push_refuses_unannotated_modules_and_pull_reports_missing_tags() {
    let dir = scratch_dir("oci-errors");
    let registry = start_registry(&dir);
    let plain = dir.join("plain.wasm");
    std::fs::write(&plain, misbehaving_guest()).unwrap();
    let uri = format!("registry://{}/policies/plain:v1", registry.addr);
    let output = host(&dir)
        .arg("push")
        .arg(&plain)
        .arg(&uri)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("not annotated"));
    ok(host(&dir)
        .args(["push", "--force"])
        .arg(&plain)
        .arg(&uri)
        .output()
        .unwrap());

    let missing = format!("registry://{}/policies/none:v1", registry.addr);
    let output = host(&dir)
        .args(["pull", "-o"])
        .arg(dir.join("x.wasm"))
        .arg(&missing)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("404"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn credentials_come_from_the_docker_config() {
    let dir = scratch_dir("oci-auth");
    let htpasswd = dir.join("htpasswd");
    std::fs::write(&htpasswd, HTPASSWD).unwrap();
    let registry = start_registry_with(
        &dir,
        &format!(
            "auth:\n  htpasswd:\n    realm: test\n    path: {}\n",
            htpasswd.display()
        ),
    );
    let module = annotated_module(&dir);
    let uri = format!("registry://{}/policies/private:v1", registry.addr);

    // No credentials: a clear refusal.
    let output = host(&dir)
        .arg("push")
        .arg(&module)
        .arg(&uri)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("needs credentials"), "{stderr}");

    // Wrong password.
    let config = |auth: &str| format!(r#"{{"auths":{{"{}":{{"auth":"{auth}"}}}}}}"#, registry.addr);
    std::fs::write(dir.join("config.json"), config("YWxpY2U6d3Jvbmc=")).unwrap();
    let output = host(&dir)
        .arg("push")
        .arg(&module)
        .arg(&uri)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("authentication failed"), "{stderr}");

    // alice:secret, as `docker login` stores it.
    std::fs::write(dir.join("config.json"), config("YWxpY2U6c2VjcmV0")).unwrap();
    ok(host(&dir)
        .arg("push")
        .arg(&module)
        .arg(&uri)
        .output()
        .unwrap());
    let pulled = dir.join("pulled.wasm");
    ok(host(&dir)
        .args(["pull", "-o"])
        .arg(&pulled)
        .arg(&uri)
        .output()
        .unwrap());
    assert_eq!(
        std::fs::read(&pulled).unwrap(),
        std::fs::read(&module).unwrap()
    );

    // --docker-config-json-path (a folder or the file itself) wins over $DOCKER_CONFIG, which
    // now holds the wrong password.
    std::fs::write(dir.join("config.json"), config("YWxpY2U6d3Jvbmc=")).unwrap();
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("config.json"), config("YWxpY2U6c2VjcmV0")).unwrap();
    ok(host(&dir)
        .arg("push")
        .arg("--docker-config-json-path")
        .arg(&elsewhere)
        .arg(&module)
        .arg(&uri)
        .output()
        .unwrap());
    let by_file = dir.join("by-file.wasm");
    ok(host(&dir)
        .args(["pull", "-o"])
        .arg(&by_file)
        .arg("--docker-config-json-path")
        .arg(elsewhere.join("config.json"))
        .arg(&uri)
        .output()
        .unwrap());
    assert_eq!(
        std::fs::read(&by_file).unwrap(),
        std::fs::read(&module).unwrap()
    );
    // And the wrong file given explicitly is used too.
    let output = host(&dir)
        .args(["pull", "-o"])
        .arg(dir.join("never.wasm"))
        .arg("--docker-config-json-path")
        .arg(dir.join("config.json"))
        .arg(&uri)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("authentication failed"), "{stderr}");
}

/// A registry that only takes Bearer tokens, issued by its `/token` endpoint to alice:secret
/// (the flow of ghcr.io, Docker Hub, Harbor…), serving one policy.
async fn bearer_registry(wasm: Vec<u8>) -> String {
    use http_body_util::Full;
    use hyper::{Request, Response, body::Incoming};
    use sidecarset_host::oci::{CONFIG_MEDIA_TYPE, build_manifest, sha256_digest};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let manifest = build_manifest(&wasm, b"{}").unwrap();
    assert!(String::from_utf8_lossy(&manifest).contains(CONFIG_MEDIA_TYPE));
    let layer = format!("/v2/policies/private/blobs/{}", sha256_digest(&wasm));
    let realm = format!("http://{addr}/token");
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (wasm, manifest, layer, realm) =
                (wasm.clone(), manifest.clone(), layer.clone(), realm.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let auth = request
                        .headers()
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_string();
                    let path = request.uri().path().to_string();
                    let query = request.uri().query().unwrap_or_default().to_string();
                    let (status, body, challenge) = if path == "/token" {
                        if auth == "Basic YWxpY2U6c2VjcmV0"
                            && query.contains("scope=repository%3Apolicies%2Fprivate%3Apull")
                        {
                            (200, br#"{"token":"t0k3n"}"#.to_vec(), false)
                        } else {
                            (401, b"bad credentials".to_vec(), false)
                        }
                    } else if auth != "Bearer t0k3n" {
                        (401, b"{}".to_vec(), true)
                    } else if path == "/v2/policies/private/manifests/v1" {
                        (200, manifest.clone(), false)
                    } else if path == layer {
                        (200, wasm.clone(), false)
                    } else {
                        (404, b"{}".to_vec(), false)
                    };
                    let mut response = Response::builder().status(status);
                    if challenge {
                        response = response.header(
                            "www-authenticate",
                            format!(
                                r#"Bearer realm="{realm}",service="test",scope="repository:policies/private:pull""#
                            ),
                        );
                    }
                    let response = response.body(Full::new(bytes::Bytes::from(body))).unwrap();
                    async move { Ok::<_, std::convert::Infallible>(response) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });
    addr
}

#[tokio::test]
async fn bearer_tokens_are_fetched_with_the_docker_credentials() {
    use sidecarset_host::oci::{Credentials, OciError, Reference, pull};
    let wasm = misbehaving_guest();
    let addr = bearer_registry(wasm.clone()).await;
    let reference = Reference::parse(&format!("registry://{addr}/policies/private:v1")).unwrap();
    let alice = Credentials {
        username: "alice".into(),
        password: "secret".into(),
    };
    assert_eq!(pull(&reference, Some(alice)).await.unwrap(), wasm);
    let mallory = Credentials {
        username: "alice".into(),
        password: "guess".into(),
    };
    let error = pull(&reference, Some(mallory)).await.unwrap_err();
    assert!(matches!(error, OciError::Registry(_)), "{error:?}");
    assert!(error.to_string().contains("token request"), "{error}");
}
