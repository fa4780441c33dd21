//! The committed CRD is crdgen's output, is structural, decodes into k8s-openapi's type, and its
//! schema accepts every sample SidecarSet and refuses obviously wrong types.

mod deploy_support;

use deploy_support::{read_yaml, repo_root, schema};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};
use sidecarset_policy::api::crd::custom_resource_definition;

const CRD_FILE: &str = "deploy/crd/sidecarsets.apps.kruise.io.yaml";

fn committed() -> Value {
    read_yaml(&repo_root().join(CRD_FILE))
        .pop()
        .expect("one document")
}

fn open_api_schema() -> Value {
    custom_resource_definition()["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

#[test]
fn committed_crd_is_up_to_date() {
    assert!(
        committed() == custom_resource_definition(),
        "{CRD_FILE} is stale: run `cargo run -p sidecarset-controller --bin crdgen > {CRD_FILE}`"
    );
}

#[test]
fn crd_decodes_and_has_the_upstream_shape() {
    let crd: CustomResourceDefinition = serde_json::from_value(committed()).expect("typed CRD");
    assert_eq!(
        crd.metadata.name.as_deref(),
        Some("sidecarsets.apps.kruise.io")
    );
    assert_eq!(crd.spec.group, "apps.kruise.io");
    assert_eq!(crd.spec.scope, "Cluster");
    assert_eq!(crd.spec.names.kind, "SidecarSet");
    assert_eq!(crd.spec.names.plural, "sidecarsets");
    let [version] = crd.spec.versions.as_slice() else {
        panic!("exactly one version (no conversion webhook)")
    };
    assert_eq!(version.name, "v1alpha1");
    assert!(version.served && version.storage);
    assert!(
        version
            .subresources
            .as_ref()
            .is_some_and(|s| s.status.is_some())
    );
    let columns: Vec<(&str, &str)> = version
        .additional_printer_columns
        .iter()
        .flatten()
        .map(|c| (c.name.as_str(), c.json_path.as_str()))
        .collect();
    assert_eq!(
        columns,
        [
            ("MATCHED", ".status.matchedPods"),
            ("UPDATED", ".status.updatedPods"),
            ("READY", ".status.readyPods"),
            ("AGE", ".metadata.creationTimestamp"),
        ]
    );
}

#[test]
fn schema_is_structural() {
    let errors = schema::structural_errors(&open_api_schema(), "");
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Every SidecarSet of examples/cluster and tests/conformance, with where it came from.
fn sample_sidecarsets() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let is_sidecarset = |v: &Value| v.get("kind").and_then(Value::as_str) == Some("SidecarSet");
    for entry in std::fs::read_dir(repo_root().join("examples/cluster")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            for (i, doc) in read_yaml(&path).into_iter().enumerate() {
                if is_sidecarset(&doc) {
                    out.push((format!("{}#{i}", path.display()), doc));
                }
            }
        }
    }
    for entry in std::fs::read_dir(repo_root().join("tests/conformance")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let case: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for (i, set) in case["sidecarSets"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            out.push((format!("{} sidecarSets[{i}]", path.display()), set.clone()));
        }
        for field in ["object", "oldObject"] {
            let object = &case["request"][field];
            if is_sidecarset(object) {
                out.push((
                    format!("{} request.{field}", path.display()),
                    object.clone(),
                ));
            }
        }
    }
    out
}

#[test]
fn schema_accepts_every_sample_sidecarset() {
    let samples = sample_sidecarsets();
    assert!(
        samples.len() >= 10,
        "too few samples found: {}",
        samples.len()
    );
    let schema = open_api_schema();
    let failures: Vec<String> = samples
        .iter()
        .flat_map(|(origin, set)| {
            schema::validate(&schema, set)
                .into_iter()
                .map(move |e| format!("{origin}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn base_sidecarset() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": "s"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "containers": [{
                "name": "log",
                "image": "busybox",
                "podInjectPolicy": "AfterAppContainer",
                "shareVolumePolicy": {"type": "enabled"}
            }],
            "volumes": [{"name": "v", "emptyDir": {}}],
            "updateStrategy": {
                "type": "RollingUpdate",
                "paused": false,
                "partition": "10%",
                "maxUnavailable": 2
            },
            "injectionStrategy": {"revision": {"policy": "Always"}},
            "revisionHistoryLimit": 10
        },
        "status": {"matchedPods": 1, "updatedPods": 1, "readyPods": 1}
    })
}

#[test]
fn schema_rejects_obviously_wrong_types() {
    let schema = open_api_schema();
    assert_eq!(
        schema::validate(&schema, &base_sidecarset()),
        Vec::<String>::new()
    );
    let cases: [(&str, Value); 10] = [
        ("/spec/containers", json!("x")),
        ("/spec/updateStrategy/partition", json!({})),
        ("/spec/updateStrategy/maxUnavailable", json!(1.5)),
        ("/spec/containers/0/name", json!(7)),
        ("/spec/selector/matchLabels/app", json!(1)),
        ("/spec/revisionHistoryLimit", json!("ten")),
        (
            "/spec/injectionStrategy",
            json!({"revision": {"policy": "Sometimes"}}),
        ),
        ("/spec/updateStrategy/paused", json!("yes")),
        ("/spec/volumes", json!({"name": "v"})),
        ("/spec/containers/0/shareVolumePolicy", json!("enabled")),
    ];
    for (pointer, wrong) in cases {
        let mut set = base_sidecarset();
        *set.pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer} exists")) = wrong.clone();
        assert!(
            !schema::validate(&schema, &set).is_empty(),
            "{pointer} = {wrong} was accepted"
        );
    }
    let mut nameless = base_sidecarset();
    nameless["spec"]["containers"][0]
        .as_object_mut()
        .unwrap()
        .remove("name");
    assert!(
        !schema::validate(&schema, &nameless).is_empty(),
        "a container needs a name"
    );
    let mut no_counts = base_sidecarset();
    no_counts["status"] = json!({"observedGeneration": 1});
    assert_eq!(
        schema::validate(&schema, &no_counts).len(),
        3,
        "status counts are required"
    );
}

#[test]
fn schema_prunes_rather_than_rejects_unknown_fields() {
    let schema = open_api_schema();
    let mut set = base_sidecarset();
    set["spec"]["somethingNew"] = json!({"a": 1});
    set["spec"]["containers"][0]["resizePolicy"] = json!([{"resourceName": "cpu"}]);
    set["spec"]["volumes"][0]["csi"] = json!({"driver": "x"});
    assert_eq!(schema::validate(&schema, &set), Vec::<String>::new());
}
