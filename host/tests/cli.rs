//! `sidecarset-host run` end to end, as the conformance runner and the README use it.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::*;
use serde_json::{Value, json};

fn host() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sidecarset-host"))
}

fn write_module(dir: &Path, name: &str, wasm: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, wasm).unwrap();
    path
}

fn write_json(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).unwrap();
    path
}

fn stdout_line(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "exit {:?}, stderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    assert_eq!(stdout.lines().count(), 1, "exactly one line: {stdout:?}");
    assert!(stdout.ends_with('\n'));
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn run_prints_one_admission_response_line() {
    let dir = scratch_dir("cli-run");
    let module = write_module(&dir, "policy.wasm", &misbehaving_guest());
    let request = write_json(&dir, "request.json", &pod_request());
    let output = host()
        .args(["run", "--request-path"])
        .arg(&request)
        .args(["--settings-json", r#"{"sidecarImage":"example/agent:1.0"}"#])
        .arg(&module)
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!(
            "{{\"uid\":\"1299d386-525b-4032-98ae-1949f69f9cfc\",\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\"{PROBE_PATCH}\",\"auditAnnotations\":null,\"warnings\":null}}\n"
        )
    );
}

#[test]
fn run_reads_an_admission_review_from_stdin_and_yaml_settings() {
    let dir = scratch_dir("cli-stdin");
    let module = write_module(&dir, "policy.wasm", &misbehaving_guest());
    let settings = dir.join("settings.yml");
    std::fs::write(&settings, "sidecarImage: example/agent:1.0\n").unwrap();
    let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": pod_request()});
    let mut child = host()
        .args(["run", "-r", "-", "-s"])
        .arg(&settings)
        .arg(format!("file://{}", module.display()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(review.to_string().as_bytes())
        .unwrap();
    let line = stdout_line(&child.wait_with_output().unwrap());
    assert_eq!(line["patch"], PROBE_PATCH);
}

#[test]
fn invalid_settings_fail_the_command() {
    let dir = scratch_dir("cli-settings");
    let module = write_module(
        &dir,
        "policy.wasm",
        &fixed_guest(
            r#"{"valid":false,"message":"sidecarImage is required"}"#,
            r#"{"accepted":true}"#,
        ),
    );
    let request = write_json(&dir, "request.json", &pod_request());
    let output = host()
        .arg("run")
        .arg("-r")
        .arg(&request)
        .arg(&module)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Provided settings are not valid: sidecarImage is required"),
        "{stderr}"
    );
    let not_a_map = host()
        .args(["run", "-r"])
        .arg(&request)
        .args(["--settings-json", "[1]"])
        .arg(&module)
        .output()
        .unwrap();
    assert!(!not_a_map.status.success());
}

#[test]
fn rejections_still_exit_zero() {
    let dir = scratch_dir("cli-reject");
    let module = write_module(
        &dir,
        "policy.wasm",
        &fixed_guest(
            SETTINGS_OK,
            r#"{"accepted":false,"message":"no sidecars here","code":403}"#,
        ),
    );
    let request = write_json(&dir, "request.json", &pod_request());
    let line = stdout_line(
        &host()
            .arg("run")
            .arg("-r")
            .arg(&request)
            .arg(&module)
            .output()
            .unwrap(),
    );
    assert_eq!(line["allowed"], false);
    assert_eq!(
        line["status"],
        json!({"message": "no sidecars here", "code": 403})
    );
}

const NAMESPACES_REFUSED: &str = "internal server error: Guest call failure: Policy has not been granted access to Kubernetes v1/Namespace resources. The violation has been reported.";

/// `host_call_guest` declaring `v1/Namespace` in its metadata.
fn namespace_reader() -> Vec<u8> {
    with_context_aware_resources(host_call_guest(), &[("v1", "Namespace")])
}

fn namespaces_context(dir: &Path) -> PathBuf {
    let context = dir.join("cluster");
    std::fs::create_dir_all(&context).unwrap();
    std::fs::write(
        context.join("ns.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-b}\n",
    )
    .unwrap();
    context
}

#[test]
fn kubernetes_callbacks_without_a_cluster_fail_like_kwctl() {
    let dir = scratch_dir("cli-nocluster");
    let request = write_json(&dir, "request.json", &pod_request());
    // Unannotated: nothing is granted, the read is refused before any cluster is asked.
    let unannotated = write_module(&dir, "plain.wasm", &host_call_guest());
    let line = stdout_line(
        &host()
            .arg("run")
            .arg("-r")
            .arg(&request)
            .arg("--allow-context-aware")
            .arg(&unannotated)
            .output()
            .unwrap(),
    );
    assert_eq!(line["allowed"], false);
    assert_eq!(line["status"]["message"], NAMESPACES_REFUSED);
    // Granted but no cluster to ask.
    let module = write_module(&dir, "policy.wasm", &namespace_reader());
    let line = stdout_line(
        &host()
            .arg("run")
            .arg("-r")
            .arg(&request)
            .arg("--allow-context-aware")
            .arg(&module)
            .output()
            .unwrap(),
    );
    assert_eq!(line["allowed"], false);
    assert_eq!(
        line["status"]["message"],
        "internal server error: Guest call failure: Callback evaluation failure: kube::Client was not initialized properly"
    );
}

#[test]
fn allow_context_aware_grants_exactly_the_declared_kinds() {
    let dir = scratch_dir("cli-allow");
    let request = write_json(&dir, "request.json", &pod_request());
    let context = namespaces_context(&dir);
    let run = |module: &Path, allow: bool| {
        let mut command = host();
        command.arg("run").arg("-r").arg(&request);
        command.arg("--context").arg(&context);
        if allow {
            command.arg("--allow-context-aware");
        }
        command.arg(module).output().unwrap()
    };
    let module = write_module(&dir, "policy.wasm", &namespace_reader());

    // Without the flag kwctl denies every read and says why on stderr.
    let output = run(&module, false);
    assert_eq!(
        stdout_line(&output)["status"]["message"],
        NAMESPACES_REFUSED
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Policy requires access to Kubernetes resources at evaluation time")
            && stderr.contains("--allow-context-aware"),
        "{stderr}"
    );

    let output = run(&module, true);
    let granted = stdout_line(&output);
    assert_eq!(granted["allowed"], true, "{granted}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("Policy has been granted access"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // A module declaring other kinds may not read Namespaces, even with the flag.
    let other = write_module(
        &dir,
        "other.wasm",
        &with_context_aware_resources(
            host_call_guest(),
            &[("apps.kruise.io/v1alpha1", "SidecarSet")],
        ),
    );
    assert_eq!(
        stdout_line(&run(&other, true))["status"]["message"],
        NAMESPACES_REFUSED
    );
}

#[test]
fn context_dir_record_and_replay() {
    let dir = scratch_dir("cli-context");
    let module = write_module(&dir, "policy.wasm", &namespace_reader());
    let request = write_json(&dir, "request.json", &pod_request());
    let context = namespaces_context(&dir);
    let session = dir.join("session.yml");

    let recorded = stdout_line(
        &host()
            .arg("run")
            .arg("-r")
            .arg(&request)
            .arg("--allow-context-aware")
            .arg("--context")
            .arg(&context)
            .arg("--record-host-capabilities-interactions")
            .arg(&session)
            .arg(&module)
            .output()
            .unwrap(),
    );
    assert_eq!(recorded["allowed"], true);
    let patch: Value = serde_json::from_slice(
        &base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            recorded["patch"].as_str().unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    let items = patch
        .as_array()
        .unwrap()
        .iter()
        .find(|op| op["path"] == "/items")
        .expect("items added");
    assert_eq!(items["value"].as_array().unwrap().len(), 2);
    let yaml = std::fs::read_to_string(&session).unwrap();
    assert!(
        yaml.starts_with("- type: Exchange\n  request: |\n    !KubernetesListResourceAll\n"),
        "{yaml}"
    );

    let replayed = stdout_line(
        &host()
            .arg("run")
            .arg("-r")
            .arg(&request)
            .arg("--allow-context-aware")
            .arg("--replay-host-capabilities-interactions")
            .arg(&session)
            .arg(&module)
            .output()
            .unwrap(),
    );
    assert_eq!(replayed, recorded);

    // The allow-list comes first: without the flag the recorded answer is never handed out.
    let output = host()
        .arg("run")
        .arg("-r")
        .arg(&request)
        .arg("--replay-host-capabilities-interactions")
        .arg(&session)
        .arg(&module)
        .output()
        .unwrap();
    assert_eq!(
        stdout_line(&output)["status"]["message"],
        NAMESPACES_REFUSED
    );
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("1 of the 1 recorded exchanges have not been replayed"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    std::fs::write(&session, "[]\n").unwrap();
    let exhausted = stdout_line(
        &host()
            .arg("run")
            .arg("-r")
            .arg(&request)
            .arg("--allow-context-aware")
            .arg("--replay-host-capabilities-interactions")
            .arg(&session)
            .arg(&module)
            .output()
            .unwrap(),
    );
    assert_eq!(
        exhausted["status"]["message"],
        "internal server error: Guest call failure: Callback evaluation failure: the list of recorded responses is empty"
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let dir = scratch_dir("cli-bad");
    let module = write_module(&dir, "policy.wasm", &misbehaving_guest());
    let request = write_json(&dir, "request.json", &pod_request());
    let garbage = dir.join("garbage.json");
    std::fs::write(&garbage, "{not json").unwrap();
    // As kwctl: neither an AdmissionRequest nor an AdmissionReview is an input error.
    let array = write_json(&dir, "array.json", &serde_json::json!([1, 2]));
    let review =
        serde_json::json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"});
    let no_request = write_json(&dir, "review.json", &review);
    let run = |request: &std::path::Path| -> Vec<String> {
        let module = module.display().to_string();
        vec![
            "run".into(),
            "-r".into(),
            request.display().to_string(),
            module,
        ]
    };
    for args in [
        run(&array),
        run(&no_request),
        vec![
            "run".into(),
            "-r".into(),
            garbage.display().to_string(),
            module.display().to_string(),
        ],
        vec![
            "run".into(),
            "-r".into(),
            request.display().to_string(),
            dir.join("missing.wasm").display().to_string(),
        ],
        vec![
            "run".into(),
            "-r".into(),
            request.display().to_string(),
            garbage.display().to_string(),
        ],
    ] {
        let output = host().args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(output.stdout.is_empty());
        assert!(String::from_utf8_lossy(&output.stderr).starts_with("Error: "));
    }
    let conflicting = host()
        .args(["run", "-r"])
        .arg(&request)
        .args([
            "--context",
            "x",
            "--replay-host-capabilities-interactions",
            "y",
        ])
        .arg(&module)
        .output()
        .unwrap();
    assert!(!conflicting.status.success());
}

/// Runs `run -r request module` with extra arguments.
fn run_request(request: &Path, module: &Path, extra: &[&str]) -> Output {
    host()
        .arg("run")
        .arg("-r")
        .arg(request)
        .args(extra)
        .arg(module)
        .output()
        .unwrap()
}

/// As kwctl: a request that does not decode as policy-evaluator's AdmissionRequest fails the
/// command with kwctl's message and prints no AdmissionResponse line.
#[test]
fn run_refuses_requests_kwctl_cannot_decode() {
    let dir = scratch_dir("cli-decode");
    let module = write_module(&dir, "policy.wasm", &misbehaving_guest());
    let mut no_uid = pod_request();
    no_uid.as_object_mut().unwrap().remove("uid");
    let mut uid_number = pod_request();
    uid_number["uid"] = json!(123);
    let mut no_user_info = pod_request();
    no_user_info.as_object_mut().unwrap().remove("userInfo");
    let mut bad_dry_run = pod_request();
    bad_dry_run["dryRun"] = json!("yes");
    let review =
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": no_uid});
    for (request, error) in [
        (&no_uid, "missing field `uid`"),
        (&review, "missing field `uid`"),
        (
            &uid_number,
            "invalid type: integer `123`, expected a string",
        ),
        (&no_user_info, "missing field `userInfo`"),
        (
            &bad_dry_run,
            "invalid type: string \"yes\", expected a boolean",
        ),
    ] {
        let output = run_request(&write_json(&dir, "request.json", request), &module, &[]);
        assert_ne!(output.status.code(), Some(0), "{request}");
        assert!(output.stdout.is_empty(), "{request}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!(
                "cannot build AdmissionRequest object from given input: {error}"
            )),
            "{stderr}"
        );
    }
}

/// `request` with keys policy-evaluator does not know, and its absent optional fields as nulls.
fn with_unknown_keys_and_nulls(mut request: Value) -> Value {
    let fields = request.as_object_mut().unwrap();
    fields.insert("unknownField".into(), json!({"a": 1}));
    for optional in ["subResource", "requestSubResource", "oldObject", "options"] {
        fields.entry(optional).or_insert(Value::Null);
    }
    request["userInfo"]
        .as_object_mut()
        .unwrap()
        .entry("extra")
        .or_insert(Value::Null);
    request["userInfo"]["unknownUserField"] = json!("x");
    request
}

/// The guest's `request` is the AdmissionRequest re-serialised as policy-evaluator does:
/// unknown keys dropped, null optionals omitted.
#[test]
fn run_sends_the_guest_the_re_serialised_request() {
    let dir = scratch_dir("cli-reserialise");
    let module = write_module(&dir, "policy.wasm", &payload_echo_guest());
    let request = write_json(
        &dir,
        "request.json",
        &with_unknown_keys_and_nulls(pod_request()),
    );
    let line = stdout_line(&run_request(&request, &module, &[]));
    let message = line["status"]["message"].as_str().unwrap();
    let payload = message
        .strip_prefix("internal server error: Guest call failure: ")
        .unwrap_or_else(|| panic!("{message}"));
    let payload: Value = serde_json::from_str(payload).unwrap();
    assert_eq!(payload, json!({"request": pod_request(), "settings": {}}));
}

/// The real policy answers a request with unknown keys and null optionals exactly as the clean
/// one, after the same host calls: the recorded example sessions still replay.
#[test]
fn unknown_keys_and_nulls_change_nothing_for_the_policy() {
    let dir = scratch_dir("cli-example-junk");
    let module = annotated_policy_wasm(&dir);
    let examples = repo_root().join("examples");
    let request: Value = serde_json::from_str(
        &std::fs::read_to_string(examples.join("requests/log-sidecar.json")).unwrap(),
    )
    .unwrap();
    let clean = write_json(&dir, "clean.json", &request);
    let junk = write_json(&dir, "junk.json", &with_unknown_keys_and_nulls(request));
    let context = examples.join("cluster").display().to_string();
    let record = |request: &Path, session: &str| {
        let session = dir.join(session);
        let line = stdout_line(&run_request(
            request,
            &module,
            &[
                "--allow-context-aware",
                "--context",
                &context,
                "--record-host-capabilities-interactions",
                &session.display().to_string(),
            ],
        ));
        (line, std::fs::read_to_string(session).unwrap())
    };
    let (clean_line, clean_session) = record(&clean, "clean.yml");
    let (junk_line, junk_session) = record(&junk, "junk.yml");
    assert_eq!(
        without_timestamps(&junk_line),
        without_timestamps(&clean_line)
    );
    assert_eq!(junk_session, clean_session);
    assert!(junk_line["patch"].is_string(), "{junk_line}");

    let session = examples
        .join("sessions/log-sidecar.yml")
        .display()
        .to_string();
    let output = run_request(
        &junk,
        &module,
        &[
            "--allow-context-aware",
            "--replay-host-capabilities-interactions",
            &session,
        ],
    );
    assert_eq!(
        without_timestamps(&stdout_line(&output)),
        without_timestamps(&clean_line)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("not been replayed"), "{stderr}");
}

/// The value in µs after `label ` in bench's statistics line.
fn micros_after(line: &str, label: &str) -> f64 {
    let rest = line
        .split_once(&format!("{label} "))
        .unwrap_or_else(|| panic!("no {label} in {line:?}"))
        .1;
    let (value, _) = rest
        .split_once(" µs")
        .unwrap_or_else(|| panic!("no µs after {label} in {line:?}"));
    value.parse().unwrap()
}

#[test]
fn bench_prints_consistent_statistics() {
    let dir = scratch_dir("cli-bench");
    let module = write_module(&dir, "policy.wasm", &misbehaving_guest());
    let request = write_json(&dir, "request.json", &pod_request());
    for (flag, mode) in [
        (None, "fresh instance per evaluation"),
        (Some("--pooling"), "fresh instance per evaluation"),
        (
            Some("--reuse-instance"),
            "one instance for all evaluations, guest call only",
        ),
    ] {
        let mut command = host();
        command
            .args(["bench", "-r"])
            .arg(&request)
            .args(["--warm-up", "3", "--iterations", "40"]);
        command.args(flag);
        let output = command.arg(&module).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 3, "{stdout}");
        assert_eq!(
            lines[0],
            format!("validate ({mode}) [40 iterations after 3 warm-up]:")
        );
        let stats = lines[1];
        assert!(stats.starts_with("\tmean "), "{stats:?}");
        let [mean, min, max, p50, p99] =
            ["mean", "min", "max", "p50", "p99"].map(|label| micros_after(stats, label));
        assert!(min > 0.0, "{stats}");
        assert!(min <= p50 && p50 <= p99 && p99 <= max, "{stats}");
        assert!(min <= mean && mean <= max, "{stats}");
        let rate: f64 = lines[2]
            .trim()
            .strip_suffix(" evaluations/s (one thread)")
            .unwrap_or_else(|| panic!("{:?}", lines[2]))
            .parse()
            .unwrap();
        assert!(rate > 0.0, "{stdout}");
    }
    let none = host()
        .args(["bench", "-r"])
        .arg(&request)
        .args(["--iterations", "0"])
        .arg(&module)
        .output()
        .unwrap();
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("--iterations must be at least 1"));
}
