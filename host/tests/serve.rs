//! `serve` end to end: the real binary over real HTTPS (self-signed certificate made here) with
//! a real client (reqwest + rustls).

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::*;
use serde_json::{Value, json};

/// A running `sidecarset-host serve`; killed on drop.
struct Server {
    child: Child,
    url: String,
    client: reqwest::Client,
    metrics_url: Option<String>,
    /// The self-signed certificate the server presents.
    ca_pem: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tls_files(dir: &Path) -> (PathBuf, PathBuf, String) {
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert_pem = certified.cert.pem();
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    std::fs::write(&cert, &cert_pem).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    (cert, key, cert_pem)
}

fn start(name: &str, module: &[u8], extra: &[&str]) -> Server {
    let dir = scratch_dir(name);
    let path = dir.join("policy.wasm");
    std::fs::write(&path, module).unwrap();
    start_path(&dir, &path, extra)
}

fn start_path(dir: &Path, module: &Path, extra: &[&str]) -> Server {
    let (cert, key, cert_pem) = tls_files(dir);
    let mut command = Command::new(env!("CARGO_BIN_EXE_sidecarset-host"));
    if !extra.contains(&"--context") && !extra.contains(&"--kubeconfig") {
        // An empty cluster: the folder holds no JSON/YAML object.
        command.arg("serve").arg("--context").arg(dir);
    } else {
        command.arg("serve");
    }
    let mut child = command
        .args(["--listen", "127.0.0.1:0", "--cert"])
        .arg(&cert)
        .arg("--key")
        .arg(&key)
        .args(extra)
        .arg(module)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let metrics_url = extra.contains(&"--metrics-listen").then(|| {
        let mut metrics = String::new();
        stdout.read_line(&mut metrics).unwrap();
        metrics
            .trim()
            .strip_prefix("metrics on ")
            .unwrap_or_else(|| panic!("unexpected second line: {metrics:?}"))
            .to_string()
    });
    let addr = line
        .trim()
        .strip_prefix("listening on https://")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_string();
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .add_root_certificate(reqwest::Certificate::from_pem(cert_pem.as_bytes()).unwrap())
        .build()
        .unwrap();
    let port = addr.rsplit(':').next().unwrap();
    Server {
        child,
        url: format!("https://localhost:{port}"),
        client,
        metrics_url,
        ca_pem: cert_pem,
    }
}

impl Server {
    async fn post(&self, path: &str, body: impl Into<reqwest::Body>) -> (u16, String) {
        let response = self
            .client
            .post(format!("{}{path}", self.url))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }

    async fn review(&self, request: &Value) -> Value {
        let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request});
        let (status, body) = self.post("/validate", review.to_string()).await;
        assert_eq!(status, 200, "{body}");
        let review: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(review["kind"], "AdmissionReview");
        review["response"].clone()
    }

    async fn get(&self, path: &str) -> (u16, String) {
        let response = self
            .client
            .get(format!("{}{path}", self.url))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("\\{b:02x}")).collect()
}

