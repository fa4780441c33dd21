//! The standalone webhook's registrations (deploy/webhook/webhookconfiguration.yaml): typed,
//! fail closed, on paths `sidecarset-host serve` answers, CA injected by cert-manager; and the
//! mutating → validating chain for SidecarSets run through the real module (policy.wasm).

mod deploy_support;

use deploy_support::{assert_skips_control_plane, deploy_dir, find, read_yaml, typed};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhookConfiguration,
    WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};
use sidecarset_host::serve::handler::is_admission_path;
use sidecarset_host::{AdmissionResponse, ClusterContext, evaluate_admission};
use sidecarset_tests::policy_engine;

const CONFIGURATIONS: &str = "webhook/webhookconfiguration.yaml";
const INJECT_CA: &str = "cert-manager.io/inject-ca-from";

fn mutating() -> MutatingWebhookConfiguration {
    let objects = read_yaml(&deploy_dir().join(CONFIGURATIONS));
    typed::decode(find(
        &objects,
        "MutatingWebhookConfiguration",
        "sidecarset-webhook",
    ))
    .unwrap_or_else(|e| panic!("{CONFIGURATIONS}: {e}"))
}

fn validating() -> ValidatingWebhookConfiguration {
    let objects = read_yaml(&deploy_dir().join(CONFIGURATIONS));
    typed::decode(find(
        &objects,
        "ValidatingWebhookConfiguration",
        "sidecarset-webhook",
    ))
    .unwrap_or_else(|e| panic!("{CONFIGURATIONS}: {e}"))
}

/// cert-manager's CA injector fills caBundle from the Certificate named by the annotation.
fn assert_ca_from_the_certificate(metadata: &ObjectMeta, what: &str) {
    let annotations = metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        annotations.get(INJECT_CA).map(String::as_str),
        Some("sidecarset-system/sidecarset-webhook"),
        "{what}: the CA comes from the Certificate of the same name"
    );
}

/// The service path of a hook, checked against serve's router.
fn service_path(config: &WebhookClientConfig, what: &str) -> String {
    let service = config
        .service
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no clientConfig.service"));
    assert_eq!(
        (service.name.as_str(), service.namespace.as_str()),
        ("sidecarset-webhook", "sidecarset-system"),
        "{what}"
    );
    assert_eq!(service.port, Some(443), "{what}: the Service's https port");
    assert!(
        config.ca_bundle.is_none(),
        "{what}: caBundle is injected, never committed"
    );
    let path = service.path.clone().unwrap_or_default();
    assert!(
        is_admission_path(&path),
        "{what}: sidecarset-host serve does not answer {path:?}"
    );
    path
}

/// The settings every hook must share, whatever its kind.
fn assert_common(
    what: &str,
    failure_policy: &Option<String>,
    side_effects: &str,
    versions: &[String],
    timeout: Option<i32>,
) {
    assert_eq!(failure_policy.as_deref(), Some("Fail"), "{what}");
    assert_eq!(side_effects, "None", "{what}: the policy only reads");
    assert_eq!(versions, ["v1"], "{what}");
    assert!(
        timeout.is_some_and(|t| (1..=30).contains(&t)),
        "{what}: timeoutSeconds is deliberate, set it (1..=30)"
    );
}

fn resources(rules: &Option<Vec<RuleWithOperations>>) -> Vec<String> {
    rules
        .iter()
        .flatten()
        .flat_map(|r| r.resources.clone().unwrap_or_default())
        .collect()
}

fn sidecarset_rules() -> Vec<RuleWithOperations> {
    let s = |v: &[&str]| Some(v.iter().map(|x| x.to_string()).collect::<Vec<_>>());
    vec![RuleWithOperations {
        api_groups: s(&["apps.kruise.io"]),
        api_versions: s(&["v1alpha1", "v1beta1"]),
        operations: s(&["CREATE", "UPDATE"]),
        resources: s(&["sidecarsets"]),
        scope: Some("Cluster".into()),
    }]
}

