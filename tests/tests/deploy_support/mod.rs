//! Shared by the tests/tests/deploy_*.rs files: reading the YAML under deploy/, typed decoding
//! of every object, and the release coordinates. Each test binary uses a different subset.
#![allow(dead_code)]

pub mod certmanager;
pub mod kubewarden;
pub mod schema;
pub mod typed;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub fn repo_root() -> PathBuf {
    sidecarset_tests::repo_root()
}

pub fn deploy_dir() -> PathBuf {
    repo_root().join("deploy")
}

/// Every document of a YAML stream, comment-only documents left out.
pub fn yaml_documents(text: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for document in serde_norway::Deserializer::from_str(text) {
        let value = Value::deserialize(document).map_err(|e| e.to_string())?;
        if !value.is_null() {
            out.push(value);
        }
    }
    Ok(out)
}

pub fn read_yaml(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    yaml_documents(&text).unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", path.display()))
}

/// All `*.yaml`/`*.yml` files under `dir`, sorted.
pub fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            ) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `workspace.package.version` of the root Cargo.toml (read by hand: no TOML crate in the tree).
pub fn workspace_version() -> String {
    let text = std::fs::read_to_string(repo_root().join("Cargo.toml")).expect("Cargo.toml");
    let mut in_section = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_section = line == "[workspace.package]";
        } else if in_section && let Some(rest) = line.strip_prefix("version") {
            let value = rest.trim_start().trim_start_matches('=').trim();
            return value.trim_matches('"').to_string();
        }
    }
    panic!("Cargo.toml has no workspace.package.version");
}

pub fn metadata_yml() -> Value {
    read_yaml(&repo_root().join("policy/metadata.yml"))
        .pop()
        .expect("policy/metadata.yml has a document")
}

/// The objects `kubectl kustomize <dir>` renders; panics (never skips) when kubectl is missing.
pub fn kustomize(dir: &Path) -> Vec<Value> {
    let output = match std::process::Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
    {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "kubectl is not installed (or not on PATH): the kustomize rendering of {} needs it; \
             install kubectl (https://kubernetes.io/docs/tasks/tools/) and re-run",
            dir.display()
        ),
        Err(e) => panic!("cannot run kubectl: {e}"),
    };
    assert!(
        output.status.success(),
        "kubectl kustomize {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).expect("UTF-8 output");
    yaml_documents(&text).unwrap_or_else(|e| panic!("rendered YAML does not parse: {e}"))
}

/// `(kind, namespace, name)` of an object, for lookups and messages.
pub fn object_key(object: &Value) -> (String, String, String) {
    let field = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    (
        field("/kind"),
        field("/metadata/namespace"),
        field("/metadata/name"),
    )
}

pub fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| {
            let (k, _, n) = object_key(o);
            k == kind && n == name
        })
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// The pod hook ignores control-plane namespaces, and our own namespace is one of them.
pub fn assert_skips_control_plane(selector: &Option<LabelSelector>, what: &str) {
    let expressions = selector
        .as_ref()
        .and_then(|s| s.match_expressions.as_ref())
        .unwrap_or_else(|| panic!("{what}: no namespaceSelector.matchExpressions"));
    assert!(
        expressions
            .iter()
            .any(|e| e.key == "control-plane" && e.operator == "DoesNotExist"),
        "{what}: must skip namespaces labelled control-plane"
    );
}
