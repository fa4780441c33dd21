//! RBAC grants exactly what the code calls: the controller's roles against
//! `sidecarset_controller::permissions::API_CALLS`, the webhook's and policy-server's read
//! access against the policy's contextAwareResources.

mod deploy_support;

use deploy_support::{deploy_dir, find, metadata_yml, read_yaml, typed};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding};
use serde_json::Value;
use sidecarset_controller::permissions::API_CALLS;
use std::collections::BTreeSet;

type Grant = (String, String, String);

/// (apiGroup, resource, verb) triples; wildcards are refused outright.
fn grants(rules: &[PolicyRule]) -> BTreeSet<Grant> {
    let mut out = BTreeSet::new();
    for rule in rules {
        assert!(rule.non_resource_urls.is_none(), "no non-resource URLs");
        assert!(
            rule.resource_names.is_none(),
            "resourceNames would need a get-before-create"
        );
        let groups = rule.api_groups.clone().unwrap_or_default();
        let resources = rule.resources.clone().unwrap_or_default();
        for group in &groups {
            for resource in &resources {
                for verb in &rule.verbs {
                    for part in [group, resource, verb] {
                        assert!(!part.contains('*'), "wildcard in {rule:?}");
                    }
                    out.insert((group.clone(), resource.clone(), verb.clone()));
                }
            }
        }
    }
    out
}

fn controller_calls() -> BTreeSet<Grant> {
    API_CALLS
        .iter()
        .flat_map(|call| {
            call.verbs.iter().map(|verb| {
                (
                    call.api_group.to_string(),
                    call.resource.to_string(),
                    verb.to_string(),
                )
            })
        })
        .collect()
}

fn rbac() -> Vec<Value> {
    read_yaml(&deploy_dir().join("controller/rbac.yaml"))
}

#[test]
fn controller_roles_grant_exactly_the_api_calls() {
    let objects = rbac();
    let cluster: ClusterRole =
        typed::decode(find(&objects, "ClusterRole", "sidecarset-controller")).unwrap();
    let role: Role = typed::decode(find(
        &objects,
        "Role",
        "sidecarset-controller-leader-election",
    ))
    .unwrap();
    let cluster_grants = grants(cluster.rules.as_deref().unwrap_or_default());
    let role_grants = grants(role.rules.as_deref().unwrap_or_default());
    let granted: BTreeSet<Grant> = cluster_grants.union(&role_grants).cloned().collect();
    let called = controller_calls();
    let missing: Vec<_> = called.difference(&granted).collect();
    let extra: Vec<_> = granted.difference(&called).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "RBAC differs from permissions::API_CALLS\n  missing (calls would get 403): {missing:?}\n  extra (not least privilege): {extra:?}"
    );
    // Leases only through the namespaced Role, and only there.
    assert!(
        cluster_grants
            .iter()
            .all(|(group, _, _)| group != "coordination.k8s.io")
    );
    assert!(
        role_grants
            .iter()
            .all(|(group, _, _)| group == "coordination.k8s.io")
    );
}

#[test]
fn controller_bindings_tie_the_roles_to_the_deployments_service_account() {
    let objects = rbac();
    let deployments = read_yaml(&deploy_dir().join("controller/deployment.yaml"));
    let deployment: Deployment =
        typed::decode(find(&deployments, "Deployment", "sidecarset-controller")).unwrap();
    let namespace = deployment.metadata.namespace.clone().unwrap();
    let account = deployment
        .spec
        .unwrap()
        .template
        .spec
        .unwrap()
        .service_account_name
        .unwrap();

    let cluster: ClusterRoleBinding = typed::decode(find(
        &objects,
        "ClusterRoleBinding",
        "sidecarset-controller",
    ))
    .unwrap();
    assert_eq!(
        (
            cluster.role_ref.kind.as_str(),
            cluster.role_ref.name.as_str()
        ),
        ("ClusterRole", "sidecarset-controller")
    );
    let role: Role = typed::decode(find(
        &objects,
        "Role",
        "sidecarset-controller-leader-election",
    ))
    .unwrap();
    assert_eq!(
        role.metadata.namespace.as_deref(),
        Some(namespace.as_str()),
        "the Lease lives next to the controller"
    );
    let binding: RoleBinding = typed::decode(find(
        &objects,
        "RoleBinding",
        "sidecarset-controller-leader-election",
    ))
    .unwrap();
    assert_eq!(
        binding.role_ref.name,
        "sidecarset-controller-leader-election"
    );
    assert_eq!(
        binding.metadata.namespace.as_deref(),
        Some(namespace.as_str())
    );
    for subjects in [cluster.subjects, binding.subjects] {
        let subjects = subjects.unwrap();
        assert_eq!(subjects.len(), 1);
        assert_eq!(subjects[0].kind, "ServiceAccount");
        assert_eq!(subjects[0].name, account);
        assert_eq!(subjects[0].namespace.as_deref(), Some(namespace.as_str()));
    }
}

/// get/list/watch on each kind of metadata.yml's contextAwareResources.
fn context_reads() -> BTreeSet<Grant> {
    let metadata = metadata_yml();
    let mut out = BTreeSet::new();
    for resource in metadata["contextAwareResources"].as_array().unwrap() {
        let api_version = resource["apiVersion"].as_str().unwrap();
        let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
        let plural = format!("{}s", resource["kind"].as_str().unwrap().to_lowercase());
        for verb in ["get", "list", "watch"] {
            out.insert((group.to_string(), plural.clone(), verb.to_string()));
        }
    }
    out
}

#[test]
fn webhook_and_policy_server_read_exactly_the_context_aware_resources() {
    for (file, name) in [
        ("webhook/rbac.yaml", "sidecarset-webhook"),
        (
            "kubewarden/policy-server-rbac.yaml",
            "sidecarset-policy-context",
        ),
    ] {
        let objects = read_yaml(&deploy_dir().join(file));
        let role: ClusterRole = typed::decode(find(&objects, "ClusterRole", name)).unwrap();
        assert_eq!(
            grants(role.rules.as_deref().unwrap_or_default()),
            context_reads(),
            "{file}"
        );
        let binding: ClusterRoleBinding =
            typed::decode(find(&objects, "ClusterRoleBinding", name)).unwrap();
        assert_eq!(binding.role_ref.name, name, "{file}");
    }
}