#[test]
fn mutating_hooks_inject_pods_and_default_sidecarsets() {
    let config = mutating();
    assert_ca_from_the_certificate(&config.metadata, "MutatingWebhookConfiguration");
    let hooks = config.webhooks.unwrap_or_default();
    assert_eq!(hooks.len(), 2, "pods and sidecarsets");
    for hook in &hooks {
        assert_common(
            &hook.name,
            &hook.failure_policy,
            &hook.side_effects,
            &hook.admission_review_versions,
            hook.timeout_seconds,
        );
    }
    let pods = hooks
        .iter()
        .find(|h| resources(&h.rules) == ["pods"])
        .expect("a pods hook");
    assert_eq!(
        service_path(&pods.client_config, &pods.name),
        "/mutate/pods"
    );
    assert_eq!(
        pods.rules.as_ref().and_then(|r| r[0].operations.clone()),
        Some(vec!["CREATE".to_string()])
    );
    assert_skips_control_plane(&pods.namespace_selector, "pod webhook");
    let sets = hooks
        .iter()
        .find(|h| resources(&h.rules) == ["sidecarsets"])
        .expect("a sidecarsets hook");
    assert_eq!(
        service_path(&sets.client_config, &sets.name),
        "/mutate/sidecarsets"
    );
    assert_eq!(sets.rules, Some(sidecarset_rules()));
    assert_eq!(
        sets.reinvocation_policy.as_deref(),
        Some("IfNeeded"),
        "hashes are recomputed after a later webhook's change"
    );
}

#[test]
fn validating_hook_checks_sidecarsets_after_every_mutation() {
    let config = validating();
    assert_ca_from_the_certificate(&config.metadata, "ValidatingWebhookConfiguration");
    let hooks = config.webhooks.unwrap_or_default();
    assert_eq!(hooks.len(), 1, "sidecarsets only: pods are not validated");
    let hook = &hooks[0];
    assert_common(
        &hook.name,
        &hook.failure_policy,
        &hook.side_effects,
        &hook.admission_review_versions,
        hook.timeout_seconds,
    );
    assert_eq!(
        service_path(&hook.client_config, &hook.name),
        "/validate/sidecarsets"
    );
    assert_eq!(hook.rules, Some(sidecarset_rules()));
    assert_eq!(hook.match_policy.as_deref(), Some("Equivalent"));
    assert!(
        hook.namespace_selector.is_none() && hook.object_selector.is_none(),
        "every SidecarSet is validated"
    );
    let names: Vec<String> = mutating()
        .webhooks
        .unwrap_or_default()
        .into_iter()
        .map(|h| h.name)
        .collect();
    assert!(!names.contains(&hook.name), "webhook names are unique");
}