/// A guest steered by the first byte of the request's first field (`uid`): `L` loops, `M`
/// allocates without bound, `T` traps, `S` sleeps ~300 ms (busy loop), anything else mutates like
/// the probe.
fn steered_guest() -> Vec<u8> {
    let settings = SETTINGS_OK;
    let validate = mutating_response();
    // `{"request":{"uid":"` is 19 bytes: the marker is the 20th byte of the payload.
    let wat = format!(
        r#"(module
  (import "wapc" "__guest_request" (func $req (param i32 i32)))
  (import "wapc" "__guest_response" (func $resp (param i32 i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (memory (export "memory") 16)
  (data (i32.const 256) "{s}")
  (data (i32.const 1024) "{v}")
  (func (export "wapc_init"))
  (func $now (result i64)
    (drop (call $clock (i32.const 1) (i64.const 1) (i32.const 128)))
    (i64.load (i32.const 128)))
  (func (export "__guest_call") (param $op i32) (param $msg i32) (result i32)
    (local $m i32) (local $until i64)
    (call $req (i32.const 32768) (i32.const 65536))
    (if (i32.eq (local.get $op) (i32.const 17))
      (then (call $resp (i32.const 256) (i32.const {sl})) (return (i32.const 1))))
    (local.set $m (i32.load8_u (i32.const 65555)))
    (if (i32.eq (local.get $m) (i32.const 76)) (then (loop $l (br $l))))
    (if (i32.eq (local.get $m) (i32.const 77)) (then
      (loop $g (br_if $g (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
      unreachable))
    (if (i32.eq (local.get $m) (i32.const 84)) (then unreachable))
    (if (i32.eq (local.get $m) (i32.const 83)) (then
      (local.set $until (i64.add (call $now) (i64.const 300000000)))
      (loop $w (br_if $w (i64.lt_u (call $now) (local.get $until))))))
    (call $resp (i32.const 1024) (i32.const {vl}))
    (i32.const 1)))"#,
        s = hex(settings),
        v = hex(&validate),
        sl = settings.len(),
        vl = validate.len(),
    );
    wat::parse_str(wat).unwrap()
}

/// The Pod request with a uid starting with `marker` (the guest sees uid first, as re-serialised).
fn marked_request(marker: &str) -> Value {
    let mut request = pod_request();
    request["uid"] = json!(format!("{marker}-1299d386"));
    request
}

fn sidecarset_without_containers() -> Value {
    json!({
        "uid": "78c31ab7-9063-5e25-a607-06dfbd1cd52a",
        "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "SidecarSet"},
        "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "sidecarsets"},
        "name": "empty-sidecarset", "operation": "CREATE",
        "userInfo": {"username": "kubernetes-admin"},
        "object": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
            "metadata": {"name": "empty-sidecarset"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}}},
        "oldObject": null, "dryRun": false
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_policy_answers_like_run() {
    let root = repo_root();
    let dir = scratch_dir("serve-real");
    // serve grants the kinds the metadata declares, run those of --allow-context-aware.
    let module = annotated_policy_wasm(&dir);
    let context = root.join("examples/cluster");
    let server = start_path(
        &dir,
        &module,
        &[
            "--context",
            context.to_str().unwrap(),
            "--deadline-ms",
            "20000",
        ],
    );
    assert_eq!(server.get("/readyz").await.0, 200);

    let mut requests: Vec<PathBuf> = std::fs::read_dir(root.join("examples/requests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    requests.sort();
    assert!(!requests.is_empty());
    let mut patched = 0;
    for path in &requests {
        let output = Command::new(env!("CARGO_BIN_EXE_sidecarset-host"))
            .args(["run", "--allow-context-aware", "--context"])
            .arg(&context)
            .arg("--request-path")
            .arg(path)
            .arg(&module)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let expected: Value = serde_json::from_slice(&output.stdout).unwrap();
        let request: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let request = if request["kind"] == "AdmissionReview" {
            request["request"].clone()
        } else {
            request
        };
        let response = server.review(&request).await;
        // The hash annotations carry the evaluation's second: compare with it blanked out.
        assert_eq!(
            without_timestamps(&response),
            without_timestamps(&expected),
            "{}",
            path.display()
        );
        // Written another way (indented; `/`, `_` and capitals but `E`, which only strings hold,
        // escaped), the same review gets the same patch: it is computed on the text, but values
        // are what it compares. An annotation the policy rewrites gives it such values to compare.
        let mut annotated = request.clone();
        if let Some(metadata) = annotated
            .pointer_mut("/object/metadata")
            .and_then(Value::as_object_mut)
        {
            let annotations = metadata.entry("annotations").or_insert(json!({}));
            annotations["example.com/Note"] = json!("A/B_C");
        }
        let compact = server.review(&annotated).await;
        let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": &annotated});
        let rewritten: String = serde_json::to_string_pretty(&review)
            .unwrap()
            .chars()
            .map(|c| match c {
                '/' => "\\/".to_string(),
                '_' | 'A'..='D' | 'F'..='Z' => format!("\\u{:04x}", c as u32),
                c => c.to_string(),
            })
            .collect();
        let (status, body) = server.post("/validate", rewritten).await;
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            without_timestamps(&answer["response"]),
            without_timestamps(&compact),
            "{} rewritten",
            path.display()
        );
        patched += usize::from(response["patch"].is_string());
    }
    assert!(patched > 0, "at least one example injects a sidecar");

    let rejected = server.review(&sidecarset_without_containers()).await;
    assert_eq!(rejected["allowed"], false, "{rejected}");
    assert_eq!(rejected["uid"], "78c31ab7-9063-5e25-a607-06dfbd1cd52a");
    assert!(rejected["status"]["message"].is_string(), "{rejected}");

    let (_, metrics) = server.get("/metrics").await;
    assert!(metrics.contains("verdict=\"mutated\""), "{metrics}");
    assert!(
        metrics.contains("kind=\"SidecarSet\",verdict=\"rejected\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("sidecarset_host_evaluation_duration_seconds_count"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_level_errors_and_routes() {
    let server = start(
        "serve-http",
        &steered_guest(),
        &[
            "--max-body-bytes",
            "4096",
            "--metrics-listen",
            "127.0.0.1:0",
        ],
    );
    // The plain-HTTP metrics listener serves health and metrics, not admissions.
    let metrics_url = server.metrics_url.clone().unwrap();
    let plain = reqwest::Client::new();
    for path in ["/healthz", "/readyz", "/metrics"] {
        let response = plain
            .get(format!("{metrics_url}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{path}");
    }
    let response = plain
        .post(format!("{metrics_url}/validate"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 404);
    assert_eq!(server.get("/healthz").await, (200, "ok\n".into()));
    assert_eq!(server.get("/readyz").await.0, 200);
    assert_eq!(server.get("/nope").await.0, 404);
    assert_eq!(server.get("/validate").await.0, 405);

    // Oversized, with and without a Content-Length. Only the head of the declared one is sent (see
    // `declared_length_answer`); the streamed one is read to its end before the 413.
    let head = declared_length_answer(&server, 5000).await;
    assert!(head.starts_with("HTTP/1.1 413 "), "{head}");
    let chunks = futures::stream::iter((0..10).map(|_| {
        Ok::<_, std::io::Error>(hyper::body::Frame::data(bytes::Bytes::from(vec![
            b' ';
            1000
        ])))
    }));
    let streamed = reqwest::Body::wrap(http_body_util::StreamBody::new(chunks));
    let (status, _) = server.post("/validate", streamed).await;
    assert_eq!(status, 413);

    // Malformed.
    for body in [
        "{",
        "[]",
        r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#,
        r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"kind":{}}}"#,
        // A well-formed request in the wrong envelope.
        r#"{"apiVersion":"admission.k8s.io/v1","kind":"Pod","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"}}}"#,
        r#"{"apiVersion":"v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"}}}"#,
    ] {
        let (status, text) = server.post("/validate", body.to_string()).await;
        assert_eq!(status, 400, "{body}: {text}");
        assert!(text.starts_with("malformed AdmissionReview: "), "{text}");
    }
    // A request kwctl cannot decode (no operation) gets kwctl's message.
    let mut no_operation = pod_request();
    no_operation.as_object_mut().unwrap().remove("operation");
    let (status, text) = server.post("/validate", review_body(&no_operation)).await;
    assert_eq!(status, 400, "{text}");
    assert!(
        text.contains(
            "cannot build AdmissionRequest object from given input: missing field `operation`"
        ),
        "{text}"
    );

    // A kind the policy does not handle passes unchanged, without evaluation.
    let mut deployment = marked_request("T");
    deployment["kind"] = json!({"group": "apps", "version": "v1", "kind": "Deployment"});
    let response = server.review(&deployment).await;
    assert_eq!(response["allowed"], true);
    assert_eq!(response["uid"], deployment["uid"]);
    assert!(response.get("patch").is_none(), "{response}");

    // Every admission path shape.
    for path in ["/", "/mutate", "/validate/sidecarset"] {
        let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": pod_request()});
        let (status, body) = server.post(path, review.to_string()).await;
        assert_eq!(status, 200, "{path}");
        let review: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(review["response"]["patch"], PROBE_PATCH, "{path}");
    }
    let (_, metrics) = server.get("/metrics").await;
    assert!(
        metrics.contains("sidecarset_host_http_errors_total{code=\"413\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("sidecarset_host_http_errors_total{code=\"400\"} 7"),
        "{metrics}"
    );
    assert!(
        metrics.contains("kind=\"other\",verdict=\"accepted\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misbehaving_guests_fail_one_request_each() {
    let server = start(
        "serve-guests",
        &steered_guest(),
        &["--deadline-ms", "200", "--memory-limit-mib", "4"],
    );
    let cases = [
        (
            "L",
            "Policy execution interrupted because it exceeded the allowed execution time",
        ),
        (
            "M",
            "internal server error: Guest call failure: guest memory limit exceeded",
        ),
        (
            "T",
            "internal server error: Guest call failure: wasm trap: wasm `unreachable` instruction executed",
        ),
    ];
    for (marker, message) in cases {
        let response = server.review(&marked_request(marker)).await;
        assert_eq!(response["allowed"], false, "{marker}: {response}");
        assert_eq!(response["status"]["code"], 500, "{marker}: {response}");
        let text = response["status"]["message"].as_str().unwrap();
        assert!(text.starts_with(message), "{marker}: {text}");
        // The server keeps serving, with a fresh instance.
        let ok = server.review(&marked_request("ok")).await;
        assert_eq!(ok["allowed"], true, "after {marker}: {ok}");
        assert_eq!(ok["patch"], PROBE_PATCH);
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(ok["patch"].as_str().unwrap())
            .unwrap();
        assert!(String::from_utf8(decoded).unwrap().contains("probe/seen"));
    }
    let (_, metrics) = server.get("/metrics").await;
    for reason in ["deadline", "memory", "guest"] {
        assert!(
            metrics.contains(&format!(
                "sidecarset_host_evaluation_errors_total{{reason=\"{reason}\"}} 1"
            )),
            "{metrics}"
        );
    }
    assert!(
        metrics.contains("kind=\"Pod\",verdict=\"error\"} 3"),
        "{metrics}"
    );
    assert!(
        metrics.contains("kind=\"Pod\",verdict=\"mutated\"} 3"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_are_all_answered() {
    let server = start("serve-concurrent", &steered_guest(), &["--workers", "2"]);
    let request = pod_request();
    let requests = (0..32).map(|_| server.review(&request));
    for response in futures::future::join_all(requests).await {
        assert_eq!(response["patch"], PROBE_PATCH);
    }
}

#[test]
fn invalid_settings_stop_the_server_at_start() {
    let dir = scratch_dir("serve-settings");
    let module = dir.join("policy.wasm");
    std::fs::write(
        &module,
        fixed_guest(r#"{"valid":false,"message":"bad image"}"#, "{}"),
    )
    .unwrap();
    let (cert, key, _) = tls_files(&dir);
    let output = Command::new(env!("CARGO_BIN_EXE_sidecarset-host"))
        .args(["serve", "--listen", "127.0.0.1:0", "--context"])
        .arg(&dir)
        .arg("--cert")
        .arg(&cert)
        .arg("--key")
        .arg(&key)
        .arg(&module)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Provided settings are not valid: bad image"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_in_flight_requests_and_exits_zero() {
    let mut server = start("serve-sigterm", &steered_guest(), &["--no-pooling"]);
    let url = server.url.clone();
    let client = server.client.clone();
    let slow = tokio::spawn(async move {
        let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": marked_request("S")});
        let response = client
            .post(format!("{url}/validate"))
            .body(review.to_string())
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    });
    // Wait until the slow evaluation is in flight.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, metrics) = server.get("/metrics").await;
        if metrics.contains("sidecarset_host_in_flight_evaluations 1") {
            break;
        }
        assert!(Instant::now() < deadline, "the slow request never started");
        tokio::task::yield_now().await;
    }
    let pid = server.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let (status, body) = slow.await.unwrap();
    assert_eq!(status, 200);
    let review: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(review["response"]["patch"], PROBE_PATCH, "{review}");
    let exit = tokio::task::spawn_blocking(move || {
        let status = server.child.wait().unwrap();
        drop(server);
        status
    })
    .await
    .unwrap();
    assert_eq!(exit.code(), Some(0), "{exit:?}");
}

fn yaml_documents(path: &Path) -> Vec<Value> {
    use serde::Deserialize;
    let text = std::fs::read_to_string(path).unwrap();
    serde_norway::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).unwrap())
        .filter(|doc| !doc.is_null())
        .collect()
}

/// Without `--context`, SidecarSets and Namespaces come from watch caches of the cluster in the
/// kubeconfig (here the API-server stand-in); /readyz waits for them and changes are seen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_watch_caches_answer_the_callbacks() {
    use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
    let root = repo_root();
    let dir = scratch_dir("serve-live");
    let module = annotated_policy_wasm(&dir);
    let standin = apiserver_standin::StandIn::start(apiserver_standin::Options::default())
        .await
        .unwrap();
    let client = standin.client().unwrap();
    let sidecarsets: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &sidecarset_host::serve::cache::sidecarset_resource(),
    );
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client);
    let cluster = root.join("examples/cluster");
    for ns in yaml_documents(&cluster.join("namespaces.yaml")) {
        let name = ns["metadata"]["name"].as_str().unwrap().to_string();
        // The stand-in may pre-create `default`.
        if namespaces.get_opt(&name).await.unwrap().is_none() {
            namespaces
                .create(&PostParams::default(), &serde_json::from_value(ns).unwrap())
                .await
                .unwrap();
        }
    }
    for sidecarset in yaml_documents(&cluster.join("sidecarsets.yaml")) {
        sidecarsets
            .create(
                &PostParams::default(),
                &serde_json::from_value(sidecarset).unwrap(),
            )
            .await
            .unwrap();
    }

    let kubeconfig = dir.join("kubeconfig");
    standin.write_kubeconfig(&kubeconfig).unwrap();
    let server = start_path(
        &dir,
        &module,
        // A generous deadline: the suite shares two cores with module compilations.
        &[
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--deadline-ms",
            "20000",
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.get("/readyz").await.0 != 200 {
        assert!(Instant::now() < deadline, "caches never synced");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let path = root.join("examples/requests/log-sidecar.json");
    let output = Command::new(env!("CARGO_BIN_EXE_sidecarset-host"))
        .args(["run", "--allow-context-aware", "--context"])
        .arg(&cluster)
        .arg("--request-path")
        .arg(&path)
        .arg(&module)
        .output()
        .unwrap();
    assert!(output.status.success());
    let expected: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(expected["patch"].is_string(), "{expected}");
    let request: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let response = server.review(&request).await;
    assert_eq!(
        without_timestamps(&response),
        without_timestamps(&expected),
        "serve (left) and run (right) differ"
    );

    // The watch sees the deletion: the sidecar is no longer injected.
    sidecarsets
        .delete("log-agent", &DeleteParams::default())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let response = server.review(&request).await;
        if response["patch"] != expected["patch"] {
            assert_eq!(response["allowed"], true, "{response}");
            break;
        }
        assert!(Instant::now() < deadline, "the deletion was never seen");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // injectionStrategy.revision (rule 6) is resolved from the ControllerRevision cache.
    let client = standin.client().unwrap();
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "kruise-system"}})).unwrap(),
        )
        .await
        .unwrap();
    let revisions: Api<k8s_openapi::api::apps::v1::ControllerRevision> =
        Api::namespaced(client, "kruise-system");
    let revision = json!({
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": "mesh-1", "namespace": "kruise-system",
                     "labels": {"kruise.io/sidecarset-name": "mesh"}},
        "revision": 1,
        "data": {"spec": {"$patch": "replace",
                          "containers": [{"name": "envoy", "image": "envoy:1"}]}}});
    revisions
        .create(
            &PostParams::default(),
            &serde_json::from_value(revision).unwrap(),
        )
        .await
        .unwrap();
    let create = |revision_name: &str| {
        json!({"uid": "rev", "operation": "CREATE",
               "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "SidecarSet"},
               "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "sidecarsets"},
               "userInfo": {"username": "admin"},
               "object": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
                          "metadata": {"name": "mesh"},
                          "spec": {"selector": {"matchLabels": {"app": "mesh"}},
                                   "containers": [{"name": "envoy", "image": "envoy:2"}],
                                   "injectionStrategy": {"revision": {"revisionName": revision_name}}}}})
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.review(&create("mesh-1")).await["allowed"] != true {
        assert!(Instant::now() < deadline, "the revision was never seen");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let missing = server.review(&create("mesh-0")).await;
    assert_eq!(missing["allowed"], false, "{missing}");
    let message = missing["status"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("Cannot find specific ControllerRevision"),
        "{missing}"
    );
    drop(server);
    standin.shutdown().await;
}

fn review_body(request: &Value) -> String {
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
        .to_string()
}

/// The value of an unlabelled metric in a Prometheus text exposition.
fn gauge(metrics: &str, name: &str) -> i64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in {metrics}"))
        .parse()
        .unwrap()
}

/// Polls /metrics until `done` holds (at most 30 s: the suite shares two cores).
async fn wait_for_metrics(server: &Server, what: &str, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, metrics) = server.get("/metrics").await;
        if done(&metrics) {
            return metrics;
        }
        assert!(Instant::now() < deadline, "{what}; metrics:\n{metrics}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_until_ready(server: &Server) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.get("/readyz").await.0 != 200 {
        assert!(Instant::now() < deadline, "caches never synced");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A stand-in API server and a kubeconfig for it in `dir`.
async fn standin(dir: &Path) -> (apiserver_standin::StandIn, PathBuf) {
    let standin = apiserver_standin::StandIn::start(apiserver_standin::Options::default())
        .await
        .unwrap();
    let kubeconfig = dir.join("kubeconfig");
    standin.write_kubeconfig(&kubeconfig).unwrap();
    (standin, kubeconfig)
}

/// Evaluations block until the test creates the Namespace `release`: with `--workers 2` and four
/// requests, exactly two run while two wait, and never more than two ran at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evaluations_run_in_parallel_up_to_the_worker_limit_and_no_further() {
    use kube::api::{Api, PostParams};
    let dir = scratch_dir("serve-workers");
    let (standin, kubeconfig) = standin(&dir).await;
    let module = dir.join("held.wasm");
    std::fs::write(&module, held_until_released_guest()).unwrap();
    let server = start_path(
        &dir,
        &module,
        &[
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--workers",
            "2",
            "--deadline-ms",
            "120000",
        ],
    );
    wait_until_ready(&server).await;

    let held: Vec<_> = (0..4)
        .map(|_| {
            let (client, url) = (server.client.clone(), server.url.clone());
            tokio::spawn(async move {
                let response = client
                    .post(format!("{url}/validate"))
                    .body(review_body(&pod_request()))
                    .send()
                    .await
                    .unwrap();
                (response.status().as_u16(), response.text().await.unwrap())
            })
        })
        .collect();
    wait_for_metrics(
        &server,
        "four requests never got two workers and a queue of two",
        |m| {
            gauge(m, "sidecarset_host_in_flight_evaluations") == 4
                && gauge(m, "sidecarset_host_running_evaluations") == 2
        },
    )
    .await;

    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> =
        Api::all(standin.client().unwrap());
    let release = serde_json::from_value(json!({"metadata": {"name": "release"}})).unwrap();
    namespaces
        .create(&PostParams::default(), &release)
        .await
        .unwrap();
    for request in held {
        let (status, body) = request.await.unwrap();
        assert_eq!(status, 200, "{body}");
        let review: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(review["response"]["allowed"], true, "{review}");
    }
    let (_, metrics) = server.get("/metrics").await;
    assert_eq!(
        gauge(&metrics, "sidecarset_host_running_evaluations_max"),
        2,
        "the worker limit was not enforced"
    );
    assert_eq!(gauge(&metrics, "sidecarset_host_running_evaluations"), 0);
    assert!(
        metrics.contains("kind=\"Pod\",verdict=\"accepted\"} 4"),
        "{metrics}"
    );
    drop(server);
    standin.shutdown().await;
}

/// While the SidecarSet list fails, /readyz and Pod admissions answer 503; once it succeeds both
/// turn to 200.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_ready_and_503_until_the_caches_have_synced() {
    use apiserver_standin::Verb;
    let dir = scratch_dir("serve-sync");
    let (standin, kubeconfig) = standin(&dir).await;
    standin
        .faults()
        .fail_next(Some(Verb::List), Some("sidecarsets"), u32::MAX, 500);
    let module = dir.join("policy.wasm");
    std::fs::write(&module, fixed_guest(SETTINGS_OK, &mutating_response())).unwrap();
    let server = start_path(
        &dir,
        &module,
        &["--kubeconfig", kubeconfig.to_str().unwrap()],
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while standin.faults().count(Verb::List, "sidecarsets") == 0 {
        assert!(Instant::now() < deadline, "serve never listed SidecarSets");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let not_ready = (503, "not ready: caches not synced\n".to_string());
    assert_eq!(server.get("/readyz").await, not_ready);
    assert_eq!(
        server.post("/validate", review_body(&pod_request())).await,
        not_ready
    );
    // A kind the policy does not handle needs no cache.
    let mut deployment = pod_request();
    deployment["kind"] = json!({"group": "apps", "version": "v1", "kind": "Deployment"});
    assert_eq!(server.review(&deployment).await["allowed"], true);

    standin.faults().clear();
    wait_until_ready(&server).await;
    assert_eq!(server.review(&pod_request()).await["patch"], PROBE_PATCH);
    drop(server);
    standin.shutdown().await;
}

/// Without --max-body-bytes the limit is the API server's own, 3 MiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_body_limit_is_3_mib() {
    const LIMIT: usize = 3 * 1024 * 1024;
    let server = start("serve-3mib", &steered_guest(), &[]);
    // A review of a kind served without evaluation, padded to exactly `size` bytes.
    let review_of = |size: usize| {
        let mut deployment = pod_request();
        deployment["kind"] = json!({"group": "apps", "version": "v1", "kind": "Deployment"});
        let mut review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": deployment, "pad": ""});
        let pad = size - review.to_string().len();
        review["pad"] = json!("x".repeat(pad));
        let body = review.to_string();
        assert_eq!(body.len(), size);
        body
    };
    let (status, body) = server.post("/validate", review_of(LIMIT)).await;
    assert_eq!(status, 200, "{body}");
    // Over the limit by one byte. Only the head is sent: a client still writing a body the server
    // will not read can see the connection reset before it reads the 413.
    let head = declared_length_answer(&server, LIMIT + 1).await;
    assert!(head.starts_with("HTTP/1.1 413 "), "{head}");
    assert!(
        head.ends_with(&format!("\r\n\r\nrequest body larger than {LIMIT} bytes\n")),
        "{head}"
    );
}

/// POSTs only the head of a request declaring `content_length` bytes; returns the raw answer.
async fn declared_length_answer(server: &Server, content_length: usize) -> String {
    use rustls_pki_types::pem::PemObject;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls_pki_types::CertificateDer::from_pem_slice(server.ca_pem.as_bytes()).unwrap())
        .unwrap();
    let config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let port = server.url.rsplit(':').next().unwrap();
    let tcp = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .unwrap();
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(name, tcp)
        .await
        .unwrap();
    let head = format!(
        "POST /validate HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {content_length}\r\n\r\n"
    );
    tls.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    // The answer's body is one line: read until it is complete or the server closes.
    while !String::from_utf8_lossy(&answer).ends_with("bytes\n") {
        let n = tokio::time::timeout(Duration::from_secs(30), tls.read(&mut buffer))
            .await
            .expect("no answer to the request head")
            .unwrap();
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..n]);
    }
    String::from_utf8(answer).unwrap()
}

/// serve grants the kinds of the module's `contextAwareResources`, and nothing to a module
/// without metadata (policy-server's allow-list).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_policy_reads_only_the_kinds_its_metadata_declares() {
    let serve = |name: &str, module: Vec<u8>| {
        let dir = scratch_dir(name);
        std::fs::write(
            dir.join("ns.yaml"),
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n",
        )
        .unwrap();
        let path = dir.join("policy.wasm");
        std::fs::write(&path, module).unwrap();
        start_path(&dir, &path, &[])
    };
    let undeclared = serve("serve-undeclared", host_call_guest())
        .review(&pod_request())
        .await;
    assert_eq!(undeclared["allowed"], false, "{undeclared}");
    let message = undeclared["status"]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "Policy has not been granted access to Kubernetes v1/Namespace resources. The violation has been reported."
        ),
        "{message}"
    );
    let declared = serve(
        "serve-declared",
        with_context_aware_resources(host_call_guest(), &[("v1", "Namespace")]),
    )
    .review(&pod_request())
    .await;
    assert_eq!(declared["allowed"], true, "{declared}");
    assert!(declared["patch"].is_string(), "{declared}");
}
