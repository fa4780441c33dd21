//! `annotate` then `inspect`, like kwctl: the section, its JSON, validation and re-annotation.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use serde_json::{Value, json};
use sidecarset_host::annotate::{
    Metadata, annotate, count_custom_sections, embedded_metadata, replace_custom_section,
};
use sidecarset_host::engine::{
    EngineError, KUBEWARDEN_VERSION, KubewardenVersion, METADATA_SECTION, PolicyEngine,
    read_metadata,
};
use sidecarset_host::{ClusterContext, evaluate_admission};

const METADATA: &str = r#"
rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["pods"]
    operations: ["CREATE"]
mutating: true
contextAwareResources:
  - apiVersion: v1
    kind: Namespace
executionMode: kubewarden-wapc
backgroundAudit: false
annotations:
  io.kubewarden.policy.title: probe
  io.kubewarden.policy.source: https://example.com/probe
"#;

fn host() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sidecarset-host"))
}

fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}, stderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8 output")
}

fn annotate_cli(dir: &Path, module: &Path, metadata: &str, usage: Option<&str>) -> Output {
    let metadata_path = dir.join("metadata.yml");
    std::fs::write(&metadata_path, metadata).unwrap();
    let mut command = host();
    command.arg("annotate").arg("-m").arg(&metadata_path);
    if let Some(usage) = usage {
        let usage_path = dir.join("README.md");
        std::fs::write(&usage_path, usage).unwrap();
        command.arg("-u").arg(usage_path);
    }
    command
        .arg("-o")
        .arg(dir.join("annotated.wasm"))
        .arg(module)
        .output()
        .unwrap()
}

fn plain_module(dir: &Path) -> PathBuf {
    let path = dir.join("policy.wasm");
    std::fs::write(&path, misbehaving_guest()).unwrap();
    path
}

/// As kwctl picks the runtime from `executionMode`, a module annotated for another one is
/// refused with a clear error instead of being driven through waPC.
#[test]
fn a_module_annotated_for_another_runtime_is_refused() {
    let dir = scratch_dir("annotate-opa");
    let module = plain_module(&dir);
    let opa = METADATA.replace("executionMode: kubewarden-wapc", "executionMode: opa");
    ok(annotate_cli(&dir, &module, &opa, None));
    let request = dir.join("request.json");
    std::fs::write(&request, r#"{"uid": "1", "operation": "CREATE"}"#).unwrap();
    let output = host()
        .arg("run")
        .arg("--request-path")
        .arg(&request)
        .arg(dir.join("annotated.wasm"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "executionMode is \"opa\"; sidecarset-host runs kubewarden-wapc policies only"
        ),
        "{stderr}"
    );
}

#[test]
fn annotate_then_inspect_round_trips() {
    let dir = scratch_dir("annotate-inspect");
    let module = plain_module(&dir);
    ok(annotate_cli(
        &dir,
        &module,
        METADATA,
        Some("# Probe\n\nUsage text.\n"),
    ));
    let annotated = std::fs::read(dir.join("annotated.wasm")).unwrap();
    let json = read_metadata(&annotated)
        .unwrap()
        .expect("metadata section");
    assert_eq!(json["protocolVersion"], "v1");
    assert_eq!(json["mutating"], true);
    assert_eq!(json["backgroundAudit"], false);
    assert_eq!(json["executionMode"], "kubewarden-wapc");
    assert_eq!(json["policyType"], "kubernetes");
    assert_eq!(
        json["rules"],
        json!([{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["CREATE"]}])
    );
    assert_eq!(
        json["contextAwareResources"],
        json!([{"apiVersion": "v1", "kind": "Namespace"}])
    );
    assert_eq!(
        json["annotations"]["io.kubewarden.kwctl"],
        format!("sidecarset-host {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(
        json["annotations"]["io.kubewarden.policy.usage"],
        "# Probe\n\nUsage text.\n"
    );
    assert_eq!(json["minimumKubewardenVersion"], Value::Null);

    let text = ok(host()
        .arg("inspect")
        .arg(dir.join("annotated.wasm"))
        .output()
        .unwrap());
    assert!(text.contains("title:"), "{text}");
    assert!(text.contains("probe"), "{text}");
    assert!(text.contains("protocol version:"), "{text}");
    assert!(text.contains("v1"), "{text}");
    assert!(
        text.contains("resources:\n  - pods") || text.contains("- pods"),
        "{text}"
    );
    assert!(text.contains("Usage\n# Probe\n\nUsage text."), "{text}");

    let yaml = ok(host()
        .args(["inspect", "-o", "yaml"])
        .arg(dir.join("annotated.wasm"))
        .output()
        .unwrap());
    let back = Metadata::from_yaml(&yaml).expect("inspect -o yaml is valid metadata");
    assert_eq!(Some(back), embedded_metadata(&annotated).unwrap());
}

#[test]
fn inspect_refuses_a_plain_module() {
    let dir = scratch_dir("inspect-plain");
    let module = plain_module(&dir);
    let output = host().arg("inspect").arg(&module).output().unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("No Kubewarden metadata"));
}

#[test]
fn reannotation_replaces_the_section() {
    let wasm = misbehaving_guest();
    let first = Metadata::from_yaml(METADATA).unwrap();
    let (once, _) = annotate(&wasm, first, Some("one".into())).unwrap();
    let second =
        Metadata::from_yaml(&METADATA.replace("mutating: true", "mutating: false")).unwrap();
    let (twice, _) = annotate(&once, second, None).unwrap();
    assert_eq!(count_custom_sections(&twice, METADATA_SECTION).unwrap(), 1);
    let embedded = embedded_metadata(&twice).unwrap().unwrap();
    assert!(!embedded.mutating);
    assert_eq!(
        embedded.usage(),
        None,
        "the new metadata replaces the old one"
    );
    // Apart from the metadata, the module is unchanged.
    let strip = |wasm: &[u8]| replace_custom_section(wasm, METADATA_SECTION, b"").unwrap();
    assert_eq!(strip(&twice), strip(&once));
    assert_eq!(strip(&once), strip(&wasm));
}

#[test]
fn the_annotated_module_runs_like_the_plain_one() {
    let wasm = misbehaving_guest();
    let (annotated, _) = annotate(&wasm, Metadata::from_yaml(METADATA).unwrap(), None).unwrap();
    let context = ClusterContext::default();
    let plain = PolicyEngine::new(&wasm, test_config()).unwrap();
    let annotated = PolicyEngine::new(&annotated, test_config()).unwrap();
    assert!(annotated.metadata().is_some());
    let request = pod_request();
    assert_eq!(
        evaluate_admission(&plain, &request, &json!({}), &context),
        evaluate_admission(&annotated, &request, &json!({}), &context)
    );
}

#[test]
fn the_real_policy_annotates_and_runs() {
    let root = repo_root();
    let wasm = std::fs::read(policy_wasm()).expect("read policy.wasm");
    let metadata = std::fs::read_to_string(root.join("policy/metadata.yml")).unwrap();
    let (annotated, embedded) =
        annotate(&wasm, Metadata::from_yaml(&metadata).unwrap(), None).unwrap();
    assert_eq!(embedded.protocol_version.as_deref(), Some("v1"));
    let context = ClusterContext::from_dir(&root.join("examples/cluster")).unwrap();
    let request: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("examples/requests/log-sidecar.json")).unwrap(),
    )
    .unwrap();
    let plain = PolicyEngine::new(&wasm, Default::default()).unwrap();
    let annotated = PolicyEngine::new(&annotated, Default::default()).unwrap();
    assert_eq!(
        evaluate_admission(&plain, &request, &json!({}), &context),
        evaluate_admission(&annotated, &request, &json!({}), &context)
    );
}