#[test]
fn the_certificate_covers_the_service() {
    let certificates = read_yaml(&deploy_dir().join("webhook/certificate.yaml"));
    let certificate = find(&certificates, "Certificate", "sidecarset-webhook");
    let names: Vec<&str> = certificate["spec"]["dnsNames"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert!(names.contains(&"sidecarset-webhook.sidecarset-system.svc"));
    assert_eq!(certificate["spec"]["secretName"], "sidecarset-webhook-tls");
}

/// The policy settings `serve` runs with (webhook/configmap.yaml).
fn shipped_settings() -> Value {
    let objects = read_yaml(&deploy_dir().join("webhook/configmap.yaml"));
    let text = find(&objects, "ConfigMap", "sidecarset-webhook-settings")["data"]["settings.yaml"]
        .as_str()
        .expect("data.settings.yaml")
        .to_string();
    deploy_support::yaml_documents(&text)
        .expect("settings.yaml parses")
        .pop()
        .expect("settings.yaml has a document")
}

fn review(operation: &str, object: &Value, old: Option<&Value>) -> Value {
    json!({
        "uid": "u",
        "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "SidecarSet"},
        "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "sidecarsets"},
        "name": object["metadata"]["name"],
        "operation": operation,
        "userInfo": {"username": "tester"},
        "object": object,
        "oldObject": old.cloned().unwrap_or(Value::Null),
    })
}

/// What the API server does with a mutating answer: applies its patch.
fn patched(object: &Value, response: &AdmissionResponse) -> Value {
    let mut out = object.clone();
    if let Some(patch) = response.decoded_patch() {
        let patch: json_patch::Patch = serde_json::from_value(patch).expect("a JSONPatch");
        json_patch::patch(&mut out, &patch).expect("the patch applies");
    }
    out
}

/// Mutating hook, then the validating hook on the result: allowed, and no patch (the API server
/// refuses a validating answer that carries one).
fn admit_through_both(operation: &str, object: &Value, old: Option<&Value>) -> Value {
    let settings = shipped_settings();
    let cluster = ClusterContext::from_objects(Vec::new()).expect("empty cluster");
    let name = object["metadata"]["name"].clone();
    let mutated = evaluate_admission(
        policy_engine(),
        &review(operation, object, old),
        &settings,
        &cluster,
    );
    assert!(
        mutated.allowed,
        "{name} {operation} (mutating): {mutated:?}"
    );
    assert!(
        mutated.patch.is_some(),
        "{name} {operation}: the mutating hook writes the hash annotations"
    );
    let stored = patched(object, &mutated);
    let validated = evaluate_admission(
        policy_engine(),
        &review(operation, &stored, old),
        &settings,
        &cluster,
    );
    assert!(
        validated.allowed,
        "{name} {operation} (validating): {validated:?}"
    );
    assert!(
        validated.patch.is_none() && validated.patch_type.is_none(),
        "{name} {operation}: the validating answer must not carry a patch: {:?}",
        validated.decoded_patch()
    );
    stored
}

/// The examples as stored (examples/cluster/sidecarsets.yaml is the defaulted form).
fn examples() -> Vec<Value> {
    let examples =
        read_yaml(&deploy_support::repo_root().join("examples/cluster/sidecarsets.yaml"));
    assert!(!examples.is_empty(), "examples/cluster/sidecarsets.yaml");
    examples
}

/// A stored example as a user writes it: no hash annotations, no defaulted fields.
fn as_written(stored: &Value) -> Value {
    let mut out = stored.clone();
    let remove = |v: &mut Value, key: &str| {
        if let Some(map) = v.as_object_mut() {
            map.remove(key);
        }
    };
    remove(&mut out["metadata"], "annotations");
    remove(&mut out["spec"], "revisionHistoryLimit");
    for container in out["spec"]["containers"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        for key in [
            "imagePullPolicy",
            "terminationMessagePath",
            "terminationMessagePolicy",
        ] {
            remove(container, key);
        }
    }
    out
}

#[test]
fn every_example_passes_mutating_then_validating_without_a_patch() {
    for example in &examples() {
        let stored = admit_through_both("CREATE", &as_written(example), None);
        // The example is the defaulted form; the hook also writes Go's zero-valued members.
        let mut expected = example.clone();
        sidecarset_policy::admission::add_marshalled_members(&mut expected);
        assert_eq!(
            stored, expected,
            "the mutating hook stores the example's form"
        );
        // A user edit of the stored object: a new image for the first sidecar.
        let mut edited = stored.clone();
        edited["spec"]["containers"][0]["image"] = json!("registry.example.com/edited:2");
        admit_through_both("UPDATE", &edited, Some(&stored));
    }
}

#[test]
fn a_sidecarset_changed_after_the_mutating_hook_gets_a_patch_and_fails_closed() {
    let mut stored = admit_through_both("CREATE", &as_written(&examples()[0]), None);
    // A later mutating webhook swaps the image without recomputing the hash annotations.
    stored["spec"]["containers"][0]["image"] = json!("registry.example.com/swapped:1");
    let answer = evaluate_admission(
        policy_engine(),
        &review("CREATE", &stored, None),
        &shipped_settings(),
        &ClusterContext::from_objects(Vec::new()).expect("empty cluster"),
    );
    // A validating webhook may not return a patch: the API server fails the call and
    // failurePolicy Fail rejects the SidecarSet instead of storing stale hashes.
    assert!(
        answer.patch.is_some(),
        "stale hashes must be corrected, so the validating call fails: {answer:?}"
    );
}
