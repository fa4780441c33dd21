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

#[test]
fn kubernetes_callbacks_without_a_cluster_fail_like_kwctl() {
    let dir = scratch_dir("cli-nocluster");
    let module = write_module(&dir, "policy.wasm", &host_call_guest());
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
        line["status"]["message"],
        "internal server error: Guest call failure: kube::Client was not initialized properly"
    );
}

#[test]
fn context_dir_record_and_replay() {
    let dir = scratch_dir("cli-context");
    let module = write_module(&dir, "policy.wasm", &host_call_guest());
    let request = write_json(&dir, "request.json", &pod_request());
    let context = dir.join("cluster");
    std::fs::create_dir_all(&context).unwrap();
    std::fs::write(
        context.join("ns.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-b}\n",
    )
    .unwrap();
    let session = dir.join("session.yml");

    let recorded = stdout_line(
        &host()
            .arg("run")
            .arg("-r")
            .arg(&request)
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
            .arg("--replay-host-capabilities-interactions")
            .arg(&session)
            .arg(&module)
            .output()
            .unwrap(),
    );
    assert_eq!(replayed, recorded);

    std::fs::write(&session, "[]\n").unwrap();
    let exhausted = stdout_line(
        &host()
            .arg("run")
            .arg("-r")
            .arg(&request)
            .arg("--replay-host-capabilities-interactions")
            .arg(&session)
            .arg(&module)
            .output()
            .unwrap(),
    );
    assert_eq!(
        exhausted["status"]["message"],
        "internal server error: Guest call failure: the list of recorded responses is empty"
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let dir = scratch_dir("cli-bad");
    let module = write_module(&dir, "policy.wasm", &misbehaving_guest());
    let request = write_json(&dir, "request.json", &pod_request());
    let garbage = dir.join("garbage.json");
    std::fs::write(&garbage, "{not json").unwrap();
    for args in [
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
