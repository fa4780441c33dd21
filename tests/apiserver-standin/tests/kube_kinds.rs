//! The built-in kinds beyond pods: ConfigMaps, Secrets, Services, Deployments, CRDs, as the
//! real server defaults and validates them.

mod common;

use common::*;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

fn from<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("object")
}

#[tokio::test]
async fn secrets_fold_string_data_and_configmaps_check_keys() {
    let s = start().await;
    let client = s.client().expect("client");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let created = secrets
        .create(
            &PostParams::default(),
            &from(json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": { "name": "token" },
                "data": { "a": "YQ==" },
                "stringData": { "b": "bee", "a": "over" }
            })),
        )
        .await
        .expect("create secret");
    assert_eq!(created.type_.as_deref(), Some("Opaque"));
    assert!(created.string_data.is_none(), "stringData is write-only");
    let data = created.data.expect("data");
    assert_eq!(data["a"].0, b"over", "stringData wins over data");
    assert_eq!(data["b"].0, b"bee");

    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let err = cms
        .create(
            &PostParams::default(),
            &from(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": { "name": "bad" },
                "data": { "no/slash": "x" }
            })),
        )
        .await
        .expect_err("invalid key");
    let st = status(err);
    assert_eq!(st.code, 422);
    assert!(
        st.message.starts_with("ConfigMap \"bad\" is invalid: data[no/slash]: Invalid value: \"no/slash\": a valid config key"),
        "{}",
        st.message
    );
    let cm: ConfigMap = from(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": "frozen" }, "data": { "k": "v" }, "immutable": true
    }));
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    let err = cms
        .patch(
            "frozen",
            &PatchParams::default(),
            &Patch::Merge(json!({ "data": { "k": "w" } })),
        )
        .await
        .expect_err("immutable");
    assert!(
        status(err)
            .message
            .contains("data: Forbidden: field is immutable when `immutable` is set")
    );
}

#[tokio::test]
async fn services_get_a_cluster_ip_that_stays() {
    let s = start().await;
    let svcs: Api<Service> = Api::namespaced(s.client().expect("client"), "default");
    let created = svcs
        .create(
            &PostParams::default(),
            &from(json!({
                "apiVersion": "v1", "kind": "Service",
                "metadata": { "name": "web" },
                "spec": { "selector": { "app": "web" }, "ports": [{ "port": 443, "targetPort": 8443 }, { "port": 80 }] }
            })),
        )
        .await
        .expect("create");
    let spec = created.spec.expect("spec");
    let ip = spec.cluster_ip.clone().expect("clusterIP");
    assert!(ip.starts_with("10.96."), "{ip}");
    assert_eq!(spec.cluster_ips, Some(vec![ip.clone()]));
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    let ports = spec.ports.expect("ports");
    assert_eq!(ports[0].protocol.as_deref(), Some("TCP"));
    assert_eq!(
        serde_json::to_value(&ports[1].target_port).expect("json"),
        json!(80),
        "targetPort defaults to port"
    );
    let patched = svcs
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "labels": { "a": "b" } } })),
        )
        .await
        .expect("patch");
    assert_eq!(patched.spec.and_then(|s| s.cluster_ip), Some(ip));
    let err = svcs
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "clusterIP": "10.96.200.200" } })),
        )
        .await
        .expect_err("immutable clusterIP");
    assert!(status(err).message.contains("may not change once set"));
}

#[tokio::test]
async fn deployments_are_defaulted_and_their_selector_checked() {
    let s = start().await;
    let deploys: Api<Deployment> = Api::namespaced(s.client().expect("client"), "default");
    let deployment = |selector: serde_json::Value| -> Deployment {
        from(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "web" },
            "spec": {
                "selector": { "matchLabels": selector },
                "template": {
                    "metadata": { "labels": { "app": "web" } },
                    "spec": { "containers": [{ "name": "app", "image": "nginx:1.25" }] }
                }
            }
        }))
    };
    let err = deploys
        .create(&PostParams::default(), &deployment(json!({ "app": "db" })))
        .await
        .expect_err("selector must match");
    assert!(
        status(err)
            .message
            .contains("spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"),
    );
    let created = deploys
        .create(&PostParams::default(), &deployment(json!({ "app": "web" })))
        .await
        .expect("create");
    assert_eq!(created.metadata.generation, Some(1));
    let spec = created.spec.expect("spec");
    assert_eq!(spec.replicas, Some(1));
    assert_eq!(spec.revision_history_limit, Some(10));
    let strategy = serde_json::to_value(spec.strategy).expect("json");
    assert_eq!(
        strategy,
        json!({ "type": "RollingUpdate", "rollingUpdate": { "maxUnavailable": "25%", "maxSurge": "25%" } })
    );
    let template = spec.template.spec.expect("template spec");
    assert_eq!(template.restart_policy.as_deref(), Some("Always"));
    let scaled = deploys
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "replicas": 3 } })),
        )
        .await
        .expect("patch");
    assert_eq!(
        scaled.metadata.generation,
        Some(2),
        "spec change bumps generation"
    );
}

#[tokio::test]
async fn crds_are_established_only_when_served() {
    let s = start().await;
    let crds: Api<CustomResourceDefinition> = Api::all(s.client().expect("client"));
    let crd = |group: &str, plural: &str, kind: &str| -> CustomResourceDefinition {
        from(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": { "name": format!("{plural}.{group}") },
            "spec": {
                "group": group, "scope": "Cluster",
                "names": { "plural": plural, "kind": kind },
                "versions": [{ "name": "v1alpha1", "served": true, "storage": true,
                               "schema": { "openAPIV3Schema": { "type": "object" } } }]
            }
        }))
    };
    let established = |c: &CustomResourceDefinition| {
        c.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "Established"))
            .map(|c| c.status.clone())
    };
    let served = crds
        .create(
            &PostParams::default(),
            &crd("apps.kruise.io", "sidecarsets", "SidecarSet"),
        )
        .await
        .expect("create");
    assert_eq!(established(&served).as_deref(), Some("True"));
    let status = served.status.expect("status");
    assert_eq!(status.stored_versions, Some(vec!["v1alpha1".to_string()]));
    assert_eq!(
        status.accepted_names.expect("names").list_kind.as_deref(),
        Some("SidecarSetList")
    );
    let other = crds
        .create(
            &PostParams::default(),
            &crd("example.com", "widgets", "Widget"),
        )
        .await
        .expect("create");
    assert_eq!(established(&other).as_deref(), Some("False"));
    let mut misnamed = crd("example.com", "gadgets", "Gadget");
    misnamed.metadata.name = Some("gadget.example.com".into());
    let err = crds
        .create(&PostParams::default(), &misnamed)
        .await
        .expect_err("name must be plural.group");
    assert!(status_message(err).contains("must be spec.names.plural+\".\"+spec.group"));
}

fn status_message(err: kube::Error) -> String {
    status(err).message
}
