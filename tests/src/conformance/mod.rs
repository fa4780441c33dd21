//! The conformance runner: admission cases (the ../shared/conformance format) through the built
//! policy module in the bundled host, with the cluster served through the host callbacks.

mod expect;

pub use expect::{Mismatch, check};

use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::{Value, json};
use sidecarset_host::{ClusterContext, PolicyEngine, evaluate_admission};
use std::path::{Path, PathBuf};

/// One case file.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Case {
    pub name: String,
    #[serde(default)]
    pub about: String,
    #[serde(default)]
    pub settings: Option<Value>,
    #[serde(default)]
    pub sidecar_sets: Vec<Value>,
    #[serde(default)]
    pub namespaces: Vec<Value>,
    pub request: Value,
    pub expect: Value,
}

/// The result of one case.
pub struct Outcome {
    pub file: PathBuf,
    pub name: String,
    pub mismatches: Vec<Mismatch>,
}

/// Every `*.json` case file of `dir`, sorted by file name.
pub fn case_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    Ok(files)
}

pub fn load(file: &Path) -> Result<Case> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))
}

/// Runs one case through `engine` and compares the response with its expectations.
pub fn run_case(engine: &PolicyEngine, case: &Case) -> Result<Vec<Mismatch>> {
    let context = cluster_for(case)?;
    let settings = case.settings.clone().unwrap_or_else(|| json!({}));
    let response = evaluate_admission(engine, &case.request, &settings, &context);
    let response = serde_json::to_value(&response)?;
    Ok(check(&case.request, &response, &case.expect))
}

/// The cluster a case describes: its SidecarSets (served as v1alpha1, as the API server
/// converts them) and Namespaces, plus the request's namespace if it is not listed.
fn cluster_for(case: &Case) -> Result<ClusterContext> {
    let mut objects: Vec<Value> = case.sidecar_sets.iter().cloned().map(as_v1alpha1).collect();
    objects.extend(case.namespaces.iter().cloned());
    let namespace = case
        .request
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let listed = case
        .namespaces
        .iter()
        .any(|ns| ns.pointer("/metadata/name").and_then(Value::as_str) == Some(namespace));
    if !namespace.is_empty() && !listed {
        objects.push(json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": namespace, "labels": {"kubernetes.io/metadata.name": namespace}},
        }));
    }
    Ok(ClusterContext::from_objects(objects)?)
}

/// v1beta1 → v1alpha1 as the API server's conversion does (§1.8): customVersion becomes a label.
fn as_v1alpha1(mut sidecarset: Value) -> Value {
    if sidecarset.get("apiVersion").and_then(Value::as_str) != Some("apps.kruise.io/v1beta1") {
        return sidecarset;
    }
    sidecarset["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    let custom = sidecarset
        .pointer_mut("/spec")
        .and_then(Value::as_object_mut)
        .and_then(|spec| spec.remove("customVersion"));
    if let Some(Value::String(version)) =
        custom.filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        && let Some(metadata) = sidecarset
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
    {
        let labels = metadata.entry("labels").or_insert_with(|| json!({}));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(
                "apps.kruise.io/sidecarset-custom-version".into(),
                json!(version),
            );
        }
    }
    sidecarset
}
