//! Every YAML file under deploy/ decodes into its typed object, and the properties that make
//! the install safe hold: fail-closed pod policy skipping control-plane namespaces, hardened pods,
//! probes on the ports the binaries serve. The webhook configurations: deploy_webhook.rs.

mod deploy_support;

use deploy_support::kubewarden::{ClusterAdmissionPolicy, FailurePolicy, Mode};
use deploy_support::{assert_skips_control_plane, deploy_dir, find, read_yaml, typed, yaml_files};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, Namespace};
use serde_json::Value;

fn all_objects() -> Vec<Value> {
    yaml_files(&deploy_dir())
        .iter()
        .flat_map(|path| read_yaml(path))
        .collect()
}

fn objects_in(relative: &str) -> Vec<Value> {
    read_yaml(&deploy_dir().join(relative))
}

#[test]
fn every_yaml_file_decodes_into_its_typed_object() {
    let files = yaml_files(&deploy_dir());
    assert!(
        files.len() >= 15,
        "expected the whole deploy/ tree, found {files:?}"
    );
    let mut failures = Vec::new();
    for path in &files {
        for object in read_yaml(path) {
            if let Err(e) = typed::check(&object) {
                let key = deploy_support::object_key(&object);
                failures.push(format!("{} {key:?}: {e}", path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_round_trip_catches_a_misspelt_field() {
    let mut deployment = objects_in("controller/deployment.yaml")[0].clone();
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = Value::Null;
    deployment["spec"]["replica"] = 3.into();
    assert!(typed::check(&deployment).is_err());
    let mut policy = objects_in("kubewarden/pod-injection.yaml")[0].clone();
    policy["spec"]["timeoutSecond"] = 5.into();
    assert!(typed::check(&policy).is_err());
}

#[test]
fn own_namespace_is_skipped_by_the_pod_hook() {
    let namespace: Namespace = typed::decode(&objects_in("controller/namespace.yaml")[0]).unwrap();
    let labels = namespace.metadata.labels.unwrap_or_default();
    assert!(
        labels.contains_key("control-plane"),
        "sidecarset-system needs the label"
    );
    assert_eq!(
        namespace.metadata.name.as_deref(),
        Some("sidecarset-system")
    );
}

#[test]
fn kubewarden_policies_match_the_brief() {
    let pods: ClusterAdmissionPolicy =
        typed::decode(&objects_in("kubewarden/pod-injection.yaml")[0]).unwrap();
    let spec = &pods.spec;
    assert!(spec.mutating);
    assert_eq!(spec.mode, Some(Mode::Protect));
    assert_eq!(spec.failure_policy, Some(FailurePolicy::Fail));
    assert!(
        spec.timeout_seconds.is_some(),
        "timeoutSeconds is deliberate, set it"
    );
    assert_eq!(spec.background_audit, Some(false));
    assert_eq!(spec.rules.len(), 1);
    assert_eq!(
        spec.rules[0].resources.as_deref(),
        Some(&["pods".to_string()][..])
    );
    assert_eq!(
        spec.rules[0].operations.as_deref(),
        Some(&["CREATE".to_string()][..])
    );
    assert_skips_control_plane(&spec.namespace_selector, "pod-injection policy");
    let kinds: Vec<_> = spec
        .context_aware_resources
        .iter()
        .flatten()
        .map(|r| r.kind.as_str())
        .collect();
    assert_eq!(kinds, ["SidecarSet", "Namespace", "ControllerRevision"]);
    assert!(
        spec.settings
            .as_ref()
            .is_some_and(|s| s.get("allowPatchPodMetadataKeys").is_some())
    );

    let sets: ClusterAdmissionPolicy =
        typed::decode(&objects_in("kubewarden/sidecarset-validation.yaml")[0]).unwrap();
    assert!(sets.spec.mutating);
    assert_eq!(
        sets.spec.rules[0].resources.as_deref(),
        Some(&["sidecarsets".to_string()][..])
    );
    assert_eq!(
        sets.spec.rules[0].operations.as_deref(),
        Some(&["CREATE".to_string(), "UPDATE".to_string()][..])
    );
    let kinds: Vec<_> = sets
        .spec
        .context_aware_resources
        .iter()
        .flatten()
        .map(|r| r.kind.as_str())
        .collect();
    assert_eq!(kinds, ["SidecarSet", "ControllerRevision"]);
    assert_eq!(
        sets.spec.module, pods.spec.module,
        "one module serves both policies"
    );
    assert_eq!(
        sets.spec.settings, pods.spec.settings,
        "the same settings in both policies"
    );
}

fn assert_hardened(container: &Container, what: &str) {
    let context = container
        .security_context
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no securityContext"));
    assert_eq!(context.run_as_non_root, Some(true), "{what}");
    assert_eq!(context.read_only_root_filesystem, Some(true), "{what}");
    assert_eq!(context.allow_privilege_escalation, Some(false), "{what}");
    let drop = context
        .capabilities
        .as_ref()
        .and_then(|c| c.drop.clone())
        .unwrap_or_default();
    assert_eq!(drop, ["ALL"], "{what}");
    let seccomp = context.seccomp_profile.as_ref().map(|s| s.type_.as_str());
    assert_eq!(seccomp, Some("RuntimeDefault"), "{what}");
    let resources = container
        .resources
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no resources"));
    assert!(
        resources
            .requests
            .as_ref()
            .is_some_and(|r| r.contains_key("cpu") && r.contains_key("memory")),
        "{what}"
    );
    assert!(
        resources
            .limits
            .as_ref()
            .is_some_and(|r| r.contains_key("memory")),
        "{what}"
    );
}

fn probe_path(probe: &Option<k8s_openapi::api::core::v1::Probe>) -> Option<&str> {
    probe.as_ref()?.http_get.as_ref()?.path.as_deref()
}

#[test]
fn controller_deployment_is_hardened_and_probed() {
    let objects = objects_in("controller/deployment.yaml");
    let deployment: Deployment =
        typed::decode(find(&objects, "Deployment", "sidecarset-controller")).unwrap();
    let spec = deployment.spec.unwrap();
    assert_eq!(spec.replicas, Some(2));
    let pod = spec.template.spec.unwrap();
    assert_eq!(
        pod.service_account_name.as_deref(),
        Some("sidecarset-controller")
    );
    let pod_context = pod.security_context.unwrap();
    assert_eq!(pod_context.run_as_non_root, Some(true));
    let container = &pod.containers[0];
    assert_hardened(container, "controller");
    assert_eq!(
        container.image.as_deref(),
        Some("ghcr.io/sidecarset-kubewarden/sidecarset-controller:v0.1.0")
    );
    assert_eq!(probe_path(&container.liveness_probe), Some("/healthz"));
    assert_eq!(probe_path(&container.readiness_probe), Some("/readyz"));
    let port = container
        .ports
        .as_ref()
        .unwrap()
        .iter()
        .find(|p| p.name.as_deref() == Some("metrics"))
        .unwrap();
    assert_eq!(port.container_port, 8080);
    let env = container
        .env
        .as_ref()
        .unwrap()
        .iter()
        .find(|e| e.name == "POD_NAMESPACE")
        .unwrap();
    let field = env
        .value_from
        .as_ref()
        .and_then(|v| v.field_ref.as_ref())
        .map(|f| f.field_path.as_str());
    assert_eq!(field, Some("metadata.namespace"));
}

#[test]
fn webhook_deployment_runs_serve_with_tls_and_the_module() {
    let objects = objects_in("webhook/deployment.yaml");
    let deployment: Deployment =
        typed::decode(find(&objects, "Deployment", "sidecarset-webhook")).unwrap();
    let pod = deployment.spec.unwrap().template.spec.unwrap();
    let container = &pod.containers[0];
    assert_hardened(container, "webhook");
    for init in pod.init_containers.iter().flatten() {
        assert_hardened(init, "fetch-policy");
    }
    let args = container.args.clone().unwrap();
    assert_eq!(args[0], "serve");
    for flag in ["--listen", "--cert", "--key"] {
        assert!(args.iter().any(|a| a == flag), "serve needs {flag}");
    }
    assert_eq!(
        args.last().map(String::as_str),
        Some("/policy/annotated-policy.wasm")
    );
    assert_eq!(probe_path(&container.readiness_probe), Some("/readyz"));
    // Probes go to the metrics listener: guests on the webhook's connection threads cannot delay them.
    let listen = args.iter().position(|a| a == "--metrics-listen");
    assert_eq!(
        listen.and_then(|i| args.get(i + 1)).map(String::as_str),
        Some("0.0.0.0:9090")
    );
    for probe in [&container.liveness_probe, &container.readiness_probe] {
        let port = probe
            .as_ref()
            .and_then(|p| p.http_get.as_ref())
            .map(|g| &g.port);
        assert_eq!(
            port,
            Some(
                &k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(
                    "metrics".into()
                )
            )
        );
    }
    let secret = pod
        .volumes
        .iter()
        .flatten()
        .find_map(|v| v.secret.as_ref())
        .and_then(|s| s.secret_name.clone());
    assert_eq!(secret.as_deref(), Some("sidecarset-webhook-tls"));
}

#[test]
fn every_object_of_the_install_is_in_a_kustomization() {
    // A manifest missing from its kustomization.yaml would never be applied.
    let mut listed = std::collections::BTreeSet::new();
    for path in yaml_files(&deploy_dir()) {
        if path.file_name().is_some_and(|n| n == "kustomization.yaml") {
            let dir = path.parent().unwrap();
            for object in read_yaml(&path) {
                for entry in object["resources"].as_array().into_iter().flatten() {
                    let target = dir.join(entry.as_str().unwrap());
                    listed.insert(target.canonicalize().unwrap_or(target));
                }
            }
        }
    }
    for path in yaml_files(&deploy_dir()) {
        let is_kustomization = path.file_name().is_some_and(|n| n == "kustomization.yaml");
        if !is_kustomization {
            let path = path.canonicalize().unwrap();
            assert!(
                listed.contains(&path),
                "{} is not listed in a kustomization.yaml",
                path.display()
            );
        }
    }
    assert!(!all_objects().is_empty());
}
