//! The in-memory cluster context: loading, list/get answers, selectors, masks.

mod common;

use common::scratch_dir;
use serde_json::{Value, json};
use sidecarset_host::ClusterContext;
use sidecarset_host::engine::HostCallbacks;

fn call(context: &ClusterContext, operation: &str, payload: Value) -> Result<Value, String> {
    context
        .call(
            "kubewarden",
            "kubernetes",
            operation,
            payload.to_string().as_bytes(),
        )
        .map(|bytes| serde_json::from_slice(&bytes).expect("JSON answer"))
}

fn sample_dir() -> std::path::PathBuf {
    let dir = scratch_dir("context");
    std::fs::write(
        dir.join("namespaces.json"),
        json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {"env": "prod"}}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b", "labels": {"env": "dev"}}}
        ]})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("sidecarsets.yaml"),
        r#"apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: log-agent
  managedFields: [{manager: kubectl}]
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
    keep: "yes"
spec:
  selector: {matchLabels: {app: web}}
  containers: [{name: agent, image: "agent:1.0"}]
status:
  matchedPods: 3
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: hot
spec:
  containers: [{name: hot, image: "hot:1.0"}]
---
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("configmaps.yml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: team-a}\ndata: {image: x}\n",
    )
    .unwrap();
    std::fs::write(dir.join("README.md"), "not an object").unwrap();
    dir
}

#[test]
fn loads_json_lists_and_multi_document_yaml() {
    let context = ClusterContext::from_dir(&sample_dir()).unwrap();
    assert_eq!(context.len(), 5);
}

#[test]
fn list_all_has_the_typed_list_shape_and_strips_reflector_fields() {
    let context = ClusterContext::from_dir(&sample_dir()).unwrap();
    let list = call(
        &context,
        "list_resources_all",
        json!({"api_version": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
               "label_selector": null, "field_selector": null}),
    )
    .unwrap();
    assert_eq!(list["apiVersion"], "apps.kruise.io/v1alpha1");
    assert_eq!(list["kind"], "SidecarSetList");
    assert_eq!(list["metadata"], json!({}));
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["hot", "log-agent"], "sorted like the API server");
    let agent = &list["items"][1];
    assert!(agent["metadata"].get("managedFields").is_none());
    assert_eq!(agent["metadata"]["annotations"], json!({"keep": "yes"}));
    assert_eq!(agent["status"]["matchedPods"], 3);
}

#[test]
fn selectors_and_masks_filter_lists() {
    let context = ClusterContext::from_dir(&sample_dir()).unwrap();
    let prod = call(
        &context,
        "list_resources_all",
        json!({"api_version": "v1", "kind": "Namespace", "label_selector": "env in (prod,staging)"}),
    )
    .unwrap();
    assert_eq!(prod["items"].as_array().unwrap().len(), 1);
    assert_eq!(prod["items"][0]["metadata"]["name"], "team-a");
    let by_name = call(
        &context,
        "list_resources_all",
        json!({"api_version": "v1", "kind": "Namespace", "field_selector": "metadata.name=team-b"}),
    )
    .unwrap();
    assert_eq!(by_name["items"][0]["metadata"]["name"], "team-b");
    let masked = call(
        &context,
        "list_resources_all",
        json!({"api_version": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
               "field_masks": ["spec.containers.image"]}),
    )
    .unwrap();
    assert_eq!(
        masked["items"][1]["spec"],
        json!({"containers": [{"image": "agent:1.0"}]})
    );
    assert!(masked["items"][1].get("status").is_none());
    let err = call(
        &context,
        "list_resources_all",
        json!({"api_version": "v1", "kind": "Namespace", "label_selector": "env in (prod"}),
    )
    .unwrap_err();
    assert!(err.contains("unable to parse requirement"), "{err}");
}

#[test]
fn list_by_namespace_and_get() {
    let context = ClusterContext::from_dir(&sample_dir()).unwrap();
    let in_a = call(
        &context,
        "list_resources_by_namespace",
        json!({"api_version": "v1", "kind": "ConfigMap", "namespace": "team-a"}),
    )
    .unwrap();
    assert_eq!(in_a["kind"], "ConfigMapList");
    assert_eq!(in_a["items"].as_array().unwrap().len(), 1);
    let in_b = call(
        &context,
        "list_resources_by_namespace",
        json!({"api_version": "v1", "kind": "ConfigMap", "namespace": "team-b"}),
    )
    .unwrap();
    assert_eq!(in_b["items"], json!([]));

    let ns = call(
        &context,
        "get_resource",
        json!({"api_version": "v1", "kind": "Namespace", "name": "team-a", "namespace": null,
               "disable_cache": false, "field_masks": null}),
    )
    .unwrap();
    assert_eq!(ns["metadata"]["labels"]["env"], "prod");
    assert_eq!(ns["kind"], "Namespace");
    let missing = call(
        &context,
        "get_resource",
        json!({"api_version": "v1", "kind": "ConfigMap", "name": "cfg", "namespace": "team-b",
               "disable_cache": false}),
    )
    .unwrap_err();
    assert_eq!(missing, "configmaps \"cfg\" not found");
}

#[test]
fn malformed_payloads_and_unknown_operations_are_errors() {
    let context = ClusterContext::from_objects(vec![]).unwrap();
    assert!(context.is_empty());
    let err = context
        .call("kubewarden", "kubernetes", "get_resource", b"{not json")
        .unwrap_err();
    assert!(
        err.starts_with("cannot decode the payload of kubernetes/get_resource"),
        "{err}"
    );
    assert_eq!(
        context
            .call("kubewarden", "kubernetes", "explode", b"{}")
            .unwrap_err(),
        "unknown operation: explode"
    );
    assert_eq!(
        context.call("kubewarden", "weird", "x", b"{}").unwrap_err(),
        "unknown namespace: weird"
    );
}

#[test]
fn objects_without_identity_are_rejected_with_their_source() {
    let dir = scratch_dir("bad-context");
    std::fs::write(
        dir.join("bad.yaml"),
        "kind: Namespace\nmetadata: {name: x}\n",
    )
    .unwrap();
    let err = ClusterContext::from_dir(&dir).unwrap_err().to_string();
    assert!(
        err.contains("bad.yaml") && err.contains("apiVersion"),
        "{err}"
    );
    std::fs::write(dir.join("bad.yaml"), "a: [unclosed\n").unwrap();
    let err = ClusterContext::from_dir(&dir).unwrap_err().to_string();
    assert!(err.starts_with("cannot parse"), "{err}");
    assert!(ClusterContext::from_dir(&dir.join("missing")).is_err());
}