#[test]
fn invalid_metadata_is_refused_like_kwctl() {
    let cases = [
        (METADATA.replace("mutating: true\n", ""), "mutating"),
        (
            METADATA.replace(r#"operations: ["CREATE"]"#, r#"operations: ["MAKE"]"#),
            "MAKE",
        ),
        (
            METADATA.replace(r#"operations: ["CREATE"]"#, "operations: []"),
            "operations",
        ),
        (
            METADATA.replace(r#"resources: ["pods"]"#, "resources: []"),
            "resources",
        ),
        (
            METADATA.replace(r#"apiVersions: ["v1"]"#, r#"apiVersions: ["*", "v1"]"#),
            "'*'",
        ),
        (
            METADATA.replace(
                r#"operations: ["CREATE"]"#,
                r#"operations: ["*", "CREATE"]"#,
            ),
            "'*'",
        ),
        (
            METADATA.replace("kind: Namespace", "kind: \"\""),
            "contextAwareResources",
        ),
        (
            METADATA.replace("executionMode: kubewarden-wapc", "executionMode: lua"),
            "lua",
        ),
        (
            "rules: []\nmutating: false\n".to_string(),
            "at least one rule",
        ),
    ];
    for (text, needle) in cases {
        let error = Metadata::from_yaml(&text).expect_err(needle).to_string();
        assert!(error.contains(needle), "{needle}: {error}");
    }
    let dir = scratch_dir("annotate-invalid");
    let module = plain_module(&dir);
    let output = annotate_cli(&dir, &module, "rules: []\n", None);
    assert!(!output.status.success());
    assert!(!dir.join("annotated.wasm").exists());
}

#[test]
fn a_module_without_protocol_version_cannot_be_annotated() {
    let dir = scratch_dir("annotate-garbage");
    let module = dir.join("garbage.wasm");
    std::fs::write(&module, b"\0asm\x01\0\0\0garbage").unwrap();
    let output = annotate_cli(&dir, &module, METADATA, None);
    assert!(!output.status.success());
    let error = annotate(
        &fixed_guest(SETTINGS_OK, "{}")[..8],
        Metadata::from_yaml(METADATA).unwrap(),
        None,
    );
    assert!(error.is_err());
}

/// `run` on `module` with the Pod request of the guide.
fn run_cli(dir: &Path, module: &Path) -> Output {
    let request = dir.join("request.json");
    std::fs::write(&request, pod_request().to_string()).unwrap();
    host()
        .arg("run")
        .arg("--request-path")
        .arg(&request)
        .arg(module)
        .output()
        .unwrap()
}

fn assert_refused(output: &Output, error: &str) {
    assert!(!output.status.success(), "{error}");
    assert!(output.stdout.is_empty(), "{error}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(error), "{stderr}");
}

/// As policy-server: an annotated waPC module must say `protocolVersion: v1`; a plain module
/// (no metadata at all) still runs.
#[test]
fn an_annotated_wapc_module_needs_protocol_version_v1() {
    let dir = scratch_dir("annotate-protocol");
    let module = plain_module(&dir);
    ok(annotate_cli(&dir, &module, METADATA, None));
    let annotated = std::fs::read(dir.join("annotated.wasm")).unwrap();
    let metadata = read_metadata(&annotated).unwrap().expect("annotated");
    assert_eq!(metadata["protocolVersion"], "v1");
    ok(run_cli(&dir, &module));
    ok(run_cli(&dir, &dir.join("annotated.wasm")));

    let edited = |edit: &dyn Fn(&mut serde_json::Map<String, Value>)| {
        let mut metadata = metadata.clone();
        edit(metadata.as_object_mut().unwrap());
        let wasm = replace_custom_section(
            &annotated,
            METADATA_SECTION,
            metadata.to_string().as_bytes(),
        )
        .unwrap();
        let path = dir.join("edited.wasm");
        std::fs::write(&path, wasm).unwrap();
        run_cli(&dir, &path)
    };
    let missing = "Policy is missing protocol version";
    assert_refused(&edited(&|m| drop(m.remove("protocolVersion"))), missing);
    assert_refused(
        &edited(&|m| drop(m.insert("protocolVersion".into(), Value::Null))),
        missing,
    );
    // Without executionMode the module is kubewarden-wapc, so the rule applies too.
    assert_refused(
        &edited(&|m| {
            m.remove("protocolVersion");
            m.remove("executionMode");
        }),
        missing,
    );
    for version in ["v2", "Unknown"] {
        assert_refused(
            &edited(&|m| drop(m.insert("protocolVersion".into(), json!(version)))),
            &format!("Policy uses protocol version {version:?}, only v1 is supported"),
        );
    }
}

/// kwctl's `has_minimum_kubewarden_version`: major.minor against [`KUBEWARDEN_VERSION`].
#[test]
fn a_policy_needing_a_newer_kubewarden_is_refused() {
    let running = KUBEWARDEN_VERSION;
    let annotated_with = |minimum: &str| {
        let dir = scratch_dir("annotate-minimum");
        let module = plain_module(&dir);
        let metadata = format!("{METADATA}minimumKubewardenVersion: {minimum}\n");
        ok(annotate_cli(&dir, &module, &metadata, None));
        (dir.clone(), dir.join("annotated.wasm"))
    };
    let (too_new_dir, too_new) = annotated_with("9.0.0");
    assert_refused(
        &run_cli(&too_new_dir, &too_new),
        &format!(
            "Policy required Kubewarden version 9.0.0 or greater. But it's running on {running}"
        ),
    );
    assert_eq!(
        PolicyEngine::new(&std::fs::read(&too_new).unwrap(), test_config()).unwrap_err(),
        EngineError::NewerKubewardenRequired {
            required: KubewardenVersion { major: 9, minor: 0 },
            running,
        }
    );
    let next_minor = format!("{}.{}.0", running.major, running.minor + 1);
    let (dir, module) = annotated_with(&next_minor);
    assert_refused(
        &run_cli(&dir, &module),
        &format!("version {next_minor} or greater"),
    );
    // The patch number is ignored; older releases are fine.
    for minimum in [
        format!("{}.{}.9-rc.1", running.major, running.minor),
        "1.16.0".to_string(),
    ] {
        let (dir, module) = annotated_with(&minimum);
        ok(run_cli(&dir, &module));
    }
    // The metadata of the module being re-annotated does not stop `annotate`.
    let again = too_new_dir.join("again");
    std::fs::create_dir_all(&again).unwrap();
    ok(annotate_cli(&again, &too_new, METADATA, None));
    ok(run_cli(&again, &again.join("annotated.wasm")));
}
